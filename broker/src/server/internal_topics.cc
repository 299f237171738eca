#include "server/internal_topics.h"

#include <algorithm>

#include "base/log.h"
#include "txn/txn_coordinator.h"

namespace ferry::server {

bool is_internal_topic(std::string_view name) {
  return name == group::offsets_topic || name == txn::transaction_state_topic;
}

internal_topic offsets_topic(const config::broker_config& config) {
  return {.name = group::offsets_topic,
          .owner = "group",
          .partitions_setting = "offsets.topic.num.partitions",
          .replication_setting = "offsets.topic.replication.factor",
          .partitions = config.offsets_topic_num_partitions,
          .replication_factor = config.offsets_topic_replication_factor,
          .min_insync_replicas = 2,
          .segment_bytes = config.offsets_topic_segment_bytes,
          .compression = "producer"};
}

internal_topic transaction_topic(const config::broker_config& config) {
  return {.name = txn::transaction_state_topic,
          .owner = "txn",
          .partitions_setting = "transaction.state.log.num.partitions",
          .replication_setting = "transaction.state.log.replication.factor",
          .partitions = config.transaction_state_log_num_partitions,
          .replication_factor = config.transaction_state_log_replication_factor,
          .min_insync_replicas = config.transaction_state_log_min_isr,
          .segment_bytes = config.transaction_state_log_segment_bytes,
          .compression = "uncompressed"};
}

std::optional<internal_topic> internal_topic_named(const config::broker_config& config, std::string_view name) {
  if (name == group::offsets_topic) return offsets_topic(config);
  if (name == txn::transaction_state_topic) return transaction_topic(config);
  return std::nullopt;
}

coordinator_location find_coordinator(const internal_topic& spec, const coord::cluster_view& view,
                                      std::int32_t partition, bool& missing_topic) {
  coordinator_location out;
  missing_topic = false;
  const auto name = std::string(spec.name);
  const auto* topic = view.find_topic(spec.name);
  if (topic == nullptr || topic->marked_for_deletion) {
    missing_topic = topic == nullptr;
    out.error = protocol::error_code::coordinator_not_available;
    out.message = "the coordinators' topic " + name + " is being created";
    return out;
  }
  const auto found = topic->partitions.find(partition_id{partition});
  if (found == topic->partitions.end() || topic->partitions.size() != static_cast<std::size_t>(spec.partitions)) {
    out.error = protocol::error_code::coordinator_not_available;
    out.message = name + " has " + std::to_string(topic->partitions.size()) + " partitions, but " +
                  std::string(spec.partitions_setting) + " is " + std::to_string(spec.partitions);
    FERRY_LOG_LIMITED(error, spec.owner, 10) << out.message << ": no coordinator can serve until they agree";
    return out;
  }
  const auto& state = found->second.state;
  const auto b = state ? view.brokers.find(state->leader) : view.brokers.end();
  if (b == view.brokers.end()) {
    out.error = protocol::error_code::coordinator_not_available;
    out.message = name + "-" + std::to_string(partition) + " has no live leader";
    return out;
  }
  out.broker = &b->second;
  return out;
}

topic_admin_result create_internal_topic(broker_context& broker, const internal_topic& spec) {
  const auto live = broker.cluster.view()->brokers.size();
  if (live < static_cast<std::size_t>(spec.replication_factor)) {
    auto message = std::string(spec.replication_setting) + " is " + std::to_string(spec.replication_factor) + ", but " +
                   std::to_string(live) + (live == 1 ? " broker is" : " brokers are") + " live";
    FERRY_LOG_LIMITED(warn, spec.owner, 10000)
        << "not creating " << spec.name << " yet: " << message << "; its coordinators are unavailable until "
        << spec.replication_factor << " brokers are live";
    return {.error = protocol::error_code::invalid_replication_factor, .message = std::move(message)};
  }
  const auto replicas = static_cast<std::int16_t>(spec.replication_factor);
  new_topic topic{
      .name = std::string(spec.name),
      .partitions = spec.partitions,
      .replication_factor = replicas,
      .assignment = {},
      .config = {{"cleanup.policy", "compact"},
                 {"compression.type", std::string(spec.compression)},
                 {"segment.bytes", std::to_string(spec.segment_bytes)},
                 {"min.insync.replicas", std::to_string(std::min<int>(spec.min_insync_replicas, replicas))}}};
  auto created = create_topic(broker, topic, false);
  if (created.error == protocol::error_code::none)
    FERRY_LOG(info, spec.owner) << "created " << spec.name << ": " << topic.partitions << " partitions, " << replicas
                                << " replicas";
  return created;
}

bool internal_topic_needs_repair(const internal_topic& spec, const coord::cluster_view& view) {
  const auto* topic = view.find_topic(spec.name);
  if (topic == nullptr || topic->marked_for_deletion) return false;
  const auto policy = topic->config.find("cleanup.policy");
  return policy == topic->config.end() || policy->second != "compact";
}

result<void> repair_internal_topic(broker_context& broker, const internal_topic& spec) {
  const auto view = broker.cluster.view();
  if (!internal_topic_needs_repair(spec, *view)) return success();
  auto config = view->find_topic(spec.name)->config;
  const auto before = config.contains("cleanup.policy") ? config["cleanup.policy"] : "delete (the default)";
  config["cleanup.policy"] = "compact";
  FERRY_TRY(broker.writes.set_topic_config(spec.name, config));
  FERRY_LOG(warn, spec.owner) << spec.name << " had cleanup.policy=" << before
                              << ", as an ordinary topic created by a client or a tool would: set it to compact, so "
                                 "retention cannot delete the coordinators' records";
  return success();
}

}  // namespace ferry::server
