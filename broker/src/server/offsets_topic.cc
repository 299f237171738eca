#include "server/offsets_topic.h"

#include <algorithm>

#include "base/log.h"

namespace ferry::server {

bool is_internal_topic(std::string_view name) { return name == group::offsets_topic || name == "__transaction_state"; }

coordinator_location find_group_coordinator(const broker_context& broker, const coord::cluster_view& view,
                                            std::string_view group_id, bool& missing_topic) {
  coordinator_location out;
  missing_topic = false;
  const auto* topic = view.find_topic(group::offsets_topic);
  if (topic == nullptr || topic->marked_for_deletion) {
    missing_topic = topic == nullptr;
    out.error = protocol::error_code::coordinator_not_available;
    out.message = "the group coordinators' topic __consumer_offsets is being created";
    return out;
  }
  const auto partition = partition_id{broker.groups.partition_for(group_id)};
  const auto found = topic->partitions.find(partition);
  if (found == topic->partitions.end() ||
      topic->partitions.size() != static_cast<std::size_t>(broker.groups.config().offsets_partitions)) {
    out.error = protocol::error_code::coordinator_not_available;
    out.message = "__consumer_offsets has " + std::to_string(topic->partitions.size()) +
                  " partitions, but offsets.topic.num.partitions is " +
                  std::to_string(broker.groups.config().offsets_partitions);
    FERRY_LOG_LIMITED(error, "group", 10) << out.message << ": no group can be coordinated until they agree";
    return out;
  }
  const auto& state = found->second.state;
  const auto b = state ? view.brokers.find(state->leader) : view.brokers.end();
  if (b == view.brokers.end()) {
    out.error = protocol::error_code::coordinator_not_available;
    out.message = "__consumer_offsets-" + std::to_string(partition.value()) + " has no live leader";
    return out;
  }
  out.broker = &b->second;
  return out;
}

topic_admin_result create_offsets_topic(broker_context& broker) {
  const auto view = broker.cluster.view();
  const auto& c = broker.config;
  const auto replicas = static_cast<std::int16_t>(
      std::clamp<std::size_t>(view->brokers.size(), 1, static_cast<std::size_t>(c.offsets_topic_replication_factor)));
  new_topic topic{.name = std::string(group::offsets_topic),
                  .partitions = c.offsets_topic_num_partitions,
                  .replication_factor = replicas,
                  .assignment = {},
                  .config = {{"cleanup.policy", "compact"},
                             {"compression.type", "producer"},
                             {"segment.bytes", std::to_string(c.offsets_topic_segment_bytes)},
                             {"min.insync.replicas", std::to_string(std::min<int>(2, replicas))}}};
  if (replicas < c.offsets_topic_replication_factor)
    FERRY_LOG(warn, "group") << "creating __consumer_offsets with " << replicas
                             << " replicas: offsets.topic.replication.factor is " << c.offsets_topic_replication_factor
                             << " but only " << view->brokers.size() << " brokers are live";
  auto created = create_topic(broker, topic, false);
  if (created.error == protocol::error_code::none)
    FERRY_LOG(info, "group") << "created __consumer_offsets: " << topic.partitions << " partitions, " << replicas
                             << " replicas";
  return created;
}

bool offsets_topic_needs_repair(const coord::cluster_view& view) {
  const auto* topic = view.find_topic(group::offsets_topic);
  if (topic == nullptr || topic->marked_for_deletion) return false;
  const auto policy = topic->config.find("cleanup.policy");
  return policy == topic->config.end() || policy->second != "compact";
}

result<void> repair_offsets_topic(broker_context& broker) {
  const auto view = broker.cluster.view();
  if (!offsets_topic_needs_repair(*view)) return success();
  auto config = view->find_topic(group::offsets_topic)->config;
  const auto before = config.contains("cleanup.policy") ? config["cleanup.policy"] : "delete (the default)";
  config["cleanup.policy"] = "compact";
  FERRY_TRY(broker.writes.set_topic_config(group::offsets_topic, config));
  FERRY_LOG(warn, "group") << group::offsets_topic << " had cleanup.policy=" << before
                           << ", as an ordinary topic created by a client or a tool would: set it to compact, so "
                              "retention cannot delete committed offsets";
  return success();
}

}  // namespace ferry::server
