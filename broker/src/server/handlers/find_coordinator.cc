#include "base/log.h"
#include "server/authorization.h"
#include "server/handlers/handlers.h"
#include "server/internal_topics.h"

namespace ferry::server::handlers {
namespace {

constexpr std::int8_t group_key_type = 0;
constexpr std::int8_t transaction_key_type = 1;

struct lookup {
  p::error_code error = p::error_code::none;
  std::string message;
  broker_id node = no_broker;
  std::string host;
  std::int32_t port = -1;
};

}  // namespace

// A group's coordinator is the leader of its __consumer_offsets partition, a transactional id's the leader of
// its __transaction_state partition. The first lookup of a cluster creates the topic, once as many brokers are
// live as its replication factor, and answers COORDINATOR_NOT_AVAILABLE (retriable) until its leaders are elected.
// A topic created as an ordinary one gets cleanup.policy=compact on the way (see internal_topic_needs_repair).
awaitable<p::find_coordinator_response> handle_find_coordinator(request_context& ctx,
                                                                p::find_coordinator_request& request) {
  std::vector<std::string> keys = ctx.version() >= 4 ? request.coordinator_keys : std::vector<std::string>{request.key};
  auto view = ctx.broker.cluster.view();
  const bool transactions = request.key_type == transaction_key_type;
  const auto topic = transactions ? transaction_topic(ctx.broker.config) : offsets_topic(ctx.broker.config);
  bool create = false;
  std::vector<lookup> found;
  for (const auto& key : keys) {
    lookup l;
    if (request.key_type != group_key_type && !transactions) {
      l.error = p::error_code::invalid_request;
      l.message = "unknown coordinator key type " + std::to_string(request.key_type);
    } else if (key.empty()) {
      l.error = p::error_code::invalid_request;
      l.message = transactions ? "the transactional id is empty" : "the group id is empty";
    } else if (!authorize(ctx, authz::operation::describe,
                          transactions ? authz::resource_type::transactional_id : authz::resource_type::group, key)) {
      // Describe on the group or transactional id (Kafka's rule).
      l.error = transactions ? p::error_code::transactional_id_authorization_failed
                             : p::error_code::group_authorization_failed;
    } else {
      bool missing = false;
      const auto partition =
          transactions ? ctx.broker.transactions.partition_for(key) : ctx.broker.groups.partition_for(key);
      const auto where = find_coordinator(topic, *view, partition, missing);
      create = create || missing;
      l.error = where.error;
      l.message = where.message;
      if (where.broker != nullptr) {
        if (const auto* address = where.broker->endpoint_of(ctx.connection.listener)) {
          l.node = where.broker->id;
          l.host = address->host;
          l.port = address->port;
        } else {
          // Kafka answers the same while a rolling change of listeners is half done.
          l.error = p::error_code::coordinator_not_available;
          l.message = "the coordinator has no listener named " + ctx.connection.listener;
        }
      }
    }
    found.push_back(std::move(l));
  }
  if (create) {
    auto& broker = ctx.broker;
    const auto created =
        co_await run_on_zookeeper(broker, [&broker, &topic] { return create_internal_topic(broker, topic); });
    if (created.error != p::error_code::none && created.error != p::error_code::topic_already_exists)
      for (auto& l : found)
        if (l.error == p::error_code::coordinator_not_available)
          l.message = "cannot create " + std::string(topic.name) + ": " +
                      created.message.value_or(std::string(p::name(created.error)));
  }

  if (internal_topic_needs_repair(topic, *view)) {
    auto& broker = ctx.broker;
    if (const auto repaired =
            co_await run_on_zookeeper(broker, [&broker, &topic] { return repair_internal_topic(broker, topic); });
        !repaired)
      FERRY_LOG_LIMITED(error, topic.owner, 10000)
          << "cannot set cleanup.policy=compact on " << topic.name << ": " << repaired.error().message();
  }

  p::find_coordinator_response response;
  if (ctx.version() >= 4) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      auto& c = response.coordinators.emplace_back();
      c.key = keys[i];
      c.node_id = found[i].node;
      c.host = found[i].host;
      c.port = found[i].port;
      c.error_code = ctx.error(found[i].error);
      if (found[i].error != p::error_code::none) c.error_message = found[i].message;
    }
  } else {
    response.node_id = found[0].node;
    response.host = found[0].host;
    response.port = found[0].port;
    response.error_code = ctx.error(found[0].error);
    if (found[0].error != p::error_code::none) response.error_message = found[0].message;
  }
  co_return response;
}

}  // namespace ferry::server::handlers
