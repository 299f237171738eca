#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "base/result.h"
#include "coord/cluster_view.h"
#include "kafka/client_settings.h"
#include "net/peer_client.h"
#include "protocol/header.h"
#include "protocol/output_buffer.h"
#include "protocol/wire.h"

namespace ferry::kafka {

// The operator's Kafka connections for one reconcile, over the broker's own codecs: a connection per broker
// (on --kafka-listener, secured and logged in as the settings say), kept until this is destroyed. Blocking, for
// a controller's worker thread.
class kafka_client {
 public:
  struct address {
    std::string host;
    std::int32_t port = 0;
    auto operator<=>(const address&) const = default;
  };

  // `settings` must outlive the client (the operator's flags do).
  kafka_client(std::shared_ptr<const coord::cluster_view> view, const client_settings& settings,
               std::chrono::milliseconds timeout)
      : view_(std::move(view)), settings_(settings), timeout_(timeout) {}
  kafka_client(std::shared_ptr<const coord::cluster_view>, client_settings&&, std::chrono::milliseconds) = delete;

  [[nodiscard]] const coord::cluster_view& view() const { return *view_; }
  // A broker's address on the operator's listener.
  [[nodiscard]] result<address> address_of(broker_id id) const;
  // The address of some live broker, for a request any of them answers.
  [[nodiscard]] result<address> any_broker() const;

  // One request and its response, awaited.
  template <typename Response, typename Request>
  result<Response> call(const address& to, const Request& request, std::int16_t version) {
    protocol::output_buffer out;
    const bool flexible = Request::first_flexible_version >= 0 && version >= Request::first_flexible_version;
    const auto correlation_id = ++correlation_id_;
    protocol::begin_request_frame(out, {Request::api_key, version, correlation_id, "ferry-operator"}, flexible);
    protocol::writer w(out);
    request.encode(w, version);
    protocol::finish_frame(out);
    std::vector<std::byte> body;
    FERRY_TRY(round_trip(to, out.flatten(), body));
    protocol::reader r(body);
    std::int32_t answered_id = 0;
    Response response;
    if (!protocol::decode_response_header(r, answered_id, flexible) || answered_id != correlation_id ||
        !response.decode(r, version)) {
      close(to);
      return std::make_error_code(std::errc::protocol_error);
    }
    return response;
  }

 private:
  [[nodiscard]] result<address> endpoint_of(const coord::broker_info& broker) const;
  // Sends one request frame and reads its answer, connecting first when needed.
  result<void> round_trip(const address& to, std::span<const std::byte> frame, std::vector<std::byte>& body);
  void close(const address& to);

  const std::shared_ptr<const coord::cluster_view> view_;
  const client_settings& settings_;
  const std::chrono::milliseconds timeout_;
  std::optional<net::peer_security> security_;  // read from the settings' files at the first connection
  boost::asio::io_context io_;
  std::map<address, std::unique_ptr<net::peer_client>> peers_;
  std::int32_t correlation_id_ = 0;
};

}  // namespace ferry::kafka
