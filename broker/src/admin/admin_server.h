#pragma once

#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "admin/routes.h"
#include "base/result.h"

namespace ferry::admin {

// The HTTP admin listener (Boost.Beast): one coroutine per connection, keep-alive, GET only. Request bodies
// are read and ignored, and heads and bodies are capped, so a bad client cannot make the broker buffer much.
class admin_server {
 public:
  admin_server(boost::asio::io_context& io, admin_sources sources);

  result<void> listen(const std::string& host, std::uint16_t port);
  void start();
  // Stops accepting; call it on io's thread (Asio's acceptor is not thread-safe), as broker_app::stop() does.
  void stop();
  [[nodiscard]] std::uint16_t bound_port() const { return bound_port_; }

 private:
  boost::asio::io_context& io_;
  admin_sources sources_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::uint16_t bound_port_ = 0;
};

}  // namespace ferry::admin
