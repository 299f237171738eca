#include "config/topic_config.h"

#include <algorithm>
#include <charconv>
#include <functional>

namespace ferry::config {
namespace {

template <typename Int>
bool parse_int(std::string_view text, Int& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

// One topic config: how to read it from text into topic_settings, how to print it, and its broker default.
struct definition {
  std::string_view name;
  std::string_view broker_setting;
  std::function<bool(topic_settings&, std::string_view, std::string&)> parse;  // false + reason on bad value
  std::function<std::string(const topic_settings&)> print;
  config_type type;  // Kafka's type for it (clients show it; cleanup.policy is a list there)
};

template <typename Int>
definition integer(std::string_view name, std::string_view broker_setting, Int topic_settings::*field, Int min) {
  return {name, broker_setting,
          [field, min](topic_settings& s, std::string_view v, std::string& why) {
            Int parsed{};
            if (!parse_int(v, parsed)) {
              why = "not an integer";
              return false;
            }
            if (parsed < min) {
              why = "must be at least " + std::to_string(min);
              return false;
            }
            s.*field = parsed;
            return true;
          },
          [field](const topic_settings& s) { return std::to_string(s.*field); },
          sizeof(Int) == 8 ? config_type::int64 : config_type::int32};
}

definition choice(std::string_view name, std::string_view broker_setting, std::string topic_settings::*field,
                  const std::vector<std::string>& allowed, const std::string& why_not_others,
                  config_type type = config_type::string) {
  return {name, broker_setting,
          [field, allowed, why_not_others](topic_settings& s, std::string_view v, std::string& why) {
            if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
              why = why_not_others;
              return false;
            }
            s.*field = std::string(v);
            return true;
          },
          [field](const topic_settings& s) { return s.*field; }, type};
}

definition throttled(std::string_view name, throttled_replicas topic_settings::*field) {
  return {name, "",
          [field](topic_settings& s, std::string_view v, std::string& why) {
            auto parsed = throttled_replicas::parse(v);
            if (!parsed) {
              why = "must be '*' or a comma-separated list of partition:broker pairs";
              return false;
            }
            s.*field = std::move(*parsed);
            return true;
          },
          [field](const topic_settings& s) { return (s.*field).to_string(); }, config_type::list};
}

const std::vector<definition>& definitions() {
  static const std::vector<definition> all = [] {
    std::vector<definition> d{
        choice("cleanup.policy", "log.cleanup.policy", &topic_settings::cleanup_policy,
               {"delete", "compact", "compact,delete", "delete,compact"}, "must be delete, compact or compact,delete",
               config_type::list),
        choice("compression.type", "compression.type", &topic_settings::compression_type,
               {"producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"},
               "must be producer, uncompressed, gzip, snappy, lz4 or zstd"),
        integer("delete.retention.ms", "log.cleaner.delete.retention.ms", &topic_settings::delete_retention_ms,
                std::int64_t{0}),
        integer("file.delete.delay.ms", "log.segment.delete.delay.ms", &topic_settings::file_delete_delay_ms,
                std::int64_t{0}),
        integer("flush.messages", "log.flush.interval.messages", &topic_settings::flush_messages, std::int64_t{1}),
        integer("flush.ms", "log.flush.interval.ms", &topic_settings::flush_ms, std::int64_t{0}),
        integer("index.interval.bytes", "log.index.interval.bytes", &topic_settings::index_interval_bytes,
                std::int32_t{0}),
        throttled("follower.replication.throttled.replicas", &topic_settings::follower_replication_throttled_replicas),
        throttled("leader.replication.throttled.replicas", &topic_settings::leader_replication_throttled_replicas),
        integer("max.message.bytes", "message.max.bytes", &topic_settings::max_message_bytes, std::int32_t{0}),
        choice("message.timestamp.type", "log.message.timestamp.type", &topic_settings::message_timestamp_type,
               {"CreateTime", "LogAppendTime"}, "must be CreateTime or LogAppendTime"),
        integer("max.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms", &topic_settings::max_compaction_lag_ms,
                std::int64_t{1}),
        {"min.cleanable.dirty.ratio", "log.cleaner.min.cleanable.ratio",
         [](topic_settings& s, std::string_view v, std::string& why) {
           double parsed = 0;
           const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), parsed);
           if (ec != std::errc{} || end != v.data() + v.size() || parsed < 0 || parsed > 1) {
             why = "must be a number from 0 to 1";
             return false;
           }
           s.min_cleanable_dirty_ratio = parsed;
           return true;
         },
         [](const topic_settings& s) {
           char text[32];
           const auto [end, ec] = std::to_chars(text, text + sizeof text, s.min_cleanable_dirty_ratio);
           return std::string(text, ec == std::errc{} ? end : text);
         },
         config_type::float64},
        integer("min.compaction.lag.ms", "log.cleaner.min.compaction.lag.ms", &topic_settings::min_compaction_lag_ms,
                std::int64_t{0}),
        integer("min.insync.replicas", "min.insync.replicas", &topic_settings::min_insync_replicas, std::int32_t{1}),
        integer("retention.bytes", "log.retention.bytes", &topic_settings::retention_bytes, std::int64_t{-1}),
        integer("retention.ms", "log.retention.ms", &topic_settings::retention_ms, std::int64_t{-1}),
        integer("segment.bytes", "log.segment.bytes", &topic_settings::segment_bytes, std::int32_t{14}),
        integer("segment.index.bytes", "log.index.size.max.bytes", &topic_settings::segment_index_bytes,
                std::int32_t{8}),
        integer("segment.ms", "log.roll.ms", &topic_settings::segment_ms, std::int64_t{1}),
        {"unclean.leader.election.enable", "unclean.leader.election.enable",
         [](topic_settings& s, std::string_view v, std::string& why) {
           if (v != "true" && v != "false") {
             why = "must be true or false";
             return false;
           }
           s.unclean_leader_election_enable = v == "true";
           return true;
         },
         [](const topic_settings& s) { return std::string(s.unclean_leader_election_enable ? "true" : "false"); },
         config_type::boolean},
    };
    std::sort(d.begin(), d.end(), [](const definition& a, const definition& b) { return a.name < b.name; });
    return d;
  }();
  return all;
}

const definition* find(std::string_view name) {
  for (const auto& d : definitions())
    if (d.name == name) return &d;
  return nullptr;
}

}  // namespace

bool throttled_replicas::covers(std::int32_t partition, std::int32_t broker) const {
  return all || std::find(replicas.begin(), replicas.end(), std::pair{partition, broker}) != replicas.end();
}

std::optional<throttled_replicas> throttled_replicas::parse(std::string_view text) {
  throttled_replicas out;
  if (text == "*") {
    out.all = true;
    return out;
  }
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    const auto colon = item.find(':');
    std::int32_t partition = 0;
    std::int32_t broker = 0;
    if (colon == std::string_view::npos || !parse_int(item.substr(0, colon), partition) ||
        !parse_int(item.substr(colon + 1), broker) || partition < 0 || broker < 0)
      return std::nullopt;
    out.replicas.emplace_back(partition, broker);
  }
  return out;
}

std::string throttled_replicas::to_string() const {
  if (all) return "*";
  std::string out;
  for (const auto& [partition, broker] : replicas)
    out += (out.empty() ? "" : ",") + std::to_string(partition) + ":" + std::to_string(broker);
  return out;
}

const std::vector<std::string_view>& topic_config_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out;
    for (const auto& d : definitions()) out.push_back(d.name);
    return out;
  }();
  return names;
}

std::optional<config_type> topic_config_type(std::string_view name) {
  const definition* d = find(name);
  if (d == nullptr) return std::nullopt;
  return d->type;
}

std::optional<std::string> topic_config_default(const topic_settings& defaults, std::string_view name) {
  const definition* d = find(name);
  if (d == nullptr) return std::nullopt;
  return d->print(defaults);
}

std::optional<config_error> apply_topic_override(topic_settings& settings, std::string_view name,
                                                 std::string_view value) {
  const definition* d = find(name);
  if (d == nullptr) return config_error{"unknown topic config '" + std::string(name) + "'"};
  std::string why;
  if (!d->parse(settings, value, why))
    return config_error{"invalid value '" + std::string(value) + "' for topic config '" + std::string(name) +
                        "': " + why};
  return std::nullopt;
}

std::optional<config_error> resolve_topic_settings(const topic_settings& defaults,
                                                   const std::map<std::string, std::string>& overrides,
                                                   topic_settings& out) {
  out = defaults;
  for (const auto& [name, value] : overrides)
    if (auto error = apply_topic_override(out, name, value)) return error;
  return std::nullopt;
}

std::vector<config_entry> describe_topic_settings(const topic_settings& defaults,
                                                  const std::map<std::string, std::string>& overrides) {
  topic_settings effective = defaults;
  std::vector<config_entry> out;
  for (const auto& d : definitions()) {
    const auto it = overrides.find(std::string(d.name));
    std::string why;
    const bool overridden = it != overrides.end() && d.parse(effective, it->second, why);
    out.push_back({std::string(d.name), d.print(effective), !overridden, false, std::string(d.broker_setting),
                   d.print(defaults), d.type});
  }
  return out;
}

}  // namespace ferry::config
