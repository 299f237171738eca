#pragma once

#include <cstdint>
#include <string>

namespace ferry::storage {

// The per-topic settings the log honours, with Kafka's defaults. Names follow the topic config keys.
struct log_config {
  std::int64_t segment_bytes = 1073741824;      // segment.bytes
  std::int64_t segment_ms = 604800000;          // segment.ms
  std::int64_t retention_ms = 604800000;        // retention.ms (-1: unlimited)
  std::int64_t retention_bytes = -1;            // retention.bytes (-1: unlimited)
  std::int32_t index_interval_bytes = 4096;     // index.interval.bytes
  std::int32_t segment_index_bytes = 10485760;  // segment.index.bytes
  std::int64_t flush_messages = INT64_MAX;      // flush.messages
  std::int64_t flush_ms = INT64_MAX;            // flush.ms
  std::int32_t max_message_bytes = 1048588;     // max.message.bytes
  bool log_append_time = false;                 // message.timestamp.type=LogAppendTime
  std::int64_t file_delete_delay_ms = 60000;    // file.delete.delay.ms
  // cleanup.policy: "delete" (retention removes old segments), "compact" (the log cleaner keeps the latest
  // record of each key), or both.
  bool delete_policy = true;
  bool compact = false;
  std::int64_t delete_retention_ms = 86400000;     // delete.retention.ms: how long cleaned tombstones stay
  std::int64_t min_compaction_lag_ms = 0;          // min.compaction.lag.ms
  std::int64_t max_compaction_lag_ms = INT64_MAX;  // max.compaction.lag.ms
  double min_cleanable_dirty_ratio = 0.5;          // min.cleanable.dirty.ratio
};

}  // namespace ferry::storage
