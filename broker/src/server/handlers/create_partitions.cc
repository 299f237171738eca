#include "server/authorization.h"
#include "server/client_quota_use.h"
#include "server/handlers/handlers.h"
#include "server/topic_admin.h"
#include "server/topic_propagation.h"
#include "server/view_wait.h"

namespace ferry::server::handlers {

// Grows topics: writes the longer assignment to ZooKeeper, and answers once the partitions are led and known to
// every live broker. Each topic needs Alter.
awaitable<p::create_partitions_response> handle_create_partitions(request_context& ctx,
                                                                  p::create_partitions_request& request) {
  p::create_partitions_response response;
  for (const auto& wanted : request.topics) {
    auto& out = response.results.emplace_back();
    out.name = wanted.name;
    if (!authorize(ctx, authz::operation::alter, authz::resource_type::topic, wanted.name)) {
      out.error_code = ctx.error(p::error_code::topic_authorization_failed);
      continue;
    }
    std::vector<std::vector<broker_id>> assignment;
    if (wanted.assignments)
      for (const auto& a : *wanted.assignments) {
        auto& replicas = assignment.emplace_back();
        for (const auto id : a.broker_ids) replicas.push_back(broker_id{id});
      }
    const bool validate_only = request.validate_only;
    const auto result = co_await run_on_zookeeper(ctx.broker, [&ctx, &wanted, &assignment, validate_only] {
      return add_partitions(
          ctx.broker, wanted.name, wanted.count, assignment, validate_only,
          [&ctx](std::int64_t partitions) { return spend_mutation_quota(ctx, partitions, ctx.version() >= 3); });
    });
    if (result.error != p::error_code::none) {
      out.error_code = ctx.error(result.error);
      out.error_message = result.message;
      continue;
    }
    if (validate_only) continue;
    // Captures by reference only: GCC 12 destroys by-value captures of a closure that is an argument inside a
    // co_await expression twice (a std::string here crashed the broker).
    const std::string& name = wanted.name;
    const std::int32_t count = wanted.count;
    const auto timeout = std::chrono::milliseconds(std::max(0, request.timeout_ms));
    const auto started = std::chrono::steady_clock::now();
    bool ready = co_await wait_for_view(
        ctx.broker, [&name, count](const coord::cluster_view& v) { return topic_has_leaders(v, name, count); },
        timeout);
    // The new partitions, served where they are led and known everywhere, before the answer.
    if (ready) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(timeout - (std::chrono::steady_clock::now() - started));
      ready = co_await ctx.broker.propagation.wait_until_served_everywhere(
          name, 0, count, std::max(left, std::chrono::milliseconds(0)));
    }
    if (!ready) out.error_code = ctx.error(p::error_code::request_timed_out);
  }
  co_return response;
}

}  // namespace ferry::server::handlers
