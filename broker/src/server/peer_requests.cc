#include "server/peer_requests.h"

#include <boost/asio/post.hpp>

#include "base/guarded.h"

namespace ferry::server {

boost::asio::awaitable<result<std::unique_ptr<net::peer_client>>> peer_requests::take(const coord::broker_info& to) {
  auto& [where, peers] = idle_[to.id];
  const address wanted{to.host, to.port};
  if (where != wanted) {
    peers.clear();  // the broker moved: its old connections are of no use
    where = wanted;
  }
  while (!peers.empty()) {
    auto peer = std::move(peers.back());
    peers.pop_back();
    if (peer->is_open()) co_return peer;
  }
  auto peer = std::make_unique<net::peer_client>(io_, security_);
  if (auto connected = co_await peer->connect(to.host, static_cast<std::uint16_t>(to.port), timeout_); !connected)
    co_return connected.error();
  co_return peer;
}

void peer_requests::give_back(broker_id to, std::unique_ptr<net::peer_client> peer) {
  auto& peers = idle_[to].second;
  if (peers.size() < max_idle_per_broker) peers.push_back(std::move(peer));
}

void peer_requests::close() {
  boost::asio::post(io_, guarded("closing idle peer connections", [self = shared_from_this()] {
                      for (auto& [id, entry] : self->idle_)
                        for (auto& peer : entry.second) peer->close();
                      self->idle_.clear();
                    }));
}

}  // namespace ferry::server
