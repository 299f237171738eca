#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "admin/authenticator.h"
#include "admin/routes.h"
#include "base/result.h"
#include "security/tls_context_source.h"

namespace ferry::admin {

// Who may reach an HTTP listener and over what: TLS (<prefix>listener.protocol=https) and <prefix>authentication.
struct admin_access {
  std::unique_ptr<security::tls_context_source> tls;  // none: plain HTTP
  std::unique_ptr<authenticator> auth;                // none: every path is open
  // connection.failed.authentication.delay.ms: how long a failed login waits for its 401.
  std::chrono::milliseconds failed_login_delay{100};

  // Builds both from the settings; the refusal names the setting (an unreadable key, a rule that does not parse).
  static security::tls_result<admin_access> create(const config::http_security& settings,
                                                   const security::credential_source& users,
                                                   security::password_checker& checker, prometheus::Registry& registry,
                                                   std::chrono::milliseconds failed_login_delay,
                                                   const authenticator_names& names = {});
};

// One request, after authentication.
struct http_request {
  std::string method;
  std::string target;
  std::string body;
  std::string principal;   // the authenticated user; empty when the path needs none
  bool forwarded = false;  // a "Ferry-Forwarded: true" header: another broker forwards a registry write
};

using http_handler = std::function<boost::asio::awaitable<http_reply>(http_request)>;

struct http_server_options {
  std::string name = "admin API";  // in log lines
  std::uint64_t max_body_bytes = std::uint64_t{1024} * 1024;
  // How refusals the server makes itself (401, 413, 503) are written.
  std::function<http_reply(int status, const std::string& message)> error_reply = admin::error_reply;
};

// An HTTP listener (Boost.Beast): one coroutine per connection, keep-alive, over TLS when configured. Heads and
// bodies are capped (a body over the cap is answered 413 and the connection closed), so a bad client cannot make
// the broker buffer much. Requests for protected paths are authenticated before the handler sees them. The admin
// API and the schema registry each run one.
class http_server {
 public:
  http_server(boost::asio::io_context& io, http_handler handler, admin_access access = {},
              http_server_options options = {});

  result<void> listen(const std::string& host, std::uint16_t port);
  void start();
  // Stops accepting; call it on io's thread (Asio's acceptor is not thread-safe), as broker_app::stop() does.
  void stop();
  [[nodiscard]] std::uint16_t bound_port() const { return bound_port_; }
  // Takes a changed key, certificate or truststore for new connections (a periodic job, off the network threads).
  void reload_changed_files();

 private:
  boost::asio::io_context& io_;
  http_handler handler_;
  http_server_options options_;
  admin_access access_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t bound_port_ = 0;
};

}  // namespace ferry::admin
