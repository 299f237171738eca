#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/result.h"
#include "coord/cluster_view.h"
#include "net/peer_client.h"
#include "protocol/header.h"
#include "protocol/output_buffer.h"
#include "protocol/wire.h"

namespace ferry::server {

// Requests this broker sends other brokers for its coordinators (WriteTxnMarkers, AddPartitionsToTxn
// verification), over their inter-broker listener. Connections are kept per broker and reused; a caller that
// finds none idle opens another, so concurrent requests never wait on each other. A failed call closes its
// connection. Every call has a deadline.
//
// call() may be awaited from any executor: the connection work runs on the io_context given here, and the
// caller resumes on its own.
class peer_requests : public std::enable_shared_from_this<peer_requests> {
 public:
  // `security` (the inter-broker listener's TLS and login; null: plaintext) must outlive this.
  peer_requests(boost::asio::io_context& io, std::string client_id, std::chrono::milliseconds timeout,
                const net::peer_security* security = nullptr)
      : io_(io), client_id_(std::move(client_id)), timeout_(timeout), security_(security) {}

  template <typename Request, typename Response>
  boost::asio::awaitable<result<Response>> call(const coord::broker_info& to, const Request& request,
                                                std::int16_t version) {
    auto self = shared_from_this();
    auto task = [self, to, &request, version]() -> boost::asio::awaitable<std::optional<result<Response>>> {
      co_return co_await self->template exchange<Request, Response>(to, request, version);
    };
    // Spawned outside the co_await expression: GCC 12 destroys the by-value captures of a lambda inside one
    // twice (see run_blocking).
    auto operation = boost::asio::co_spawn(io_, task, boost::asio::use_awaitable);
    auto done = co_await std::move(operation);
    co_return std::move(*done);
  }

  // Closes every idle connection (at shutdown).
  void close();

 private:
  struct address {
    std::string host;
    std::int32_t port = -1;
    bool operator==(const address&) const = default;
  };
  // An idle connection to the broker, or a new one; runs on io_.
  boost::asio::awaitable<result<std::unique_ptr<net::peer_client>>> take(const coord::broker_info& to);
  void give_back(broker_id to, std::unique_ptr<net::peer_client> peer);

  template <typename Request, typename Response>
  boost::asio::awaitable<result<Response>> exchange(const coord::broker_info& to, const Request& request,
                                                    std::int16_t version) {
    auto taken = co_await take(to);
    if (!taken) co_return taken.error();
    auto peer = std::move(taken.value());
    const bool flexible = Request::first_flexible_version >= 0 && version >= Request::first_flexible_version;
    const auto correlation_id = ++correlation_id_;
    protocol::output_buffer out;
    protocol::begin_request_frame(out, {Request::api_key, version, correlation_id, client_id_}, flexible);
    protocol::writer w(out);
    request.encode(w, version);
    protocol::finish_frame(out);
    std::vector<std::byte> body;
    if (auto done = co_await peer->round_trip(out.flatten(), timeout_, max_response_bytes, body); !done) {
      peer->close();
      co_return done.error();
    }
    protocol::reader r(body);
    std::int32_t answered = 0;
    Response response;
    if (!protocol::decode_response_header(r, answered,
                                          protocol::uses_flexible_response_header(Request::api_key, flexible)) ||
        answered != correlation_id || !response.decode(r, version)) {
      peer->close();
      co_return std::make_error_code(std::errc::protocol_error);
    }
    give_back(to.id, std::move(peer));
    co_return response;
  }

  static constexpr std::int32_t max_response_bytes = 16 << 20;
  static constexpr std::size_t max_idle_per_broker = 4;

  boost::asio::io_context& io_;
  std::string client_id_;
  std::chrono::milliseconds timeout_;
  const net::peer_security* security_;
  std::int32_t correlation_id_ = 0;  // io_'s thread only
  // Idle connections per broker, with the address they were opened to. io_'s thread only.
  std::map<broker_id, std::pair<address, std::vector<std::unique_ptr<net::peer_client>>>> idle_;
};

}  // namespace ferry::server
