#include "kube/event_recorder.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "base/log.h"
#include "kube/time_format.h"

namespace ferry::kube {
namespace {

// "<object>.<16 hex digits>", as Kubernetes' own recorders name events (generateName cannot end in '.').
std::string event_name(const std::string& object) {
  static thread_local std::mt19937_64 random(std::random_device{}());
  char suffix[20];
  std::snprintf(suffix, sizeof suffix, ".%016llx", static_cast<unsigned long long>(random()));
  return object + suffix;
}

}  // namespace

event_correlator::event_correlator(std::chrono::seconds window, std::size_t similar_limit, std::size_t capacity,
                                   const clock_source& clock)
    : window_(window),
      similar_limit_(std::max<std::size_t>(similar_limit, 1)),
      capacity_(std::max<std::size_t>(capacity, 2)),
      clock_(clock) {}

event_correlator::entry& event_correlator::touch(const std::string& key, clock_source::time_point now) {
  if (const auto it = index_.find(key); it != index_.end()) {
    recent_.splice(recent_.begin(), recent_, it->second);
  } else {
    recent_.emplace_front(key, entry{now});
    index_.emplace(key, recent_.begin());
    while (recent_.size() > capacity_) {
      index_.erase(recent_.back().first);
      recent_.pop_back();
    }
  }
  auto& e = recent_.front().second;
  if (now - e.window_start >= window_) {
    e.window_start = now;
    e.posted = 0;
  }
  return e;
}

event_correlator::decision event_correlator::observe(const std::string& object, std::string_view type,
                                                     std::string_view reason, std::string_view note) {
  std::string similar = object;
  similar.append(1, '\0').append(type).append(1, '\0').append(reason);
  std::string exact = similar;
  exact.append(1, '\0').append(note);
  std::lock_guard lock(mutex_);
  const auto now = clock_.now();
  auto& same = touch(exact, now);
  // The exact entry is the most recent: touching the similar one cannot evict it (capacity >= 2).
  auto& alike = touch(similar, now);
  if (same.posted > 0 || alike.posted >= similar_limit_) {
    ++same.folded;
    ++alike.folded;
    return {.post = false};
  }
  const decision posting{.post = true, .folded = std::max(same.folded, alike.folded)};
  ++same.posted;
  ++alike.posted;
  same.folded = 0;
  alike.folded = 0;
  return posting;
}

std::size_t event_correlator::size() const {
  std::lock_guard lock(mutex_);
  return recent_.size();
}

void event_recorder::record(const nlohmann::json& regarding, type t, std::string_view reason, std::string_view action,
                            std::string_view note) {
  const auto& meta = regarding.at("metadata");
  const auto ns = meta.value("namespace", std::string("default"));
  const auto type_name = t == type::warning ? "Warning" : "Normal";
  std::string object = meta.value("uid", std::string{});
  if (object.empty()) {
    object = regarding.value("kind", std::string{}) + "/" + ns + "/" + meta.value("name", std::string{});
  }
  const auto verdict = correlator_.observe(object, type_name, reason, note);
  if (observer_) observer_(verdict.post);
  if (!verdict.post) return;
  std::string text(note.substr(0, verdict.folded > 0 ? 960 : 1024));  // the API server's limit is 1 kB
  if (verdict.folded > 0) {
    text += " (" + std::to_string(verdict.folded) + " similar events before this one were not posted)";
  }
  const nlohmann::json event = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", event_name(meta.value("name", std::string{}))}, {"namespace", ns}}},
      {"eventTime", format_micro_time(std::chrono::system_clock::now())},
      {"reportingController", controller_},
      {"reportingInstance", instance_},
      {"action", action},
      {"reason", reason},
      {"type", type_name},
      {"note", text},
      {"regarding",
       {{"apiVersion", regarding.value("apiVersion", std::string{})},
        {"kind", regarding.value("kind", std::string{})},
        {"namespace", ns},
        {"name", meta.value("name", std::string{})},
        {"uid", meta.value("uid", std::string{})},
        {"resourceVersion", meta.value("resourceVersion", std::string{})}}}};
  boost::asio::co_spawn(
      client_.io(),
      [this, path = "/apis/events.k8s.io/v1/namespaces/" + ns + "/events",
       body = event.dump()]() mutable -> boost::asio::awaitable<void> {
        const auto posted = co_await client_.async_send(api_client::verb::post, std::move(path), std::move(body));
        if (!posted || posted.value().status >= 300) {
          FERRY_LOG_LIMITED(warn, "kube", 10'000)
              << "cannot post an event: "
              << (posted ? "HTTP " + std::to_string(posted.value().status) + " " + posted.value().body.substr(0, 200)
                         : posted.error().message());
        }
      },
      boost::asio::detached);
}

}  // namespace ferry::kube
