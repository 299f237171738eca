// A partition log's transactions: markers end them, the last stable offset stops before open ones, and aborted
// ones are found for read_committed fetches, after a restart (with or without recovery), on a follower that
// replicated the log, and after a truncation.
#include <gtest/gtest.h>

#include "model/control_record.h"
#include "model/testing/batch_builder.h"
#include "storage/errc.h"
#include "storage/file_names.h"
#include "storage/log.h"
#include "storage/tests/fixture.h"

namespace ferry::storage {
namespace {

using model::marker_type;

constexpr leader_epoch epoch5{5};

std::vector<std::byte> txn_batch(std::int64_t producer, std::int32_t sequence, int records = 2) {
  model::testing::batch_spec spec;
  for (int i = 0; i < records; ++i) spec.records.push_back({"k", "v", {}, i});
  spec.producer = producer_id{producer};
  spec.epoch = producer_epoch{0};
  spec.base_sequence = sequence;
  spec.transactional = true;
  return model::testing::build_batch(spec);
}

class log_transactions_test : public ::testing::Test {
 protected:
  std::shared_ptr<log> open(const std::filesystem::path& dir, bool recovery = false) {
    log_config config;
    config.segment_bytes = 400;  // a few batches per segment
    auto opened = open_log({.fs = fs_,
                            .clock = &clock_,
                            .directory = dir,
                            .config = config,
                            .needs_recovery = recovery,
                            .recovery_point = recovery ? offset{0} : offset{INT64_MAX}});
    EXPECT_TRUE(opened) << opened.error().message();
    return std::move(opened).value();
  }
  static offset send(log& l, std::vector<std::byte> bytes) {
    const auto appended = l.append(bytes, epoch5);
    EXPECT_TRUE(appended) << appended.error().message();
    return appended ? appended.value().base_offset : no_offset;
  }
  static offset end_txn(log& l, std::int64_t producer, marker_type type, std::int32_t coordinator_epoch = 0) {
    const auto appended = l.append_marker(producer_id{producer}, producer_epoch{0}, {type, coordinator_epoch}, epoch5);
    EXPECT_TRUE(appended) << appended.error().message();
    return appended ? appended.value().base_offset : no_offset;
  }
  static std::vector<aborted_txn> aborted(log& l, std::int64_t from, std::int64_t upto) {
    const auto found = l.aborted_transactions(offset{from}, offset{upto});
    EXPECT_TRUE(found) << found.error().message();
    return found ? found.value() : std::vector<aborted_txn>{};
  }

  // Producer 7 commits a transaction, producer 8 aborts one that spans segments, producer 9 leaves one open.
  struct history {
    std::vector<aborted_txn> aborted;
    offset open_from;
  };
  static history write_history(log& l) {
    send(l, model::testing::build_simple_batch(3));
    const offset committed = send(l, txn_batch(7, 0));
    const offset abort_first = send(l, txn_batch(8, 0));
    for (int i = 1; i < 6; ++i) send(l, txn_batch(8, 2 * i));
    end_txn(l, 7, marker_type::commit);
    const offset open_from = send(l, txn_batch(9, 0));
    const offset abort_marker = end_txn(l, 8, marker_type::abort);
    EXPECT_GT(committed, offset{0});
    return {{{producer_id{8}, abort_first, abort_marker, open_from}}, open_from};
  }

  testing::temp_dir dir_;
  manual_clock clock_{1'700'000'000'000};
  std::shared_ptr<io::file_system> fs_ = io::posix_file_system();
};

TEST_F(log_transactions_test, the_stable_offset_stops_at_open_transactions_and_unreplicated_markers) {
  auto l = open(dir_.path());
  send(*l, model::testing::build_simple_batch(3));         // 0-2
  const offset first = send(*l, txn_batch(7, 0));          // 3-4
  EXPECT_EQ(l->last_stable_offset(offset{2}), offset{2});  // never past the high watermark
  EXPECT_EQ(l->last_stable_offset(offset{5}), first);
  const offset marker = end_txn(*l, 7, marker_type::commit);
  EXPECT_EQ(marker, offset{5});
  EXPECT_EQ(l->last_stable_offset(marker), first);  // the marker is not replicated yet
  EXPECT_EQ(l->last_stable_offset(next(marker)), next(marker));
  EXPECT_TRUE(aborted(*l, 0, 100).empty());  // a commit is not an aborted transaction
}

TEST_F(log_transactions_test, aborted_transactions_are_found_for_the_ranges_they_overlap) {
  auto l = open(dir_.path());
  const auto h = write_history(*l);
  ASSERT_GT(l->segment_count(), 2u);
  const aborted_txn& txn = h.aborted.front();
  EXPECT_EQ(aborted(*l, 0, 100), h.aborted);
  EXPECT_EQ(aborted(*l, txn.first.value(), next(txn.first).value()), h.aborted);  // only its first offset
  EXPECT_EQ(aborted(*l, txn.last.value(), 100), h.aborted);                       // only its marker
  EXPECT_TRUE(aborted(*l, 0, txn.first.value()).empty());
  EXPECT_TRUE(aborted(*l, next(txn.last).value(), 100).empty());
  EXPECT_EQ(l->last_stable_offset(offset{100}), h.open_from);
  // The entry is in the .txnindex of the segment holding the marker, and nowhere else.
  std::size_t indexes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
    if (entry.path().extension() == txn_index_suffix) ++indexes;
  EXPECT_EQ(indexes, 1u);
}

TEST_F(log_transactions_test, a_restart_with_or_without_recovery_keeps_what_transactions_did) {
  for (const bool crash : {false, true}) {
    SCOPED_TRACE(crash ? "crash" : "clean close");
    const auto dir = dir_.path() / (crash ? "crash" : "clean");
    history h;
    {
      auto l = open(dir);
      h = write_history(*l);
      if (!crash) {
        ASSERT_TRUE(l->close());
      }
    }
    auto l = open(dir, crash);
    EXPECT_EQ(aborted(*l, 0, 100), h.aborted);
    EXPECT_EQ(l->last_stable_offset(offset{100}), h.open_from);
    // Producer 9's transaction is still open: it may go on, and its abort ends it.
    send(*l, txn_batch(9, 2));
    const offset marker = end_txn(*l, 9, marker_type::abort);
    EXPECT_EQ(l->last_stable_offset(offset{200}), offset{200});
    const auto all = aborted(*l, 0, 200);
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[1], (aborted_txn{producer_id{9}, h.open_from, marker, next(marker)}));
  }
}

TEST_F(log_transactions_test, a_follower_replicating_the_log_knows_the_same_transactions) {
  auto leader = open(dir_.path() / "leader");
  const auto h = write_history(*leader);
  auto follower = open(dir_.path() / "follower");
  const auto read = leader->read(offset{0}, UINT64_MAX, offset{INT64_MAX});
  ASSERT_TRUE(read);
  const auto bytes = testing::read_all(read.value());
  ASSERT_TRUE(follower->append_replicated(bytes));
  EXPECT_EQ(aborted(*follower, 0, 100), h.aborted);
  EXPECT_EQ(follower->last_stable_offset(offset{100}), h.open_from);
}

TEST_F(log_transactions_test, truncating_below_a_marker_reopens_its_transaction) {
  auto l = open(dir_.path());
  const auto h = write_history(*l);
  const aborted_txn txn = h.aborted.front();
  ASSERT_TRUE(l->truncate_to(txn.last));
  EXPECT_TRUE(aborted(*l, 0, 100).empty());
  EXPECT_EQ(l->last_stable_offset(offset{100}), txn.first);
  // The coordinator's marker arrives again.
  EXPECT_EQ(end_txn(*l, 8, marker_type::abort), txn.last);
  EXPECT_EQ(aborted(*l, 0, 100), h.aborted);
}

// Review finding 5: a truncation to the start of a segment whose producer snapshot is at that offset cuts an
// abort marker from the segment; the producer state is replayed from the snapshot, which skips the segment, so
// only the cut itself can drop the marker's entry from the segment's .txnindex.
TEST_F(log_transactions_test, truncating_to_a_snapshot_offset_drops_the_cut_markers_aborted_transactions) {
  auto l = open(dir_.path());
  offset rolled_at = no_offset;
  while (rolled_at == no_offset) {
    const auto segments = l->segment_count();
    const offset base = send(*l, model::testing::build_simple_batch(2));
    if (l->segment_count() > segments) rolled_at = base;
  }
  send(*l, txn_batch(8, 0));
  const offset marker = end_txn(*l, 8, marker_type::abort);
  ASSERT_EQ(aborted(*l, rolled_at.value(), 100).size(), 1u);
  ASSERT_LT(marker.value(), 100);
  ASSERT_TRUE(l->truncate_to(rolled_at));
  // The leader's records at the same offsets: producer 8's next transaction, which commits.
  send(*l, txn_batch(8, 2));
  end_txn(*l, 8, marker_type::commit);
  send(*l, model::testing::build_simple_batch(2));
  EXPECT_TRUE(aborted(*l, 0, 100).empty());
}

TEST_F(log_transactions_test, markers_from_a_fenced_producer_or_coordinator_are_refused) {
  auto l = open(dir_.path());
  send(*l, txn_batch(7, 0));
  ASSERT_EQ(end_txn(*l, 7, marker_type::commit, 4), offset{2});
  send(*l, txn_batch(7, 2));
  const auto stale = l->append_marker(producer_id{7}, producer_epoch{0}, {marker_type::commit, 3}, epoch5);
  EXPECT_EQ(stale.error(), errc::coordinator_fenced);
  ASSERT_TRUE(l->append_marker(producer_id{7}, producer_epoch{1}, {marker_type::abort, 4}, epoch5));
  EXPECT_EQ(l->append_marker(producer_id{7}, producer_epoch{0}, {marker_type::abort, 4}, epoch5).error(),
            errc::invalid_producer_epoch);
  EXPECT_EQ(l->log_end_offset(), offset{6});  // nothing refused was written
}

TEST(txn_index, a_torn_last_entry_is_left_out_and_an_unknown_version_refused) {
  const aborted_txn txn{producer_id{3}, offset{10}, offset{20}, offset{21}};
  auto bytes = txn_index::encode(txn);
  ASSERT_EQ(bytes.size(), txn_index::entry_size);
  const auto twice = [&] {
    auto out = bytes;
    out.insert(out.end(), bytes.begin(), bytes.end());
    return out;
  }();
  EXPECT_EQ(txn_index::decode(twice).value(), (std::vector<aborted_txn>{txn, txn}));
  EXPECT_EQ(txn_index::decode(std::span(twice).first(twice.size() - 1)).value(), std::vector<aborted_txn>{txn});
  bytes[1] = std::byte{1};
  EXPECT_EQ(txn_index::decode(bytes).error(), errc::corrupt_log);
}

}  // namespace
}  // namespace ferry::storage
