#include <algorithm>
#include <map>

#include "server/authorization.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {

// kafka-log-dirs.sh, and kafka-reassign-partitions.sh, which records where each replica lives: this broker's
// log dirs with the partitions in each (all of them when no topics are named), their sizes, and how far each
// replica's log end is behind its high watermark. An offline dir answers KAFKA_STORAGE_ERROR. Ferry never
// moves a replica between its own dirs, so no log is a "future" one.
awaitable<p::describe_log_dirs_response> handle_describe_log_dirs(request_context& ctx,
                                                                  p::describe_log_dirs_request& request) {
  using partition_entry =
      p::describe_log_dirs_response::describe_log_dirs_result::describe_log_dirs_topic::describe_log_dirs_partition;
  p::describe_log_dirs_response response;
  // Describe on the cluster: without it, v3+ says so and older versions list no dirs (Kafka's answer).
  if (!authorize_cluster(ctx, authz::operation::describe)) {
    if (ctx.version() >= 3) response.error_code = ctx.error(p::error_code::cluster_authorization_failed);
    co_return response;
  }
  std::map<std::string, std::vector<std::int32_t>, std::less<>> wanted;
  if (request.topics)
    for (const auto& t : *request.topics)
      wanted[t.topic].insert(wanted[t.topic].end(), t.partitions.begin(), t.partitions.end());
  const auto asked = [&](const topic_partition& tp) {
    if (!request.topics) return true;
    const auto it = wanted.find(tp.topic);
    return it != wanted.end() &&
           std::find(it->second.begin(), it->second.end(), tp.partition.value()) != it->second.end();
  };
  for (const auto& dir : ctx.broker.partitions.log_dir_usages()) {
    auto& out = response.results.emplace_back();
    out.log_dir = dir.path;
    if (dir.offline) {
      out.error_code = ctx.error(p::error_code::kafka_storage_error);
      continue;
    }
    if (dir.free_bytes) out.usable_bytes = static_cast<std::int64_t>(*dir.free_bytes);
    std::map<std::string, std::vector<partition_entry>> by_topic;
    for (const auto& log : dir.logs) {
      if (!asked(log.id)) continue;
      auto& partition = by_topic[log.id.topic].emplace_back();
      partition.partition_index = log.id.partition.value();
      partition.partition_size = log.size_bytes;
      partition.offset_lag = log.offset_lag;
    }
    for (auto& [name, partitions] : by_topic) {
      auto& topic = out.topics.emplace_back();
      topic.name = name;
      topic.partitions = std::move(partitions);
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
