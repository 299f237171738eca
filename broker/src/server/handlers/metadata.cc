#include "server/authorization.h"
#include "server/handlers/handlers.h"
#include "server/internal_topics.h"
#include "server/topic_admin.h"

namespace ferry::server::handlers {
namespace {

using topic_response = p::metadata_response::metadata_response_topic;

std::vector<std::int32_t> raw_ids(const std::vector<broker_id>& ids) {
  std::vector<std::int32_t> out;
  out.reserve(ids.size());
  for (const auto id : ids) out.push_back(id.value());
  return out;
}

topic_response describe(request_context& ctx, const coord::cluster_view& view, const std::string& name,
                        const coord::topic_info& topic) {
  topic_response out;
  out.name = name;
  out.topic_id = to_wire(topic.topic_id);
  out.is_internal = is_internal_topic(name);
  if (!topic.valid()) {
    // Its assignment cannot be read: no partitions, no leaders, until someone fixes the znode.
    out.error_code = ctx.error(p::error_code::leader_not_available);
    return out;
  }
  for (const auto& [id, partition] : topic.partitions) {
    auto& p = out.partitions.emplace_back();
    p.partition_index = id;
    p.replica_nodes = raw_ids(partition.replicas);
    for (const auto replica : partition.replicas)
      if (!view.is_live(replica)) p.offline_replicas.push_back(replica.value());
    const auto leader = partition.state ? view.brokers.find(partition.state->leader) : view.brokers.end();
    const bool reachable = leader != view.brokers.end() && leader->second.endpoint_of(ctx.connection.listener);
    if (!partition.state || partition.state->leader == no_broker || !view.is_live(partition.state->leader) ||
        !reachable) {
      // A live leader without the client's listener is LISTENER_NOT_FOUND from v6 on, as in Kafka.
      const bool listener_missing = leader != view.brokers.end() && view.is_live(leader->first) && !reachable;
      p.error_code = ctx.error(listener_missing && ctx.version() >= 6 ? p::error_code::listener_not_found
                                                                      : p::error_code::leader_not_available);
      p.leader_id = no_broker;
      if (partition.state) p.isr_nodes = raw_ids(partition.state->isr);
      continue;
    }
    p.leader_id = partition.state->leader;
    p.leader_epoch = partition.state->epoch;
    p.isr_nodes = raw_ids(partition.state->isr);
  }
  return out;
}

topic_response missing(request_context& ctx, const std::string& name, p::error_code code) {
  topic_response out;
  out.name = name;
  out.error_code = ctx.error(code);
  return out;
}

bool may_describe(request_context& ctx, const std::string& topic) {
  return may(ctx, authz::operation::describe, authz::resource_type::topic, topic);
}

// Auto-creation needs Create on the cluster or on the topic (Kafka's rule).
bool may_create_topic(request_context& ctx, const std::string& topic) {
  return may(ctx, authz::operation::create, authz::resource_type::cluster, authz::cluster_name) ||
         authorize(ctx, authz::operation::create, authz::resource_type::topic, topic);
}

}  // namespace

// Brokers, controller and topic placement come from the registry's view of ZooKeeper. An unknown topic is
// created when auto.create.topics.enable and the request allow it (v4+ asks; older versions always allow),
// and is reported as LEADER_NOT_AVAILABLE until its leaders are elected, as Kafka does.
//
// Authorization as Kafka's: the list of every topic leaves out those the client may not Describe; a topic named
// without Describe is TOPIC_AUTHORIZATION_FAILED whether or not it exists (no existence leak), as is one that
// would be created without Create. KIP-430's authorized operations are filled in when asked for.
awaitable<p::metadata_response> handle_metadata(request_context& ctx, p::metadata_request& request) {
  auto view = ctx.broker.cluster.view();
  p::metadata_response response;
  // Each broker's address on the listener this request came in on; a broker without that listener is left out.
  for (const auto& [id, b] : view->brokers)
    if (const auto* address = b.endpoint_of(ctx.connection.listener))
      response.brokers.push_back({id, address->host, address->port, b.rack});
  response.cluster_id = view->cluster_id;
  response.controller_id = view->controller;

  // v0: an empty list means every topic; v1+: null means every topic and empty means none.
  const bool all_topics = !request.topics || (ctx.version() == 0 && request.topics->empty());
  const bool with_operations = ctx.version() >= 8 && request.include_topic_authorized_operations;
  if (ctx.version() >= 8 && ctx.version() <= 10 && request.include_cluster_authorized_operations)
    response.cluster_authorized_operations = cluster_operations(ctx);
  const auto add = [&](const std::string& name, const coord::topic_info& topic) {
    auto& out = response.topics.emplace_back(describe(ctx, *view, name, topic));
    if (with_operations)
      out.topic_authorized_operations = authorized_operations(ctx, authz::resource_type::topic, name);
  };
  if (all_topics) {
    for (const auto& [name, topic] : view->topics)
      if (!topic.marked_for_deletion && may_describe(ctx, name)) add(name, topic);
    co_return response;
  }

  const bool may_create = ctx.broker.config.auto_create_topics_enable && request.allow_auto_topic_creation;
  for (const auto& wanted : *request.topics) {
    if (!wanted.name || (wanted.name->empty() && wanted.topic_id != p::uuid{})) {
      // A lookup by topic id (the name null, or empty as the Java client sends it).
      const auto* name = view->find_topic_name(from_wire(wanted.topic_id));
      const auto* topic = name != nullptr ? view->find_topic(*name) : nullptr;
      if (topic != nullptr && !authorize(ctx, authz::operation::describe, authz::resource_type::topic, *name)) {
        auto refused = missing(ctx, "", p::error_code::topic_authorization_failed);
        refused.name.reset();
        refused.topic_id = wanted.topic_id;
        response.topics.push_back(std::move(refused));
        continue;
      }
      if (topic != nullptr && !topic->marked_for_deletion) {
        add(*name, *topic);
        continue;
      }
      auto unknown = missing(ctx, "", p::error_code::unknown_topic_id);
      unknown.name.reset();
      unknown.topic_id = wanted.topic_id;
      response.topics.push_back(std::move(unknown));
      continue;
    }
    const std::string& name = *wanted.name;
    if (!authorize(ctx, authz::operation::describe, authz::resource_type::topic, name)) {
      response.topics.push_back(missing(ctx, name, p::error_code::topic_authorization_failed));
      continue;
    }
    const auto* topic = view->find_topic(name);
    if (topic != nullptr && !topic->marked_for_deletion) {
      add(name, *topic);
      continue;
    }
    if (!coord::layout::is_valid_topic_name(name)) {
      response.topics.push_back(missing(ctx, name, p::error_code::invalid_topic_exception));
      continue;
    }
    if (!may_create || topic != nullptr) {
      response.topics.push_back(missing(ctx, name, p::error_code::unknown_topic_or_partition));
      continue;
    }
    if (!may_create_topic(ctx, name)) {
      response.topics.push_back(missing(ctx, name, p::error_code::topic_authorization_failed));
      continue;
    }
    // The coordinators' topics are created as they need them, never as ordinary topics; with fewer live brokers
    // than their replication factor, INVALID_REPLICATION_FACTOR, as Kafka's ZooKeeper mode answers.
    const auto internal = internal_topic_named(ctx.broker.config, name);
    const auto created = co_await run_on_zookeeper(ctx.broker, [&ctx, &name, &internal] {
      return internal ? create_internal_topic(ctx.broker, *internal)
                      : create_topic(ctx.broker, new_topic{.name = name}, false);
    });
    const bool ok = created.error == p::error_code::none || created.error == p::error_code::topic_already_exists;
    response.topics.push_back(missing(ctx, name, ok ? p::error_code::leader_not_available : created.error));
  }
  co_return response;
}

}  // namespace ferry::server::handlers
