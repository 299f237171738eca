#pragma once

#include <cstdint>
#include <functional>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "model/control_record.h"
#include "model/ids.h"
#include "protocol/error_code.h"
#include "replication/partition_manager.h"

namespace ferry::server {

// Writes transaction markers to partitions this broker leads: for WriteTxnMarkers from a transaction
// coordinator elsewhere, and for this broker's coordinator's markers to its own partitions. A marker is appended
// (storage/log.h append_marker) and acknowledged as a produce with acks=all would be: refused while fewer than
// min.insync.replicas are in sync, answered once the high watermark passes it or after `timeout_ms`.
class marker_appender {
 public:
  // Told of each marker written to a __consumer_offsets partition, once it is replicated (the group
  // coordinator's pending transactional offsets).
  using offsets_marker_listener =
      std::function<void(std::int32_t partition, producer_id producer, model::marker_type type)>;

  marker_appender(replication::partition_manager& partitions, boost::asio::io_context& timers,
                  boost::asio::thread_pool& blocking_pool, std::int32_t timeout_ms)
      : partitions_(partitions), timers_(timers), blocking_pool_(blocking_pool), timeout_ms_(timeout_ms) {}

  void on_offsets_marker(offsets_marker_listener listener) { offsets_listener_ = std::move(listener); }

  // `done` gets the partition's Kafka error code: NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
  // NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT, INVALID_PRODUCER_EPOCH (a newer epoch wrote),
  // TRANSACTION_COORDINATOR_FENCED (a newer coordinator wrote), KAFKA_STORAGE_ERROR. It may run on any thread.
  using done_callback = std::function<void(protocol::error_code)>;
  void append(const topic_partition& partition, producer_id producer, producer_epoch epoch, model::txn_marker marker,
              done_callback done);

 private:
  replication::partition_manager& partitions_;
  boost::asio::io_context& timers_;
  boost::asio::thread_pool& blocking_pool_;
  std::int32_t timeout_ms_;
  offsets_marker_listener offsets_listener_;  // set before serving
};

}  // namespace ferry::server
