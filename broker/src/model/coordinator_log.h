#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/result.h"

namespace ferry::model {

// A record as a coordinator appends it to its internal topic (__consumer_offsets, __transaction_state).
struct stored_record {
  std::vector<std::byte> key;
  std::optional<std::vector<std::byte>> value;  // nullopt: a tombstone
};

// Kafka's choice of a coordinator key's partition (a group id, a transactional id): Java's String.hashCode of
// the key (over its UTF-16 code units), made non-negative by clearing the sign bit, modulo the partition count.
[[nodiscard]] std::int32_t coordinator_partition_for(std::string_view key, std::int32_t partitions);

// The partitions of a coordinator's internal topic that this broker leads, as the coordinator writes and reads
// them. The server implements it over the replicated partitions.
class coordinator_log {
 public:
  using record = stored_record;
  virtual ~coordinator_log() = default;
  // Appends the records to the partition as one batch and calls `done` once the in-sync replicas have it
  // (acks=all), or with why not. `done` may run on any thread, before append returns too.
  virtual void append(std::int32_t partition, std::vector<record> records,
                      std::function<void(std::error_code)> done) = 0;
  // Calls `fn` with every record of the partition, oldest first, up to its log end. Blocking.
  using record_visitor =
      std::function<void(std::span<const std::byte> key, std::optional<std::span<const std::byte>> value)>;
  virtual result<void> replay(std::int32_t partition, const record_visitor& fn) = 0;
};

}  // namespace ferry::model
