#include "admin/routes.h"

#include <prometheus/text_serializer.h>

#include <nlohmann/json.hpp>

namespace ferry::admin {
namespace {

using json = nlohmann::json;

// Replies quote what the client sent (the path of a 404, a topic name), which need not be UTF-8: bytes that are
// not become U+FFFD, where dump() would throw and the connection would close without an answer (found by
// routes_fuzz).
http_reply json_reply(int status, const json& body) {
  return {status, "application/json", body.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"};
}
http_reply error_reply(int status, const std::string& message) { return json_reply(status, {{"error", message}}); }

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

}  // namespace

http_reply route(const admin_sources& s, const std::string& method, const std::string& target) {
  const std::string path = target.substr(0, target.find('?'));
  const bool known = path == "/metrics" || path == "/v1/health" || path == "/v1/ready" || path == "/v1/brokers" ||
                     path == "/v1/topics" || path.rfind("/v1/topics/", 0) == 0;
  if (!known) return error_reply(404, "no such endpoint: " + path);
  if (method != "GET") return error_reply(405, "only GET is supported on " + path);

  if (path == "/metrics") {
    if (s.refresh_metrics) s.refresh_metrics();
    return {200, "text/plain; version=0.0.4", prometheus::TextSerializer().Serialize(s.metrics->registry()->Collect())};
  }
  if (path == "/v1/health") return json_reply(200, {{"status", "ok"}, {"broker_id", s.broker_id}});
  if (path == "/v1/ready") {
    const std::vector<std::string> reasons =
        s.not_ready ? s.not_ready() : std::vector<std::string>{"the broker is starting"};
    return json_reply(reasons.empty() ? 200 : 503,
                      {{"ready", reasons.empty()}, {"broker_id", s.broker_id}, {"reasons", reasons}});
  }
  if (path == "/v1/brokers") return brokers(s);
  if (path == "/v1/topics") return topics(s);
  const std::string name = path.substr(std::string("/v1/topics/").size());
  if (name.empty() || name.find('/') != std::string::npos) return error_reply(404, "no such endpoint: " + path);
  return topic(s, name);
}

}  // namespace ferry::admin
