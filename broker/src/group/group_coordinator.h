#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/result.h"
#include "group/classic_group.h"
#include "group/consumer_group.h"
#include "group/partition_loader.h"
#include "model/coordinator_log.h"
#include "model/ids.h"

namespace ferry::group {

inline constexpr std::string_view offsets_topic = "__consumer_offsets";

// The group's __consumer_offsets partition.
[[nodiscard]] inline std::int32_t offsets_partition_for(std::string_view group_id, std::int32_t partitions) {
  return model::coordinator_partition_for(group_id, partitions);
}

// The __consumer_offsets partitions this broker leads.
using offsets_log = model::coordinator_log;

struct coordinator_config {
  std::int32_t offsets_partitions = 50;                        // offsets.topic.num.partitions
  group_limits limits;                                         // group.*
  std::int32_t offset_metadata_max_bytes = 4096;               // offset.metadata.max.bytes
  std::int64_t offsets_retention_ms = 7LL * 24 * 3600 * 1000;  // offsets.retention.minutes
  std::int64_t offsets_retention_check_interval_ms = 600000;   // offsets.retention.check.interval.ms
  consumer_group_config consumer;                              // group.consumer.*
};

// A group's type, as ListGroups v5 and ConsumerGroupDescribe name it.
enum class group_type { classic, consumer };
[[nodiscard]] std::string_view type_name(group_type type);

// What ListGroups and DescribeGroups show of a group.
struct group_listing {
  std::string group_id;
  std::string protocol_type;
  group_state state;
  group_type type = group_type::classic;
};
struct group_description {
  std::string group_id;
  group_type type = group_type::classic;
  group_state state = group_state::dead;
  std::string protocol_type;
  std::string protocol;  // the selected protocol while stable, else empty
  std::vector<member_description> members;
};

// A group as the lag metrics and the admin API list it: no member details, committed offsets without metadata.
struct group_overview {
  std::string group_id;
  group_state state = group_state::empty;
  std::string protocol_type;
  std::string protocol;  // the selected protocol while stable (consumer groups: the assignor), else empty
  group_type type = group_type::classic;
  std::size_t members = 0;
  std::int32_t offsets_partition = 0;  // the __consumer_offsets partition that holds it
  std::vector<std::pair<topic_partition, offset>> committed;
  std::uint64_t offset_commits = 0;  // offsets committed here since this coordinator loaded the group
};

// The group coordinator: the groups whose __consumer_offsets partitions this broker leads, each partition a
// shard with its own lock. Requests for a group of a partition led elsewhere get not_coordinator; while a
// newly led partition's records are read back, coordinator_loading.
//
// Thread-safety: every method may be called from any thread. Callbacks given to join and sync (and the
// completion callbacks of writes) run with a shard's lock held or on the thread that completed a write; they
// must only hand the result on.
class group_coordinator {
 public:
  group_coordinator(const coordinator_config& config, offsets_log& log);
  ~group_coordinator();
  group_coordinator(const group_coordinator&) = delete;
  group_coordinator& operator=(const group_coordinator&) = delete;

  [[nodiscard]] const coordinator_config& config() const { return config_; }
  [[nodiscard]] std::int32_t partition_for(std::string_view group_id) const {
    return offsets_partition_for(group_id, config_.offsets_partitions);
  }

  // The partitions led here now, with their leader epochs. Partitions no longer led (or led in a new epoch)
  // are unloaded, their parked requests answered with not_coordinator; the partitions returned must be
  // loaded with load(), off the network threads.
  [[nodiscard]] std::vector<std::int32_t> lead(const std::map<std::int32_t, leader_epoch>& led);
  // Reads a partition's groups and offsets back from the log; errors leave it loading until lead() says otherwise.
  // not_coordinator when lead() gave the partition up meanwhile (nothing to report).
  result<void> load(std::int32_t partition, std::int64_t now_ms);

  void join(const std::string& group_id, const join_request& request, std::int64_t now_ms, join_callback done);
  void sync(const std::string& group_id, const sync_request& request, std::int64_t now_ms, sync_callback done);
  [[nodiscard]] std::error_code heartbeat(const std::string& group_id, const std::string& member_id,
                                          const std::optional<std::string>& group_instance_id, std::int32_t generation,
                                          std::int64_t now_ms);
  struct leaving_member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
  };
  // The group's error, or one per member.
  [[nodiscard]] result<std::vector<std::error_code>> leave(const std::string& group_id,
                                                           const std::vector<leaving_member>& members,
                                                           std::int64_t now_ms);

  struct offset_commit {
    topic_partition partition;
    committed_offset value;
  };
  // The producer of a TxnOffsetCommit.
  struct txn_producer {
    producer_id id = no_producer_id;
    producer_epoch epoch{-1};
  };
  struct commit_request {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::int32_t generation = -1;
    std::vector<offset_commit> offsets;
    // TxnOffsetCommit: the offsets are written in the producer's transaction and stay pending, invisible to
    // OffsetFetch, until its commit marker reaches the group's partition (complete_txn); an abort drops them.
    std::optional<txn_producer> transaction;
  };
  // `done` gets one error per offset (in order), all the group's error when it refused the commit.
  using commit_callback = std::function<void(std::vector<std::error_code>)>;
  void commit(const std::string& group_id, commit_request request, std::int64_t now_ms, commit_callback done);
  // A transaction marker of `producer` reached __consumer_offsets partition `partition`: its pending offsets
  // there become the groups' committed offsets (commit) or are dropped (abort).
  void complete_txn(std::int32_t partition, producer_id producer, bool commit);
  // The group's partitions with transactional offsets still pending: what OffsetFetch with require_stable
  // (KIP-447) answers UNSTABLE_OFFSET_COMMIT for.
  [[nodiscard]] std::vector<topic_partition> pending_txn_offsets(const std::string& group_id);
  // The group's committed offsets: of the partitions asked for (nullopt for those without one), or all. A
  // member of a consumer-protocol group names itself and its epoch (OffsetFetch v9+).
  using fetched_offsets = std::vector<std::pair<topic_partition, std::optional<committed_offset>>>;
  [[nodiscard]] result<fetched_offsets> fetch(const std::string& group_id,
                                              const std::optional<std::vector<topic_partition>>& partitions,
                                              const std::optional<std::string>& member_id = std::nullopt,
                                              std::int32_t member_epoch = -1);

  // ConsumerGroupHeartbeat: `done` gets the answer once what it changed is written to __consumer_offsets.
  // `topics` resolves the subscribed topic names; it is called with the shard's lock held.
  using consumer_heartbeat_callback = std::function<void(consumer_heartbeat_result)>;
  void consumer_heartbeat(const std::string& group_id, const consumer_heartbeat_request& request,
                          const topic_lookup& topics, std::int64_t now_ms, consumer_heartbeat_callback done,
                          const topic_names& all_topics = {});
  // ConsumerGroupDescribe: group_id_not_found unless the group is one of the consumer protocol.
  [[nodiscard]] result<consumer_group_description> describe_consumer_group(const std::string& group_id);

  [[nodiscard]] result<group_description> describe(const std::string& group_id);
  // Every group of the partitions loaded here, and whether some partition is still loading.
  struct listing {
    std::vector<group_listing> groups;
    bool loading = false;
  };
  [[nodiscard]] listing list();
  // Every group of the partitions loaded here, with its committed offsets. Takes one shard's lock at a time, so
  // its cost is one copy of the offsets and it never holds up more than one shard.
  [[nodiscard]] std::vector<group_overview> overview();
  // Deletes an empty group and its offsets (tombstones in the log).
  void delete_group(const std::string& group_id, std::function<void(std::error_code)> done);
  // Deletes the group's offsets of these partitions; group_subscribed_to_topic for topics its members consume.
  using delete_offsets_callback = std::function<void(std::error_code, std::vector<std::error_code>)>;
  void delete_offsets(const std::string& group_id, const std::vector<topic_partition>& partitions,
                      delete_offsets_callback done);

  // Timers of every group (sessions, rebalances), and offset expiry every offsets.retention.check.interval.ms.
  void tick(std::int64_t now_ms);
  // Reads back from the log the groups that failed since the last call, off the network threads: a group whose
  // state machine threw, or whose records may not have been written, is unloaded at once (its parked requests
  // answered, its requests refused as loading) and comes back as its log has it. The rest of its partition is
  // served meanwhile.
  void reload_failed(std::int64_t now_ms);

 private:
  struct shard;
  struct group_ref {
    std::weak_ptr<shard> owner;
    std::string group_id;
  };
  [[nodiscard]] partition_load_config load_config() const;
  // Unloads a group that failed and queues it for reload_failed; call with the shard's lock held.
  void fail_group(shard& s, const std::string& group_id, std::string_view what);
  // Runs a step of a group's state machine; an exception fails the group (fail_group) and gives false.
  template <typename Work>
  bool guard_group(shard& s, const std::string& group_id, Work&& work);
  [[nodiscard]] result<std::shared_ptr<shard>> shard_for(const std::string& group_id) const;
  // Writes what groups of the shard queued (classic_group::take_stores), after the lock is released.
  void flush_stores(const std::shared_ptr<shard>& s, const std::vector<std::string>& group_ids, std::int64_t now_ms);
  void expire_offsets(const std::shared_ptr<shard>& s, std::int64_t now_ms);
  // Writes a consumer group's records; call with the shard's lock held, so that records reach the log in the
  // order the group made them. A write that may have failed reloads the group (reload_failed).
  void append_locked(const std::shared_ptr<shard>& s, const std::string& group_id,
                     std::vector<offsets_log::record> records, std::function<void(std::error_code)> done);

  coordinator_config config_;
  offsets_log& log_;
  mutable std::mutex shards_mutex_;
  std::map<std::int32_t, std::shared_ptr<shard>> shards_;  // guarded by shards_mutex_
  std::int64_t next_expiry_ms_ = 0;                        // tick()'s thread only
  std::mutex reload_mutex_;                                // taken last, after any other lock
  std::vector<group_ref> failed_writes_;                   // guarded by reload_mutex_
  std::vector<group_ref> reloads_;                         // guarded by reload_mutex_
};

}  // namespace ferry::group
