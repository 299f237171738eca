#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "authz/acl_snapshot.h"
#include "base/clock.h"
#include "config/broker_config.h"
#include "coord/cluster_registry.h"
#include "group/group_coordinator.h"
#include "metrics/broker_metrics.h"
#include "quota/client_quotas.h"
#include "replication/partition_manager.h"
#include "replication/replication_quota.h"
#include "security/credential_store.h"
#include "server/marker_appender.h"
#include "server/peer_requests.h"
#include "server/producer_ids.h"
#include "txn/txn_coordinator.h"

namespace ferry::server {

class topic_propagation;

// The cluster as handlers read it: the latest view of ZooKeeper (coord/cluster_view.h). Thread-safe and
// non-blocking.
class cluster_metadata {
 public:
  virtual ~cluster_metadata() = default;
  [[nodiscard]] virtual std::shared_ptr<const coord::cluster_view> view() const = 0;
};

// The cluster changes handlers ask for, as coord::topic_store makes them (see there for each call's
// errors). Blocking: call through run_blocking.
class cluster_writes {
 public:
  virtual ~cluster_writes() = default;
  virtual result<coord::uuid> create_topic(std::string_view name, const coord::layout::replica_assignment& assignment,
                                           const coord::layout::config_map& config) = 0;
  virtual result<void> delete_topic(std::string_view name) = 0;
  virtual result<void> set_topic_config(std::string_view name, const coord::layout::config_map& config) = 0;
  virtual result<coord::layout::config_map> read_topic_config(std::string_view name) = 0;
  // The dynamic settings of one /config/brokers entity: a broker id or coord::layout::default_broker_entity.
  virtual result<void> set_broker_config(std::string_view entity, const coord::layout::config_map& config) = 0;
  virtual result<coord::layout::config_map> read_broker_config(std::string_view entity) = 0;
  virtual result<void> add_partitions(std::string_view name, const coord::layout::replica_assignment& assignment) = 0;
  virtual result<void> alter_assignment(
      std::string_view name, const std::function<result<bool>(coord::layout::topic_assignment&)>& change) = 0;
  virtual result<coord::layout::producer_id_block> allocate_producer_id_block() = 0;
  // coord::cluster_registry::elect_leaders.
  virtual result<std::vector<coord::election_result>> elect_leaders(
      coord::election_type type, const std::optional<std::vector<topic_partition>>& partitions,
      std::chrono::milliseconds timeout) = 0;
};

// The users' config entities (/config/users/<sanitized user>: SCRAM credentials beside quotas) by user name,
// as coord::config_store reads and writes them. Blocking: call through run_on_zookeeper.
class user_configs {
 public:
  virtual ~user_configs() = default;
  // Empty when the user has no entity.
  virtual result<coord::layout::config_map> read_user_config(std::string_view user) = 0;
  // Replaces the user's entity (an empty map leaves an empty node, as Kafka does) and announces the change.
  virtual result<void> set_user_config(std::string_view user, const coord::layout::config_map& config) = 0;
};

// The config entities client quotas live in (/config/users/..., /config/clients/...; client_quota_entities.h),
// by their stored names, as coord::config_store reads and writes them. Blocking: call through run_on_zookeeper.
class entity_configs {
 public:
  virtual ~entity_configs() = default;
  // Empty when the entity has no node.
  virtual result<coord::layout::config_map> read_entity_config(std::string_view type, std::string_view name) = 0;
  virtual result<void> set_entity_config(std::string_view type, std::string_view name,
                                         const coord::layout::config_map& config) = 0;
};

// The cluster's ACLs as coord::acl_store writes them (see there). Blocking: call through run_on_zookeeper.
class acl_writes {
 public:
  virtual ~acl_writes() = default;
  virtual result<void> add_acls(const authz::resource_pattern& resource, std::span<const authz::acl_entry> entries) = 0;
  // The entries removed.
  virtual result<std::vector<authz::acl_entry>> remove_acls(
      const authz::resource_pattern& resource, const std::function<bool(const authz::acl_entry&)>& doomed) = 0;
  // Waits until this broker's view of the ACLs meets `condition`: a change this broker made is in force here before
  // it answers. False on timeout.
  virtual bool wait_for_acls(const std::function<bool(const authz::acl_snapshot&)>& condition,
                             std::chrono::milliseconds timeout) = 0;
};

// All of them, over this broker's ZooKeeper registry.
class zk_cluster final : public cluster_metadata,
                         public cluster_writes,
                         public user_configs,
                         public entity_configs,
                         public acl_writes {
 public:
  explicit zk_cluster(coord::cluster_registry& registry) : registry_(registry) {}

  [[nodiscard]] std::shared_ptr<const coord::cluster_view> view() const override { return registry_.view(); }
  result<coord::uuid> create_topic(std::string_view name, const coord::layout::replica_assignment& assignment,
                                   const coord::layout::config_map& config) override {
    return registry_.topics().create_topic(name, assignment, config);
  }
  result<void> delete_topic(std::string_view name) override { return registry_.topics().delete_topic(name); }
  result<void> set_topic_config(std::string_view name, const coord::layout::config_map& config) override {
    return registry_.topics().set_topic_config(name, config);
  }
  result<coord::layout::config_map> read_topic_config(std::string_view name) override {
    return registry_.topics().read_topic_config(name);
  }
  result<void> set_broker_config(std::string_view entity, const coord::layout::config_map& config) override {
    return registry_.configs().write("brokers", entity, config);
  }
  result<coord::layout::config_map> read_broker_config(std::string_view entity) override {
    return registry_.configs().read("brokers", entity);
  }
  result<void> add_partitions(std::string_view name, const coord::layout::replica_assignment& assignment) override {
    return registry_.topics().add_partitions(name, assignment);
  }
  result<void> alter_assignment(std::string_view name,
                                const std::function<result<bool>(coord::layout::topic_assignment&)>& change) override {
    return registry_.topics().alter_assignment(name, change);
  }
  result<coord::layout::producer_id_block> allocate_producer_id_block() override {
    return registry_.allocate_producer_id_block();
  }
  result<std::vector<coord::election_result>> elect_leaders(
      coord::election_type type, const std::optional<std::vector<topic_partition>>& partitions,
      std::chrono::milliseconds timeout) override {
    return registry_.elect_leaders(type, partitions, timeout);
  }
  result<coord::layout::config_map> read_user_config(std::string_view user) override {
    return registry_.configs().read("users", coord::layout::sanitize(user));
  }
  result<void> set_user_config(std::string_view user, const coord::layout::config_map& config) override {
    return registry_.configs().write("users", coord::layout::sanitize(user), config);
  }
  result<coord::layout::config_map> read_entity_config(std::string_view type, std::string_view name) override {
    return registry_.configs().read(type, name);
  }
  result<void> set_entity_config(std::string_view type, std::string_view name,
                                 const coord::layout::config_map& config) override {
    return registry_.configs().write(type, name, config);
  }
  result<void> add_acls(const authz::resource_pattern& resource, std::span<const authz::acl_entry> entries) override {
    return registry_.acls().add(resource, entries);
  }
  result<std::vector<authz::acl_entry>> remove_acls(
      const authz::resource_pattern& resource, const std::function<bool(const authz::acl_entry&)>& doomed) override {
    return registry_.acls().remove_if(resource, doomed);
  }
  bool wait_for_acls(const std::function<bool(const authz::acl_snapshot&)>& condition,
                     std::chrono::milliseconds timeout) override {
    return registry_.wait_for([&](const coord::cluster_view& v) { return condition(*v.acls); }, timeout).has_value();
  }

 private:
  coord::cluster_registry& registry_;
};

// What request handlers work with: this broker's settings, its partitions, the cluster as ZooKeeper
// describes it, and metrics. Owned by the application; outlives every request.
struct broker_context {
  const config::broker_config& config;
  cluster_metadata& cluster;
  cluster_writes& writes;
  replication::partition_manager& partitions;
  metrics::broker_metrics& metrics;
  producer_ids& producer_id_source;
  // Threads for calls that wait on a disk (fsyncs), so network threads never wait on them.
  boost::asio::thread_pool& blocking_pool;
  // Threads of their own for ZooKeeper round trips: while ZooKeeper is away each call waits up to the session
  // timeout, and those waits must not hold up the disk work (produce flushes, segment seals) on blocking_pool.
  boost::asio::thread_pool& zookeeper_pool;
  const ferry::clock& clock;
  // leader.replication.throttled.rate: what this broker serves to followers of throttled replicas.
  replication::replication_quota& leader_replication_quota;
  // The groups whose __consumer_offsets partitions this broker leads.
  group::group_coordinator& groups;
  // The transactional ids whose __transaction_state partitions this broker leads.
  txn::txn_coordinator& transactions;
  // Transaction markers written to this broker's leader partitions (WriteTxnMarkers).
  marker_appender& markers;
  // Requests to other brokers: a transactional batch's verification with its transaction coordinator.
  peer_requests& peers;
  // Whether new partitions reached every broker (topic_propagation.h).
  topic_propagation& propagation;
  // The users' SCRAM credentials as logins see them, which DescribeUserScramCredentials lists, and their
  // entities in ZooKeeper, which AlterUserScramCredentials changes (every broker's store follows them). Null
  // only in tests of other handlers.
  const security::credential_store* credentials = nullptr;
  user_configs* users = nullptr;
  // The authorizer's settings (super users, allow.everyone.if.no.acl.found) when authorizer.class.name is set;
  // null without one, when every request is allowed (server/authorization.h).
  const authz::decision_settings* authorizer = nullptr;
  // The cluster's ACLs, which CreateAcls and DeleteAcls change. Null only in tests of other handlers.
  acl_writes* acls = nullptr;
  // The client quotas' sensors, whose table follows the view (server/client_quota_use.h), and the entities
  // AlterClientQuotas writes. Null: no quotas.
  quota::client_quotas* quotas = nullptr;
  entity_configs* quota_configs = nullptr;
};

// Runs a blocking call on `pool` and resumes the calling coroutine on its own executor.
//
// The call must be trivially destructible (capture by reference): GCC 12 destroys by-value captures of a
// lambda passed inside a co_await expression twice, so a captured std::string would be freed twice.
template <typename F>
boost::asio::awaitable<std::invoke_result_t<F>> run_on(boost::asio::thread_pool& pool, F call) {
  static_assert(std::is_trivially_destructible_v<F>, "capture by reference; see the comment above");
  using R = std::invoke_result_t<F>;
  // co_spawn hands results through default-constructed storage, which result<T> lacks; optional has it.
  auto task = [call]() -> boost::asio::awaitable<std::optional<R>> { co_return call(); };
  auto operation = boost::asio::co_spawn(pool, task, boost::asio::use_awaitable);
  auto done = co_await std::move(operation);
  co_return std::move(*done);
}

// A call that waits on a disk, on the blocking pool.
template <typename F>
boost::asio::awaitable<std::invoke_result_t<F>> run_blocking(broker_context& broker, F call) {
  co_return co_await run_on(broker.blocking_pool, call);
}

// A call that makes ZooKeeper round trips, on the pool of its own for those.
template <typename F>
boost::asio::awaitable<std::invoke_result_t<F>> run_on_zookeeper(broker_context& broker, F call) {
  co_return co_await run_on(broker.zookeeper_pool, call);
}

}  // namespace ferry::server
