#include "coord/layout.h"

#include <charconv>
#include <limits>

#include <nlohmann/json.hpp>

#include "coord/acl_layout.h"
#include "coord/errc.h"

namespace ferry::coord::layout {
namespace {

using json = nlohmann::json;
// Encoders keep Kafka's key order so znodes read the same as the ones Kafka writes.
using ordered_json = nlohmann::ordered_json;

// Parses `text` as a JSON object and runs `body` on it. nlohmann reports bad input and wrong types by
// throwing; nothing of that leaves this function.
template <typename F>
auto decode_object(std::string_view text, F&& body) -> decltype(body(std::declval<const json&>())) {
  try {
    const json j = json::parse(text);
    if (!j.is_object()) return errc::invalid_data;
    return body(j);
  } catch (const json::exception&) {
    return errc::invalid_data;
  }
}

template <typename Int>
result<Int> to_int(const json& value) {
  if (!value.is_number_integer()) return errc::invalid_data;
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<Int>::max())) return errc::invalid_data;
    return static_cast<Int>(v);
  }
  const auto v = value.get<std::int64_t>();
  if (v < std::numeric_limits<Int>::min() || v > std::numeric_limits<Int>::max()) return errc::invalid_data;
  return static_cast<Int>(v);
}

template <typename Int>
result<Int> parse_decimal(std::string_view text) {
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return errc::invalid_data;
  return value;
}

template <typename Int>
result<Int> int_field(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return errc::invalid_data;
  return to_int<Int>(*it);
}

// Kafka writes timestamps and producer-id bounds as JSON strings; numbers are accepted as well.
result<std::int64_t> int64_string_field(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return errc::invalid_data;
  if (it->is_string()) return parse_decimal<std::int64_t>(it->get_ref<const std::string&>());
  return to_int<std::int64_t>(*it);
}

result<std::string> string_field(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return errc::invalid_data;
  return it->get<std::string>();
}

result<std::vector<broker_id>> broker_list(const json& value) {
  if (!value.is_array()) return errc::invalid_data;
  std::vector<broker_id> out;
  out.reserve(value.size());
  for (const auto& item : value) {
    FERRY_TRY(auto id, to_int<std::int32_t>(item));
    out.emplace_back(id);
  }
  return out;
}

// The number of a sequential child "<prefix><digits>", or nullopt for other names.
std::optional<std::int64_t> sequence_after(std::string_view child_name, std::string_view prefix) {
  if (!child_name.starts_with(prefix)) return std::nullopt;
  auto parsed = parse_decimal<std::int64_t>(child_name.substr(prefix.size()));
  if (!parsed) return std::nullopt;
  return parsed.value();
}

ordered_json broker_array(const std::vector<broker_id>& ids) {
  ordered_json out = ordered_json::array();
  for (const auto id : ids) out.push_back(id.value());
  return out;
}

// The fields of a partition state, shared by the state znode and the state change log.
result<leader_and_isr> leader_and_isr_fields(const json& j) {
  leader_and_isr s;
  FERRY_TRY(const auto leader, int_field<std::int32_t>(j, "leader"));
  FERRY_TRY(const auto epoch, int_field<std::int32_t>(j, "leader_epoch"));
  FERRY_TRY(s.controller_epoch, int_field<std::int32_t>(j, "controller_epoch"));
  const auto isr = j.find("isr");
  if (isr == j.end()) return errc::invalid_data;
  FERRY_TRY(s.isr, broker_list(*isr));
  s.leader = broker_id{leader};
  s.epoch = leader_epoch{epoch};
  return s;
}

}  // namespace

std::string broker_path(broker_id id) { return std::string(brokers_ids_path) + "/" + std::to_string(id.value()); }

std::string topic_path(std::string_view topic) { return std::string(brokers_topics_path) + "/" + std::string(topic); }

std::string topic_partitions_path(std::string_view topic) { return topic_path(topic) + "/partitions"; }

std::string partition_path(std::string_view topic, partition_id p) {
  return topic_partitions_path(topic) + "/" + std::to_string(p.value());
}

std::string partition_state_path(std::string_view topic, partition_id p) { return partition_path(topic, p) + "/state"; }

std::string topic_config_path(std::string_view topic) { return entity_config_path("topics", topic); }

std::string entity_config_path(std::string_view entity_type, std::string_view name) {
  return "/config/" + std::string(entity_type) + "/" + std::string(name);
}

std::string delete_topic_path(std::string_view topic) {
  return std::string(delete_topics_path) + "/" + std::string(topic);
}

std::string deletion_acknowledgement_path(std::string_view topic, broker_id id) {
  return child_path(delete_topic_path(topic), std::to_string(id.value()));
}

std::string child_path(std::string_view parent, std::string_view child) {
  std::string path(parent);
  path += '/';
  path += child;
  return path;
}

std::optional<std::int64_t> config_change_sequence(std::string_view child_name) {
  return sequence_after(child_name, config_change_prefix);
}

std::optional<std::int64_t> partition_state_change_sequence(std::string_view child_name) {
  return sequence_after(child_name, partition_state_change_prefix);
}

std::optional<std::int64_t> acl_change_sequence(std::string_view child_name) {
  return sequence_after(child_name, acl_change_prefix);
}

std::string sanitize(std::string_view name) {
  static constexpr std::string_view hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    const bool kept =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    if (kept) {
      out += c;
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    out += '%';
    out += hex[byte >> 4];
    out += hex[byte & 0x0f];
  }
  return out;
}

std::optional<std::string> desanitize(std::string_view sanitized) {
  const auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(sanitized.size());
  for (std::size_t i = 0; i < sanitized.size(); ++i) {
    const char c = sanitized[i];
    if (c == '+') {
      out += ' ';
    } else if (c != '%') {
      out += c;
    } else {
      if (sanitized.size() - i < 3) return std::nullopt;
      const int high = digit(sanitized[i + 1]);
      const int low = digit(sanitized[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out += static_cast<char>((high << 4) | low);
      i += 2;
    }
  }
  return out;
}

bool is_valid_topic_name(std::string_view topic) {
  if (topic.empty() || topic.size() > 249 || topic == "." || topic == "..") return false;
  for (const char c : topic) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string encode_endpoint(const endpoint& e) {
  const bool ipv6 = e.host.find(':') != std::string::npos;
  return e.listener + "://" + (ipv6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
}

result<endpoint> decode_endpoint(std::string_view text) {
  const auto scheme_end = text.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) return errc::invalid_data;
  endpoint e;
  e.listener = std::string(text.substr(0, scheme_end));
  e.security_protocol = e.listener;
  const std::string_view address = text.substr(scheme_end + 3);
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) return errc::invalid_data;
  std::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  e.host = std::string(host);
  FERRY_TRY(e.port, parse_decimal<std::int32_t>(address.substr(colon + 1)));
  return e;
}

std::string encode_broker(const broker_registration& b) {
  ordered_json j;
  j["version"] = 5;
  if (b.host.empty())
    j["host"] = nullptr;
  else
    j["host"] = b.host;
  j["port"] = b.port;
  j["jmx_port"] = -1;
  j["timestamp"] = std::to_string(b.timestamp_ms);
  ordered_json endpoints = ordered_json::array();
  ordered_json protocols = ordered_json::object();
  for (const auto& e : b.endpoints) {
    endpoints.push_back(encode_endpoint(e));
    protocols[e.listener] = e.security_protocol;
  }
  j["endpoints"] = std::move(endpoints);
  j["listener_security_protocol_map"] = std::move(protocols);
  if (b.rack) j["rack"] = *b.rack;
  j["features"] = ordered_json::object();
  if (b.schema_registry) j["schema_registry_url"] = *b.schema_registry;
  return j.dump();
}

result<broker_registration> decode_broker(std::string_view text) {
  return decode_object(text, [](const json& j) -> result<broker_registration> {
    broker_registration b;
    FERRY_TRY(int_field<std::int32_t>(j, "version"));
    if (const auto it = j.find("host"); it != j.end() && it->is_string()) b.host = it->get<std::string>();
    if (const auto it = j.find("port"); it != j.end() && !it->is_null()) {
      FERRY_TRY(b.port, to_int<std::int32_t>(*it));
    }
    if (const auto it = j.find("timestamp"); it != j.end() && !it->is_null()) {
      FERRY_TRY(b.timestamp_ms, int64_string_field(j, "timestamp"));
    }
    if (const auto it = j.find("rack"); it != j.end() && !it->is_null()) {
      FERRY_TRY(b.rack, string_field(j, "rack"));
    }
    if (const auto it = j.find("schema_registry_url"); it != j.end() && !it->is_null()) {
      FERRY_TRY(b.schema_registry, string_field(j, "schema_registry_url"));
    }
    if (const auto it = j.find("endpoints"); it != j.end()) {
      if (!it->is_array()) return errc::invalid_data;
      const auto protocols = j.find("listener_security_protocol_map");
      if (protocols != j.end() && !protocols->is_object()) return errc::invalid_data;
      for (const auto& item : *it) {
        if (!item.is_string()) return errc::invalid_data;
        FERRY_TRY(auto e, decode_endpoint(item.get_ref<const std::string&>()));
        // Before version 4 the listener name was the security protocol.
        if (protocols != j.end()) {
          if (const auto p = protocols->find(e.listener); p != protocols->end()) {
            if (!p->is_string()) return errc::invalid_data;
            e.security_protocol = p->get<std::string>();
          }
        }
        b.endpoints.push_back(std::move(e));
      }
    } else if (!b.host.empty()) {
      // Version 1 had only host and port, which were the plaintext listener.
      b.endpoints.push_back(endpoint{"PLAINTEXT", "PLAINTEXT", b.host, b.port});
    }
    if (b.host.empty()) {
      for (const auto& e : b.endpoints) {
        if (e.security_protocol == "PLAINTEXT") {
          b.host = e.host;
          b.port = e.port;
          break;
        }
      }
    }
    return b;
  });
}

namespace {

// {"0":[1,2],"1":[2,3]}: replica lists by partition id.
result<replica_assignment> replicas_by_partition(const json& object) {
  replica_assignment out;
  for (const auto& [key, replicas] : object.items()) {
    FERRY_TRY(const auto p, parse_decimal<std::int32_t>(key));
    if (p < 0) return errc::invalid_data;
    FERRY_TRY(auto ids, broker_list(replicas));
    out.emplace(partition_id{p}, std::move(ids));
  }
  return out;
}

}  // namespace

std::string encode_topic(const topic_assignment& t) {
  ordered_json j;
  j["version"] = 3;
  ordered_json partitions = ordered_json::object();
  for (const auto& [p, replicas] : t.partitions) partitions[std::to_string(p.value())] = broker_array(replicas);
  j["partitions"] = std::move(partitions);
  const auto by_partition = [](const replica_assignment& a) {
    ordered_json out = ordered_json::object();
    for (const auto& [p, replicas] : a)
      if (!replicas.empty()) out[std::to_string(p.value())] = broker_array(replicas);
    return out;
  };
  j["adding_replicas"] = by_partition(t.adding);
  j["removing_replicas"] = by_partition(t.removing);
  if (!t.topic_id.is_zero()) j["topic_id"] = t.topic_id.to_string();
  return j.dump();
}

result<topic_assignment> decode_topic(std::string_view text) {
  return decode_object(text, [](const json& j) -> result<topic_assignment> {
    topic_assignment t;
    FERRY_TRY(int_field<std::int32_t>(j, "version"));
    const auto partitions = j.find("partitions");
    if (partitions == j.end() || !partitions->is_object()) return errc::invalid_data;
    FERRY_TRY(t.partitions, replicas_by_partition(*partitions));
    // Absent before version 2 (Kafka 2.4): no reassignment in progress.
    for (const auto& [key, out] :
         {std::pair{"adding_replicas", &t.adding}, std::pair{"removing_replicas", &t.removing}}) {
      const auto it = j.find(key);
      if (it == j.end() || it->is_null()) continue;
      if (!it->is_object()) return errc::invalid_data;
      FERRY_TRY(*out, replicas_by_partition(*it));
      std::erase_if(*out, [](const auto& entry) { return entry.second.empty(); });
    }
    if (const auto it = j.find("topic_id"); it != j.end() && !it->is_null()) {
      if (!it->is_string()) return errc::invalid_data;
      FERRY_TRY(t.topic_id, uuid::parse(it->get_ref<const std::string&>()));
    }
    return t;
  });
}

std::string encode_partition_state(const leader_and_isr& s) {
  ordered_json j;
  j["version"] = 1;
  j["leader"] = s.leader.value();
  j["leader_epoch"] = s.epoch.value();
  j["isr"] = broker_array(s.isr);
  j["controller_epoch"] = s.controller_epoch;
  return j.dump();
}

result<leader_and_isr> decode_partition_state(std::string_view text) {
  return decode_object(text, [](const json& j) -> result<leader_and_isr> {
    FERRY_TRY(int_field<std::int32_t>(j, "version"));
    return leader_and_isr_fields(j);
  });
}

std::string encode_partition_state_changes(const std::vector<partition_state_change>& changes) {
  ordered_json partitions = ordered_json::array();
  for (const auto& c : changes) {
    ordered_json entry;
    entry["topic"] = c.topic;
    entry["topic_id"] = c.topic_id.to_string();
    entry["partition"] = c.partition.value();
    entry["state_version"] = c.state_version;
    entry["leader"] = c.state.leader.value();
    entry["leader_epoch"] = c.state.epoch.value();
    entry["isr"] = broker_array(c.state.isr);
    entry["controller_epoch"] = c.state.controller_epoch;
    partitions.push_back(std::move(entry));
  }
  ordered_json j;
  j["version"] = 1;
  j["partitions"] = std::move(partitions);
  return j.dump();
}

result<std::vector<partition_state_change>> decode_partition_state_changes(std::string_view text) {
  return decode_object(text, [](const json& j) -> result<std::vector<partition_state_change>> {
    FERRY_TRY(int_field<std::int32_t>(j, "version"));
    const auto partitions = j.find("partitions");
    if (partitions == j.end() || !partitions->is_array()) return errc::invalid_data;
    std::vector<partition_state_change> changes;
    changes.reserve(partitions->size());
    for (const auto& entry : *partitions) {
      if (!entry.is_object()) return errc::invalid_data;
      partition_state_change c;
      FERRY_TRY(c.topic, string_field(entry, "topic"));
      FERRY_TRY(const auto id, string_field(entry, "topic_id"));
      FERRY_TRY(c.topic_id, uuid::parse(id));
      FERRY_TRY(const auto p, int_field<std::int32_t>(entry, "partition"));
      if (p < 0) return errc::invalid_data;
      c.partition = partition_id{p};
      FERRY_TRY(c.state_version, int_field<std::int32_t>(entry, "state_version"));
      FERRY_TRY(c.state, leader_and_isr_fields(entry));
      changes.push_back(std::move(c));
    }
    return changes;
  });
}

std::string encode_offline_replicas(const std::vector<topic_partition>& partitions) {
  ordered_json j;
  j["version"] = 1;
  ordered_json list = ordered_json::array();
  for (const auto& tp : partitions) list.push_back({{"topic", tp.topic}, {"partition", tp.partition.value()}});
  j["partitions"] = std::move(list);
  return j.dump();
}

result<std::vector<topic_partition>> decode_offline_replicas(std::string_view text) {
  return decode_object(text, [](const json& j) -> result<std::vector<topic_partition>> {
    FERRY_TRY(int_field<std::int32_t>(j, "version"));
    const auto partitions = j.find("partitions");
    if (partitions == j.end() || !partitions->is_array()) return errc::invalid_data;
    std::vector<topic_partition> out;
    for (const auto& entry : *partitions) {
      if (!entry.is_object()) return errc::invalid_data;
      FERRY_TRY(auto topic, string_field(entry, "topic"));
      FERRY_TRY(const auto p, int_field<std::int32_t>(entry, "partition"));
      if (p < 0) return errc::invalid_data;
      out.push_back({std::move(topic), partition_id{p}});
    }
    return out;
  });
}

std::string offline_replicas_child(broker_id id, std::size_t dir) {
  return std::to_string(id.value()) + "_" + std::to_string(dir);
}

std::optional<broker_id> offline_replicas_broker(std::string_view child) {
  const auto cut = child.find('_');
  if (cut == std::string_view::npos || cut == 0) return std::nullopt;
  std::int32_t id = 0;
  const auto [end, ec] = std::from_chars(child.data(), child.data() + cut, id);
  if (ec != std::errc() || end != child.data() + cut || id < 0) return std::nullopt;
  return broker_id{id};
}

std::string encode_entity_config(const config_map& config) {
  ordered_json j;
  j["version"] = 1;
  ordered_json entries = ordered_json::object();
  for (const auto& [key, value] : config) entries[key] = value;
  j["config"] = std::move(entries);
  return j.dump();
}

result<config_map> decode_entity_config(std::string_view text) {
  return decode_object(text, [](const json& j) -> result<config_map> {
    FERRY_TRY(int_field<std::int32_t>(j, "version"));
    const auto entries = j.find("config");
    if (entries == j.end() || !entries->is_object()) return errc::invalid_data;
    config_map config;
    for (const auto& [key, value] : entries->items()) {
      if (!value.is_string()) return errc::invalid_data;
      config.emplace(key, value.get<std::string>());
    }
    return config;
  });
}

std::string encode_config_change(const config_change& c) {
  ordered_json j;
  j["version"] = 2;
  j["entity_path"] = c.entity_type + "/" + c.entity_name;
  return j.dump();
}

result<config_change> decode_config_change(std::string_view text) {
  return decode_object(text, [](const json& j) -> result<config_change> {
    FERRY_TRY(const auto version, int_field<std::int32_t>(j, "version"));
    config_change c;
    if (version == 1) {
      FERRY_TRY(c.entity_type, string_field(j, "entity_type"));
      FERRY_TRY(c.entity_name, string_field(j, "entity_name"));
      return c;
    }
    FERRY_TRY(const auto path, string_field(j, "entity_path"));
    const auto slash = path.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == path.size()) return errc::invalid_data;
    c.entity_type = path.substr(0, slash);
    c.entity_name = path.substr(slash + 1);
    return c;
  });
}

std::string encode_controller(const controller_registration& c) {
  ordered_json j;
  j["version"] = 2;
  j["brokerid"] = c.id.value();
  j["timestamp"] = std::to_string(c.timestamp_ms);
  j["kraftControllerEpoch"] = -1;
  return j.dump();
}

result<controller_registration> decode_controller(std::string_view text) {
  return decode_object(text, [](const json& j) -> result<controller_registration> {
    controller_registration c;
    FERRY_TRY(int_field<std::int32_t>(j, "version"));
    FERRY_TRY(const auto id, int_field<std::int32_t>(j, "brokerid"));
    c.id = broker_id{id};
    if (const auto it = j.find("timestamp"); it != j.end() && !it->is_null()) {
      FERRY_TRY(c.timestamp_ms, int64_string_field(j, "timestamp"));
    }
    return c;
  });
}

std::string encode_controller_epoch(std::int32_t epoch) { return std::to_string(epoch); }

result<std::int32_t> decode_controller_epoch(std::string_view text) { return parse_decimal<std::int32_t>(text); }

std::string encode_cluster_id(std::string_view id) {
  ordered_json j;
  j["version"] = "1";
  j["id"] = std::string(id);
  return j.dump();
}

result<std::string> decode_cluster_id(std::string_view text) {
  return decode_object(text, [](const json& j) -> result<std::string> {
    FERRY_TRY(auto id, string_field(j, "id"));
    if (id.empty()) return errc::invalid_data;
    return id;
  });
}

std::string encode_producer_id_block(const producer_id_block& b) {
  ordered_json j;
  j["version"] = 1;
  j["broker"] = b.broker.value();
  j["block_start"] = std::to_string(b.first);
  j["block_end"] = std::to_string(b.last);
  return j.dump();
}

result<producer_id_block> decode_producer_id_block(std::string_view text) {
  return decode_object(text, [](const json& j) -> result<producer_id_block> {
    producer_id_block b;
    FERRY_TRY(int_field<std::int32_t>(j, "version"));
    FERRY_TRY(const auto broker, int_field<std::int32_t>(j, "broker"));
    b.broker = broker_id{broker};
    FERRY_TRY(b.first, int64_string_field(j, "block_start"));
    FERRY_TRY(b.last, int64_string_field(j, "block_end"));
    if (b.first < 0 || b.last < b.first) return errc::invalid_data;
    return b;
  });
}

}  // namespace ferry::coord::layout
