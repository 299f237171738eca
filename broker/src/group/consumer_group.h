#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "group/classic_group.h"
#include "group/consumer_group_records.h"
#include "group/offsets_records.h"
#include "group/server_assignors.h"

namespace ferry::group {

// The broker settings of the consumer protocol (Kafka's group.consumer.* names).
struct consumer_group_config {
  std::int32_t session_timeout_ms = 45000;
  std::int32_t heartbeat_interval_ms = 5000;
  std::int32_t max_size = 0x7fffffff;
  std::vector<std::string> assignors{std::string(uniform_assignor), std::string(range_assignor)};  // first: default
};

// One ConsumerGroupHeartbeat (v0-1). Null and -1 fields are "unchanged since the last heartbeat".
struct consumer_heartbeat_request {
  std::string member_id;  // never empty: the handler makes one up for a v0 join without one (v1 requires one)
  std::int32_t member_epoch = 0;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::int32_t rebalance_timeout_ms = -1;
  std::optional<std::vector<std::string>> subscribed_topic_names;
  // v1: a regular expression (RE2) the broker resolves against the cluster's topics, those created later
  // included; "" drops it.
  std::optional<std::string> subscribed_topic_regex;
  std::optional<std::string> server_assignor;
  std::optional<topic_id_partitions> owned;  // what the member owns now
  std::string client_id;
  std::string client_host;
};

struct consumer_heartbeat_result {
  std::error_code error;
  std::string error_message;
  std::string member_id;
  std::int32_t member_epoch = 0;
  std::int32_t heartbeat_interval_ms = 0;
  std::optional<topic_id_partitions> assignment;  // nullopt: unchanged
};

// A topic as the cluster has it now; nullopt from the lookup for one that does not exist.
struct topic_metadata {
  topic_uuid id{};
  std::int32_t partitions = 0;
  bool operator==(const topic_metadata&) const = default;
};
using topic_lookup = std::function<std::optional<topic_metadata>(const std::string& name)>;
// Every topic the cluster has now, for subscriptions by regular expression.
using topic_names = std::function<std::vector<std::string>()>;

// What ConsumerGroupDescribe shows.
struct consumer_member_description {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::int32_t member_epoch = 0;
  std::string client_id;
  std::string client_host;
  std::vector<std::string> subscribed_topic_names;
  std::optional<std::string> subscribed_topic_regex;
  topic_id_partitions assignment;
  topic_id_partitions target_assignment;
};
struct consumer_group_description {
  group_state state = group_state::empty;
  std::int32_t group_epoch = 0;
  std::int32_t assignment_epoch = 0;
  std::string assignor;
  std::vector<consumer_member_description> members;
  std::map<topic_uuid, std::string> topic_names;  // of the topics the members subscribed to when last assigned
};

// A group of the consumer protocol (KIP-848): members heartbeat with ConsumerGroupHeartbeat, the coordinator
// assigns partitions with a server assignor and moves each member to its target one step at a time (revoke
// first; a partition goes to its new owner once the old one released it). Kafka's ConsumerGroup and the parts
// of its GroupMetadataManager that act on one consumer group; the steps and their records follow Kafka 4.x.
//
// The group epoch goes up when a member joins with a subscription, changes it, leaves or is fenced, or when a
// subscribed topic appears, goes or grows; the next heartbeat then computes a new target assignment with the
// members' preferred assignor. States: Empty (no members), Assigning (group epoch ahead of the target's),
// Reconciling (some member not yet at the target), Stable.
//
// Every change is made in memory and described by records (group/consumer_group_records.h) that the owner
// appends to __consumer_offsets before it answers. Not thread-safe: the coordinator serialises calls.
class consumer_group {
 public:
  consumer_group(std::string id, const consumer_group_config& config);

  // The checks of a heartbeat that need no group (Kafka's request validation): invalid_request or
  // unsupported_assignor with the message Kafka gives.
  [[nodiscard]] static std::error_code check_request(const consumer_heartbeat_request& request,
                                                     const consumer_group_config& config, std::string& message);

  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] group_state state() const;
  [[nodiscard]] std::size_t member_count() const { return members_.size(); }
  [[nodiscard]] bool has_member(const std::string& member_id) const { return members_.contains(member_id); }
  [[nodiscard]] std::string assignor() const;
  [[nodiscard]] consumer_group_description describe() const;
  // The topics the members subscribe to (OffsetDelete refuses these).
  [[nodiscard]] std::set<std::string> subscribed_topics() const;
  // The first rule of the group's bookkeeping it breaks, or empty: the static-member table and the members'
  // instance ids agree; targets are of members; no partition is assigned to (or being revoked from) two
  // members, and the owner table says who holds each; no member is ahead of the target's epoch, nor the target
  // ahead of the group's. Checked after every step by the model-based fuzz target.
  [[nodiscard]] std::string broken_invariant() const;

  // One heartbeat, a join (epoch 0) or a leave (epoch -1, or -2 for a static member coming back). Appends to
  // `records` what must be written before the answer goes out; nothing when it is refused.
  // `names` lists the cluster's topics when a member subscribes by regular expression.
  consumer_heartbeat_result heartbeat(const consumer_heartbeat_request& request, const topic_lookup& topics,
                                      std::int64_t now_ms, std::vector<stored_record>& records,
                                      const topic_names& all_topics = {});
  // Fences members whose session expired or who did not revoke within their rebalance timeout.
  void tick(std::int64_t now_ms, std::vector<stored_record>& records);

  // Whether an OffsetCommit (v9+) or OffsetFetch (v9+) from this member at this epoch may go ahead; epoch < 0
  // without a member id is an admin's, allowed while the group is empty (commit) or always (fetch).
  [[nodiscard]] std::error_code validate_commit(const std::string& member_id, std::int32_t member_epoch) const;
  [[nodiscard]] std::error_code validate_fetch(const std::optional<std::string>& member_id,
                                               std::int32_t member_epoch) const;

  // Loading: the partition's records of this group in log order, then loaded() once all are read.
  void replay(const consumer_group_record& record);
  void loaded(std::int64_t now_ms);
  // The tombstones that delete the group (DeleteGroups, offset expiry of an empty group).
  [[nodiscard]] std::vector<stored_record> tombstones() const;

 private:
  enum class member_state : std::int8_t { stable = 0, unrevoked_partitions = 1, unreleased_partitions = 2 };
  struct member {
    std::string id;
    std::optional<std::string> instance_id;
    std::optional<std::string> rack_id;
    std::string client_id;
    std::string client_host;
    std::vector<std::string> subscribed_topic_names;  // sorted, no duplicates
    std::optional<std::string> subscribed_topic_regex;
    std::int32_t rebalance_timeout_ms = -1;
    std::optional<std::string> server_assignor;
    std::int32_t epoch = 0;
    std::int32_t previous_epoch = 0;
    member_state state = member_state::stable;
    topic_id_partitions assigned;
    topic_id_partitions pending_revocation;
    std::int64_t session_deadline_ms = 0;
    std::optional<std::int64_t> revocation_deadline_ms;
  };

  consumer_heartbeat_result leave(const consumer_heartbeat_request& request, std::vector<stored_record>& records);
  // The member the heartbeat is for (new, or a static member taking over from its earlier self), or why not.
  std::error_code find_member(const consumer_heartbeat_request& request, member& out, bool& replacing,
                              std::string& message) const;
  [[nodiscard]] std::error_code check_epoch(const member& m, const consumer_heartbeat_request& request) const;
  // The subscribed topics that exist now, counting `m` in place of the member with its id.
  [[nodiscard]] std::map<std::string, topic_metadata> subscription_metadata(const member& m, const topic_lookup& topics,
                                                                            const topic_names& names) const;
  // The subscribed topics the group knows of `m`: its names, and those its regular expression matches.
  [[nodiscard]] std::set<std::string> topics_of(const member& m) const;
  void compute_target(std::vector<stored_record>& records);
  // One step of `m` towards its target (Kafka's CurrentAssignmentBuilder).
  [[nodiscard]] member reconcile(const member& m, const std::optional<topic_id_partitions>& owned) const;
  [[nodiscard]] member next_step(const member& m, std::int32_t epoch_if_revoking,
                                 const std::optional<topic_id_partitions>& owned) const;
  [[nodiscard]] bool owned_elsewhere(const std::string& member_id, const topic_uuid& topic, std::int32_t p) const;
  void put_member(member m);
  void fence(const std::string& member_id, std::vector<stored_record>& records);
  void bump_epoch(std::vector<stored_record>& records);

  [[nodiscard]] stored_record member_record(const member& m) const;
  [[nodiscard]] stored_record current_record(const member& m) const;
  [[nodiscard]] stored_record target_record(const std::string& member_id) const;
  [[nodiscard]] stored_record tombstone(consumer_record_type type, const std::string& member_id = {}) const;

  std::string id_;
  consumer_group_config config_;
  std::int32_t epoch_ = 0;
  std::int32_t assignment_epoch_ = 0;
  std::map<std::string, member> members_;
  std::map<std::string, std::string> static_members_;  // instance id -> member id
  std::map<std::string, topic_id_partitions> target_;  // member id -> its target assignment
  // Who holds each partition now (assigned or pending revocation); a partition goes to its next owner only
  // once it is out of here.
  std::map<std::pair<topic_uuid, std::int32_t>, std::string> owners_;
  // The subscribed topics as of the last heartbeat; a difference bumps the epoch. Unknown after loading, so the
  // first heartbeat assigns again (with the same result, unless topics changed meanwhile).
  std::map<std::string, topic_metadata> subscription_;
};

}  // namespace ferry::group
