#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "group/offsets_records.h"
#include "model/ids.h"

namespace ferry::group {

// A group's state, with the names DescribeGroups and ListGroups report: the classic protocol's, and Assigning
// and Reconciling of the consumer protocol (group/consumer_group.h).
enum class group_state { empty, preparing_rebalance, completing_rebalance, stable, dead, assigning, reconciling };
[[nodiscard]] std::string_view state_name(group_state state);

// The broker settings that bound groups (Kafka's group.* names).
struct group_limits {
  std::int32_t min_session_timeout_ms = 6000;
  std::int32_t max_session_timeout_ms = 1800000;
  std::int32_t initial_rebalance_delay_ms = 3000;
  std::int32_t max_size = 0x7fffffff;
};

struct protocol_metadata {
  std::string name;
  std::vector<std::byte> metadata;
};

struct join_request {
  std::string member_id;  // empty for a member joining for the first time
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  std::int32_t session_timeout_ms = 0;
  std::int32_t rebalance_timeout_ms = 0;
  std::string protocol_type;
  std::vector<protocol_metadata> protocols;
  bool require_known_member_id = false;   // JoinGroup v4+ (KIP-394)
  bool supports_skip_assignment = false;  // JoinGroup v9+
};

struct join_result {
  std::error_code error;
  std::int32_t generation = -1;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::string leader;
  bool skip_assignment = false;
  std::string member_id;
  struct member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::vector<std::byte> metadata;
  };
  std::vector<member> members;  // the leader's answer only
};

struct sync_request {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::int32_t generation = -1;
  std::optional<std::string> protocol_type;  // SyncGroup v5+
  std::optional<std::string> protocol_name;
  std::vector<std::pair<std::string, std::vector<std::byte>>> assignments;  // the leader's only
};

struct sync_result {
  std::error_code error;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::vector<std::byte> assignment;
};

// Parked requests are answered through these, possibly later and from another thread's call into the group.
// They run while the group's owner holds its lock, so they must only hand the result on (post it), never call back
// into the group.
using join_callback = std::function<void(join_result)>;
using sync_callback = std::function<void(sync_result)>;

struct committed_offset {
  offset committed;
  leader_epoch epoch{-1};
  std::string metadata;
  std::int64_t commit_timestamp_ms = 0;
  std::optional<std::int64_t> expire_timestamp_ms;  // only from OffsetCommit v1
  friend bool operator==(const committed_offset&, const committed_offset&) = default;
};

// One member, as DescribeGroups shows it.
struct member_description {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  std::vector<std::byte> metadata;  // of the selected protocol, while the group is stable
  std::vector<std::byte> assignment;
};

// One consumer group of the classic protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) and its committed
// offsets: Kafka's GroupMetadata and the parts of its GroupCoordinator that act on one group.
//
// States: Empty -> PreparingRebalance (a member joins) -> CompletingRebalance (everyone rejoined, or the rebalance
// timeout passed: the generation goes up and JoinGroup answers go out; the leader's carries every member's
// metadata) -> Stable (the leader's SyncGroup assignment is stored in __consumer_offsets) -> PreparingRebalance
// (a member joins with new metadata, leaves, or its session expires). A rebalance that ends with no members
// goes back to Empty; Dead is a deleted or unloaded group.
//
// Not thread-safe: the coordinator serialises calls. Times are wall-clock milliseconds, given by the caller;
// tick() runs the timers (sessions, the rebalance and initial delays, members that never sync).
//
// Writes: what must reach __consumer_offsets before the group goes on (the group's metadata when a generation
// is assigned, or a static member is replaced) is queued in take_stores(); the owner writes it and reports the
// outcome with stored(). Committed offsets are validated here, written by the owner, and applied with
// apply_commit once written, as Kafka does.
class classic_group {
 public:
  classic_group(std::string id, const group_limits& limits, std::int64_t now_ms);
  // A group read back from __consumer_offsets: its members keep their assignments, and their sessions
  // start now.
  static classic_group loaded(std::string id, const group_metadata_value& value, const group_limits& limits,
                              std::int64_t now_ms);

  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] group_state state() const { return state_; }
  [[nodiscard]] std::int32_t generation() const { return generation_; }
  [[nodiscard]] const std::optional<std::string>& protocol_type() const { return protocol_type_; }
  [[nodiscard]] const std::optional<std::string>& protocol_name() const { return protocol_; }
  [[nodiscard]] const std::string& leader() const { return leader_; }
  [[nodiscard]] std::size_t member_count() const { return members_.size(); }
  [[nodiscard]] bool has_member(const std::string& member_id) const { return members_.contains(member_id); }
  [[nodiscard]] std::vector<member_description> describe() const;
  // The group as __consumer_offsets stores it (GroupMetadataValue).
  [[nodiscard]] group_metadata_value snapshot(std::int64_t now_ms) const;
  // The first rule of the group's bookkeeping it breaks, or empty: while it has members the leader is one of
  // them; every pending sync is a member; the static-member table and the members' instance ids agree; an
  // Empty group has no members. Checked after every step by the model-based fuzz target.
  [[nodiscard]] std::string broken_invariant() const;

  void join(const join_request& request, std::int64_t now_ms, join_callback done);
  void sync(const sync_request& request, std::int64_t now_ms, sync_callback done);
  [[nodiscard]] std::error_code heartbeat(const std::string& member_id,
                                          const std::optional<std::string>& group_instance_id, std::int32_t generation,
                                          std::int64_t now_ms);
  // One leaving member of LeaveGroup (v3+ leave in batches).
  [[nodiscard]] std::error_code leave(const std::string& member_id, const std::optional<std::string>& group_instance_id,
                                      std::int64_t now_ms);
  void tick(std::int64_t now_ms);
  // The group goes away (deleted, or its partition moved to another coordinator): parked requests get `why`.
  void unload(std::error_code why);

  // Whether an OffsetCommit with this membership may go ahead (generation -1: a commit from outside group
  // management, allowed while the group is empty). A member's commit counts as a heartbeat.
  [[nodiscard]] std::error_code validate_commit(const std::string& member_id,
                                                const std::optional<std::string>& group_instance_id,
                                                std::int32_t generation, std::int64_t now_ms);
  // A commit that reached the log. `sequence` orders commits as they were appended (the coordinator numbers them
  // in log order); a completion older than the commit already applied changes nothing, so memory ends as the log
  // does whatever order the completions run in (Kafka's pendingOffsetCommits; review finding 14). 0: unordered
  // (read back from the log, or a transaction's offsets at its marker).
  void apply_commit(const topic_partition& tp, const committed_offset& value, std::uint64_t sequence = 0);
  // Offsets committed through this coordinator since it loaded the group (one per partition of an OffsetCommit
  // that was written), for the commit rate; offsets read back from __consumer_offsets are not counted.
  void count_commit() { ++commits_; }
  [[nodiscard]] std::uint64_t commits() const { return commits_; }
  void remove_offset(const topic_partition& tp);
  [[nodiscard]] const std::map<topic_partition, committed_offset>& offsets() const { return offsets_; }
  // Offsets past offsets.retention.minutes: for an empty group, counted from when it became empty (or from
  // the commit, if later); for a group outside group management, from the commit; an explicit expire
  // timestamp (OffsetCommit v1) wins. Groups with members keep their offsets.
  [[nodiscard]] std::vector<topic_partition> expired_offsets(std::int64_t now_ms, std::int64_t retention_ms) const;
  // The topics the members subscribe to, from their consumer protocol metadata (OffsetDelete refuses these).
  [[nodiscard]] std::set<std::string> subscribed_topics() const;

  // A group metadata write the owner must make, for the generation it describes.
  struct pending_store {
    std::int32_t generation;
    group_metadata_value value;
  };
  [[nodiscard]] std::vector<pending_store> take_stores();
  // The outcome of a write from take_stores().
  void stored(std::int32_t generation, std::error_code outcome, std::int64_t now_ms);

 private:
  struct member {
    std::string id;
    std::optional<std::string> instance_id;
    std::string client_id;
    std::string client_host;
    std::int32_t session_timeout_ms = 0;
    std::int32_t rebalance_timeout_ms = 0;
    std::string protocol_type;
    std::vector<protocol_metadata> protocols;
    std::vector<std::byte> assignment;
    join_callback awaiting_join;
    sync_callback awaiting_sync;
    bool supports_skip_assignment = false;
    std::int64_t session_deadline_ms = 0;
  };

  [[nodiscard]] std::error_code check_join(const join_request& request) const;
  void join_new_member(const join_request& request, std::int64_t now_ms, join_callback done);
  void join_known_member(const join_request& request, std::int64_t now_ms, join_callback done);
  void replace_static_member(const join_request& request, std::int64_t now_ms, join_callback done);
  void add_member_and_rebalance(const join_request& request, std::string member_id, std::int64_t now_ms,
                                join_callback done);
  void update_member_and_rebalance(member& m, const join_request& request, std::int64_t now_ms, join_callback done);
  static void update_member(member& m, const join_request& request);
  [[nodiscard]] bool same_protocols(const member& m, const join_request& request) const;
  // The generation's answer to one member; the leader's carries every member's metadata when asked.
  [[nodiscard]] join_result join_answer(const member& m, bool with_members) const;

  void maybe_prepare_rebalance(std::int64_t now_ms);
  void prepare_rebalance(std::int64_t now_ms);
  void try_complete_join(std::int64_t now_ms);
  void complete_join(std::int64_t now_ms);
  [[nodiscard]] bool all_members_joined() const;
  [[nodiscard]] std::string select_protocol() const;
  [[nodiscard]] std::int32_t rebalance_timeout_ms() const;
  void complete_sync(std::error_code error);
  // Callers pass ids that live in the tables this changes (static_members_, pending_sync_): see the definition.
  void remove_member(const std::string& member_id);
  void enter(group_state next, std::int64_t now_ms);
  void touch(member& m, std::int64_t now_ms) const;
  [[nodiscard]] bool fenced(const std::string& member_id, const std::optional<std::string>& instance_id) const;

  std::string id_;
  group_limits limits_;
  group_state state_ = group_state::empty;
  std::int64_t state_since_ms_ = 0;
  std::int32_t generation_ = 0;
  std::optional<std::string> protocol_type_;
  std::optional<std::string> protocol_;
  std::string leader_;
  std::map<std::string, member> members_;
  std::map<std::string, std::string> static_members_;  // group.instance.id -> member id
  // KIP-394: ids handed out with MEMBER_ID_REQUIRED, and when they lapse unless their owner joins with them.
  std::map<std::string, std::int64_t> pending_members_;
  // Members of the current generation that have not sent SyncGroup yet, and when they are given up.
  std::set<std::string> pending_sync_;
  std::int64_t sync_deadline_ms_ = 0;
  // The join phase: when it ends regardless, and for the first rebalance of an empty group
  // (group.initial.rebalance.delay.ms) whether members arrived during the last delay and how long it may grow.
  std::int64_t join_deadline_ms_ = 0;
  bool initial_delay_ = false;
  bool new_member_added_ = false;
  std::int64_t initial_delay_limit_ms_ = 0;
  std::map<topic_partition, committed_offset> offsets_;
  std::map<topic_partition, std::uint64_t> commit_sequences_;  // of the commit applied last, when ordered
  std::uint64_t commits_ = 0;
  std::vector<pending_store> stores_;
  // The generation whose leader assignment is being stored (CompletingRebalance until it is).
  std::optional<std::int32_t> storing_assignment_;
};

}  // namespace ferry::group
