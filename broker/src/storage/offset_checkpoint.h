#pragma once

#include <map>
#include <string>
#include <string_view>

#include "base/result.h"
#include "model/ids.h"

namespace ferry::storage {

// Kafka's offset checkpoint files, one per log dir, as Kafka writes them (OffsetCheckpointFile):
//
//   0                    the format version
//   2                    the number of entries
//   orders 0 1234        topic, partition, offset: one line each
//   orders 1 987
//
// Ferry keeps three: recovery-point-offset-checkpoint (each log's flushed offset: recovery after a crash
// starts there), replication-offset-checkpoint (each partition's high watermark, kept across restarts) and
// log-start-offset-checkpoint (each log's start, which DeleteRecords moves inside a segment; written with the
// high watermarks, every log.flush.offset.checkpoint.interval.ms, as Kafka's). Each is replaced whole with
// write_file_atomically, so a crash leaves the old one or the new one.
using offset_map = std::map<topic_partition, offset>;

inline constexpr std::string_view recovery_point_checkpoint = "recovery-point-offset-checkpoint";
inline constexpr std::string_view high_watermark_checkpoint = "replication-offset-checkpoint";
// Each log's start offset, where DeleteRecords may have moved it inside the first segment (Kafka's file).
inline constexpr std::string_view log_start_checkpoint = "log-start-offset-checkpoint";

[[nodiscard]] std::string encode_offset_checkpoint(const offset_map& offsets);
// errc::corrupt_log when the text is not a version-0 checkpoint with as many valid entries as it says.
[[nodiscard]] result<offset_map> decode_offset_checkpoint(std::string_view text);

}  // namespace ferry::storage
