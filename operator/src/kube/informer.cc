#include "kube/informer.h"

#include <random>
#include <set>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/log.h"
#include "kube/errc.h"

namespace ferry::kube {
namespace {

namespace asio = boost::asio;
using json = nlohmann::json;

constexpr std::size_t page_size = 500;
constexpr auto first_backoff = std::chrono::milliseconds(500);
constexpr auto max_backoff = std::chrono::milliseconds(30'000);

asio::awaitable<void> sleep_for(std::chrono::milliseconds delay) {
  asio::steady_timer timer(co_await asio::this_coro::executor, delay);
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

std::string resource_version_of(const json& object) {
  if (const auto meta = object.find("metadata"); meta != object.end() && meta->is_object()) {
    if (const auto rv = meta->find("resourceVersion"); rv != meta->end() && rv->is_string()) return *rv;
  }
  return {};
}

}  // namespace

std::string url_encode(std::string_view text) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4U];
      out += hex[c & 15U];
    }
  }
  return out;
}

std::string informer::key_of(const json& object) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return {};
  const auto field = [&](const char* name) {
    const auto it = meta->find(name);
    return it != meta->end() && it->is_string() ? it->get<std::string>() : std::string{};
  };
  const auto name = field("name");
  const auto ns = field("namespace");
  return ns.empty() ? name : ns + "/" + name;
}

informer::object informer::get(const std::string& key) const {
  std::lock_guard lock(mutex_);
  const auto it = cache_.find(key);
  return it == cache_.end() ? nullptr : it->second;
}

std::vector<informer::object> informer::list() const {
  std::lock_guard lock(mutex_);
  std::vector<object> out;
  out.reserve(cache_.size());
  for (const auto& [key, object] : cache_) out.push_back(object);
  return out;
}

std::string informer::selectors() const {
  std::string query;
  if (!kind_.label_selector.empty()) query += "&labelSelector=" + url_encode(kind_.label_selector);
  if (!kind_.field_selector.empty()) query += "&fieldSelector=" + url_encode(kind_.field_selector);
  return query;
}

asio::awaitable<result<std::string>> informer::list_all() {
  std::map<std::string, object> listed;
  std::string resource_version;
  std::string continue_token;
  do {
    std::string target = kind_.path + "?limit=" + std::to_string(page_size);
    target += selectors();
    if (!continue_token.empty()) target += "&continue=" + url_encode(continue_token);
    auto answer = co_await client_.async_send(api_client::verb::get, target);
    if (!answer) co_return answer.error();
    if (answer.value().status != 200) {
      FERRY_LOG_LIMITED(warn, "kube", 10'000) << "listing " << kind_.name << ": HTTP " << answer.value().status << " "
                                              << answer.value().body.substr(0, 300);
      co_return make_error_code(errc::bad_response);
    }
    auto page = json::parse(answer.value().body, nullptr, false);
    if (page.is_discarded() || !page.contains("items") || !page["items"].is_array()) {
      co_return make_error_code(errc::bad_response);
    }
    for (auto& item : page["items"]) {
      auto key = key_of(item);
      if (key.empty()) co_return make_error_code(errc::bad_response);  // no object with a name
      item["metadata"].erase("managedFields");
      listed.emplace(std::move(key), std::make_shared<const json>(std::move(item)));
    }
    const auto meta = page.find("metadata");
    if (meta == page.end() || !meta->is_object()) co_return make_error_code(errc::bad_response);
    const auto text = [&](const char* name) {
      const auto it = meta->find(name);
      return it != meta->end() && it->is_string() ? it->get<std::string>() : std::string{};
    };
    resource_version = text("resourceVersion");
    continue_token = text("continue");
  } while (!continue_token.empty());

  // Swap the cache, then tell about what differs from before (deletions missed while not watching included).
  std::map<std::string, object> before;
  {
    std::lock_guard lock(mutex_);
    before = std::exchange(cache_, listed);
  }
  for (const auto& [key, object] : listed) {
    const auto old = before.find(key);
    if (old == before.end() || resource_version_of(*old->second) != resource_version_of(*object)) {
      on_change_(key, object);
    }
  }
  for (const auto& [key, object] : before) {
    if (!listed.contains(key)) on_change_(key, nullptr);
  }
  co_return resource_version;
}

void informer::apply(const std::string& type, json object, std::string& resource_version) {
  object["metadata"].erase("managedFields");
  resource_version = resource_version_of(object);
  if (type == "BOOKMARK") return;
  const auto key = key_of(object);
  if (key.empty()) return;
  if (type == "DELETED") {
    {
      std::lock_guard lock(mutex_);
      cache_.erase(key);
    }
    on_change_(key, nullptr);
    return;
  }
  auto shared = std::make_shared<const json>(std::move(object));
  {
    std::lock_guard lock(mutex_);
    cache_[key] = shared;
  }
  on_change_(key, shared);
}

asio::awaitable<informer::watch_end> informer::watch(std::string& resource_version) {
  // Spread the server-side timeouts so that watches of several kinds do not all restart together.
  static thread_local std::minstd_rand random(std::random_device{}());
  const auto timeout_seconds = 240 + static_cast<int>(random() % 120);
  std::string target = kind_.path +
                       "?watch=1&allowWatchBookmarks=true&resourceVersion=" + url_encode(resource_version) +
                       "&timeoutSeconds=" + std::to_string(timeout_seconds);
  target += selectors();
  bool gone = false;
  bool malformed = false;
  auto answer = co_await client_.async_stream(
      target,
      [&](std::string_view line) {
        auto event = json::parse(line, nullptr, false);
        if (event.is_discarded() || !event.contains("type") || !event["type"].is_string() ||
            !event.contains("object") || !event["object"].is_object()) {
          malformed = true;
          return false;
        }
        const auto type = event["type"].get<std::string>();
        if (type == "ERROR") {
          // A Status object: 410 Gone when our resourceVersion is older than etcd's compaction.
          gone = event["object"].value("code", 0) == 410;
          if (!gone) {
            FERRY_LOG(warn, "kube") << "watch of " << kind_.name << " ended: " << event["object"].dump();
          }
          malformed = !gone;
          return false;
        }
        if (!event["object"].contains("metadata") || !event["object"]["metadata"].is_object()) {
          malformed = true;
          return false;
        }
        apply(type, std::move(event["object"]), resource_version);
        return true;
      },
      std::chrono::seconds(timeout_seconds + 60));
  if (gone || (answer && answer.value().status == 410)) co_return watch_end::gone;
  if (!answer) {
    FERRY_LOG_LIMITED(warn, "kube", 10'000) << "watch of " << kind_.name << " failed: " << answer.error().message();
    co_return watch_end::failed;
  }
  if (malformed || answer.value().status != 200) {
    FERRY_LOG_LIMITED(warn, "kube", 10'000) << "watch of " << kind_.name << " failed: HTTP " << answer.value().status
                                            << " " << answer.value().body.substr(0, 300);
    co_return watch_end::failed;
  }
  co_return watch_end::timeout;
}

asio::awaitable<void> informer::run() {
  auto backoff = first_backoff;
  for (;;) {
    auto listed = co_await list_all();
    if (!listed) {
      FERRY_LOG_LIMITED(warn, "kube", 10'000) << "cannot list " << kind_.name << ": " << listed.error().message()
                                              << "; retrying in " << backoff.count() << " ms";
      co_await sleep_for(backoff);
      backoff = std::min(backoff * 2, max_backoff);
      continue;
    }
    if (!synced_.exchange(true)) FERRY_LOG(info, "kube") << "listed " << kind_.name;
    std::string resource_version = std::move(listed).value();
    backoff = first_backoff;
    for (;;) {
      const auto end = co_await watch(resource_version);
      if (end == watch_end::timeout) {
        backoff = first_backoff;
        continue;
      }
      restarts_.fetch_add(1);
      if (on_restart_) on_restart_();
      if (end == watch_end::gone) {
        FERRY_LOG(info, "kube") << "watch of " << kind_.name << " expired (410 Gone): listing again";
        break;
      }
      co_await sleep_for(backoff);
      backoff = std::min(backoff * 2, max_backoff);
    }
  }
}

}  // namespace ferry::kube
