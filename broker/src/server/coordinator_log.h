#pragma once

#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "base/clock.h"
#include "model/batch_builder.h"
#include "model/coordinator_log.h"
#include "replication/partition_manager.h"

namespace ferry::server {

// A coordinator's writes and reads of its internal topic (__consumer_offsets, __transaction_state), over this
// broker's leader replicas: a write is one uncompressed batch appended as a produce with acks=all would be
// (refused while fewer than min.insync.replicas are in sync), acknowledged once the high watermark passes it,
// or failed after `timeout_ms` (offsets.commit.timeout.ms). Failures come back as Kafka's coordinators report
// them: `errors.not_coordinator` when this broker no longer leads the partition (or its disk failed),
// `errors.unavailable` otherwise.
class replicated_coordinator_log final : public model::coordinator_log {
 public:
  struct error_codes {
    std::error_code not_coordinator;
    std::error_code unavailable;
  };
  replicated_coordinator_log(std::string_view topic, error_codes errors, replication::partition_manager& partitions,
                             const ferry::clock& clock, boost::asio::io_context& timers,
                             boost::asio::thread_pool& blocking_pool, std::int32_t timeout_ms);

  void append(std::int32_t partition, std::vector<record> records, std::function<void(std::error_code)> done) override;
  void append_transactional(std::int32_t partition, producer_id producer, producer_epoch epoch,
                            std::vector<record> records, std::function<void(std::error_code)> done) override;
  result<void> replay(std::int32_t partition, const replay_visitor& visit) override;

 private:
  void write(std::int32_t partition, model::batch_builder::options batch_options, const std::vector<record>& records,
             std::function<void(std::error_code)> done);

  std::string topic_;
  error_codes errors_;
  replication::partition_manager& partitions_;
  const ferry::clock& clock_;
  boost::asio::io_context& timers_;
  boost::asio::thread_pool& blocking_pool_;
  std::int32_t timeout_ms_;
};

}  // namespace ferry::server
