// ConsumerGroup resources as the API server sends them (watch events and list items are outside bytes): any
// JSON object with metadata goes through read_group_spec, read_reset_record and judge_reset and, for a reset it
// accepts, plan_reset against a small cluster.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "groups/group_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto resource = nlohmann::json::parse(text, nullptr, false);
  if (resource.is_discarded() || !resource.is_object() || !resource.contains("metadata") ||
      !resource["metadata"].is_object()) {
    return 0;
  }
  const auto read = ferry::groups::read_group_spec(resource);
  const auto now = ferry::kube::parse_time("2026-12-01T09:00:00Z");
  (void)ferry::groups::judge_reset(read, ferry::groups::read_reset_record(resource), 3, *now);
  ferry::coord::cluster_view view;
  for (int p = 0; p < 3; ++p) view.topics["orders"].partitions[ferry::partition_id{p}] = {};
  (void)ferry::groups::plan_reset(read.spec.reset, view);
  return 0;
}
