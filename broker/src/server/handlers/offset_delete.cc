#include <set>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;

// Deletes a group's committed offsets of some partitions; GROUP_SUBSCRIBED_TO_TOPIC for topics its members
// consume. Needs Delete on the group and Read on each topic (a refused topic's partitions are left alone).
awaitable<p::offset_delete_response> handle_offset_delete(request_context& ctx, p::offset_delete_request& request) {
  if (!authorize(ctx, authz::operation::remove, authz::resource_type::group, request.group_id)) {
    p::offset_delete_response refused;
    refused.error_code = ctx.error(p::error_code::group_authorization_failed);
    co_return refused;
  }
  std::set<std::string, std::less<>> refused_topics;
  std::vector<topic_partition> partitions;
  for (const auto& t : request.topics) {
    if (!authorize(ctx, authz::operation::read, authz::resource_type::topic, t.name)) {
      refused_topics.insert(t.name);
      continue;
    }
    for (const auto& part : t.partitions) partitions.push_back({t.name, part.partition_index});
  }
  struct outcome {
    std::error_code group;
    std::vector<std::error_code> partitions;
  };
  auto& groups = ctx.broker.groups;
  auto reply = std::make_shared<coordinator_reply<outcome>>(ctx.connection.executor);
  groups.delete_offsets(request.group_id, partitions,
                        [done = reply->callback()](std::error_code group, std::vector<std::error_code> each) {
                          done({group, std::move(each)});
                        });
  while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
  const auto& result = reply->value();
  p::offset_delete_response response;
  response.error_code = ctx.error(to_kafka_error(result.group));
  if (result.group) co_return response;
  std::size_t i = 0;
  for (const auto& t : request.topics) {
    auto& topic = response.topics.emplace_back();
    topic.name = t.name;
    const bool refused = refused_topics.contains(t.name);
    for (const auto& part : t.partitions)
      topic.partitions.push_back({part.partition_index, refused
                                                            ? ctx.error(p::error_code::topic_authorization_failed)
                                                            : ctx.error(to_kafka_error(result.partitions.at(i++)))});
  }
  co_return response;
}

}  // namespace ferry::server::handlers
