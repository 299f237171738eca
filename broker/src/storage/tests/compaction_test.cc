#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "io/file_system.h"
#include "model/control_record.h"
#include "model/records.h"
#include "model/testing/batch_builder.h"
#include "storage/file_names.h"
#include "storage/key_offset_map.h"
#include "storage/log.h"
#include "storage/log_cleaner.h"
#include "storage/log_manager.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

using model::testing::batch_spec;
using model::testing::build_batch;

constexpr std::int64_t start_ms = 1'700'000'000'000;
constexpr std::size_t io_buffer = 64 * 1024;

struct entry {
  std::string key;
  std::optional<std::string> value;
};

// What a consumer reading the whole log sees: the records in offset order.
struct record {
  std::int64_t at;
  std::string key;
  std::optional<std::string> value;
};

// Forwards to the real file system until `budget` more namespace changes (creating opens, renames, removals,
// directory syncs) have run; every later one fails, as if the broker had stopped there.
class crashing_file_system final : public io::file_system {
 public:
  std::atomic<std::int64_t> budget{-1};  // negative: never crash

  result<std::shared_ptr<io::file>> open(const std::filesystem::path& path, io::open_mode mode) override {
    if (mode == io::open_mode::create_read_write && !step()) return crashed();
    return inner_->open(path, mode);
  }
  result<void> remove(const std::filesystem::path& path) override {
    if (!step()) return crashed();
    return inner_->remove(path);
  }
  result<void> remove_all(const std::filesystem::path& path) override { return inner_->remove_all(path); }
  result<void> rename(const std::filesystem::path& from, const std::filesystem::path& to) override {
    if (!step()) return crashed();
    return inner_->rename(from, to);
  }
  result<void> create_directories(const std::filesystem::path& path) override {
    return inner_->create_directories(path);
  }
  result<bool> exists(const std::filesystem::path& path) override { return inner_->exists(path); }
  result<std::vector<std::string>> list(const std::filesystem::path& directory) override {
    return inner_->list(directory);
  }
  result<void> sync_directory(const std::filesystem::path& directory) override {
    if (!step()) return crashed();
    return inner_->sync_directory(directory);
  }
  result<std::uint64_t> free_bytes(const std::filesystem::path& path) override { return inner_->free_bytes(path); }
  result<std::uint64_t> total_bytes(const std::filesystem::path& path) override { return inner_->total_bytes(path); }

  [[nodiscard]] bool crashed_once() const { return crashed_.load(); }

 private:
  bool step() {
    if (budget.load() < 0) return true;
    if (budget.fetch_sub(1) > 0) return true;
    crashed_ = true;
    budget = 0;
    return false;
  }
  static std::error_code crashed() { return {EIO, std::system_category()}; }

  std::shared_ptr<io::file_system> inner_ = io::posix_file_system();
  std::atomic<bool> crashed_{false};
};

class compaction_test : public ::testing::Test {
 protected:
  static log_config compacted(std::int64_t segment_bytes = 16 * 1024) {
    log_config config;
    config.compact = true;
    config.delete_policy = false;
    config.segment_bytes = segment_bytes;
    config.index_interval_bytes = 512;
    config.segment_ms = 60'000;
    return config;
  }

  std::shared_ptr<log> open(const log_config& config, std::shared_ptr<io::file_system> fs = io::posix_file_system(),
                            const std::filesystem::path& directory = {}, bool recovery = false) {
    auto opened = open_log({.fs = std::move(fs),
                            .clock = &clock_,
                            .directory = directory.empty() ? dir_.path() : directory,
                            .config = config,
                            .needs_recovery = recovery,
                            .recovery_point = recovery ? offset{0} : offset{INT64_MAX}});
    EXPECT_TRUE(opened) << opened.error().message();
    return opened ? std::move(opened).value() : nullptr;
  }

  static batch_spec spec_of(const std::vector<entry>& entries, std::int64_t ts) {
    batch_spec spec;
    spec.base_timestamp = ts;
    for (const auto& e : entries) spec.records.push_back({e.key, e.value, {}, 0});
    return spec;
  }
  void append(log& l, const std::vector<entry>& entries) {
    auto bytes = build_batch(spec_of(entries, clock_.now_ms()));
    const auto appended = l.append(bytes, leader_epoch{1});
    ASSERT_TRUE(appended) << appended.error().message();
  }

  // `keys` keys overwritten `rounds` times, 50 records a batch; value "r<round>".
  void overwrite(log& l, int keys, int rounds) {
    for (int r = 0; r < rounds; ++r) {
      for (int k = 0; k < keys; k += 50) {
        std::vector<entry> batch;
        for (int i = k; i < std::min(keys, k + 50); ++i)
          batch.push_back({"key-" + std::to_string(i), "r" + std::to_string(r)});
        append(l, batch);
      }
    }
  }

  // Rolls the active segment (segment.ms passes), so that everything before becomes cleanable.
  void roll(log& l) {
    clock_.advance(std::chrono::milliseconds(61'000));
    append(l, {{"sentinel", "x"}});
  }

  // Runs passes until one does nothing.
  static int clean_fully(log& l, key_offset_map& map) {
    int passes = 0;
    while (true) {
      const auto cleaned = l.compact(map, io_buffer);
      EXPECT_TRUE(cleaned) << cleaned.error().message();
      if (!cleaned || cleaned.value().segments_replaced == 0) return passes;
      ++passes;
    }
  }

  // Every record from the log start, checking that offsets only increase.
  static std::vector<record> records(log& l) {
    std::vector<record> out;
    offset from = l.log_start_offset();
    std::vector<std::byte> scratch;
    while (from < l.log_end_offset()) {
      const auto read = l.read(from, 4096, offset{INT64_MAX});
      EXPECT_TRUE(read) << read.error().message();
      if (!read || read.value().slices.empty()) break;
      EXPECT_GT(read.value().next_offset, from);
      for (const auto& batch : testing::split_batches(testing::read_all(read.value()))) {
        EXPECT_FALSE(model::validate_batch(batch, {.max_batch_bytes = SIZE_MAX, .from_client = false}));
        const model::batch_header_view header(batch);
        const auto walked = model::for_each_stored_record(batch, SIZE_MAX, scratch, [&](const model::record_view& r) {
          const std::int64_t at = header.base_offset().value() + r.offset_delta;
          if (at < from.value()) return true;  // the batch holding `from` comes whole
          EXPECT_TRUE(out.empty() || at > out.back().at) << "offset " << at << " after " << out.back().at;
          const auto text = [](std::span<const std::byte> b) {
            return std::string(reinterpret_cast<const char*>(b.data()), b.size());
          };
          out.push_back({at, r.key ? text(*r.key) : "", r.value ? std::optional(text(*r.value)) : std::nullopt});
          return true;
        });
        EXPECT_TRUE(walked);
      }
      from = read.value().next_offset;
    }
    return out;
  }

  // The latest value of each key, as a consumer reading the whole log concludes it.
  static std::map<std::string, std::optional<std::string>> latest(log& l) {
    std::map<std::string, std::optional<std::string>> out;
    for (const auto& r : records(l)) out[r.key] = r.value;
    return out;
  }

  testing::temp_dir dir_;
  manual_clock clock_{start_ms};
};

// Review finding 3 (Kafka's KAFKA-13194): a newer value of a key above the high watermark (not yet replicated, so
// a failover may lose it) must not remove the committed value it supersedes.
TEST_F(compaction_test, NothingPastTheHighWatermarkSupersedesARecordBelowIt) {
  auto l = open(compacted(200));
  append(*l, {{"k", "committed"}});
  const offset committed_end = l->log_end_offset();
  l->set_high_watermark(committed_end);
  append(*l, {{"k", "not yet replicated"}});
  for (int i = 0; i < 10; ++i) append(*l, {{"other-" + std::to_string(i), "v"}});
  roll(*l);
  key_offset_map map(std::size_t{1} << 20);
  clean_fully(*l, map);
  const auto all = records(*l);
  EXPECT_TRUE(std::any_of(all.begin(), all.end(), [](const record& r) { return r.value == "committed"; }))
      << "the committed value stays while the newer one is above the high watermark";
  // Once the high watermark passes the newer value, the older one goes.
  l->set_high_watermark(l->log_end_offset());
  clean_fully(*l, map);
  const auto after = records(*l);
  EXPECT_FALSE(std::any_of(after.begin(), after.end(), [](const record& r) { return r.value == "committed"; }));
}

TEST_F(compaction_test, KeepsTheLatestValueOfEachKey) {
  auto l = open(compacted(64 * 1024));
  overwrite(*l, 1000, 100);
  roll(*l);
  const auto before = latest(*l);
  const auto end = l->log_end_offset();
  const auto size_before = l->size_bytes();
  key_offset_map map(std::size_t{8} << 20);
  EXPECT_GE(clean_fully(*l, map), 1);
  const auto after = records(*l);
  ASSERT_EQ(after.size(), 1001u);  // one record per key, and the sentinel
  std::map<std::string, std::optional<std::string>> seen;
  for (const auto& r : after) EXPECT_TRUE(seen.emplace(r.key, r.value).second) << r.key << " twice";
  EXPECT_EQ(seen, before);
  EXPECT_EQ(seen["key-7"], "r99");
  EXPECT_EQ(l->log_end_offset(), end);
  EXPECT_EQ(l->log_start_offset(), offset{0});
  EXPECT_LT(l->size_bytes(), size_before / 20);
}

TEST_F(compaction_test, ReadsFromEveryOffsetAcrossGaps) {
  auto l = open(compacted(4 * 1024));
  overwrite(*l, 100, 20);
  roll(*l);
  key_offset_map map(std::size_t{1} << 20);
  clean_fully(*l, map);
  for (std::int64_t from = 0; from < l->log_end_offset().value(); ++from) {
    const auto read = l->read(offset{from}, 1, offset{INT64_MAX});
    ASSERT_TRUE(read) << from << ": " << read.error().message();
    ASSERT_FALSE(read.value().slices.empty()) << from;
    EXPECT_GT(read.value().next_offset, offset{from});
  }
  // Timestamp lookups land on a record in a batch with gaps.
  const auto found = l->offset_for_timestamp(start_ms);
  ASSERT_TRUE(found && found.value());
}

TEST_F(compaction_test, LeavesTheActiveSegmentAlone) {
  auto l = open(compacted(4 * 1024));
  overwrite(*l, 100, 20);
  const auto active_base = [&] {
    const auto all = l->segment_count();
    EXPECT_GT(all, 2u);
    const auto read = l->read(offset{l->log_end_offset().value() - 1}, 1, offset{INT64_MAX});
    return read.value().first_offset;
  }();
  const auto tail = records(*l);
  key_offset_map map(std::size_t{1} << 20);
  clean_fully(*l, map);
  // Every record of the active segment's batches is still there.
  std::vector<record> kept;
  for (const auto& r : records(*l))
    if (r.at >= active_base.value()) kept.push_back(r);
  std::vector<record> expected;
  for (const auto& r : tail)
    if (r.at >= active_base.value()) expected.push_back(r);
  ASSERT_EQ(kept.size(), expected.size());
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(kept.back().at, expected.back().at);
}

TEST_F(compaction_test, CleansInPassesWithASmallMap) {
  auto l = open(compacted(8 * 1024));
  overwrite(*l, 300, 10);
  roll(*l);
  const auto before = latest(*l);
  key_offset_map tiny(key_offset_map::entry_bytes * 64);
  EXPECT_GT(clean_fully(*l, tiny), 3);
  const auto after = records(*l);
  EXPECT_EQ(after.size(), 301u);
  EXPECT_EQ(latest(*l), before);
}

TEST_F(compaction_test, RemovesTombstonesAfterDeleteRetention) {
  auto config = compacted(4 * 1024);
  config.delete_retention_ms = 3'600'000;
  auto l = open(config);
  overwrite(*l, 100, 3);
  std::vector<entry> deletes;
  for (int i = 0; i < 100; i += 2) deletes.push_back({"key-" + std::to_string(i), std::nullopt});
  append(*l, deletes);
  roll(*l);
  key_offset_map map(std::size_t{1} << 20);
  clean_fully(*l, map);
  // The first pass keeps the tombstones, so consumers see the deletions.
  auto seen = latest(*l);
  ASSERT_TRUE(seen.contains("key-0"));
  EXPECT_EQ(seen["key-0"], std::nullopt);
  EXPECT_EQ(seen["key-1"], "r2");
  // Not before delete.retention.ms has passed since that pass ...
  clock_.advance(std::chrono::milliseconds(config.delete_retention_ms - 1000));
  EXPECT_FALSE(l->cleanable().has_value());
  clock_.advance(std::chrono::milliseconds(2000));
  // ... then a pass is due even without dirty records, and drops them.
  const auto due = l->cleanable();
  ASSERT_TRUE(due.has_value());
  EXPECT_TRUE(due->overdue);
  EXPECT_GE(clean_fully(*l, map), 1);
  seen = latest(*l);
  EXPECT_FALSE(seen.contains("key-0"));
  EXPECT_EQ(seen["key-1"], "r2");
  EXPECT_EQ(seen.size(), 51u);  // the odd keys and the sentinel
}

TEST_F(compaction_test, StateSurvivesReopening) {
  auto l = open(compacted(4 * 1024));
  overwrite(*l, 100, 5);
  roll(*l);
  key_offset_map map(std::size_t{1} << 20);
  clean_fully(*l, map);
  const auto before = records(*l);
  ASSERT_TRUE(l->close());
  l = open(compacted(4 * 1024));
  EXPECT_EQ(records(*l).size(), before.size());
  // Nothing dirty: the cleaner checkpoint says where cleaning stopped.
  EXPECT_FALSE(l->cleanable().has_value());
  ASSERT_TRUE(l->close());
  l = open(compacted(4 * 1024), io::posix_file_system(), {}, true);
  EXPECT_EQ(records(*l).size(), before.size());
}

TEST_F(compaction_test, KeepsIdempotentProducerState) {
  auto l = open(compacted(2 * 1024));
  for (int i = 0; i < 40; ++i) {
    batch_spec spec = spec_of({{"a", "v" + std::to_string(i)}, {"b", "w" + std::to_string(i)}}, clock_.now_ms());
    spec.producer = producer_id{9};
    spec.epoch = producer_epoch{0};
    spec.base_sequence = i * 2;
    auto bytes = build_batch(spec);
    ASSERT_TRUE(l->append(bytes, leader_epoch{1}));
  }
  // The producer's last batch is superseded too, so the cleaner keeps it emptied.
  roll(*l);
  append(*l, {{"a", "new"}, {"b", "new"}});
  roll(*l);
  const auto producer = l->producer(producer_id{9});
  ASSERT_TRUE(producer);
  key_offset_map map(std::size_t{1} << 20);
  clean_fully(*l, map);
  EXPECT_EQ(l->producer(producer_id{9}), producer);
  ASSERT_TRUE(l->close());
  for (const auto& name : std::filesystem::directory_iterator(dir_.path()))
    if (name.path().extension() == ".snapshot") std::filesystem::remove(name.path());
  l = open(compacted(2 * 1024));
  const auto reloaded = l->producer(producer_id{9});
  ASSERT_TRUE(reloaded);
  EXPECT_EQ(reloaded->epoch, producer->epoch);
  EXPECT_EQ(reloaded->batches.back(), producer->batches.back());
  // The producer's next sequence is accepted.
  batch_spec spec = spec_of({{"a", "again"}}, clock_.now_ms());
  spec.producer = producer_id{9};
  spec.epoch = producer_epoch{0};
  spec.base_sequence = 80;
  auto bytes = build_batch(spec);
  const auto appended = l->append(bytes, leader_epoch{1});
  EXPECT_TRUE(appended) << appended.error().message();
}

// A transactional batch of `entries` from `producer` (epoch 0) starting at `sequence`.
std::vector<std::byte> txn_batch(std::int64_t producer, std::int32_t sequence, const std::vector<entry>& entries,
                                 std::int64_t ts) {
  batch_spec spec;
  spec.base_timestamp = ts;
  for (const auto& e : entries) spec.records.push_back({e.key, e.value, {}, 0});
  spec.producer = producer_id{producer};
  spec.epoch = producer_epoch{0};
  spec.base_sequence = sequence;
  spec.transactional = true;
  return build_batch(spec);
}

std::size_t markers_in(log& l) {
  const auto read = l.read(l.log_start_offset(), UINT64_MAX, offset{INT64_MAX});
  EXPECT_TRUE(read);
  std::size_t markers = 0;
  for (const auto& batch : testing::split_batches(testing::read_all(read.value())))
    if (model::batch_header_view(batch).is_control()) ++markers;
  return markers;
}

TEST_F(compaction_test, DropsAbortedTransactionsAndKeepsMarkersWhileTheirDataLasts) {
  auto config = compacted(4 * 1024);
  config.delete_retention_ms = 3'600'000;
  auto l = open(config);
  const auto end_txn = [&](std::int64_t producer, model::marker_type type) {
    ASSERT_TRUE(l->append_marker(producer_id{producer}, producer_epoch{0}, {type, 0}, leader_epoch{1}));
  };
  overwrite(*l, 100, 2);
  auto aborted = txn_batch(5, 0, {{"key-0", "aborted"}, {"key-1", "aborted"}}, clock_.now_ms());
  ASSERT_TRUE(l->append(aborted, leader_epoch{1}));
  end_txn(5, model::marker_type::abort);
  auto first = txn_batch(6, 0, {{"key-50", "committed"}}, clock_.now_ms());
  ASSERT_TRUE(l->append(first, leader_epoch{1}));
  end_txn(6, model::marker_type::commit);
  roll(*l);
  key_offset_map map(std::size_t{1} << 20);
  clean_fully(*l, map);
  // The aborted values supersede nothing and are gone; the committed one is the key's latest.
  auto seen = latest(*l);
  EXPECT_EQ(seen["key-0"], "r1");
  EXPECT_EQ(seen["key-50"], "committed");
  for (const auto& r : records(*l)) EXPECT_NE(r.value, "aborted") << r.at;
  // Both markers stay: producer 5's last batch is kept emptied (for its sequence), producer 6's data lives.
  EXPECT_EQ(markers_in(*l), 2u);

  // Producer 6 commits again, and its first transaction's value is overwritten: that marker has no data left.
  auto second = txn_batch(6, 1, {{"key-99", "committed-again"}}, clock_.now_ms());
  ASSERT_TRUE(l->append(second, leader_epoch{1}));
  end_txn(6, model::marker_type::commit);
  append(*l, {{"key-50", "plain"}});
  roll(*l);
  clean_fully(*l, map);
  EXPECT_EQ(markers_in(*l), 3u);  // the marker without data waits for delete.retention.ms, like a tombstone
  clock_.advance(std::chrono::milliseconds(config.delete_retention_ms + 1000));
  clean_fully(*l, map);
  EXPECT_EQ(markers_in(*l), 2u);
  EXPECT_EQ(latest(*l)["key-99"], "committed-again");

  // A producer state rebuilt from the log alone finds no open transaction.
  ASSERT_TRUE(l->close());
  for (const auto& name : std::filesystem::directory_iterator(dir_.path()))
    if (name.path().extension() == ".snapshot") std::filesystem::remove(name.path());
  l = open(config);
  EXPECT_EQ(l->last_stable_offset(l->log_end_offset()), l->log_end_offset());
}

TEST_F(compaction_test, LeavesEverythingFromAnOpenTransactionOnUncleaned) {
  auto l = open(compacted(2 * 1024));
  overwrite(*l, 100, 3);
  auto open_txn = txn_batch(7, 0, {{"key-0", "pending"}}, clock_.now_ms());
  const auto opened = l->append(open_txn, leader_epoch{1});
  ASSERT_TRUE(opened);
  overwrite(*l, 100, 3);
  roll(*l);
  const auto from = opened.value().base_offset.value();
  const auto count_from = [&] {
    return std::ranges::count_if(records(*l), [&](const record& r) { return r.at >= from; });
  };
  const auto before = count_from();
  const auto total = records(*l).size();
  key_offset_map map(std::size_t{1} << 20);
  clean_fully(*l, map);
  EXPECT_EQ(count_from(), before);
  EXPECT_LT(records(*l).size(), total);  // what came before it was cleaned
}

TEST_F(compaction_test, RefusesRecordsWithoutKeys) {
  auto l = open(compacted());
  auto bytes = build_batch(spec_of({{"a", "1"}}, start_ms));
  bytes = build_batch([&] {
    auto spec = spec_of({{"a", "1"}}, start_ms);
    spec.records.push_back({std::nullopt, "no key", {}, 0});
    return spec;
  }());
  const auto refused = l->append(bytes, leader_epoch{1});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), make_error_code(errc::missing_key));
  EXPECT_EQ(l->log_end_offset(), offset{0});
}

TEST_F(compaction_test, RetentionLeavesCompactOnlyLogsAlone) {
  auto config = compacted(2 * 1024);
  config.retention_ms = 1;
  auto l = open(config);
  overwrite(*l, 100, 3);
  roll(*l);
  clock_.advance(std::chrono::hours(1));
  EXPECT_EQ(l->apply_retention().value(), 0u);
  config.delete_policy = true;
  l->update_config(config);
  EXPECT_GT(l->apply_retention().value(), 0u);
}

// A crash at every step of a pass (each file creation, rename, removal and directory sync) leaves a log whose
// segments are each the old or the cleaned one, with the same latest value for every key (no deleted key
// comes back).
TEST_F(compaction_test, RecoversFromACrashAtEveryStep) {
  const auto pristine = dir_.path() / "pristine";
  {
    auto l = open(compacted(4 * 1024), io::posix_file_system(), pristine);
    overwrite(*l, 200, 8);
    std::vector<entry> deletes;
    for (int i = 0; i < 200; i += 3) deletes.push_back({"key-" + std::to_string(i), std::nullopt});
    append(*l, deletes);
    roll(*l);
    ASSERT_TRUE(l->close());
  }
  std::map<std::string, std::optional<std::string>> expected;
  std::size_t uncleaned = 0;
  {
    auto l = open(compacted(4 * 1024), io::posix_file_system(), pristine);
    expected = latest(*l);
    uncleaned = records(*l).size();
    ASSERT_TRUE(l->close());
  }
  bool completed = false;
  for (int step = 0; !completed && step < 200; ++step) {
    const auto copy = dir_.path() / ("crash-" + std::to_string(step));
    std::filesystem::copy(pristine, copy);
    auto fs = std::make_shared<crashing_file_system>();
    {
      auto l = open(compacted(4 * 1024), fs, copy);
      ASSERT_TRUE(l);
      fs->budget = step;
      key_offset_map map(std::size_t{1} << 20);
      (void)l->compact(map, io_buffer);
      completed = !fs->crashed_once();
      // The broker stops here: nothing more reaches the disk.
    }
    auto l = open(compacted(4 * 1024), io::posix_file_system(), copy, true);
    ASSERT_TRUE(l) << "step " << step;
    const auto all = records(*l);
    EXPECT_EQ(latest(*l), expected) << "step " << step;
    // Each segment is the old one or the cleaned one; segments swap in offset order.
    EXPECT_TRUE(all.size() >= expected.size() && all.size() <= uncleaned) << "step " << step << ": " << all.size();
    for (const auto& name : std::filesystem::directory_iterator(copy)) {
      const auto file = name.path().filename().string();
      EXPECT_FALSE(file.ends_with(".cleaned") || file.ends_with(".swap")) << "step " << step << ": " << file;
    }
    ASSERT_TRUE(l->close());
  }
  EXPECT_TRUE(completed);
}

TEST_F(compaction_test, CleanerPicksTheDirtiestCompactedLog) {
  log_config plain;
  auto opened = log_manager::open({.fs = io::posix_file_system(), .clock = &clock_, .log_dirs = {dir_.path()}});
  ASSERT_TRUE(opened);
  auto& logs = *opened.value();
  auto compacted_log = logs.create({"compacted", partition_id{0}}, compacted(4 * 1024)).value();
  auto plain_log = logs.create({"plain", partition_id{0}}, plain).value();
  overwrite(*compacted_log, 100, 10);
  roll(*compacted_log);
  overwrite(*plain_log, 100, 2);
  std::vector<log_cleaner::pass_report> passes;
  log_cleaner::survey last;
  log_cleaner cleaner({.logs = &logs,
                       .clock = &clock_,
                       .config = {},
                       .on_pass = [&](const log_cleaner::pass_report& p) { passes.push_back(p); },
                       .on_survey = [&](const log_cleaner::survey& s) { last = s; }});
  key_offset_map map(std::size_t{1} << 20);
  auto cleaned = cleaner.clean_once(map);
  ASSERT_TRUE(cleaned);
  EXPECT_TRUE(cleaned.value());
  ASSERT_EQ(passes.size(), 1u);
  EXPECT_EQ(passes[0].partition.topic, "compacted");
  EXPECT_GT(passes[0].result.bytes_read, passes[0].result.bytes_written);
  EXPECT_GT(last.max_dirty_ratio, 0.5);
  cleaned = cleaner.clean_once(map);
  ASSERT_TRUE(cleaned);
  EXPECT_FALSE(cleaned.value());
  EXPECT_EQ(records(*compacted_log).size(), 101u);
  ASSERT_TRUE(logs.shutdown());
}

}  // namespace
}  // namespace ferry::storage
