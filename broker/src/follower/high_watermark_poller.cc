#include "follower/high_watermark_poller.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/guarded.h"
#include "base/log.h"
#include "protocol/error_code.h"
#include "protocol/header.h"
#include "protocol/messages/list_offsets.h"

namespace ferry::follower {
namespace asio = boost::asio;
namespace p = protocol;
using asio::awaitable;

namespace {

// ListOffsets v5: read_uncommitted latest is the high watermark; the first version that says which leader epoch
// answered, still with a non-flexible header.
constexpr std::int16_t list_offsets_version = 5;
constexpr std::int64_t latest_timestamp = -1;
// A ListOffsets answer is a few dozen bytes a partition.
constexpr std::int32_t max_response_bytes = 16 << 20;

}  // namespace

high_watermark_poller::high_watermark_poller(asio::io_context& io, broker_id self,
                                             const replication::partition_manager& partitions, view_source view,
                                             wanted_source wanted, settings s)
    : io_(io),
      self_(self),
      partitions_(partitions),
      view_(std::move(view)),
      wanted_(std::move(wanted)),
      settings_(s),
      wake_(io) {}

void high_watermark_poller::start() {
  asio::co_spawn(
      io_, [self = shared_from_this()] { return self->run(); }, guarded_detached("the high watermark poller"));
}

void high_watermark_poller::stop() {
  stopped_ = true;
  asio::post(io_, guarded("stopping the high watermark poller", [self = shared_from_this()] {
               for (auto& [id, peer] : self->peers_) peer.second->close();
               self->wake_.cancel();
             }));
}

std::optional<offset> high_watermark_poller::high_watermark(const topic_partition& partition) const {
  if (const auto led = partitions_.leader_for(partition)) return led.value()->high_watermark();
  std::lock_guard lock(mutex_);
  const auto it = polled_.find(partition);
  return it == polled_.end() ? std::nullopt : std::optional(it->second);
}

awaitable<void> high_watermark_poller::run() {
  auto keep_alive = shared_from_this();
  while (!stopped_) {
    auto polled = co_await poll();
    {
      std::lock_guard lock(mutex_);
      polled_ = std::move(polled);
    }
    if (stopped_) break;
    wake_.expires_after(settings_.interval);
    co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

awaitable<high_watermark_poller::watermarks> high_watermark_poller::poll() {
  const auto view = view_();
  std::map<broker_id, std::vector<topic_partition>> by_leader;
  for (const auto& tp : wanted_()) {
    const auto* info = view->find_partition(tp);
    if (info == nullptr || !info->state || info->state->leader == self_ || !view->is_live(info->state->leader))
      continue;
    by_leader[info->state->leader].push_back(tp);
  }
  // Connections to brokers no longer leading anything wanted close.
  std::erase_if(peers_, [&](const auto& entry) { return !by_leader.contains(entry.first); });
  watermarks out;
  for (const auto& [leader, partitions] : by_leader) {
    if (stopped_) break;
    auto answered = co_await ask(view->brokers.at(leader), partitions);
    if (!answered) {
      FERRY_LOG_LIMITED(warn, "lag", 60000)
          << "cannot read the high watermarks of " << partitions.size() << " partitions from their leader, broker "
          << leader << ": " << answered.error().message() << " (their consumer lag is unknown until it answers)";
      continue;
    }
    out.merge(answered.value());
  }
  co_return out;
}

awaitable<result<high_watermark_poller::watermarks>> high_watermark_poller::ask(
    const coord::broker_info& leader, const std::vector<topic_partition>& partitions) {
  auto& [address, peer] = peers_[leader.id];
  if (peer && (address.host != leader.host || address.port != leader.port)) peer.reset();
  if (!peer) peer = std::make_unique<net::peer_client>(io_, settings_.security);
  address = leader;
  if (!peer->is_open()) {
    if (auto connected =
            co_await peer->connect(leader.host, static_cast<std::uint16_t>(leader.port), settings_.timeout);
        !connected)
      co_return connected.error();
  }
  p::list_offsets_request request;
  request.replica_id = no_broker;  // as a consumer: the high watermark, not the log end
  for (const auto& tp : partitions) {
    if (request.topics.empty() || request.topics.back().name != tp.topic) request.topics.emplace_back().name = tp.topic;
    request.topics.back().partitions.push_back({.partition_index = tp.partition, .timestamp = latest_timestamp});
  }
  p::output_buffer out;
  p::begin_request_frame(out,
                         {p::list_offsets_request::api_key, list_offsets_version, ++correlation_id_,
                          "ferry-lag-" + std::to_string(self_.value())},
                         false);
  p::writer w(out);
  request.encode(w, list_offsets_version);
  p::finish_frame(out);
  std::vector<std::byte> body;
  if (auto done = co_await peer->round_trip(out.flatten(), settings_.timeout, max_response_bytes, body); !done) {
    peer->close();
    co_return done.error();
  }
  p::reader r(body);
  std::int32_t correlation_id = 0;
  p::list_offsets_response response;
  if (!p::decode_response_header(r, correlation_id, false) || correlation_id != correlation_id_ ||
      !response.decode(r, list_offsets_version)) {
    peer->close();
    co_return std::make_error_code(std::errc::protocol_error);
  }
  watermarks found;
  for (const auto& topic : response.topics)
    for (const auto& answer : topic.partitions)
      if (answer.error_code == 0) found.emplace(topic_partition{topic.name, answer.partition_index}, answer.offset);
  co_return found;
}

}  // namespace ferry::follower
