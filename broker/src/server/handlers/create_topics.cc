#include "config/topic_config.h"
#include "server/authorization.h"
#include "server/client_quota_use.h"
#include "server/handlers/handlers.h"
#include "server/internal_topics.h"
#include "server/topic_admin.h"
#include "server/topic_propagation.h"
#include "server/view_wait.h"

namespace ferry::server::handlers {
namespace {

using topic_result = p::create_topics_response::creatable_topic_result;

// v5+ echoes the topic's layout and effective configs.
void describe_created(request_context& ctx, const new_topic& topic, topic_result& out) {
  const auto view = ctx.broker.cluster.view();
  if (const auto* info = view->find_topic(topic.name); info != nullptr && !info->partitions.empty()) {
    out.topic_id = to_wire(info->topic_id);
    out.num_partitions = static_cast<std::int32_t>(info->partitions.size());
    out.replication_factor = static_cast<std::int16_t>(info->partitions.begin()->second.replicas.size());
  }
  auto& configs = out.configs.emplace();
  for (const auto& entry : config::describe_topic_settings(ctx.broker.config.topic_defaults, topic.config)) {
    auto& c = configs.emplace_back();
    c.name = entry.name;
    c.value = entry.value;
    c.config_source = entry.is_default ? 5 : 1;  // DEFAULT_CONFIG or TOPIC_CONFIG
  }
}

}  // namespace

// Validates each topic, writes its assignment and configs to ZooKeeper, and (unless validate_only) waits up
// to timeout_ms for the controller to elect its leaders, so clients can use the topic on return. Each topic needs
// Create on the cluster or on the topic; v5's echo of its configs needs DescribeConfigs on it.
awaitable<p::create_topics_response> handle_create_topics(request_context& ctx, p::create_topics_request& request) {
  p::create_topics_response response;
  const bool cluster_create = may(ctx, authz::operation::create, authz::resource_type::cluster, authz::cluster_name);
  for (const auto& wanted : request.topics) {
    auto& out = response.topics.emplace_back();
    out.name = wanted.name;
    new_topic topic{
        .name = wanted.name, .partitions = wanted.num_partitions, .replication_factor = wanted.replication_factor};
    for (const auto& a : wanted.assignments)
      for (const auto id : a.broker_ids) topic.assignment[a.partition_index].push_back(broker_id{id});
    for (const auto& c : wanted.configs)
      if (c.value) topic.config[c.name] = *c.value;

    const bool duplicate = std::count_if(request.topics.begin(), request.topics.end(),
                                         [&](const auto& t) { return t.name == wanted.name; }) > 1;
    if (duplicate) {
      out.error_code = ctx.error(p::error_code::invalid_request);
      out.error_message = "topic '" + wanted.name + "' appears more than once in the request";
      continue;
    }
    if (!cluster_create && !authorize(ctx, authz::operation::create, authz::resource_type::topic, wanted.name)) {
      out.error_code = ctx.error(p::error_code::topic_authorization_failed);
      out.error_message = "Authorization failed.";
      continue;
    }
    if (is_internal_topic(wanted.name)) {
      out.error_code = ctx.error(p::error_code::invalid_request);
      out.error_message = "topic '" + wanted.name + "' is internal: the broker creates it when it is first needed";
      continue;
    }
    const bool validate_only = request.validate_only;
    const auto result = co_await run_on_zookeeper(ctx.broker, [&ctx, &topic, validate_only] {
      return create_topic(ctx.broker, topic, validate_only, [&ctx](std::int64_t partitions) {
        return spend_mutation_quota(ctx, partitions, ctx.version() >= 6);
      });
    });
    if (result.error != p::error_code::none) {
      out.error_code = ctx.error(result.error);
      out.error_message = result.message;
      continue;
    }
    if (!validate_only) {
      // Capture by reference only: GCC 12 destroys by-value captures of a closure that is an argument inside
      // a co_await expression twice (a std::string here crashed the broker on every CreateTopics).
      const std::string& name = wanted.name;
      const auto timeout = std::chrono::milliseconds(std::max(0, request.timeout_ms));
      const auto started = std::chrono::steady_clock::now();
      bool ready = co_await wait_for_view(
          ctx.broker, [&name](const coord::cluster_view& v) { return topic_has_leaders(v, name, 1); }, timeout);
      if (ready) {
        const auto* created = ctx.broker.cluster.view()->find_topic(name);
        const auto partitions = created == nullptr ? 0 : static_cast<std::int32_t>(created->partitions.size());
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            timeout - (std::chrono::steady_clock::now() - started));
        ready = co_await ctx.broker.propagation.wait_until_served_everywhere(
            name, 0, partitions, std::max(left, std::chrono::milliseconds(0)));
      }
      if (!ready) {
        out.error_code = ctx.error(p::error_code::request_timed_out);
        out.error_message = "the topic was created but its leaders were not elected within the timeout";
        continue;
      }
    }
    if (ctx.version() < 5) continue;
    if (authorize(ctx, authz::operation::describe_configs, authz::resource_type::topic, wanted.name))
      describe_created(ctx, topic, out);
    else
      out.topic_config_error_code = ctx.error(p::error_code::topic_authorization_failed);
  }
  co_return response;
}

}  // namespace ferry::server::handlers
