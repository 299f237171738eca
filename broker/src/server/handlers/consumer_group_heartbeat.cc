#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;

// The consumer group protocol of Kafka 4 (KIP-848, group/consumer_group.h): one request joins, heartbeats,
// acknowledges revocations and leaves; the answer waits until what it changed is in __consumer_offsets.
// v1's SubscribedTopicRegex (the Java client's subscribe(SubscriptionPattern)) is resolved here, against the
// topics of the cluster at each heartbeat (group/topic_regex.h). Needs Read on the group and Describe on each topic
// subscribed by name; a regular expression matches only topics the member may Describe.
awaitable<p::consumer_group_heartbeat_response> handle_consumer_group_heartbeat(
    request_context& ctx, p::consumer_group_heartbeat_request& request) {
  if (!ctx.broker.config.group_consumer_protocol) {
    p::consumer_group_heartbeat_response refused;
    refused.error_code = ctx.error(p::error_code::unsupported_version);
    refused.error_message = "The consumer group protocol is off (group.coordinator.rebalance.protocols).";
    co_return refused;
  }
  if (!authorize(ctx, authz::operation::read, authz::resource_type::group, request.group_id)) {
    p::consumer_group_heartbeat_response refused;
    refused.error_code = ctx.error(p::error_code::group_authorization_failed);
    co_return refused;
  }
  if (request.subscribed_topic_names) {
    for (const auto& name : *request.subscribed_topic_names) {
      if (authorize(ctx, authz::operation::describe, authz::resource_type::topic, name)) continue;
      p::consumer_group_heartbeat_response refused;
      refused.error_code = ctx.error(p::error_code::topic_authorization_failed);
      refused.error_message = "not authorized to describe topic " + name;
      co_return refused;
    }
  }
  group::consumer_heartbeat_request heartbeat;
  heartbeat.member_id = request.member_id;
  // A v0 client joining without an id gets one; from v1 clients bring their own (KIP-1082).
  if (heartbeat.member_id.empty() && request.member_epoch == 0 && ctx.version() == 0)
    heartbeat.member_id = coord::uuid::random().to_string();
  heartbeat.member_epoch = request.member_epoch;
  heartbeat.instance_id = request.instance_id;
  heartbeat.rack_id = request.rack_id;
  heartbeat.rebalance_timeout_ms = request.rebalance_timeout_ms;
  heartbeat.subscribed_topic_names = request.subscribed_topic_names;
  heartbeat.subscribed_topic_regex = request.subscribed_topic_regex;
  heartbeat.server_assignor = request.server_assignor;
  if (request.topic_partitions) {
    heartbeat.owned.emplace();
    for (const auto& t : *request.topic_partitions) {
      auto& partitions = (*heartbeat.owned)[t.topic_id];
      partitions.insert(t.partitions.begin(), t.partitions.end());
    }
  }
  heartbeat.client_id = ctx.header.client_id.value_or("");
  heartbeat.client_host = client_host(ctx.connection.peer);

  // The topics as this broker sees them now; a topic being deleted no longer counts.
  const auto view = ctx.broker.cluster.view();
  const group::topic_lookup topics = [view](const std::string& name) -> std::optional<group::topic_metadata> {
    const auto* topic = view->find_topic(name);
    if (topic == nullptr || topic->marked_for_deletion || !topic->valid() || topic->topic_id.is_zero() ||
        topic->partitions.empty())
      return std::nullopt;
    return group::topic_metadata{topic->topic_id.bytes, static_cast<std::int32_t>(topic->partitions.size())};
  };
  auto reply = std::make_shared<coordinator_reply<group::consumer_heartbeat_result>>(ctx.connection.executor);
  const group::topic_names all_topics = [view, describable = deferred_may(ctx)] {
    std::vector<std::string> names;
    for (const auto& [name, topic] : view->topics)
      if (!topic.marked_for_deletion && topic.valid() &&
          describable(authz::operation::describe, authz::resource_type::topic, name))
        names.push_back(name);
    return names;
  };
  ctx.broker.groups.consumer_heartbeat(request.group_id, heartbeat, topics, ctx.broker.clock.now_ms(),
                                       reply->callback(), all_topics);
  while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
  const auto& result = reply->value();

  p::consumer_group_heartbeat_response response;
  response.error_code = ctx.error(to_kafka_error(result.error));
  if (result.error) {
    if (!result.error_message.empty()) response.error_message = result.error_message;
    co_return response;
  }
  response.member_id = result.member_id;
  response.member_epoch = result.member_epoch;
  response.heartbeat_interval_ms = result.heartbeat_interval_ms;
  if (result.assignment) {
    p::consumer_group_heartbeat_response::member_assignment assignment;
    for (const auto& [topic, partitions] : *result.assignment)
      assignment.topic_partitions.push_back({topic, {partitions.begin(), partitions.end()}});
    response.assignment = std::move(assignment);
  }
  co_return response;
}

}  // namespace ferry::server::handlers
