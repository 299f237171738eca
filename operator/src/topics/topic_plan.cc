#include "topics/topic_plan.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "config/topic_config.h"
#include "coord/replica_placement.h"

namespace ferry::topics {
namespace {

using json = nlohmann::json;

std::optional<std::int32_t> int32_field(const json& spec, const char* name) {
  const auto it = spec.find(name);
  if (it == spec.end() || !it->is_number_integer()) return std::nullopt;
  const auto value = it->get<std::int64_t>();
  if (value < 1 || value > INT32_MAX) return std::nullopt;
  return static_cast<std::int32_t>(value);
}

std::vector<coord::placement_broker> placement_brokers(const coord::cluster_view& view) {
  std::vector<coord::placement_broker> brokers;
  for (const auto& [id, broker] : view.brokers) brokers.push_back({id, broker.rack});
  return brokers;
}

refusal insufficient_brokers(std::int32_t replication_factor, std::size_t live) {
  return {"InsufficientBrokers", "replicationFactor " + std::to_string(replication_factor) + " needs at least " +
                                     std::to_string(replication_factor) + " live brokers, and " + std::to_string(live) +
                                     " are registered"};
}

refusal placement_failed(std::error_code error) {
  // place_replicas refuses a mix of brokers with and without broker.rack, as Kafka does.
  return {"ClusterError",
          "cannot place replicas (" + error.message() + "): either every broker sets broker.rack or none does"};
}

// The topic's min.insync.replicas: its own override, else the brokers' dynamic default, else Kafka's default 1
// (a broker's static setting is not in ZooKeeper).
std::int32_t min_insync_replicas(const topic_spec& spec, const coord::cluster_view& view) {
  const std::string* value = nullptr;
  if (const auto own = spec.config.find("min.insync.replicas"); own != spec.config.end()) {
    value = &own->second;
  } else if (const auto defaults = view.broker_configs.find(coord::layout::default_broker_entity);
             defaults != view.broker_configs.end()) {
    if (const auto set = defaults->second.find("min.insync.replicas"); set != defaults->second.end())
      value = &set->second;
  }
  std::int32_t parsed = 1;
  if (value != nullptr) std::from_chars(value->data(), value->data() + value->size(), parsed);
  return parsed;
}

// A spec.config value in Kafka's string form: numbers and booleans as Kafka's own tools would write them, a
// whole double as an integer (a long config would refuse "604800000.0"). Lists, objects and null have none.
std::optional<std::string> kafka_config_value(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean() || value.is_number_integer()) return value.dump();
  if (!value.is_number_float()) return std::nullopt;
  const auto number = value.get<double>();
  // 2^63: the doubles below it in magnitude that are whole fit an int64 exactly.
  constexpr double int64_bound = 9223372036854775808.0;
  if (std::trunc(number) == number && std::abs(number) < int64_bound) {
    return std::to_string(static_cast<std::int64_t>(number));
  }
  char text[32];
  // The shortest text that reads back as the same double (32 characters hold any).
  const auto written = std::to_chars(text, text + sizeof text, number);
  return std::string(text, written.ptr);
}

std::string json_kind(const json& value) {
  if (value.is_array()) return "a list";
  if (value.is_object()) return "an object";
  return "null";
}

}  // namespace

bool is_internal_topic(std::string_view name) { return name.starts_with("__"); }

std::variant<topic_spec, refusal> read_spec(const json& resource) {
  const auto spec = resource.value("spec", json::object());
  topic_spec out;
  out.name = spec.value("topicName", resource["metadata"].value("name", std::string{}));
  if (!coord::layout::is_valid_topic_name(out.name)) {
    return refusal{"InvalidConfig", "'" + out.name +
                                        "' is not a legal Kafka topic name (1-249 characters of a-z, A-Z, 0-9, '.', "
                                        "'_' and '-'); set spec.topicName"};
  }
  if (is_internal_topic(out.name)) {
    return refusal{"NotSupported", "topic " + out.name +
                                       " is internal to the brokers (names starting with __ are theirs): it cannot "
                                       "be created, adopted, configured or deleted through a Topic resource"};
  }
  const auto partitions = int32_field(spec, "partitions");
  const auto replication_factor = int32_field(spec, "replicationFactor");
  if (!partitions || !replication_factor) {
    return refusal{"InvalidConfig", "spec.partitions and spec.replicationFactor must be integers of at least 1"};
  }
  out.partitions = *partitions;
  out.replication_factor = *replication_factor;
  config::topic_settings settings;
  const auto config = spec.value("config", json::object());
  for (const auto& [key, value] : config.items()) {
    auto text = kafka_config_value(value);
    if (!text) {
      return refusal{"InvalidConfig",
                     "spec.config." + key + " must be a string, a number or a boolean, not " + json_kind(value)};
    }
    if (const auto error = config::apply_topic_override(settings, key, *text)) {
      return refusal{"InvalidConfig", "spec.config: " + error->message};
    }
    out.config.emplace(key, std::move(*text));
  }
  const auto unmanaged = spec.value("unmanagedConfigKeys", json::array());
  if (!unmanaged.is_array()) return refusal{"InvalidConfig", "spec.unmanagedConfigKeys must be a list of strings"};
  for (const auto& key : unmanaged) {
    if (!key.is_string()) return refusal{"InvalidConfig", "spec.unmanagedConfigKeys must be a list of strings"};
    if (out.config.contains(key.get<std::string>())) {
      return refusal{"InvalidConfig", "spec.config sets " + key.get<std::string>() +
                                          ", which spec.unmanagedConfigKeys leaves alone: name it in one of them"};
    }
    out.unmanaged_config.insert(key.get<std::string>());
  }
  return out;
}

std::optional<std::map<partition_id, std::vector<broker_id>>> replication_moves(const coord::topic_info& topic,
                                                                                const coord::cluster_view& view,
                                                                                std::int32_t replication_factor) {
  std::map<broker_id, std::int32_t> load;
  for (const auto& [id, broker] : view.brokers) load[id] = 0;
  for (const auto& [name, other] : view.topics) {
    for (const auto& [p, partition] : other.partitions) {
      for (const auto replica : partition.target_replicas()) {
        if (load.contains(replica)) ++load[replica];
      }
    }
  }
  const auto rack_of = [&](broker_id id) -> std::string {
    const auto it = view.brokers.find(id);
    return it == view.brokers.end() || !it->second.rack ? std::string{} : *it->second.rack;
  };
  const auto wanted = static_cast<std::size_t>(replication_factor);
  std::map<partition_id, std::vector<broker_id>> moves;
  for (const auto& [p, partition] : topic.partitions) {
    auto replicas = partition.target_replicas();
    if (replicas.size() == wanted) continue;
    if (replicas.size() > wanted) {
      for (auto it = replicas.begin() + static_cast<std::ptrdiff_t>(wanted); it != replicas.end(); ++it) {
        if (const auto l = load.find(*it); l != load.end()) --l->second;  // a dead broker is no candidate
      }
      replicas.resize(wanted);
    }
    while (replicas.size() < wanted) {
      std::set<std::string> racks;
      for (const auto replica : replicas) racks.insert(rack_of(replica));
      std::optional<broker_id> best;
      for (const auto& [id, count] : load) {
        if (std::find(replicas.begin(), replicas.end(), id) != replicas.end()) continue;
        if (!best) {
          best = id;
          continue;
        }
        const auto key = [&](broker_id b) { return std::tuple(racks.contains(rack_of(b)), load[b], b); };
        if (key(id) < key(*best)) best = id;
      }
      if (!best) return std::nullopt;
      replicas.push_back(*best);
      ++load[*best];
    }
    moves.emplace(p, std::move(replicas));
  }
  return moves;
}

std::variant<topic_changes, refusal> plan_changes(const topic_spec& spec, const coord::topic_info* live,
                                                  const coord::cluster_view& view, std::int32_t start_index) {
  // acks=all producers of a topic with fewer replicas than min.insync.replicas can never write (NotEnoughReplicas).
  if (const auto min_isr = min_insync_replicas(spec, view); spec.replication_factor < min_isr) {
    return refusal{"InvalidConfig", "replicationFactor " + std::to_string(spec.replication_factor) +
                                        " is below min.insync.replicas " + std::to_string(min_isr) +
                                        ": producers with acks=all could never write; raise one or lower the other"};
  }
  topic_changes changes;
  const auto brokers = placement_brokers(view);
  if (live == nullptr) {
    if (static_cast<std::size_t>(spec.replication_factor) > brokers.size()) {
      return insufficient_brokers(spec.replication_factor, brokers.size());
    }
    auto assignment = coord::place_replicas(brokers, spec.partitions, spec.replication_factor, start_index);
    if (!assignment) return placement_failed(assignment.error());
    changes.create = true;
    changes.assignment = std::move(assignment).value();
    changes.config = spec.config;
    return changes;
  }
  if (!live->valid()) {
    return refusal{"ClusterError", "the topic's assignment in ZooKeeper is unusable (" + live->invalid +
                                       "); fix or delete /brokers/topics/" + spec.name};
  }
  const auto existing = static_cast<std::int32_t>(live->partitions.size());
  if (spec.partitions < existing) {
    return refusal{"NotSupported", "the topic has " + std::to_string(existing) +
                                       " partitions and Kafka cannot remove partitions; set spec.partitions to at "
                                       "least " +
                                       std::to_string(existing)};
  }
  auto wanted_config = spec.config;
  const auto keep_live = [&](const std::string& key) {
    if (const auto it = live->config.find(key); it != live->config.end()) wanted_config.try_emplace(key, it->second);
  };
  for (const auto& key : throttle_config_keys()) keep_live(key);
  for (const auto& key : spec.unmanaged_config) keep_live(key);
  if (live->config != wanted_config) changes.config = std::move(wanted_config);
  auto moves = replication_moves(*live, view, spec.replication_factor);
  if (!moves) return insufficient_brokers(spec.replication_factor, brokers.size());
  changes.moves = std::move(moves).value();
  // A new target on top of a running reassignment would replace it; wait for it instead. (New partitions and
  // configs do not touch a reassignment, and a running one that already reaches the spec is no change.)
  for (const auto& [p, target] : changes.moves) {
    if (live->partitions.at(p).reassigning()) {
      return refusal{"ReassignmentInProgress", "partition " + std::to_string(p.value()) +
                                                   " is being reassigned; the replication factor changes once it "
                                                   "completes"};
    }
  }
  if (spec.partitions > existing) {
    if (static_cast<std::size_t>(spec.replication_factor) > brokers.size()) {
      return insufficient_brokers(spec.replication_factor, brokers.size());
    }
    auto added =
        coord::place_replicas(brokers, spec.partitions - existing, spec.replication_factor, start_index, existing);
    if (!added) return placement_failed(added.error());
    coord::layout::replica_assignment assignment;
    for (const auto& [p, partition] : live->partitions) assignment.emplace(p, partition.replicas);
    assignment.merge(added.value());
    changes.assignment = std::move(assignment);
  }
  return changes;
}

partition_summary summarize(const coord::topic_info& topic) {
  partition_summary summary;
  summary.count = static_cast<std::int32_t>(topic.partitions.size());
  for (const auto& [p, partition] : topic.partitions) {
    if (partition.reassigning()) ++summary.reassigning;
    if (!partition.state || partition.state->leader == no_broker) {
      ++summary.offline;
      continue;
    }
  }
  return summary;
}

std::int32_t pending_replication_moves(const coord::topic_info& topic, std::int32_t replication_factor) {
  std::int32_t pending = 0;
  for (const auto& [p, partition] : topic.partitions) {
    pending += partition.target_replicas().size() != static_cast<std::size_t>(replication_factor) ? 1 : 0;
  }
  return pending;
}

}  // namespace ferry::topics
