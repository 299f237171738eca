#pragma once

#include <prometheus/registry.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "base/result.h"

namespace ferry::manager {

// The operator's HTTP port: /metrics (Prometheus text), /healthz (the process serves) and /readyz (ready() says
// whether the caches are filled and the cluster read). One thread of its own; each connection is served by its
// own coroutine, up to max_connections at once (more are closed at once), so a stalled client cannot hold back
// the kubelet's probes.
class health_server {
 public:
  static result<std::unique_ptr<health_server>> start(const std::string& address, std::uint16_t port,
                                                      std::shared_ptr<prometheus::Registry> registry,
                                                      std::function<std::string()> not_ready);
  ~health_server();
  health_server(const health_server&) = delete;
  health_server& operator=(const health_server&) = delete;
  [[nodiscard]] std::uint16_t port() const { return port_; }

  static constexpr std::size_t max_connections = 64;
  // A request must arrive (and its answer be taken) within this; a kept-alive connection idles no longer.
  static constexpr std::chrono::seconds read_timeout{5};

 private:
  health_server() = default;
  boost::asio::awaitable<void> accept();
  boost::asio::awaitable<void> serve(boost::asio::ip::tcp::socket socket);

  boost::asio::io_context io_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::function<std::string()> not_ready_;  // empty when ready, else why not
  std::uint16_t port_ = 0;
  std::size_t connections_ = 0;  // the io_context's thread only
  std::thread thread_;
};

}  // namespace ferry::manager
