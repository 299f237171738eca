#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "authz/acl_snapshot.h"
#include "coord/layout.h"
#include "coord/uuid.h"
#include "model/ids.h"

namespace ferry::coord {

// A live broker: its /brokers/ids/<id> registration.
struct broker_info {
  broker_id id;
  // The first PLAINTEXT endpoint, which Ferry brokers register their inter-broker listener as: where other
  // brokers and the operator connect.
  std::string host;
  std::int32_t port = -1;
  std::optional<std::string> rack;
  std::vector<layout::endpoint> endpoints;  // every advertised listener
  // czxid of the registration znode: Kafka's broker epoch, new on every (re-)registration.
  std::int64_t epoch = 0;
  // Where its schema registry listens (Ferry's field of the registration), if it runs one.
  std::optional<std::string> schema_registry;

  // The broker's address on `listener` (clients are answered on the listener they connected to), or null when
  // it has none of that name.
  [[nodiscard]] const layout::endpoint* endpoint_of(std::string_view listener) const {
    const auto it = std::find_if(endpoints.begin(), endpoints.end(),
                                 [listener](const layout::endpoint& e) { return e.listener == listener; });
    return it == endpoints.end() ? nullptr : &*it;
  }

  bool operator==(const broker_info&) const = default;
};

// The partition state znode.
struct partition_state {
  broker_id leader = no_broker;  // no_broker (-1) while no replica in the ISR is alive
  leader_epoch epoch{0};
  std::vector<broker_id> isr;
  std::int32_t controller_epoch = 0;
  // Data version of the state znode (Kafka's partition epoch); bumps on every change, ISR-only ones included.
  std::int32_t zk_version = 0;
  // ZooKeeper transaction id of the write that produced this state (the znode's mzxid; the controller's own
  // copy of what it wrote holds a lower bound). A broker whose registration (broker_info::epoch) is newer
  // restarted or lost its session since: its place in the state is from an earlier run, whose log it may not
  // have any more.
  std::int64_t written_zxid = 0;

  bool operator==(const partition_state&) const = default;
};

struct partition_info {
  // Assignment order; the first is the preferred leader. During a reassignment, the target replicas followed by
  // the original ones that are not targets.
  std::vector<broker_id> replicas;
  std::optional<partition_state> state;  // nullopt until the controller has created the state znode
  // A reassignment in progress (both empty otherwise): the targets that are new, and the originals that are
  // not targets, which leave once every target is in sync.
  std::vector<broker_id> adding;
  std::vector<broker_id> removing;

  [[nodiscard]] bool reassigning() const { return !adding.empty() || !removing.empty(); }
  // The replicas the partition will have when its reassignment completes (all of them when there is none).
  [[nodiscard]] std::vector<broker_id> target_replicas() const {
    std::vector<broker_id> target;
    for (const auto r : replicas)
      if (std::find(removing.begin(), removing.end(), r) == removing.end()) target.push_back(r);
    return target;
  }

  bool operator==(const partition_info&) const = default;
};

struct topic_info {
  uuid topic_id;  // zero only briefly, for a topic written without one, until the controller assigns it
  std::map<partition_id, partition_info> partitions;
  layout::config_map config;         // overrides from /config/topics/<topic>; defaults are not included
  bool marked_for_deletion = false;  // /admin/delete_topics/<topic> exists
  // Why /brokers/topics/<topic> cannot be used (malformed, no partitions, an impossible replica list); empty
  // when it can. An invalid topic has no partitions in the view: nobody leads it, and nobody deletes its data.
  std::string invalid;

  [[nodiscard]] bool valid() const { return invalid.empty(); }

  bool operator==(const topic_info&) const = default;
};

// An immutable snapshot of the cluster as ZooKeeper describes it. cluster_registry publishes a new one after
// every change, as std::shared_ptr<const cluster_view>; holders keep a consistent picture for as long as they
// hold it.
struct cluster_view {
  std::string cluster_id;
  std::map<broker_id, broker_info> brokers;  // live brokers only
  std::map<std::string, topic_info, std::less<>> topics;
  broker_id controller = no_broker;
  // Live brokers in a controlled shutdown (/ferry/controlled_shutdown): they keep their replicas, but the
  // controller moves their leaderships away and elects none of them while another replica can lead.
  std::set<broker_id> shutting_down;
  // Replicas of live brokers whose log dir went offline (/ferry/offline_replicas): dead for their partitions.
  std::map<broker_id, std::set<topic_partition>> offline_replicas;
  // Dynamic broker settings (/config/brokers) by entity: a broker id, or layout::default_broker_entity.
  std::map<std::string, layout::config_map, std::less<>> broker_configs;
  // The users' config entities (/config/users) by user name (desanitized): SCRAM credentials ("SCRAM-SHA-256",
  // "SCRAM-SHA-512") beside quotas. The entity of every user's default quotas is named "<default>".
  using users_map = std::map<std::string, layout::config_map, std::less<>>;
  users_map users;
  // The quota entities of client ids (/config/clients/<c>, and a user's /config/users/<u>/clients/<c>), by user
  // (nullopt for /config/clients) and client id, both desanitized; "<default>" stands for every one. Users' own
  // quotas are their entities in `users`.
  using client_quotas_map = std::map<std::pair<std::optional<std::string>, std::string>, layout::config_map>;
  client_quotas_map client_quotas;
  // The ACLs in force, for the authorizer (brokers only; the operator's observer leaves it empty). A new
  // snapshot is published only when they change, so views compare equal while they do not.
  std::shared_ptr<const authz::acl_snapshot> acls = std::make_shared<const authz::acl_snapshot>();
  // Topic names by topic id (Metadata v10+ and Fetch v13+ look topics up by id), derived from `topics` by
  // index_topic_ids(), which cluster_registry runs for every view it publishes.
  std::map<uuid, std::string> topic_names_by_id;

  void index_topic_ids() {
    topic_names_by_id.clear();
    for (const auto& [name, topic] : topics)
      if (!topic.topic_id.is_zero()) topic_names_by_id.emplace(topic.topic_id, name);
  }

  [[nodiscard]] bool is_live(broker_id id) const { return brokers.contains(id); }
  // Live, with its replica of `tp` on a log dir that is online.
  [[nodiscard]] bool hosts(broker_id id, const topic_partition& tp) const {
    if (!is_live(id)) return false;
    const auto offline = offline_replicas.find(id);
    return offline == offline_replicas.end() || !offline->second.contains(tp);
  }
  // Live and not shutting down: a broker the controller may make a leader.
  [[nodiscard]] bool can_lead(broker_id id) const { return is_live(id) && !shutting_down.contains(id); }
  // Live, and registered again after `state` was written (a restart, or a new session): what the state says
  // of it (leader, in sync) predates this registration, and the controller decides again (Kafka's bounced
  // brokers).
  [[nodiscard]] bool registered_since(broker_id id, const partition_state& state) const {
    const auto it = brokers.find(id);
    return it != brokers.end() && it->second.epoch > state.written_zxid;
  }

  // A dynamic setting of broker `id` (nullopt: of every broker): its own override, else the one for every
  // broker; nullopt if neither.
  struct dynamic_setting {
    std::string value;
    bool own = false;  // broker `id`'s own override, not the one for every broker
  };
  [[nodiscard]] std::optional<dynamic_setting> dynamic_broker_setting(std::optional<broker_id> id,
                                                                      std::string_view name) const {
    for (const bool own : {true, false}) {
      if (own && !id) continue;
      const auto configs =
          broker_configs.find(own ? std::to_string(id->value()) : std::string(layout::default_broker_entity));
      if (configs == broker_configs.end()) continue;
      const auto value = configs->second.find(std::string(name));
      if (value != configs->second.end()) return dynamic_setting{value->second, own};
    }
    return std::nullopt;
  }

  [[nodiscard]] const topic_info* find_topic(std::string_view name) const {
    const auto it = topics.find(name);
    return it == topics.end() ? nullptr : &it->second;
  }

  // The name of the topic with this id, or nullptr.
  [[nodiscard]] const std::string* find_topic_name(const uuid& id) const {
    const auto it = topic_names_by_id.find(id);
    return it == topic_names_by_id.end() ? nullptr : &it->second;
  }

  [[nodiscard]] const partition_info* find_partition(const topic_partition& tp) const {
    const auto* topic = find_topic(tp.topic);
    if (topic == nullptr) return nullptr;
    const auto it = topic->partitions.find(tp.partition);
    return it == topic->partitions.end() ? nullptr : &it->second;
  }

  bool operator==(const cluster_view&) const = default;
};

}  // namespace ferry::coord
