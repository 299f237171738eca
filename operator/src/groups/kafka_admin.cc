#include "groups/kafka_admin.h"

#include "kafka/errc.h"
#include "protocol/error_code.h"
#include "protocol/messages/consumer_group_describe.h"
#include "protocol/messages/describe_groups.h"
#include "protocol/messages/find_coordinator.h"
#include "protocol/messages/list_offsets.h"
#include "protocol/messages/offset_commit.h"
#include "protocol/messages/offset_fetch.h"

namespace ferry::groups {
namespace {

using kafka::kafka_error;
namespace p = ferry::protocol;

// Versions every Kafka since 2.x and Ferry answer (ConsumerGroupDescribe: Kafka 4 and Ferry), most without
// flexible headers.
constexpr std::int16_t consumer_group_describe_version = 0;
constexpr std::int16_t find_coordinator_version = 2;
constexpr std::int16_t describe_groups_version = 4;
constexpr std::int16_t offset_fetch_version = 5;
constexpr std::int16_t list_offsets_version = 5;
constexpr std::int16_t offset_commit_version = 7;
constexpr std::int8_t group_key_type = 0;

// Errors after which the coordinator must be looked up again.
bool coordinator_moved(std::int16_t code) {
  const auto e = static_cast<p::error_code>(code);
  return e == p::error_code::not_coordinator || e == p::error_code::coordinator_not_available;
}

}  // namespace

result<kafka_admin::address> kafka_admin::coordinator(const std::string& group) {
  if (const auto known = coordinators_.find(group); known != coordinators_.end()) return known->second;
  auto bootstrap = client_.any_broker();
  if (!bootstrap) return bootstrap.error();
  p::find_coordinator_request request;
  request.key = group;
  request.key_type = group_key_type;
  auto answer = client_.call<p::find_coordinator_response>(bootstrap.value(), request, find_coordinator_version);
  if (!answer) return answer.error();
  if (answer.value().error_code != 0) return kafka_error(answer.value().error_code);
  address found{answer.value().host, answer.value().port};
  coordinators_[group] = found;
  return found;
}

result<group_description> kafka_admin::describe(const std::string& group) {
  auto at = coordinator(group);
  if (!at) return at.error();
  p::describe_groups_request request;
  request.groups = {group};
  auto answer = client_.call<p::describe_groups_response>(at.value(), request, describe_groups_version);
  if (!answer) return answer.error();
  if (answer.value().groups.size() != 1) return std::make_error_code(std::errc::protocol_error);
  const auto& described = answer.value().groups.front();
  if (described.error_code != 0) {
    if (coordinator_moved(described.error_code)) coordinators_.erase(group);
    return kafka_error(described.error_code);
  }
  if (described.group_state != "Dead") {
    return group_description{described.group_state, described.protocol_type, described.protocol_data,
                             described.members.size()};
  }
  // Dead to DescribeGroups: no group, or one of the consumer protocol (KIP-848), which ConsumerGroupDescribe
  // describes. A broker without it (before Kafka 4) answers UNSUPPORTED_VERSION: then there is no such group.
  p::consumer_group_describe_request next;
  next.group_ids = {group};
  auto consumer = client_.call<p::consumer_group_describe_response>(at.value(), next, consumer_group_describe_version);
  if (!consumer) return consumer.error();
  if (consumer.value().groups.size() != 1) return std::make_error_code(std::errc::protocol_error);
  const auto& found = consumer.value().groups.front();
  const auto error = static_cast<p::error_code>(found.error_code);
  if (error == p::error_code::group_id_not_found || error == p::error_code::unsupported_version) {
    return group_description{"Dead", "", "", 0};
  }
  if (found.error_code != 0) {
    if (coordinator_moved(found.error_code)) coordinators_.erase(group);
    return kafka_error(found.error_code);
  }
  return group_description{found.group_state, "consumer", found.assignor_name, found.members.size()};
}

result<std::map<topic_partition, committed_offset>> kafka_admin::committed(const std::string& group) {
  auto at = coordinator(group);
  if (!at) return at.error();
  p::offset_fetch_request request;
  request.group_id = group;  // topics null: all of them
  auto answer = client_.call<p::offset_fetch_response>(at.value(), request, offset_fetch_version);
  if (!answer) return answer.error();
  if (answer.value().error_code != 0) {
    if (coordinator_moved(answer.value().error_code)) coordinators_.erase(group);
    return kafka_error(answer.value().error_code);
  }
  std::map<topic_partition, committed_offset> offsets;
  for (const auto& topic : answer.value().topics) {
    for (const auto& partition : topic.partitions) {
      if (partition.error_code != 0) return kafka_error(partition.error_code);
      if (partition.committed_offset.value() >= 0) {
        offsets[{topic.name, partition.partition_index}] = {partition.committed_offset.value(),
                                                            partition.metadata.value_or("")};
      }
    }
  }
  return offsets;
}

result<std::map<topic_partition, std::int64_t>> kafka_admin::list_offsets(
    const std::map<topic_partition, std::int64_t>& timestamps) {
  std::map<broker_id, p::list_offsets_request> by_leader;
  for (const auto& [tp, timestamp] : timestamps) {
    const auto topic = client_.view().topics.find(tp.topic);
    if (topic == client_.view().topics.end())
      return kafka_error(static_cast<std::int16_t>(p::error_code::unknown_topic_or_partition));
    const auto partition = topic->second.partitions.find(tp.partition);
    if (partition == topic->second.partitions.end() || !partition->second.state ||
        partition->second.state->leader == no_broker) {
      return kafka_error(static_cast<std::int16_t>(p::error_code::leader_not_available));
    }
    auto& request = by_leader[partition->second.state->leader];
    request.replica_id = no_broker;  // as a consumer: offsets up to the high watermark
    if (request.topics.empty() || request.topics.back().name != tp.topic) request.topics.emplace_back().name = tp.topic;
    request.topics.back().partitions.push_back({.partition_index = tp.partition, .timestamp = timestamp});
  }
  std::map<topic_partition, std::int64_t> found;
  std::map<topic_partition, std::int64_t> past_the_end;
  for (const auto& [leader, request] : by_leader) {
    if (!client_.view().brokers.contains(leader))
      return kafka_error(static_cast<std::int16_t>(p::error_code::leader_not_available));
    auto at = client_.address_of(leader);
    if (!at) return at.error();
    auto answer = client_.call<p::list_offsets_response>(at.value(), request, list_offsets_version);
    if (!answer) return answer.error();
    for (const auto& topic : answer.value().topics) {
      for (const auto& partition : topic.partitions) {
        if (partition.error_code != 0) return kafka_error(partition.error_code);
        const topic_partition tp{topic.name, partition.partition_index};
        if (partition.offset.value() >= 0) {
          found[tp] = partition.offset.value();
        } else {
          past_the_end[tp] = -1;  // no record at or after the time: the log end, as kafka-consumer-groups does
        }
      }
    }
  }
  if (found.size() + past_the_end.size() != timestamps.size()) return std::make_error_code(std::errc::protocol_error);
  if (!past_the_end.empty()) {
    if (std::any_of(past_the_end.begin(), past_the_end.end(),
                    [&](const auto& e) { return timestamps.at(e.first) == -1; })) {
      return std::make_error_code(std::errc::protocol_error);  // latest itself answered nothing
    }
    auto ends = list_offsets(past_the_end);
    if (!ends) return ends.error();
    found.merge(ends.value());
  }
  return found;
}

result<void> kafka_admin::commit(const std::string& group, const std::map<topic_partition, std::int64_t>& offsets,
                                 const std::string& metadata) {
  auto at = coordinator(group);
  if (!at) return at.error();
  p::offset_commit_request request;
  request.group_id = group;
  request.generation_id_or_member_epoch = -1;
  for (const auto& [tp, at_offset] : offsets) {
    if (request.topics.empty() || request.topics.back().name != tp.topic) request.topics.emplace_back().name = tp.topic;
    request.topics.back().partitions.push_back(
        {.partition_index = tp.partition, .committed_offset = offset{at_offset}, .committed_metadata = metadata});
  }
  auto answer = client_.call<p::offset_commit_response>(at.value(), request, offset_commit_version);
  if (!answer) return answer.error();
  for (const auto& topic : answer.value().topics) {
    for (const auto& partition : topic.partitions) {
      if (partition.error_code != 0) {
        if (coordinator_moved(partition.error_code)) coordinators_.erase(group);
        return kafka_error(partition.error_code);
      }
    }
  }
  return success();
}

}  // namespace ferry::groups
