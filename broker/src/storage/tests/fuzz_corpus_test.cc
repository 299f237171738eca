// The seeds of the storage fuzz targets (storage/fuzz/) that are files the storage code writes: producer-state
// snapshots and partition directories. Each is built here from a known state or log, with the production
// code; the tests check that the seed files still decode to it, and with FERRY_WRITE_FUZZ_CORPUS=1 in the
// environment they write the seeds first:
//
//   FERRY_WRITE_FUZZ_CORPUS=1 build/debug/broker/src/storage/tests/storage_test --gtest_filter='fuzz_corpus*'
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model/testing/batch_builder.h"
#include "storage/file_names.h"
#include "storage/fuzz/segment_files.h"
#include "storage/log.h"
#include "storage/producer_state.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

const std::filesystem::path fuzz_dir = FERRY_STORAGE_FUZZ_DIR;
constexpr std::int64_t start_ms = 1'700'000'000'000;

bool writing() {
  const char* value = std::getenv("FERRY_WRITE_FUZZ_CORPUS");
  return value != nullptr && *value != '\0';
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A batch of `records` records of producer `producer`, as the log stores it at `base`.
std::vector<std::byte> producer_batch_at(std::int64_t producer, std::int16_t epoch, std::int32_t sequence, int records,
                                         std::int64_t base, bool transactional = false) {
  model::testing::batch_spec spec;
  for (int i = 0; i < records; ++i) spec.records.push_back({"k", "v-" + std::to_string(i), {}, i});
  spec.producer = producer_id{producer};
  spec.epoch = producer_epoch{epoch};
  spec.base_sequence = sequence;
  spec.base_timestamp = start_ms + base;
  spec.transactional = transactional;
  auto bytes = model::testing::build_batch(spec);
  model::set_base_offset(bytes, offset{base});
  return bytes;
}

struct producer_batch_spec {
  std::int64_t producer;
  std::int16_t epoch;
  std::int32_t sequence;
  int records;
  bool transactional = false;
};

struct snapshot_seed {
  const char* name;
  std::vector<producer_batch_spec> batches;  // appended in this order from offset 0
};

const std::vector<snapshot_seed>& snapshot_seeds() {
  static const std::vector<snapshot_seed> seeds = {
      {"no-producers", {}},
      {"one-producer", {{7, 0, 0, 2}}},
      // Six batches: the oldest drops out of the five retained.
      {"five-batches", {{7, 3, 0, 1}, {7, 3, 1, 2}, {7, 3, 3, 1}, {7, 3, 4, 5}, {7, 3, 9, 1}, {7, 3, 10, 3}}},
      // A new epoch restarts at 0; a sequence wraps from INT32_MAX to 0; a producer id past 32 bits.
      {"three-producers",
       {{1, 0, 0, 1},
        {1, 1, 0, 2},
        {2, 32767, INT32_MAX - 1, 4},
        {9'000'000'000, 5, 100, 1},
        {2, 32767, 2, 1},
        {9'000'000'000, 5, 101, 3}}},
      // Two transactions still open, one of a producer that also wrote outside it before.
      {"open-transactions", {{3, 0, 0, 2}, {3, 0, 2, 1, true}, {4, 2, 0, 3, true}}},
  };
  return seeds;
}

producer_state_manager build_state(const snapshot_seed& seed, std::vector<std::int64_t>& producers) {
  producer_state_manager state;
  std::int64_t next_offset = 0;
  for (const auto& b : seed.batches) {
    const auto bytes = producer_batch_at(b.producer, b.epoch, b.sequence, b.records, next_offset, b.transactional);
    state.update(model::batch_header_view(bytes));
    next_offset += b.records;
    producers.push_back(b.producer);
  }
  return state;
}

TEST(fuzz_corpus, producer_snapshot_seeds_decode_to_the_state_they_were_written_from) {
  const auto dir = fuzz_dir / "producer_snapshot_corpus";
  for (const auto& seed : snapshot_seeds()) {
    std::vector<std::int64_t> producers;
    const auto expected = build_state(seed, producers);
    const auto path = dir / seed.name;
    if (writing()) {
      const auto bytes = expected.serialize();
      write_file(path, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
    }
    const std::string bytes = read_file(path);
    const auto decoded = producer_state_manager::deserialize(std::as_bytes(std::span(bytes.data(), bytes.size())));
    ASSERT_TRUE(decoded) << seed.name << ": " << decoded.error().message();
    EXPECT_EQ(decoded.value().serialize().size(), bytes.size()) << seed.name;
    for (const auto id : producers) EXPECT_EQ(decoded.value().find(producer_id{id}), expected.find(producer_id{id}));
  }
}

// A partition directory the real log wrote, and what the log holds after recovering it from offset 0.
struct log_seed {
  const char* name;
  std::int64_t recovered_end;
};

class fuzz_corpus_segments : public ::testing::Test {
 protected:
  std::shared_ptr<log> open(const std::filesystem::path& directory, const log_config& config, bool recovery) {
    auto opened = open_log({.fs = fs_,
                            .clock = &clock_,
                            .directory = directory,
                            .config = config,
                            .needs_recovery = recovery,
                            .recovery_point = recovery ? offset{0} : offset{INT64_MAX}});
    EXPECT_TRUE(opened) << opened.error().message();
    return opened ? std::move(opened).value() : nullptr;
  }

  // Packs the segment files of `directory` (segments numbered in offset order) as segment_recovery_fuzz reads
  // them; `with_indexes` false leaves the indexes out.
  static std::string pack(const std::filesystem::path& directory, bool with_indexes = true) {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(directory))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    std::string out;
    std::size_t segment = 0;
    for (const auto& name : names) {
      const auto base = parse_offset_file_name(name, log_suffix);
      if (!base) continue;
      out += fuzz::pack_record(fuzz::file_kind::log, segment, read_file(directory / name));
      if (with_indexes) {
        out += fuzz::pack_record(fuzz::file_kind::index, segment,
                                 read_file(directory / offset_file_name(*base, index_suffix)));
        out += fuzz::pack_record(fuzz::file_kind::time_index, segment,
                                 read_file(directory / offset_file_name(*base, time_index_suffix)));
      }
      ++segment;
    }
    return out;
  }

  // Writes the log the seeds come from: `segments` segments of four batches (plain, gzip and zstd, some of an
  // idempotent producer), closed cleanly.
  void write_log(const std::filesystem::path& directory, int segments) {
    log_config config;
    config.index_interval_bytes = 1;  // an index entry for every batch but the first of a segment
    std::vector<std::vector<std::byte>> batches;
    for (int i = 0; i < 4 * segments; ++i) {
      model::testing::batch_spec spec;
      for (int r = 0; r < 3; ++r) spec.records.push_back({"key-" + std::to_string(r), "value", {}, r});
      spec.base_timestamp = start_ms + 10 * i;
      spec.codec = i % 4 == 1   ? model::compression::gzip
                   : i % 4 == 2 ? model::compression::zstd
                                : model::compression::none;
      if (i % 2 == 1) {
        spec.producer = producer_id{7};
        spec.epoch = producer_epoch{0};
        spec.base_sequence = 3 * (i / 2);
      }
      batches.push_back(model::testing::build_batch(spec));
    }
    // Four batches to a segment: every group of four has the same sizes.
    config.segment_bytes = 0;
    for (int i = 0; i < 4; ++i) config.segment_bytes += static_cast<std::int64_t>(batches[i].size());
    auto l = open(directory, config, false);
    ASSERT_TRUE(l);
    for (auto& batch : batches) ASSERT_TRUE(l->append(batch, leader_epoch{2}));
    ASSERT_TRUE(l->close());
  }

  std::string build(const log_seed& seed) {
    const auto directory = dir_.path() / "source";
    std::filesystem::remove_all(directory);
    const std::string name = seed.name;
    if (name == "one-segment") {
      write_log(directory, 1);
      return pack(directory);
    }
    write_log(directory, 3);
    if (name == "three-segments") return pack(directory);
    if (name == "three-segments-no-indexes") return pack(directory, false);
    const auto first_log = directory / offset_file_name(offset{0}, log_suffix);
    const auto last_log = directory / offset_file_name(offset{24}, log_suffix);
    if (name == "torn-tail") {
      // A crash in the middle of writing a batch: the last batch's first half.
      const std::string last = read_file(last_log);
      testing::append_bytes(last_log, last.substr(0, last.size() / 8));
      return pack(directory);
    }
    if (name == "crc-damaged") {
      // A flipped bit in the second batch's records: recovery keeps the first batch only.
      const std::string first = read_file(first_log);
      testing::flip_byte(first_log, model::peek_batch_size(std::as_bytes(std::span(first.data(), first.size()))) + 70);
      return pack(directory);
    }
    ADD_FAILURE() << "no such seed " << name;
    return {};
  }

  testing::temp_dir dir_;
  manual_clock clock_{start_ms};
  std::shared_ptr<io::file_system> fs_ = io::posix_file_system();
};

TEST_F(fuzz_corpus_segments, segment_seeds_recover_to_the_log_they_were_written_from) {
  const log_seed seeds[] = {
      {"one-segment", 12}, {"three-segments", 36}, {"three-segments-no-indexes", 36},
      {"torn-tail", 36},   {"crc-damaged", 3},
  };
  const auto dir = fuzz_dir / "segment_corpus";
  for (const auto& seed : seeds) {
    const auto path = dir / seed.name;
    if (writing()) write_file(path, build(seed));
    const std::string packed = read_file(path);
    const auto directory = dir_.path() / seed.name;
    std::filesystem::create_directories(directory);
    const auto bases = fuzz::write_segments(
        fuzz::unpack({reinterpret_cast<const std::uint8_t*>(packed.data()), packed.size()}), directory);
    EXPECT_FALSE(bases.empty()) << seed.name;
    const auto l = open(directory, log_config{}, true);
    ASSERT_TRUE(l) << seed.name;
    EXPECT_EQ(l->log_end_offset(), offset{seed.recovered_end}) << seed.name;
    const auto read = l->read(offset{0}, UINT64_MAX, l->log_end_offset());
    ASSERT_TRUE(read) << seed.name;
    EXPECT_EQ(read.value().next_offset, offset{seed.recovered_end}) << seed.name;
  }
}

}  // namespace
}  // namespace ferry::storage
