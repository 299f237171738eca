#include "server/view_wait.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace ferry::server {
namespace asio = boost::asio;

asio::awaitable<bool> wait_for_view(broker_context& broker, std::function<bool(const coord::cluster_view&)> ready,
                                    std::chrono::milliseconds timeout) {
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

bool topic_has_leaders(const coord::cluster_view& view, const std::string& topic, std::int32_t partitions) {
  const auto* info = view.find_topic(topic);
  if (info == nullptr || static_cast<std::int32_t>(info->partitions.size()) < partitions) return false;
  for (const auto& [id, partition] : info->partitions)
    if (!partition.state || partition.state->leader == no_broker) return false;
  return true;
}

}  // namespace ferry::server
