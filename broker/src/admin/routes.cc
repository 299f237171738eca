#include "admin/routes.h"

#include <prometheus/text_serializer.h>

#include <map>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/percent_encoding.h"
#include "group/consumer_protocol.h"
#include "group/errc.h"

namespace ferry::admin {
namespace {

using json = nlohmann::json;

// Replies quote what the client sent (the path of a 404, a topic name), which need not be UTF-8: bytes that are
// not become U+FFFD, where dump() would throw and the connection would close without an answer (found by
// routes_fuzz).
http_reply json_reply(int status, const json& body) {
  return {status, "application/json", body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"};
}

std::vector<std::int32_t> raw(const std::vector<broker_id>& ids) {
  std::vector<std::int32_t> out;
  out.reserve(ids.size());
  for (const auto id : ids) out.push_back(id.value());
  return out;
}

http_reply brokers(const admin_sources& s) {
  const auto view = s.view();
  json list = json::array();
  for (const auto& [id, b] : view->brokers) {
    json entry{{"id", id.value()}, {"host", b.host}, {"port", b.port}, {"controller", id == view->controller}};
    if (b.rack) entry["rack"] = *b.rack;
    json endpoints = json::array();
    for (const auto& e : b.endpoints)
      endpoints.push_back(
          {{"listener", e.listener}, {"security_protocol", e.security_protocol}, {"host", e.host}, {"port", e.port}});
    entry["endpoints"] = std::move(endpoints);
    list.push_back(entry);
  }
  return json_reply(200,
                    {{"cluster_id", view->cluster_id}, {"controller", view->controller.value()}, {"brokers", list}});
}

http_reply topics(const admin_sources& s) {
  const auto view = s.view();
  json list = json::array();
  for (const auto& [name, t] : view->topics) {
    const auto rf = t.partitions.empty() ? 0 : t.partitions.begin()->second.replicas.size();
    json entry{{"name", name},
               {"partitions", t.partitions.size()},
               {"replication_factor", rf},
               {"marked_for_deletion", t.marked_for_deletion}};
    if (!t.valid()) entry["invalid"] = t.invalid;
    list.push_back(std::move(entry));
  }
  return json_reply(200, {{"topics", list}});
}

http_reply topic(const admin_sources& s, const std::string& name) {
  const auto view = s.view();
  const auto* t = view->find_topic(name);
  if (t == nullptr) return error_reply(404, "topic '" + name + "' does not exist");
  std::map<std::int32_t, std::shared_ptr<replication::partition>> local;
  if (s.partitions != nullptr)
    for (const auto& p : s.partitions->all())
      if (p->id().topic == name) local[p->id().partition.value()] = p;
  json partitions = json::array();
  for (const auto& [id, info] : t->partitions) {
    json p{{"partition", id.value()}, {"replicas", raw(info.replicas)}};
    if (info.state) {
      p["leader"] = info.state->leader.value();
      p["leader_epoch"] = info.state->epoch.value();
      p["isr"] = raw(info.state->isr);
    } else {
      p["leader"] = -1;
    }
    if (const auto it = local.find(id.value()); it != local.end()) {
      const auto& part = *it->second;
      p["local"] = {{"log_start_offset", part.log_start_offset().value()},
                    {"log_end_offset", part.log_end_offset().value()},
                    {"high_watermark", part.high_watermark().value()},
                    {"size_bytes", it->second->log().size_bytes()},
                    {"leader", part.is_leader()}};
    }
    partitions.push_back(p);
  }
  json out{{"name", name},
           {"topic_id", t->topic_id.to_string()},
           {"config", t->config},
           {"marked_for_deletion", t->marked_for_deletion},
           {"partitions", partitions}};
  if (!t->valid()) out["invalid"] = t->invalid;
  return json_reply(200, out);
}

json lag_fields(const lag::partition_lag& p) {
  json entry{{"topic", p.partition.topic},
             {"partition", p.partition.partition.value()},
             {"committed_offset", p.committed.value()}};
  entry["high_watermark"] = p.high_watermark ? json(p.high_watermark->value()) : json(nullptr);
  entry["lag"] = p.lag ? json(*p.lag) : json(nullptr);
  return entry;
}

http_reply groups(const admin_sources& s) {
  json list = json::array();
  for (const auto& g : s.lag->groups()) {
    list.push_back({{"group_id", g.group.group_id},
                    {"state", group::state_name(g.group.state)},
                    {"protocol_type", g.group.protocol_type},
                    {"protocol", g.group.protocol},
                    {"members", g.group.members},
                    {"offsets_partition", g.group.offsets_partition},
                    {"lag", g.total}});
  }
  return json_reply(200, {{"broker_id", s.broker_id}, {"groups", list}});
}

// The broker that leads the group's __consumer_offsets partition, -1 when none does.
std::int32_t coordinator_of(const admin_sources& s, const std::string& group_id) {
  const auto view = s.view();
  const auto* info =
      view->find_partition({std::string(group::offsets_topic), partition_id{s.groups->partition_for(group_id)}});
  return info != nullptr && info->state ? info->state->leader.value() : -1;
}

json member_fields(const group::member_description& m, bool consumer) {
  json entry{{"member_id", m.member_id}, {"client_id", m.client_id}, {"client_host", m.client_host}};
  entry["group_instance_id"] = m.group_instance_id ? json(*m.group_instance_id) : json(nullptr);
  json assignment = json::array();
  if (consumer && !m.assignment.empty()) {
    // A consumer's assignment the leader wrote; one that does not parse shows as its size alone.
    if (const auto decoded = group::decode_assignment(m.assignment)) {
      for (const auto& tp : decoded.value().assigned_partitions) {
        json partitions = json::array();
        for (const auto p : tp.partitions) partitions.push_back(p.value());
        assignment.push_back({{"topic", tp.topic}, {"partitions", partitions}});
      }
    } else {
      entry["assignment_bytes"] = m.assignment.size();
    }
  } else if (!m.assignment.empty()) {
    entry["assignment_bytes"] = m.assignment.size();
  }
  entry["assignment"] = assignment;
  return entry;
}

http_reply group_detail(const admin_sources& s, const std::string& group_id) {
  const auto described = s.groups->describe(group_id);
  const auto fetched = described ? s.groups->fetch(group_id, std::nullopt)
                                 : result<group::group_coordinator::fetched_offsets>(described.error());
  if (!fetched) {
    const auto error = fetched.error();
    if (error == group::errc::not_coordinator) {
      const auto coordinator = coordinator_of(s, group_id);
      return json_reply(404, {{"error", "group '" + group_id + "' is not coordinated by broker " +
                                            std::to_string(s.broker_id) + "; ask its coordinator"},
                              {"coordinator", coordinator}});
    }
    if (error == group::errc::coordinator_loading)
      return error_reply(503, "the groups of group '" + group_id + "' are being loaded; try again shortly");
    return error_reply(400, "group '" + group_id + "': " + error.message());
  }
  const auto& d = described.value();
  if (d.state == group::group_state::dead && fetched.value().empty())
    return error_reply(404, "group '" + group_id + "' does not exist");
  json members = json::array();
  for (const auto& m : d.members) members.push_back(member_fields(m, d.protocol_type == "consumer"));
  std::vector<std::pair<topic_partition, offset>> committed;
  std::map<topic_partition, std::string> metadata;
  for (const auto& [tp, value] : fetched.value()) {
    committed.emplace_back(tp, value->committed);
    metadata[tp] = value->metadata;
  }
  json offsets = json::array();
  std::int64_t total = 0;
  for (const auto& p : s.lag->lag_of(committed)) {
    auto entry = lag_fields(p);
    entry["metadata"] = metadata[p.partition];
    total += p.lag.value_or(0);
    offsets.push_back(std::move(entry));
  }
  return json_reply(200, {{"group_id", group_id},
                          {"state", group::state_name(d.state)},
                          {"protocol_type", d.protocol_type},
                          {"protocol", d.protocol},
                          {"coordinator", s.broker_id},
                          {"members", members},
                          {"offsets", offsets},
                          {"lag", total}});
}

}  // namespace

http_reply error_reply(int status, const std::string& message) { return json_reply(status, {{"error", message}}); }

std::string_view path_of(std::string_view target) { return target.substr(0, target.find('?')); }

http_reply route(const admin_sources& s, const std::string& method, const std::string& target) {
  const std::string path(path_of(target));
  const bool known = path == "/metrics" || path == "/v1/health" || path == "/v1/ready" || path == "/v1/brokers" ||
                     path == "/v1/topics" || path.rfind("/v1/topics/", 0) == 0 || path == "/v1/groups" ||
                     path.rfind("/v1/groups/", 0) == 0;
  if (!known) return error_reply(404, "no such endpoint: " + path);
  if (method != "GET") return error_reply(405, "only GET is supported on " + path);

  if (path == "/metrics") {
    if (s.refresh_metrics) s.refresh_metrics();
    auto families = s.metrics->registry()->Collect();
    auto append = [&families](const prometheus::Collectable& c) {
      auto more = c.Collect();
      families.insert(families.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    };
    if (s.lag != nullptr) append(*s.lag);
    for (const auto* c : s.collectables) append(*c);
    return {200, "text/plain; version=0.0.4", prometheus::TextSerializer().Serialize(families)};
  }
  if (path == "/v1/health") return json_reply(200, {{"status", "ok"}, {"broker_id", s.broker_id}});
  if (path == "/v1/ready") {
    const auto query = target.size() > path.size() ? target.substr(path.size() + 1) : std::string();
    if (!query.empty() && query != "in_sync=true" && query != "in_sync=false")
      return error_reply(400, "unknown query '" + query + "' on /v1/ready: the one parameter is in_sync=true|false");
    const std::vector<std::string> reasons =
        s.not_ready ? s.not_ready(query == "in_sync=true") : std::vector<std::string>{"the broker is starting"};
    return json_reply(reasons.empty() ? 200 : 503,
                      {{"ready", reasons.empty()}, {"broker_id", s.broker_id}, {"reasons", reasons}});
  }
  if (path == "/v1/brokers") return brokers(s);
  if (path == "/v1/topics") return topics(s);
  if (path == "/v1/groups" || path.rfind("/v1/groups/", 0) == 0) {
    if (s.groups == nullptr || s.lag == nullptr) return error_reply(503, "the group coordinator is not running");
    if (path == "/v1/groups") return groups(s);
    const auto id = percent_decoded(std::string_view(path).substr(std::string("/v1/groups/").size()));
    if (!id) return error_reply(400, "malformed percent-encoding in " + path);
    if (id->empty() || path.find('/', std::string("/v1/groups/").size()) != std::string::npos)
      return error_reply(404, "no such endpoint: " + path);
    return group_detail(s, *id);
  }
  const std::string name = path.substr(std::string("/v1/topics/").size());
  if (name.empty() || name.find('/') != std::string::npos) return error_reply(404, "no such endpoint: " + path);
  return topic(s, name);
}

}  // namespace ferry::admin
