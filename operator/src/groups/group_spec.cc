#include "groups/group_spec.h"

#include <algorithm>
#include <chrono>

namespace ferry::groups {
namespace {

using json = nlohmann::json;

// A string member, or "" when it is absent or not a string (the schema is not trusted to have run).
std::string string_at(const json& object, std::string_view key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

std::variant<topic_reset, std::string> read_topic_reset(const json& item) {
  if (!item.is_object() || !item.contains("topic") || !item["topic"].is_string() || item["topic"].empty()) {
    return std::string("every resetOffsets entry needs a topic");
  }
  topic_reset reset;
  reset.topic = item["topic"].get<std::string>();
  const auto to = string_at(item, "to");
  const auto where = "resetOffsets of topic " + reset.topic + ": ";
  if (to == "earliest") {
    reset.target = topic_reset::to::earliest;
  } else if (to == "latest") {
    reset.target = topic_reset::to::latest;
  } else if (to == "timestamp") {
    reset.target = topic_reset::to::timestamp;
    const auto time = kube::parse_time(string_at(item, "timestamp"));
    if (!time) return where + "timestamp must be an RFC 3339 time such as 2026-12-01T10:00:00Z";
    reset.timestamp_ms = std::chrono::duration_cast<std::chrono::milliseconds>(time->time_since_epoch()).count();
  } else if (to == "offsets") {
    reset.target = topic_reset::to::offsets;
    const auto offsets = item.find("offsets");
    if (offsets == item.end() || !offsets->is_array() || offsets->empty())
      return where + "offsets must list partitions";
    for (const auto& o : *offsets) {
      if (!o.is_object() || !o.contains("partition") || !o["partition"].is_number_integer() || !o.contains("offset") ||
          !o["offset"].is_number_integer() || o["partition"].get<std::int64_t>() < 0 ||
          o["partition"].get<std::int64_t>() > INT32_MAX || o["offset"].get<std::int64_t>() < 0) {
        return where + "each offset needs a partition and an offset, both 0 or more";
      }
      reset.offsets[partition_id{o["partition"].get<std::int32_t>()}] = o["offset"].get<std::int64_t>();
    }
  } else {
    return where + "to must be earliest, latest, timestamp or offsets";
  }
  return reset;
}

}  // namespace

group_spec_reading read_group_spec(const json& resource) {
  group_spec_reading read;
  auto& spec = read.spec;
  const auto& spec_json = resource.contains("spec") && resource["spec"].is_object() ? resource["spec"] : json::object();
  spec.group_id = string_at(spec_json, "groupId");
  if (spec.group_id.empty()) spec.group_id = string_at(resource["metadata"], "name");
  const auto reset = spec_json.find("resetOffsets");
  if (reset == spec_json.end()) return read;
  spec.asks_reset = true;
  spec.request_id = string_at(*reset, "requestId");
  spec.not_after = kube::parse_time(string_at(*reset, "notAfter"));
  if (spec.request_id.empty() || spec.request_id.size() > max_request_id_length) {
    read.reset_error = "resetOffsets needs a requestId of 1 to " + std::to_string(max_request_id_length) +
                       " characters naming this one request (a date, a ticket), applied at most once";
    return read;
  }
  if (!spec.not_after) {
    read.reset_error =
        "resetOffsets needs notAfter, an RFC 3339 time such as 2026-12-01T10:00:00Z after which the request is "
        "dropped if it could not be applied";
    return read;
  }
  if (!reset->is_object() || !reset->contains("topics") || !(*reset)["topics"].is_array() ||
      (*reset)["topics"].empty()) {
    read.reset_error = "resetOffsets must list topics";
    return read;
  }
  for (const auto& item : (*reset)["topics"]) {
    auto topic = read_topic_reset(item);
    if (auto* error = std::get_if<std::string>(&topic)) {
      read.reset_error = *error;
      spec.reset.clear();
      return read;
    }
    spec.reset.push_back(std::get<topic_reset>(std::move(topic)));
  }
  return read;
}

reset_record read_reset_record(const json& resource) {
  reset_record record;
  const auto status = resource.find("status");
  if (status == resource.end() || !status->is_object()) return record;
  const auto reset = status->find("resetOffsets");
  if (reset == status->end() || !reset->is_object()) return record;
  record.request_id = string_at(*reset, "requestId");
  const auto generation = reset->find("generation");
  if (generation != reset->end() && generation->is_number_integer())
    record.generation = generation->get<std::int64_t>();
  return record;
}

reset_verdict judge_reset(const group_spec_reading& read, const reset_record& record, std::int64_t generation,
                          kube::system_time now) {
  using step = reset_verdict::step;
  const auto& spec = read.spec;
  if (!spec.asks_reset) return {};
  // A request without an id (refused as invalid, or applied before ids existed) is told apart by its generation.
  const bool judged = spec.request_id.empty() ? record.request_id.empty() && record.generation == generation
                                              : record.request_id == spec.request_id;
  if (judged) return {step::recorded, {}};
  if (!read.reset_error.empty()) return {step::refuse, read.reset_error};
  const auto& request = spec.request_id;
  if (now >= *spec.not_after) {
    return {step::expire, "request " + request + " expired at " + kube::format_time(*spec.not_after) +
                              " before it could be applied; a new reset needs a new requestId and notAfter"};
  }
  if (*spec.not_after - now > max_reset_wait) {
    return {step::refuse, "request " + request + ": notAfter " + kube::format_time(*spec.not_after) + " is more than " +
                              std::to_string(max_reset_wait.count()) +
                              " h ahead; a reset is a request for now, not standing configuration"};
  }
  return {step::apply, {}};
}

std::string reset_marker(std::string_view request_id) {
  return "ferry-operator resetOffsets requestId=" + std::string(request_id);
}

bool marked_applied(const std::map<topic_partition, committed_offset>& committed, std::string_view request_id) {
  const auto marker = reset_marker(request_id);
  return std::any_of(committed.begin(), committed.end(), [&](const auto& c) { return c.second.metadata == marker; });
}

std::variant<reset_lookup, std::string> plan_reset(const std::vector<topic_reset>& reset,
                                                   const coord::cluster_view& view) {
  reset_lookup lookup;
  for (const auto& r : reset) {
    const auto topic = view.topics.find(r.topic);
    if (topic == view.topics.end()) return "topic " + r.topic + " does not exist";
    if (r.target == topic_reset::to::offsets) {
      for (const auto& [p, o] : r.offsets) {
        if (!topic->second.partitions.contains(p)) {
          return "topic " + r.topic + " has no partition " + std::to_string(p.value());
        }
        lookup.explicit_offsets[{r.topic, p}] = o;
      }
      continue;
    }
    const auto timestamp = r.target == topic_reset::to::earliest ? earliest_timestamp
                           : r.target == topic_reset::to::latest ? latest_timestamp
                                                                 : r.timestamp_ms;
    for (const auto& [p, partition] : topic->second.partitions) lookup.timestamps[{r.topic, p}] = timestamp;
  }
  return lookup;
}

lag_summary summarize_lag(const std::map<topic_partition, committed_offset>& committed,
                          const std::map<topic_partition, std::int64_t>& ends) {
  lag_summary summary;
  for (const auto& [tp, at] : committed) {
    const auto end = ends.find(tp);
    if (end == ends.end()) continue;
    const auto lag = std::max<std::int64_t>(0, end->second - at.offset);
    ++summary.partitions;
    summary.total += lag;
    if (!summary.worst || lag > summary.worst->second) summary.worst = std::pair{tp, lag};
  }
  return summary;
}

}  // namespace ferry::groups
