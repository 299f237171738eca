// Feeds arbitrary bytes to the admin HTTP router as a request line would: the method up to the first space,
// the request target after it (the whole input is a GET's target when there is no space). Boost.Beast
// hands route() whatever method and target a client sent. The router answers from a fixed cluster of three
// brokers and three topics, one of them invalid (a znode the metadata table could not use), with real
// metrics, no local partitions, a broker that is ready, and one group with committed offsets. Every reply must carry an
// HTTP status from 100 to 599 and a body, and a JSON reply must be JSON.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "admin/routes.h"
#include "coord/cluster_view.h"
#include "metrics/broker_metrics.h"
#include "model/testing/memory_coordinator_log.h"

namespace ferry::admin {
namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

std::shared_ptr<const coord::cluster_view> cluster() {
  coord::cluster_view view;
  view.cluster_id = "Ku6nXs0yS0SKTr2v7xlPmA";
  view.controller = broker_id{2};
  for (const std::int32_t id : {1, 2, 3})
    view.brokers[broker_id{id}] = {broker_id{id}, "broker-" + std::to_string(id), 9091 + id, std::nullopt, {}, id};
  view.brokers[broker_id{3}].rack = "zone-c";

  coord::topic_info orders;
  orders.topic_id = coord::uuid::parse("AAECAwQFBgcICQoLDA0ODw").value();
  orders.config = {{"retention.ms", "86400000"}};
  for (const std::int32_t p : {0, 1, 2}) {
    coord::partition_info info{{broker_id{1 + p % 3}, broker_id{1 + (p + 1) % 3}, broker_id{1 + (p + 2) % 3}}, {}};
    // Partition 2 has no state yet.
    if (p < 2) info.state = coord::partition_state{info.replicas[0], leader_epoch{p}, info.replicas, 4, p};
    orders.partitions[partition_id{p}] = std::move(info);
  }
  view.topics["orders"] = std::move(orders);

  coord::topic_info clicks;
  clicks.topic_id = coord::uuid::parse("Ku6nXs0yS0SKTr2v7xlPmA").value();
  clicks.partitions[partition_id{0}] = {{broker_id{2}},
                                        coord::partition_state{broker_id{2}, leader_epoch{0}, {}, 1, 0}};
  clicks.marked_for_deletion = true;
  view.topics["clicks"] = std::move(clicks);

  coord::topic_info broken;
  broken.invalid = "partition 0 names a broker twice";
  view.topics["broken"] = std::move(broken);
  return std::make_shared<const coord::cluster_view>(std::move(view));
}

// The groups broker 2 coordinates (every group: one __consumer_offsets partition, led here): "orders-app" with
// committed offsets of orders 0 and 1, whose high watermarks are 100 and unknown.
class fixed_watermarks final : public lag::high_watermarks {
 public:
  [[nodiscard]] std::optional<offset> high_watermark(const topic_partition& partition) const override {
    return partition.partition == partition_id{0} ? std::optional(offset{100}) : std::nullopt;
  }
};

group::group_coordinator& coordinator() {
  static model::testing::memory_coordinator_log log;
  static group::group_coordinator groups(group::coordinator_config{.offsets_partitions = 1}, log);
  static const bool loaded = [] {
    (void)groups.lead({{0, leader_epoch{1}}});
    check(groups.load(0, 0).has_value());
    group::group_coordinator::commit_request commit;
    for (const std::int32_t p : {0, 1})
      commit.offsets.push_back({{"orders", partition_id{p}}, {offset{40}, leader_epoch{-1}, "m", 0, std::nullopt}});
    groups.commit("orders-app", commit, 0, [](const std::vector<std::error_code>&) {});
    return true;
  }();
  (void)loaded;
  return groups;
}

const admin_sources& sources() {
  static metrics::broker_metrics metrics;
  static const fixed_watermarks watermarks;
  static const lag::consumer_lag lag(coordinator(), watermarks);
  static const admin_sources s{
      .broker_id = 2,
      .view = [view = cluster()] { return view; },
      .partitions = nullptr,
      .metrics = &metrics,
      .groups = &coordinator(),
      .lag = &lag,
      .not_ready = [](bool) { return std::vector<std::string>{}; },
      .refresh_metrics = [] { metrics.open_connections().Set(3); },
  };
  return s;
}

void run(std::string_view input) {
  const auto space = input.find(' ');
  const std::string method(space == std::string_view::npos ? "GET" : input.substr(0, space));
  const std::string target(space == std::string_view::npos ? input : input.substr(space + 1));
  const http_reply reply = route(sources(), method, target);
  check(reply.status >= 100 && reply.status <= 599);
  check(!reply.body.empty() && !reply.content_type.empty());
  if (reply.content_type == "application/json")
    check(!nlohmann::json::parse(reply.body, nullptr, false).is_discarded());
}

}  // namespace
}  // namespace ferry::admin

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  ferry::admin::run({reinterpret_cast<const char*>(data), size});
  return 0;
}
