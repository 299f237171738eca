#pragma once

#include <optional>
#include <type_traits>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/clock.h"
#include "config/broker_config.h"
#include "coord/cluster_registry.h"
#include "metrics/broker_metrics.h"
#include "replication/partition_manager.h"
#include "server/producer_ids.h"

namespace ferry::server {

// What request handlers work with: this broker's settings, its partitions, the cluster as ZooKeeper
// describes it, and metrics. Owned by the application; outlives every request.
struct broker_context {
  const config::broker_config& config;
  coord::cluster_registry& cluster;
  replication::partition_manager& partitions;
  metrics::broker_metrics& metrics;
  producer_ids& producer_id_source;
  // Threads for calls that block (ZooKeeper round trips), so network threads never wait on them.
  boost::asio::thread_pool& blocking_pool;
  const ferry::clock& clock;
};

// Runs a blocking call on the blocking pool and resumes the calling coroutine on its own executor.
//
// The call must be trivially destructible (capture by reference): GCC 12 destroys by-value captures of a
// lambda passed inside a co_await expression twice, so a captured std::string would be freed twice.
template <typename F>
boost::asio::awaitable<std::invoke_result_t<F>> run_blocking(broker_context& broker, F call) {
  static_assert(std::is_trivially_destructible_v<F>, "capture by reference; see the comment above");
  using R = std::invoke_result_t<F>;
  // co_spawn hands results through default-constructed storage, which result<T> lacks; optional has it.
  auto task = [call]() -> boost::asio::awaitable<std::optional<R>> { co_return call(); };
  auto operation = boost::asio::co_spawn(broker.blocking_pool, task, boost::asio::use_awaitable);
  auto done = co_await std::move(operation);
  co_return std::move(*done);
}

}  // namespace ferry::server
