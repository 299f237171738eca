#include <algorithm>
#include <set>

#include "server/authorization.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

// One group's committed offsets: of the partitions asked for, or all of them (null topics, v2+).
struct group_offsets {
  p::error_code error = p::error_code::none;
  group::group_coordinator::fetched_offsets offsets;
  std::vector<topic_partition> unstable;  // with transactional offsets pending, when the request wants stable ones
  // Topics the client may not Describe: TOPIC_AUTHORIZATION_FAILED when it named them, left out when it asked for
  // every partition.
  std::set<std::string, std::less<>> refused;
  bool every_partition = false;
};

template <typename Topics>
group_offsets fetch_group(request_context& ctx, const std::string& group_id, const std::optional<Topics>& topics,
                          bool require_stable, const std::optional<std::string>& member_id = std::nullopt,
                          std::int32_t member_epoch = -1) {
  if (!authorize(ctx, authz::operation::describe, authz::resource_type::group, group_id))
    return {p::error_code::group_authorization_failed, {}, {}, {}, false};
  std::optional<std::vector<topic_partition>> wanted;
  if (topics) {
    wanted.emplace();
    for (const auto& t : *topics)
      for (const auto index : t.partition_indexes) wanted->push_back({t.name, partition_id{index}});
  }
  auto fetched = ctx.broker.groups.fetch(group_id, wanted, member_id, member_epoch);
  if (!fetched) return {to_kafka_error(fetched.error()), {}, {}, {}, false};
  group_offsets out{p::error_code::none,
                    std::move(fetched.value()),
                    require_stable ? ctx.broker.groups.pending_txn_offsets(group_id) : std::vector<topic_partition>{},
                    {},
                    !topics};
  for (const auto& [tp, value] : out.offsets)
    if (!out.refused.contains(tp.topic) && !(out.every_partition ? may : authorize)(
                                               ctx, authz::operation::describe, authz::resource_type::topic, tp.topic))
      out.refused.insert(tp.topic);
  return out;
}

// Fills `out` (a topic list of either response shape) with the offsets, grouped by topic in the order found. A
// partition with a transactional commit pending gets UNSTABLE_OFFSET_COMMIT (KIP-447): the consumer retries
// until the transaction ends.
template <typename TopicList>
void fill(request_context& ctx, TopicList& out, const group_offsets& found, p::error_code per_partition) {
  for (const auto& [tp, value] : found.offsets) {
    const bool refused = found.refused.contains(tp.topic);
    if (refused && found.every_partition) continue;
    if (out.empty() || out.back().name != tp.topic) out.emplace_back().name = tp.topic;
    auto& part = out.back().partitions.emplace_back();
    part.partition_index = tp.partition;
    if (refused) {
      part.committed_offset = no_offset;
      part.committed_leader_epoch = leader_epoch{-1};
      part.error_code = ctx.error(p::error_code::topic_authorization_failed);
      continue;
    }
    const bool unstable = std::find(found.unstable.begin(), found.unstable.end(), tp) != found.unstable.end();
    part.committed_offset = value && !unstable ? value->committed : no_offset;
    part.committed_leader_epoch = value && !unstable ? value->epoch : leader_epoch{-1};
    part.metadata = value && !unstable ? value->metadata : "";
    part.error_code = unstable ? ctx.error(p::error_code::unstable_offset_commit) : protocol::code(per_partition);
  }
}

}  // namespace

// Committed offsets, -1 for partitions without one. v8+ asks for several groups at once; before v2, a
// group-level error is reported in each partition. Needs Describe on the group and on each topic.
awaitable<p::offset_fetch_response> handle_offset_fetch(request_context& ctx, p::offset_fetch_request& request) {
  p::offset_fetch_response response;
  const bool require_stable = ctx.version() >= 7 && request.require_stable;
  if (ctx.version() >= 8) {
    for (const auto& g : request.groups) {
      auto& out = response.groups.emplace_back();
      out.group_id = g.group_id;
      // v9+: a member of a consumer-protocol group names itself and its epoch, which must be current.
      const auto found = fetch_group(ctx, g.group_id, g.topics, require_stable, g.member_id, g.member_epoch);
      out.error_code = ctx.error(found.error);
      fill(ctx, out.topics, found, p::error_code::none);
    }
    co_return response;
  }
  auto found = fetch_group(ctx, request.group_id, request.topics, require_stable);
  if (found.error != p::error_code::none && ctx.version() < 2 && request.topics) {
    // No top-level error code yet: every partition asked for carries the group's.
    for (const auto& t : *request.topics)
      for (const auto index : t.partition_indexes)
        found.offsets.emplace_back(topic_partition{t.name, partition_id{index}}, std::nullopt);
    fill(ctx, response.topics, found, found.error);
    ctx.error(found.error);
    co_return response;
  }
  response.error_code = ctx.error(found.error);
  fill(ctx, response.topics, found, p::error_code::none);
  co_return response;
}

}  // namespace ferry::server::handlers
