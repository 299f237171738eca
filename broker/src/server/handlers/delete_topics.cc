#include "server/authorization.h"
#include "server/client_quota_use.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"
#include "server/view_wait.h"

namespace ferry::server::handlers {

// Marks each topic for deletion (/admin/delete_topics/<topic>); the controller removes it from ZooKeeper and
// every broker then deletes its logs. Answers once the topic is gone from the cluster view, or times out. Each
// topic needs Delete; a topic named by id that the client may not delete is not named in the answer.
awaitable<p::delete_topics_response> handle_delete_topics(request_context& ctx, p::delete_topics_request& request) {
  p::delete_topics_response response;
  // v6+ names each topic or gives its id; the answer echoes both, since clients match results by either.
  struct wanted_topic {
    std::optional<std::string> name;
    p::uuid topic_id{};
  };
  std::vector<wanted_topic> wanted;
  if (ctx.version() >= 6) {
    for (const auto& t : request.topics) wanted.push_back({t.name, t.topic_id});
  } else {
    for (const auto& t : request.topic_names) wanted.push_back({t, {}});
  }
  for (auto& [name, topic_id] : wanted) {
    auto& out = response.responses.emplace_back();
    out.topic_id = topic_id;
    const auto view = ctx.broker.cluster.view();
    if (!name || (name->empty() && topic_id != p::uuid{})) {
      const auto* known = view->find_topic_name(from_wire(topic_id));
      if (known == nullptr) {
        out.error_code = ctx.error(p::error_code::unknown_topic_id);
        out.error_message = "no topic has the id " + from_wire(topic_id).to_string();
        continue;
      }
      if (!authorize(ctx, authz::operation::remove, authz::resource_type::topic, *known)) {
        out.error_code = ctx.error(p::error_code::topic_authorization_failed);
        continue;
      }
      name = *known;
    } else if (!authorize(ctx, authz::operation::remove, authz::resource_type::topic, *name)) {
      out.name = name;
      out.error_code = ctx.error(p::error_code::topic_authorization_failed);
      continue;
    }
    out.name = name;
    if (!ctx.broker.config.delete_topic_enable) {
      out.error_code = ctx.error(p::error_code::topic_deletion_disabled);
      continue;
    }
    const auto* topic = view->find_topic(*name);
    if (topic == nullptr) {
      out.error_code = ctx.error(p::error_code::unknown_topic_or_partition);
      continue;
    }
    out.topic_id = to_wire(topic->topic_id);
    if (!spend_mutation_quota(ctx, static_cast<std::int64_t>(topic->partitions.size()), ctx.version() >= 5)) {
      out.error_code = ctx.error(p::error_code::throttling_quota_exceeded);
      out.error_message = "The throttling quota has been exceeded.";
      continue;
    }
    // The closures capture by reference only: GCC 12 destroys by-value captures (this std::string) twice
    // when the closure is an argument inside a co_await expression, which crashed the broker.
    const std::string topic_name = *name;
    const auto marked = co_await run_on_zookeeper(
        ctx.broker, [&ctx, &topic_name] { return ctx.broker.writes.delete_topic(topic_name); });
    if (!marked) {
      out.error_code = ctx.error(to_kafka_error(marked.error()));
      out.error_message = marked.error().message();
      continue;
    }
    const bool gone = co_await wait_for_view(
        ctx.broker, [&topic_name](const coord::cluster_view& v) { return v.find_topic(topic_name) == nullptr; },
        std::chrono::milliseconds(std::max(0, request.timeout_ms)));
    if (!gone) out.error_code = ctx.error(p::error_code::request_timed_out);
  }
  co_return response;
}

}  // namespace ferry::server::handlers
