#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/result.h"
#include "model/control_record.h"
#include "model/coordinator_log.h"
#include "model/ids.h"
#include "txn/txn_records.h"

namespace ferry::txn {

inline constexpr std::string_view transaction_state_topic = "__transaction_state";

struct coordinator_config {
  std::int32_t log_partitions = 50;                   // transaction.state.log.num.partitions
  std::int32_t max_timeout_ms = 900000;               // transaction.max.timeout.ms
  std::int64_t id_expiration_ms = 604800000;          // transactional.id.expiration.ms
  std::int64_t abort_timed_out_interval_ms = 10000;   // transaction.abort.timed.out.transaction.cleanup.interval.ms
  std::int64_t remove_expired_interval_ms = 3600000;  // transaction.remove.expired.transaction.cleanup.interval.ms
};

struct producer_identity {
  producer_id id = no_producer_id;
  producer_epoch epoch{-1};
  bool operator==(const producer_identity&) const = default;
};

// Cluster-unique producer ids (the server's come from blocks reserved in ZooKeeper). Blocking.
class producer_id_source {
 public:
  virtual ~producer_id_source() = default;
  virtual result<producer_id> next() = 0;
};

// The second phase of a commit or abort: one marker for each partition of the transaction.
struct marker_request {
  producer_identity producer;
  model::marker_type type = model::marker_type::abort;
  std::int32_t coordinator_epoch = 0;  // the leader epoch of the transaction's __transaction_state partition
  std::vector<topic_partition> partitions;
};

// Writes markers to the partitions' leaders (WriteTxnMarkers), each replicated as acks=all.
class marker_writer {
 public:
  virtual ~marker_writer() = default;
  // Calls `done` once, with the partitions that still need the marker (no leader now, a leader that failed or
  // did not answer): the coordinator sends those again later. A partition that no longer exists counts as
  // done, as in Kafka. `done` may run on any thread, before write returns too.
  virtual void write(marker_request request, std::function<void(std::vector<topic_partition> retry)> done) = 0;
};

// What DescribeTransactions shows of one transactional id.
struct txn_description {
  std::string transactional_id;
  txn_state state = txn_state::empty;
  std::int32_t timeout_ms = 0;
  std::int64_t start_ms = -1;
  producer_identity producer;
  std::vector<topic_partition> partitions;
};

// What ListTransactions shows.
struct txn_listing {
  std::string transactional_id;
  producer_id pid = no_producer_id;
  txn_state state = txn_state::empty;
  std::int64_t start_ms = -1;  // of an open transaction, else -1
};

// The transaction coordinator: the transactional ids whose __transaction_state partitions this broker leads,
// each partition a shard with its own lock. Requests for an id of a partition led elsewhere get
// not_coordinator; while a newly led partition's records are read back, coordinator_loading.
//
// A request that changes a transaction writes its next state to the log first and applies it once the write
// is replicated; while the write or the markers of a commit or abort are in flight, other requests for the
// id get concurrent_transactions, which clients retry. Completing a prepared commit or abort (markers, then
// CompleteCommit/CompleteAbort) runs on after the client's EndTxn is answered, is retried from tick(), and is
// resumed by the next coordinator when leadership moves.
//
// Thread-safety: every method may be called from any thread. Callbacks run without a shard's lock held, on
// the thread that completed a write or on the caller's; they must only hand the result on.
class txn_coordinator {
 public:
  txn_coordinator(const coordinator_config& config, model::coordinator_log& log, producer_id_source& ids,
                  marker_writer& markers);
  ~txn_coordinator();
  txn_coordinator(const txn_coordinator&) = delete;
  txn_coordinator& operator=(const txn_coordinator&) = delete;

  [[nodiscard]] const coordinator_config& config() const { return config_; }
  [[nodiscard]] std::int32_t partition_for(std::string_view transactional_id) const {
    return model::coordinator_partition_for(transactional_id, config_.log_partitions);
  }

  // The partitions led here now, with their leader epochs (the coordinator epoch markers carry). Partitions no
  // longer led (or led in a new epoch) are dropped; the partitions returned must be loaded with load(), off
  // the network threads.
  [[nodiscard]] std::vector<std::int32_t> lead(const std::map<std::int32_t, leader_epoch>& led);
  // Reads a partition's transactions back from the log, then completes the commits and aborts it finds
  // prepared. not_coordinator when lead() gave the partition up meanwhile.
  result<void> load(std::int32_t partition, std::int64_t now_ms);

  // InitProducerId with a transactional id: the id's producer id and a new epoch, fencing older producers of
  // the id. An open transaction is aborted first (answered with concurrent_transactions until that is done).
  // `expected` is the producer's current id and epoch when it asks for a bump (KIP-360). Blocks while a new
  // producer id is reserved: call off the network threads.
  using init_callback = std::function<void(result<producer_identity>)>;
  void init_producer_id(const std::string& transactional_id, std::int32_t timeout_ms,
                        const std::optional<producer_identity>& expected, std::int64_t now_ms,
                        const init_callback& done);

  using done_callback = std::function<void(std::error_code)>;
  // AddPartitionsToTxn and AddOffsetsToTxn (the group's __consumer_offsets partition). `by_broker`: a partition
  // leader or group coordinator adds them for a producer of transaction version 2 (KIP-890 part 2), which marks
  // the transaction as one whose epoch a fence bumps twice (see fence_and_abort).
  void add_partitions(const std::string& transactional_id, producer_identity producer,
                      const std::vector<topic_partition>& partitions, bool by_broker, std::int64_t now_ms,
                      done_callback done);
  // KIP-890 part 1: whether `partition` is in the producer's open transaction, asked by a partition leader
  // before it takes the transaction's first batch (AddPartitionsToTxn v4+ VerifyOnly).
  [[nodiscard]] std::error_code verify_partition(const std::string& transactional_id, producer_identity producer,
                                                 const topic_partition& partition);
  // EndTxn: answered once PrepareCommit/PrepareAbort is written, with the producer id and epoch the producer goes
  // on with; the markers follow. With `bump_epoch` (KIP-890 part 2, EndTxn v5+) every commit or abort bumps the
  // epoch, so the markers fence the batches of the transaction they close, and a producer id whose epoch is
  // exhausted is replaced by a new one; without it the producer keeps its id and epoch.
  using end_callback = std::function<void(result<producer_identity>)>;
  void end_txn(const std::string& transactional_id, producer_identity producer, bool commit, bool bump_epoch,
               std::int64_t now_ms, const end_callback& done);

  [[nodiscard]] result<txn_description> describe(const std::string& transactional_id);
  struct listing {
    std::vector<txn_listing> transactions;
    bool loading = false;  // some partition led here is still loading
  };
  [[nodiscard]] listing list();

  // Aborts transactions open longer than their timeout (every transaction.abort.timed.out.transaction.
  // cleanup.interval.ms), expires idle transactional ids, and retries unfinished markers.
  void tick(std::int64_t now_ms);

 private:
  struct shard;
  struct transaction;
  struct pending_write;
  [[nodiscard]] result<std::shared_ptr<shard>> shard_for(const std::string& transactional_id) const;
  // Marks `next` as the transaction's write in flight; issue() it once the shard's lock is released.
  pending_write prepare_write(const std::shared_ptr<shard>& s, const std::string& id, transaction& t,
                              txn_log_value next, std::function<void(std::error_code)> after);
  void issue(pending_write write);
  // Begins or resumes the second phase of a prepared transaction: markers, then the Complete record.
  void complete(const std::shared_ptr<shard>& s, const std::string& transactional_id);
  // What EndTxn does for a transaction in its state: an answer now, or (nothing) write Prepare.
  static std::optional<result<producer_identity>> end_classic(const transaction& t, producer_identity producer,
                                                              bool commit);
  static std::optional<result<producer_identity>> end_bumping(const transaction& t, producer_identity producer,
                                                              bool commit);
  // Writes PrepareAbort for an open transaction with its epoch bumped (fencing its producer): twice for a
  // producer of transaction version 2, whose EndTxn with the epoch one below the stored one is a retry.
  pending_write fence_and_abort(const std::shared_ptr<shard>& s, const std::string& id, transaction& t);
  [[nodiscard]] std::vector<std::shared_ptr<shard>> shards() const;
  void note_time(std::int64_t now_ms);

  coordinator_config config_;
  model::coordinator_log& log_;
  producer_id_source& ids_;
  marker_writer& markers_;
  mutable std::mutex shards_mutex_;
  std::map<std::int32_t, std::shared_ptr<shard>> shards_;  // guarded by shards_mutex_
  std::atomic<std::int64_t> now_ms_{0};                    // the latest time a caller gave
  std::int64_t next_timeout_check_ms_ = 0;                 // tick()'s thread only
  std::int64_t next_expiry_check_ms_ = 0;                  // tick()'s thread only
};

}  // namespace ferry::txn
