#include "server/topic_admin.h"

#include <algorithm>
#include <random>

#include "base/log.h"
#include "config/topic_config.h"
#include "coord/replica_placement.h"
#include "server/error_mapping.h"

namespace ferry::server {
namespace {

using protocol::error_code;

topic_admin_result fail(error_code code, std::string message) { return {code, std::move(message)}; }

// Kafka starts placement at a random broker so leaders of many small topics spread over the cluster.
std::int32_t random_start(std::size_t brokers) {
  static thread_local std::mt19937 engine{std::random_device{}()};
  return brokers == 0 ? 0 : static_cast<std::int32_t>(engine() % brokers);
}

std::optional<topic_admin_result> check_assignment(const coord::cluster_view& view,
                                                   const coord::layout::replica_assignment& assignment) {
  std::size_t replication_factor = 0;
  for (const auto& [partition, replicas] : assignment) {
    if (replicas.empty()) return fail(error_code::invalid_replica_assignment, "a partition has no replicas");
    if (replication_factor == 0) replication_factor = replicas.size();
    if (replicas.size() != replication_factor)
      return fail(error_code::invalid_replica_assignment, "every partition needs the same number of replicas");
    auto sorted = replicas;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return fail(error_code::invalid_replica_assignment, "a partition lists a broker twice");
    for (const auto id : replicas)
      if (!view.is_live(id))
        return fail(error_code::invalid_replica_assignment,
                    "broker " + std::to_string(id.value()) + " is not a live broker");
  }
  return std::nullopt;
}

// Ferry's caps (max.partitions.per.topic, max.partitions), checked before anything is allocated for them: a
// request for 2,147,483,647 partitions is an error, not an out-of-memory.
std::optional<topic_admin_result> check_partition_limits(const broker_context& broker, const coord::cluster_view& view,
                                                         const std::string& topic, std::int64_t topic_total,
                                                         std::int64_t added) {
  if (topic_total > broker.config.max_partitions_per_topic)
    return fail(error_code::invalid_partitions, "topic '" + topic + "' would have " + std::to_string(topic_total) +
                                                    " partitions; max.partitions.per.topic is " +
                                                    std::to_string(broker.config.max_partitions_per_topic));
  std::int64_t cluster_total = added;
  for (const auto& [name, info] : view.topics) cluster_total += static_cast<std::int64_t>(info.partitions.size());
  if (cluster_total > broker.config.max_partitions)
    return fail(error_code::invalid_partitions, "the cluster would have " + std::to_string(cluster_total) +
                                                    " partitions; max.partitions is " +
                                                    std::to_string(broker.config.max_partitions));
  return std::nullopt;
}

// New replicas may not land on this broker while none of its log dirs can take them (full or offline).
std::optional<topic_admin_result> check_local_storage(const broker_context& broker,
                                                      const coord::layout::replica_assignment& assignment) {
  const auto problem = broker.partitions.storage_problem();
  if (!problem) return std::nullopt;
  const broker_id self{broker.config.broker_id};
  for (const auto& [p, replicas] : assignment)
    if (std::find(replicas.begin(), replicas.end(), self) != replicas.end())
      return fail(error_code::kafka_storage_error,
                  "broker " + std::to_string(self.value()) + " cannot take new partitions: " + *problem);
  return std::nullopt;
}

// The live brokers placement may use, with their racks: this one only while it has a usable log dir (others
// report for themselves).
std::vector<coord::placement_broker> placement_brokers(const broker_context& broker, const coord::cluster_view& view) {
  std::vector<coord::placement_broker> out;
  const broker_id self{broker.config.broker_id};
  const bool skip_self = broker.partitions.storage_problem().has_value() && view.brokers.size() > 1;
  for (const auto& [id, info] : view.brokers)
    if (!(skip_self && id == self)) out.push_back({id, info.rack});
  return out;
}

// Kafka's rack-aware placement needs a rack on every broker or on none: which brokers lack one, if some do.
std::optional<topic_admin_result> mixed_racks(const std::vector<coord::placement_broker>& brokers) {
  std::string without;
  for (const auto& b : brokers)
    if (!b.rack) without += (without.empty() ? "" : ", ") + std::to_string(b.id.value());
  if (without.empty() || std::none_of(brokers.begin(), brokers.end(), [](const auto& b) { return b.rack; }))
    return std::nullopt;
  return fail(error_code::invalid_replica_assignment,
              "rack-aware placement needs a broker.rack on every broker; broker(s) " + without + " have none");
}

}  // namespace

topic_admin_result throttling_quota_exceeded() {
  return fail(error_code::throttling_quota_exceeded, "The throttling quota has been exceeded.");
}

topic_admin_result create_topic(broker_context& broker, const new_topic& topic, bool validate_only,
                                const mutation_gate& may_mutate) {
  if (!coord::layout::is_valid_topic_name(topic.name))
    return fail(error_code::invalid_topic_exception,
                "topic names are 1-249 characters of [a-zA-Z0-9._-] and not '.' or '..'");
  const auto view = broker.cluster.view();
  if (view->find_topic(topic.name) != nullptr)
    return fail(error_code::topic_already_exists, "topic '" + topic.name + "' already exists");

  config::topic_settings settings;
  if (auto error = config::resolve_topic_settings(broker.config.topic_defaults, topic.config, settings))
    return fail(error_code::invalid_config, error->message);

  coord::layout::replica_assignment assignment = topic.assignment;
  if (!assignment.empty()) {
    if (topic.partitions != -1 || topic.replication_factor != -1)
      return fail(error_code::invalid_request, "give either a replica assignment or partition and replica counts");
    for (std::int32_t p = 0; p < static_cast<std::int32_t>(assignment.size()); ++p)
      if (!assignment.contains(partition_id{p}))
        return fail(error_code::invalid_replica_assignment, "partition ids must run from 0 without gaps");
    if (auto bad = check_assignment(*view, assignment)) return *bad;
    if (auto bad = check_partition_limits(broker, *view, topic.name, static_cast<std::int64_t>(assignment.size()),
                                          static_cast<std::int64_t>(assignment.size())))
      return *bad;
  } else {
    const std::int32_t partitions = topic.partitions == -1 ? broker.config.num_partitions : topic.partitions;
    const std::int32_t factor =
        topic.replication_factor == -1 ? broker.config.default_replication_factor : topic.replication_factor;
    if (partitions < 1) return fail(error_code::invalid_partitions, "the number of partitions must be at least 1");
    if (auto bad = check_partition_limits(broker, *view, topic.name, partitions, partitions)) return *bad;
    const auto brokers = placement_brokers(broker, *view);
    if (factor < 1 || static_cast<std::size_t>(factor) > brokers.size())
      return fail(error_code::invalid_replication_factor, "replication factor " + std::to_string(factor) +
                                                              " is larger than the " + std::to_string(brokers.size()) +
                                                              " live broker(s)");
    if (auto bad = mixed_racks(brokers)) return *bad;
    auto placed = coord::place_replicas(brokers, partitions, factor, random_start(brokers.size()));
    if (!placed) return fail(to_kafka_error(placed.error()), placed.error().message());
    assignment = std::move(placed.value());
  }
  if (auto bad = check_local_storage(broker, assignment)) return *bad;
  if (validate_only) return {};
  if (may_mutate && !may_mutate(static_cast<std::int64_t>(assignment.size()))) return throttling_quota_exceeded();

  const auto created = broker.writes.create_topic(topic.name, assignment, topic.config);
  if (!created) return fail(to_kafka_error(created.error()), created.error().message());
  FERRY_LOG(info, "server") << "created topic '" << topic.name << "' with " << assignment.size() << " partition(s)";
  return {};
}

topic_admin_result add_partitions(broker_context& broker, const std::string& topic, std::int32_t total,
                                  const std::vector<std::vector<broker_id>>& assignment, bool validate_only,
                                  const mutation_gate& may_mutate) {
  const auto view = broker.cluster.view();
  const auto* info = view->find_topic(topic);
  if (info == nullptr || info->marked_for_deletion)
    return fail(error_code::unknown_topic_or_partition, "topic '" + topic + "' does not exist");
  if (!info->valid())
    return fail(error_code::unknown_server_error,
                "the assignment of topic '" + topic + "' in ZooKeeper cannot be read: " + info->invalid);
  const auto current = static_cast<std::int32_t>(info->partitions.size());
  if (total <= current)
    return fail(error_code::invalid_partitions, "topic '" + topic + "' already has " + std::to_string(current) +
                                                    " partitions; the new count must be larger");
  if (auto bad = check_partition_limits(broker, *view, topic, total, static_cast<std::int64_t>(total) - current))
    return *bad;
  const auto replication_factor = static_cast<std::int32_t>(info->partitions.begin()->second.replicas.size());
  coord::layout::replica_assignment grown;
  for (const auto& [p, partition] : info->partitions) grown[p] = partition.replicas;
  if (!assignment.empty()) {
    if (static_cast<std::int32_t>(assignment.size()) != total - current)
      return fail(error_code::invalid_replica_assignment, "the assignment must list exactly the new partitions");
    coord::layout::replica_assignment added;
    for (std::int32_t i = 0; i < total - current; ++i)
      added[partition_id{current + i}] = assignment[static_cast<std::size_t>(i)];
    if (auto bad = check_assignment(*view, added)) return *bad;
    grown.insert(added.begin(), added.end());
  } else {
    const auto brokers = placement_brokers(broker, *view);
    if (auto bad = mixed_racks(brokers)) return *bad;
    auto placed =
        coord::place_replicas(brokers, total - current, replication_factor, random_start(brokers.size()), current);
    if (!placed) return fail(to_kafka_error(placed.error()), placed.error().message());
    grown.insert(placed.value().begin(), placed.value().end());
  }
  // Only the new partitions count: existing replicas here bring no new data.
  if (auto bad = check_local_storage(broker, {grown.lower_bound(partition_id{current}), grown.end()})) return *bad;
  if (validate_only) return {};
  if (may_mutate && !may_mutate(total - current)) return throttling_quota_exceeded();
  const auto written = broker.writes.add_partitions(topic, grown);
  if (!written) return fail(to_kafka_error(written.error()), written.error().message());
  return {};
}

}  // namespace ferry::server

namespace ferry::server {

topic_admin_result set_topic_overrides(broker_context& broker, const std::string& topic,
                                       const std::map<std::string, std::string>& overrides, bool validate_only) {
  const auto view = broker.cluster.view();
  const auto* info = view->find_topic(topic);
  if (info == nullptr || info->marked_for_deletion)
    return {protocol::error_code::unknown_topic_or_partition, "topic '" + topic + "' does not exist"};
  config::topic_settings settings;
  if (auto error = config::resolve_topic_settings(broker.config.topic_defaults, overrides, settings))
    return {protocol::error_code::invalid_config, error->message};
  if (validate_only) return {};
  const auto written = broker.writes.set_topic_config(topic, overrides);
  if (!written) return {to_kafka_error(written.error()), written.error().message()};
  FERRY_LOG(info, "server") << "changed configs of topic '" << topic << "'";
  return {};
}

}  // namespace ferry::server
