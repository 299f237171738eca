#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include <boost/asio/io_context.hpp>

#include "replication/partition.h"

namespace ferry::server {

// How a write the broker made itself (a coordinator's record, a transaction marker) ended, as acks=all sees it.
enum class replicated_outcome {
  replicated,        // the high watermark passed it with at least min.insync.replicas in sync
  not_leader,        // leadership moved (or a new epoch began) before it was replicated
  too_few_replicas,  // replicated, but by fewer than min.insync.replicas (NOT_ENOUGH_REPLICAS_AFTER_APPEND)
  timed_out,         // not replicated within the timeout
};

// The partition's min.insync.replicas, at least 1.
[[nodiscard]] std::size_t min_insync_replicas(const replication::partition& partition);

// Calls `done` once, on the timers' executor, when the partition's high watermark reaches `upto`, or when it
// no longer leads in the epoch it had, or after `timeout_ms`.
void await_replicated(boost::asio::io_context& timers, std::shared_ptr<replication::partition> partition, offset upto,
                      std::int32_t timeout_ms, std::function<void(replicated_outcome)> done);

}  // namespace ferry::server
