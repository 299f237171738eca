#include "kube/event_recorder.h"

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

void event_recorder::record(const nlohmann::json& regarding, type t, std::string_view reason, std::string_view action,
                            std::string_view note) {
  const auto& meta = regarding.at("metadata");
  const auto ns = meta.value("namespace", std::string("default"));
  const nlohmann::json event = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", event_name(meta.value("name", std::string{}))}, {"namespace", ns}}},
      {"eventTime", format_micro_time(std::chrono::system_clock::now())},
      {"reportingController", controller_},
      {"reportingInstance", instance_},
      {"action", action},
      {"reason", reason},
      {"type", t == type::warning ? "Warning" : "Normal"},
      {"note", std::string(note.substr(0, 1024))},
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
