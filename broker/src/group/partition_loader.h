#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "group/classic_group.h"
#include "group/consumer_group.h"
#include "model/coordinator_log.h"

namespace ferry::group {

// What one __consumer_offsets partition holds: every group with its committed offsets (a consumer-protocol
// group also has an empty classic group that holds its offsets), and the transactional offsets still waiting
// for their producers' markers, by producer and group.
struct partition_groups {
  std::map<std::string, std::unique_ptr<classic_group>> groups;
  std::map<std::string, std::unique_ptr<consumer_group>> consumer_groups;
  std::map<producer_id, std::map<std::string, std::map<topic_partition, committed_offset>>> pending_txn;
  std::size_t unreadable = 0;  // records skipped because they do not decode
};

struct partition_load_config {
  group_limits limits;
  consumer_group_config consumer;
};

// Reads a partition's groups back from its log, in order: the latest record of each key wins and a tombstone
// removes it. With `only`, just that group's records (a group read back on its own after a failure).
[[nodiscard]] result<partition_groups> read_partition_groups(model::coordinator_log& log, std::int32_t partition,
                                                             const partition_load_config& config, std::int64_t now_ms,
                                                             const std::optional<std::string>& only = std::nullopt);

}  // namespace ferry::group
