#pragma once

// Stand-ins for what a sasl_session talks to (an exchange, the request handler, the observer) and the framing of
// what a client sends, shared by sasl_session_test and the sasl_session fuzz target.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "protocol/api_table.h"
#include "protocol/header.h"
#include "security/errc.h"
#include "security/sasl_session.h"

namespace ferry::security::testing {

inline constexpr std::string_view good_password = "secret";

// A mechanism with a script instead of cryptography. "login <user> <password>" completes in one step, as PLAIN
// does (answer: the empty token); "first <user>" answers "challenge" and waits for "proof <password>", as SCRAM's
// two steps do. The password is good_password; anything else fails the exchange.
class fake_exchange final : public sasl_server_exchange {
 public:
  boost::asio::awaitable<result<std::string>> respond(std::string_view token) override {
    if (done_) co_return make_error_code(errc::unexpected_message);
    if (!challenged_ && take(token, "login ")) {
      const auto space = token.find(' ');
      if (space == std::string_view::npos) co_return make_error_code(errc::malformed_message);
      user_ = std::string(token.substr(0, space));
      if (token.substr(space + 1) != good_password) co_return make_error_code(errc::bad_password);
      done_ = true;
      co_return std::string();
    }
    if (!challenged_ && take(token, "first ")) {
      user_ = std::string(token);
      challenged_ = true;
      co_return std::string("challenge");
    }
    if (challenged_ && take(token, "proof ")) {
      if (token != good_password) co_return make_error_code(errc::bad_proof);
      done_ = true;
      co_return std::string("verifier");
    }
    co_return make_error_code(errc::malformed_message);
  }
  [[nodiscard]] bool complete() const override { return done_; }
  [[nodiscard]] const std::string& user() const override { return user_; }

 private:
  static bool take(std::string_view& token, std::string_view prefix) {
    if (!token.starts_with(prefix)) return false;
    token.remove_prefix(prefix.size());
    return true;
  }
  std::string user_;
  bool challenged_ = false;
  bool done_ = false;
};

inline exchange_factory fake_exchanges() {
  return [](std::string_view) -> std::unique_ptr<sasl_server_exchange> { return std::make_unique<fake_exchange>(); };
}

// The broker's request handler, reduced to a record of what reached it. Its answer is a frame holding only the
// request's API key (or a close, when told).
class fake_request_handler final : public net::request_handler {
 public:
  struct served {
    std::int16_t api_key;
    std::string principal;
  };

  boost::asio::awaitable<net::request_outcome> handle(std::span<std::byte> frame,
                                                      const net::connection_info& from) override {
    protocol::reader r(frame);
    const std::int16_t key = r.read_int16();
    requests.push_back({key, from.principal});
    if (close_next) co_return net::request_outcome{net::request_outcome::action::close, {}};
    net::request_outcome out;
    protocol::writer w(out.response);
    w.write_int16(key);
    co_return out;
  }

  std::vector<served> requests;
  bool close_next = false;
};

// The observer's calls, copied.
class recording_observer final : public auth_observer {
 public:
  struct call {
    std::string mechanism;
    std::string user;
    bool reauthentication;
    std::string reason;  // empty for a success
  };
  void succeeded(const auth_attempt& a) override {
    successes.push_back({std::string(a.mechanism), std::string(a.user), a.reauthentication, {}});
  }
  void failed(const auth_attempt& a, std::string_view reason) override {
    failures.push_back({std::string(a.mechanism), std::string(a.user), a.reauthentication, std::string(reason)});
  }
  std::vector<call> successes;
  std::vector<call> failures;
};

// A request frame as a client sends it, without its size prefix.
template <typename Request>
std::vector<std::byte> request_frame(const Request& request, std::int16_t version, std::int32_t correlation_id = 7) {
  const bool flexible = Request::first_flexible_version >= 0 && version >= Request::first_flexible_version;
  protocol::output_buffer out;
  protocol::begin_request_frame(out, {Request::api_key, version, correlation_id, "client"}, flexible);
  protocol::writer w(out);
  request.encode(w, version);
  protocol::finish_frame(out);
  auto bytes = out.flatten();
  bytes.erase(bytes.begin(), bytes.begin() + sizeof(std::int32_t));
  return bytes;
}

inline std::vector<std::byte> handshake_frame(std::string mechanism, std::int16_t version) {
  protocol::sasl_handshake_request request;
  request.mechanism = std::move(mechanism);
  return request_frame(request, version);
}

inline std::vector<std::byte> bytes_of(std::string_view text) {
  const auto b = std::as_bytes(std::span(text));
  return {b.begin(), b.end()};
}

inline std::vector<std::byte> authenticate_frame(std::string_view token, std::int16_t version) {
  protocol::sasl_authenticate_request request;
  request.auth_bytes = bytes_of(token);
  return request_frame(request, version);
}

// Decodes a response frame (size prefix included) of `Response` in `version`; nullopt if it does not parse.
template <typename Response>
std::optional<Response> decode_response(const protocol::output_buffer& frame, std::int16_t version) {
  auto bytes = frame.flatten();
  protocol::reader r(bytes);
  r.read_int32();
  const bool flexible = Response::first_flexible_version >= 0 && version >= Response::first_flexible_version;
  std::int32_t correlation_id = 0;
  if (!protocol::decode_response_header(r, correlation_id,
                                        protocol::uses_flexible_response_header(Response::api_key, flexible)))
    return std::nullopt;
  Response response;
  if (!response.decode(r, version)) return std::nullopt;
  return response;
}

// Runs one frame through a session to its outcome.
inline net::request_outcome run(net::connection_session& session, std::vector<std::byte> frame,
                                net::connection_info& info) {
  boost::asio::io_context io;
  std::optional<net::request_outcome> out;
  boost::asio::co_spawn(io, session.handle(frame, info), [&out](const std::exception_ptr& e, net::request_outcome o) {
    if (e) std::rethrow_exception(e);
    out = std::move(o);
  });
  io.run();
  return std::move(*out);
}

}  // namespace ferry::security::testing
