#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "base/clock.h"
#include "group/group_coordinator.h"
#include "replication/partition_manager.h"

namespace ferry::server {

// The group coordinator's writes and reads of __consumer_offsets, over this broker's leader replicas: a
// write is one uncompressed batch appended as a produce with acks=all would be (refused while fewer than
// min.insync.replicas are in sync), acknowledged once the high watermark passes it, or failed after
// offsets.commit.timeout.ms. Failures come back as Kafka's group coordinator reports them: not_coordinator when
// this broker no longer leads the partition (or its disk failed), coordinator_not_available otherwise.
class replicated_offsets_log final : public group::offsets_log {
 public:
  replicated_offsets_log(replication::partition_manager& partitions, const ferry::clock& clock,
                         boost::asio::io_context& timers, boost::asio::thread_pool& blocking_pool,
                         std::int32_t commit_timeout_ms);

  void append(std::int32_t partition, std::vector<record> records, std::function<void(std::error_code)> done) override;
  result<void> replay(std::int32_t partition, const record_visitor& fn) override;

 private:
  replication::partition_manager& partitions_;
  const ferry::clock& clock_;
  boost::asio::io_context& timers_;
  boost::asio::thread_pool& blocking_pool_;
  std::int32_t commit_timeout_ms_;
};

}  // namespace ferry::server
