#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>

#include "coord/cluster_view.h"
#include "server/broker_context.h"

namespace ferry::server {

// Waits until the registry's view of the cluster satisfies `ready` or `timeout` passes; true if it did.
// Admin requests use it to answer only once their change took effect (a created topic has leaders, a
// deleted one is gone), as Kafka's controller does.
boost::asio::awaitable<bool> wait_for_view(broker_context& broker,
                                           std::function<bool(const coord::cluster_view&)> ready,
                                           std::chrono::milliseconds timeout);

// True when the topic has at least `partitions` partitions and every one has a leader.
[[nodiscard]] bool topic_has_leaders(const coord::cluster_view& view, const std::string& topic, std::int32_t partitions);

}  // namespace ferry::server
