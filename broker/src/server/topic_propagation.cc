#include "server/topic_propagation.h"

#include <set>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "protocol/messages/list_offsets.h"

namespace ferry::server {
namespace p = protocol;
namespace asio = boost::asio;
namespace {

constexpr std::int16_t list_offsets_version = 1;
constexpr std::int64_t latest = -1;
constexpr std::chrono::milliseconds recheck{20};

}  // namespace

asio::awaitable<bool> peer_topic_propagation::wait_until_served_everywhere(const std::string& topic, std::int32_t first,
                                                                           std::int32_t end,
                                                                           std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  std::set<broker_id> confirmed;
  for (;;) {
    const auto view = cluster_.view();
    bool everywhere = true;
    for (const auto& [id, info] : view->brokers) {
      if (confirmed.contains(id)) continue;
      p::list_offsets_request request;
      request.replica_id = broker_id{-1};
      auto& t = request.topics.emplace_back();
      t.name = topic;
      for (std::int32_t i = first; i < end; ++i) {
        auto& part = t.partitions.emplace_back();
        part.partition_index = partition_id{i};
        part.timestamp = latest;
      }
      const auto answer =
          co_await peers_.call<p::list_offsets_request, p::list_offsets_response>(info, request, list_offsets_version);
      bool served = answer && answer.value().topics.size() == 1 &&
                    answer.value().topics[0].partitions.size() == static_cast<std::size_t>(end - first);
      if (served) {
        for (const auto& part : answer.value().topics[0].partitions) {
          const auto* known = view->find_partition({topic, part.partition_index});
          const bool leads = known != nullptr && known->state && known->state->leader == id;
          const auto code = static_cast<p::error_code>(part.error_code);
          if (leads ? code != p::error_code::none : code != p::error_code::not_leader_or_follower) served = false;
        }
      }
      if (served)
        confirmed.insert(id);
      else
        everywhere = false;
    }
    if (everywhere) co_return true;
    if (std::chrono::steady_clock::now() >= deadline) co_return false;
    timer.expires_after(recheck);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

}  // namespace ferry::server
