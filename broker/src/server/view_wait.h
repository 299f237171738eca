#pragma once

#include <chrono>
#include <type_traits>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "coord/cluster_view.h"
#include "server/broker_context.h"

namespace ferry::server {

// True when the topic has at least `partitions` partitions and every one has a leader.
[[nodiscard]] bool topic_has_leaders(const coord::cluster_view& view, const std::string& topic,
                                     std::int32_t partitions);

// Waits until the registry's view of the cluster satisfies `ready` or `timeout` passes; true if it did.
// Admin requests use it to answer only once their change took effect (a created topic has leaders, a
// deleted one is gone), as Kafka's controller does. `ready` must capture by reference (see run_blocking).
template <typename Ready>
boost::asio::awaitable<bool> wait_for_view(broker_context& broker, Ready ready, std::chrono::milliseconds timeout) {
  static_assert(std::is_trivially_destructible_v<Ready>, "capture by reference; see run_blocking");
  namespace asio = boost::asio;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    if (ready(*broker.cluster.view())) co_return true;
    if (std::chrono::steady_clock::now() >= deadline) co_return false;
    // The view changes on ZooKeeper watch events, milliseconds apart; a short re-check interval keeps admin
    // calls quick without tying this layer to the registry's listener thread.
    timer.expires_after(std::chrono::milliseconds(10));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

}  // namespace ferry::server
