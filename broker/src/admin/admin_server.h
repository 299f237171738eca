#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "admin/authenticator.h"
#include "admin/routes.h"
#include "base/result.h"
#include "security/tls_context_source.h"

namespace ferry::admin {

// Who may reach the admin API and over what: TLS (admin.listener.protocol=https) and admin.authentication.
struct admin_access {
  std::unique_ptr<security::tls_context_source> tls;  // none: plain HTTP
  std::unique_ptr<authenticator> auth;                // none: every path is open
  // connection.failed.authentication.delay.ms: how long a failed login waits for its 401.
  std::chrono::milliseconds failed_login_delay{100};

  // Builds both from the settings; the refusal names the setting (an unreadable key, a rule that does not parse).
  static security::tls_result<admin_access> create(const config::admin_api_security& settings,
                                                   const security::credential_source& users,
                                                   security::password_checker& checker, prometheus::Registry& registry,
                                                   std::chrono::milliseconds failed_login_delay);
};

// The HTTP admin listener (Boost.Beast): one coroutine per connection, keep-alive, GET only, over TLS when
// configured. Request bodies are read and ignored, and heads and bodies are capped, so a bad client cannot make
// the broker buffer much. Requests for protected paths are authenticated before they are routed.
class admin_server {
 public:
  admin_server(boost::asio::io_context& io, admin_sources sources, admin_access access = {});

  result<void> listen(const std::string& host, std::uint16_t port);
  void start();
  // Stops accepting; call it on io's thread (Asio's acceptor is not thread-safe), as broker_app::stop() does.
  void stop();
  [[nodiscard]] std::uint16_t bound_port() const { return bound_port_; }
  // Takes a changed key, certificate or truststore for new connections (a periodic job, off the network threads).
  void reload_changed_files();

 private:
  boost::asio::io_context& io_;
  admin_sources sources_;
  admin_access access_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t bound_port_ = 0;
};

}  // namespace ferry::admin
