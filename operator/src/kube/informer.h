#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <nlohmann/json.hpp>

#include "kube/api_client.h"

namespace ferry::kube {

// A kind of resource to list and watch: its collection path across namespaces
// ("/apis/ferry.dev/v1alpha1/topics") or in one namespace, and optional label and field selectors.
struct resource_kind {
  std::string name;  // for logs and metrics: "topics"
  std::string path;
  std::string label_selector;
  std::string field_selector;  // "metadata.name=brokers": one object
};

// The local cache of one kind, kept by listing (in pages) and then watching from the list's resourceVersion
// with bookmarks. A watch that ends is resumed from the last version seen; an expired version (410 Gone)
// means a fresh list, from which deletions missed meanwhile are found. Failures back off exponentially up to
// 30 s. Objects are kept without metadata.managedFields. Readable from any thread.
class informer {
 public:
  using object = std::shared_ptr<const nlohmann::json>;
  // A key (namespace/name) whose object changed; `now` is null when it was deleted.
  using change_handler = std::function<void(const std::string& key, const object& now)>;

  // `on_restart` runs whenever a watch ends other than by its timeout.
  informer(api_client& client, resource_kind kind, change_handler on_change, std::function<void()> on_restart = {})
      : client_(client), kind_(std::move(kind)), on_change_(std::move(on_change)), on_restart_(std::move(on_restart)) {}

  // Lists and watches until the io_context stops. Runs on the client's io_context.
  boost::asio::awaitable<void> run();

  [[nodiscard]] object get(const std::string& key) const;
  [[nodiscard]] std::vector<object> list() const;
  // Whether the first list has completed.
  [[nodiscard]] bool synced() const { return synced_.load(); }
  // Watches that ended other than by the server's timeout (errors, 410 Gone), and relists.
  [[nodiscard]] std::uint64_t restarts() const { return restarts_.load(); }
  [[nodiscard]] const resource_kind& kind() const { return kind_; }

  static std::string key_of(const nlohmann::json& object);

 private:
  // Why a watch ended.
  enum class watch_end { timeout, gone, failed };

  // The query parameters that select the objects ("&labelSelector=...").
  [[nodiscard]] std::string selectors() const;
  boost::asio::awaitable<result<std::string>> list_all();
  boost::asio::awaitable<watch_end> watch(std::string& resource_version);
  void apply(const std::string& type, nlohmann::json object, std::string& resource_version);

  api_client& client_;
  const resource_kind kind_;
  const change_handler on_change_;
  const std::function<void()> on_restart_;
  mutable std::mutex mutex_;
  std::map<std::string, object> cache_;
  std::atomic<bool> synced_{false};
  std::atomic<std::uint64_t> restarts_{0};
};

// Percent-encodes a query parameter value.
std::string url_encode(std::string_view text);

}  // namespace ferry::kube
