// Topic resources as the API server sends them (watch events and list items are outside bytes): any JSON
// object with metadata goes through read_spec and, when accepted, plan_changes against a small cluster and
// against a live topic. Also the Kubernetes time parser on the raw bytes.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kube/time_format.h"
#include "topics/topic_plan.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ferry::kube::parse_time(text);
  auto resource = nlohmann::json::parse(text, nullptr, false);
  if (resource.is_discarded() || !resource.is_object() || !resource.contains("metadata") ||
      !resource["metadata"].is_object()) {
    return 0;
  }
  const auto spec = ferry::topics::read_spec(resource);
  const auto* accepted = std::get_if<ferry::topics::topic_spec>(&spec);
  if (accepted == nullptr || accepted->partitions > 1000) return 0;
  ferry::coord::cluster_view view;
  for (int i = 0; i < 3; ++i) {
    view.brokers.emplace(ferry::broker_id{i},
                         ferry::coord::broker_info{ferry::broker_id{i}, "h", 1, "r" + std::to_string(i)});
  }
  (void)ferry::topics::plan_changes(*accepted, nullptr, view, 7);
  ferry::coord::topic_info live;
  ferry::coord::partition_info partition;
  partition.replicas = {ferry::broker_id{0}, ferry::broker_id{1}};
  live.partitions.emplace(ferry::partition_id{0}, partition);
  live.partitions.emplace(ferry::partition_id{1}, partition);
  (void)ferry::topics::plan_changes(*accepted, &live, view, 7);
  return 0;
}
