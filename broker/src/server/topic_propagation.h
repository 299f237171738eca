#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <boost/asio/awaitable.hpp>

#include "server/broker_context.h"
#include "server/peer_requests.h"

namespace ferry::server {

// Whether a topic's partitions have reached every live broker (CreateTopics and CreatePartitions answer after it,
// so a client's next request to any broker finds them there, as Kafka answers once its brokers have the
// metadata).
class topic_propagation {
 public:
  virtual ~topic_propagation() = default;
  // Waits until partitions [first, end) of `topic` are known to every live broker and served by their leaders;
  // true when that held before `timeout`.
  virtual boost::asio::awaitable<bool> wait_until_served_everywhere(const std::string& topic, std::int32_t first,
                                                                    std::int32_t end,
                                                                    std::chrono::milliseconds timeout) = 0;
};

// Asks the brokers: ListOffsets to each live broker, which a leader answers NONE and another broker that knows the
// partition NOT_LEADER_OR_FOLLOWER.
class peer_topic_propagation final : public topic_propagation {
 public:
  peer_topic_propagation(cluster_metadata& cluster, peer_requests& peers) : cluster_(cluster), peers_(peers) {}
  boost::asio::awaitable<bool> wait_until_served_everywhere(const std::string& topic, std::int32_t first,
                                                            std::int32_t end,
                                                            std::chrono::milliseconds timeout) override;

 private:
  cluster_metadata& cluster_;
  peer_requests& peers_;
};

}  // namespace ferry::server
