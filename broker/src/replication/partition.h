#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <vector>

#include "base/result.h"
#include "config/topic_config.h"
#include "coord/cluster_view.h"
#include "metrics/broker_metrics.h"
#include "model/ids.h"
#include "replication/replica_selector.h"
#include "storage/log.h"

namespace ferry::replication {

// Someone waiting for new data in a partition: a long-polling fetch. notify() may be called from any
// thread and must not block.
class data_waiter {
 public:
  virtual ~data_waiter() = default;
  virtual void notify() = 0;
};

// A partition replica on this broker: its log, and its role in the partition's replication. Leadership
// comes from the partition state in ZooKeeper (leader broker, leader epoch and ISR); only the leader takes
// produce requests and serves consumers and followers. Consumers read up to the high watermark; followers
// read up to the log end, and each fetch tells the leader where the follower's log ends (its fetch offset).
//
// The high watermark is the minimum log end over the ISR: the leader's own counts only what is visible
// (records whose flush the flush policy asked for count once flushed), and a follower's counts from its
// first fetch in the current leadership (until then it holds the high watermark where it is). It only moves
// forward; after a restart it starts from the replication-offset-checkpoint.
//
// Thread-safety: every method may be called from any thread. The partition adds no lock of its own on the
// append path: the log's writer lock is the only one.
class partition {
 public:
  partition(topic_partition id, std::shared_ptr<storage::log> log, config::topic_settings settings,
            metrics::topic_metrics counters, offset high_watermark = offset{0});

  [[nodiscard]] const topic_partition& id() const { return id_; }
  [[nodiscard]] storage::log& log() { return *log_; }
  [[nodiscard]] const metrics::topic_metrics& counters() const { return counters_; }

  // The topic's effective settings; replaced whole when its config changes.
  [[nodiscard]] std::shared_ptr<const config::topic_settings> settings() const { return settings_.load(); }
  void update_settings(config::topic_settings settings);

  // What the partition state says of a leadership of this broker's.
  struct leadership {
    leader_epoch epoch;
    std::vector<broker_id> followers;      // every other assigned replica
    std::vector<broker_id> isr_followers;  // those of them in the ISR
    coord::partition_state state;          // as the view has it: what an ISR change is conditional on
    std::vector<broker_id> leaving;        // followers in a controlled shutdown: they fetch, but do not join the ISR
    // The broker epoch (registration czxid) of each follower registered now; a follower missing here is not
    // live and cannot join the ISR, and one whose epoch changed restarted: what it fetched before is forgotten.
    std::map<broker_id, std::int64_t> live_followers;
    friend bool operator==(const leadership&, const leadership&) = default;
  };
  // Starts leading, or takes a new ISR or epoch while leading. A new epoch starts in the log at its end
  // (storage::log::begin_epoch), and forgets where the followers were.
  void become_leader(const leadership& state);
  void become_follower(leader_epoch epoch, broker_id leader = no_broker);
  [[nodiscard]] bool is_leader() const { return leader_.load(); }
  // The broker this replica follows; no_broker while it leads or no leader is known.
  [[nodiscard]] broker_id leader() const { return broker_id{leader_id_.load()}; }
  [[nodiscard]] leader_epoch epoch() const { return leader_epoch{epoch_.load()}; }
  // The ISR's size, this broker included, while it leads: the ISR as ZooKeeper has it (Kafka's committed ISR),
  // which min.insync.replicas counts. A joiner whose ISR write is still on its way holds the high watermark
  // (the maximal ISR) but does not count here until the write is in the view.
  [[nodiscard]] std::size_t in_sync_replicas() const;
  [[nodiscard]] leadership current_leadership() const;
  // While it leads: how far each follower is behind the log end, as its last fetch said, in records and in
  // bytes of the batches it lacks (0 when the log cannot tell, such as while its dir is offline).
  struct follower_lag {
    broker_id follower;
    std::int64_t records = 0;
    std::uint64_t bytes = 0;
  };
  [[nodiscard]] std::vector<follower_lag> follower_lags() const;
  // While it leads: the followers in the ISR that have fetched in this leadership, where their logs end and when
  // they were last caught up, as replicas a consumer could read from (racks left unset).
  [[nodiscard]] std::vector<read_candidate> in_sync_followers() const;
  // While it leads: whether `follower` is in the ISR.
  [[nodiscard]] bool has_in_sync_follower(broker_id follower) const;

  // Appends one validated client batch with the current leader epoch, then wakes waiting fetches.
  // errc::not_leader when this replica does not lead. When the result says flush_required, the batch counts
  // as acknowledged (and becomes visible) only after flush() up to its end succeeded.
  result<storage::append_result> append(std::span<std::byte> batch);
  // A batch a coordinator writes under a producer's id (storage/log.h append_from_coordinator).
  result<storage::append_result> append_from_coordinator(std::span<std::byte> batch);
  // A transaction marker (storage/log.h append_marker), as a leader writes it for the transaction coordinator.
  // It ends the verifications of the producer's batches begun before it.
  result<storage::append_result> append_marker(producer_id producer, producer_epoch epoch, model::txn_marker marker);
  // KIP-890 part 1: a transactional batch that would open its producer's transaction here is appended only
  // after the transaction coordinator confirmed that the partition is in that transaction. The guard begun
  // before asking is ended by a marker of the producer, so a batch that arrives after its transaction ended
  // (a late retry) cannot open a transaction nobody will end: append_verified then fails with
  // storage::errc::invalid_txn_state.
  [[nodiscard]] std::uint64_t begin_txn_verification(producer_id producer);
  result<storage::append_result> append_verified(std::span<std::byte> batch, producer_id producer, std::uint64_t guard);
  // Follower side, for the replica fetcher (blocking: not on a network thread). errc::not_follower while
  // this replica leads. append_from_leader stores the leader's batches as they are and follows the leader's
  // high watermark as far as the log reaches (only forward); truncate_to and reset_to are the log's, with
  // the high watermark kept at or below the new end.
  result<storage::append_result> append_from_leader(std::span<const std::byte> batches, offset leader_high_watermark);
  void follow_high_watermark(offset leader_high_watermark);
  result<void> truncate_to(offset end);
  result<void> reset_to(offset start);

  // fsyncs the log up to `upto` (blocking: not on a network thread), then moves the high watermark.
  result<void> flush(offset upto);

  // A consumer's isolation.level: read_uncommitted reads up to the high watermark, read_committed up to the last
  // stable offset (storage/log.h), below every transaction not yet ended.
  enum class isolation { read_uncommitted, read_committed };
  // What a consumer may read: from `from`, up to the high watermark or the last stable offset. errc::not_leader
  // unless this replica leads.
  result<storage::read_result> read(offset from, std::uint64_t max_bytes, isolation level);
  // The same from this replica whatever its role: a consumer's fetch from a follower (KIP-392) reads up to the
  // high watermark the follower learned from its leader.
  result<storage::read_result> read_any_replica(offset from, std::uint64_t max_bytes, isolation level);
  // The aborted transactions a read_committed read of [from, upto) returns to the consumer.
  result<std::vector<storage::aborted_txn>> aborted_transactions(offset from, offset upto) {
    return log_->aborted_transactions(from, upto);
  }
  // A follower's fetch from `from`: that is where its log ends, so the high watermark may move (waking
  // whoever waits on it); then it reads up to the log end. errc::not_leader when this replica does not lead,
  // or `follower` is not an assigned replica.
  // `log_start` is where the follower's log starts (Fetch v5+), for low_watermark().
  result<storage::read_result> read_for_follower(broker_id follower, offset from, std::uint64_t max_bytes,
                                                 std::int64_t now_ms, offset log_start = no_offset);

  // DeleteRecords: the log starts at `to` (-1: the high watermark) from now on, here and, as they fetch, on the
  // followers. errc::not_leader unless this replica leads; storage::errc::offset_out_of_range past the high
  // watermark. Returns the leader's log start.
  result<offset> delete_records(offset to);
  // While it leads: the lowest log start of this replica and the in-sync followers (Kafka's low watermark), what
  // DeleteRecords waits for.
  [[nodiscard]] offset low_watermark() const;
  // Follower side: the leader's log start, as its fetch answers give it; this log starts there too, up to the
  // high watermark this replica learned.
  result<void> follow_log_start(offset leader_log_start);

  // The ISR this leader wants now, and the state it would replace; nullopt when it wants no change or one
  // is on its way. A follower leaves when it has not been caught up (at the log end) for `lag_max_ms`
  // (replica.lag.time.max.ms); one joins once a fetch of its in this leadership, made since it last left the
  // ISR and since its broker last registered, reached the high watermark and the start of the current epoch,
  // and while its broker is registered (Kafka's maybeExpandIsr with KAFKA-14140 and KIP-903): a dead or restarted
  // follower never rejoins on what it fetched before. A joiner counts for the high watermark at once (Kafka's
  // maximal ISR), decided under the same lock as the high watermark, so the high watermark never passes it; one
  // that leaves counts until the view drops it. The change is on its way until a become_leader with a newer state (one
  // with the same state version is from before the write, and changes nothing), or isr_change_failed().
  struct isr_change {
    coord::partition_state expected;
    std::vector<broker_id> isr;
  };
  // Times are monotonic milliseconds (steady_ms), here and in read_for_follower.
  [[nodiscard]] std::optional<isr_change> wanted_isr_change(std::int64_t now_ms, std::int64_t lag_max_ms);
  void isr_change_failed();

  [[nodiscard]] offset high_watermark() const { return offset{high_watermark_.load()}; }
  [[nodiscard]] offset last_stable_offset() const { return log_->last_stable_offset(high_watermark()); }
  [[nodiscard]] offset log_start_offset() const { return log_->log_start_offset(); }
  [[nodiscard]] offset log_end_offset() const { return log_->log_end_offset(); }

  // Background upkeep.
  result<std::size_t> apply_retention();
  result<void> flush_by_time();

  // Long polls, and produce requests waiting for acks=all. A fetch registers before it reads (so an append in between
  // is never missed), is notified at most once per append, and unregisters when it completes: idle partitions keep no
  // stale entries.
  void add_waiter(const std::shared_ptr<data_waiter>& waiter);
  void remove_waiter(const std::shared_ptr<data_waiter>& waiter);
  [[nodiscard]] std::size_t waiter_count() const;
  // Wakes every waiter: data arrived, the high watermark moved, or the partition is going away (its fetches
  // then find out).
  void notify_waiters();

 private:
  // Moves the high watermark up to the minimum log end over the ISR; true when it moved.
  bool advance_high_watermark();

  topic_partition id_;
  std::shared_ptr<storage::log> log_;
  std::atomic<std::shared_ptr<const config::topic_settings>> settings_;
  metrics::topic_metrics counters_;
  std::atomic<bool> leader_{false};
  std::atomic<std::int32_t> epoch_{-1};
  std::atomic<std::int32_t> leader_id_{-1};
  std::atomic<std::int64_t> high_watermark_;
  // Where a follower is, as its fetches in the current epoch said (Kafka's Replica fetch state).
  struct follower_progress {
    offset log_end{-1};                  // -1 until it fetches
    std::int64_t last_caught_up_ms = 0;  // last time it was at the leader's log end
    std::int64_t last_fetch_ms = 0;
    offset leader_end_at_last_fetch{-1};
    offset log_start{-1};  // where its log starts, as its last fetch said (-1: unknown)
  };
  mutable std::mutex followers_mutex_;
  leadership leadership_;                             // guarded by followers_mutex_
  std::map<broker_id, follower_progress> followers_;  // guarded by followers_mutex_
  bool isr_change_in_flight_ = false;                 // guarded by followers_mutex_
  mutable std::mutex waiters_mutex_;
  // Markers and verified appends take it, so that a guard's check and the append it allows are one step.
  std::mutex verification_mutex_;
  std::map<producer_id, std::uint64_t> verification_guards_;  // guarded by verification_mutex_
  std::uint64_t next_guard_ = 0;                              // guarded by verification_mutex_
  std::unordered_set<std::shared_ptr<data_waiter>> waiters_;  // guarded by waiters_mutex_
};

// The storage settings a topic's configuration implies.
[[nodiscard]] storage::log_config to_log_config(const config::topic_settings& settings);

}  // namespace ferry::replication
