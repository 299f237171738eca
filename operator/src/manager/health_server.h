#pragma once

#include <prometheus/registry.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "base/result.h"
#include "kube/api_client.h"

namespace ferry::manager {

// Who may read /metrics (--metrics-auth kubernetes), as controller-runtime's
// filters.WithAuthenticationAndAuthorization: the bearer token is checked by a TokenReview, then its user by a
// SubjectAccessReview for the non-resource URL /metrics, verb get. Verdicts are cached per token (by its
// SHA-256, never the token itself) for `ttl`, at most `max_entries` of them, so scrapes do not each cost two
// API requests. Tokens are never logged.
class metrics_authorizer {
 public:
  enum class verdict {
    allowed,
    unauthenticated,  // no bearer token, or one the API server does not accept: 401
    forbidden,        // a valid token whose user may not get /metrics: 403
    unavailable,      // the review itself failed (API server unreachable, the operator lacks RBAC): 503
  };
  // POSTs `body` to `path` on the API server; the answer completes on the caller's executor.
  using review_fn =
      std::function<boost::asio::awaitable<result<kube::http_response>>(std::string path, std::string body)>;

  explicit metrics_authorizer(review_fn review, std::chrono::seconds ttl = std::chrono::seconds(60),
                              std::size_t max_entries = 1024,
                              const kube::clock_source& clock = kube::clock_source::steady());
  // `authorization` is the request's Authorization header (empty when absent).
  boost::asio::awaitable<verdict> check(std::string_view authorization);

 private:
  struct cached {
    verdict answer;
    kube::clock_source::time_point expires;
  };
  boost::asio::awaitable<verdict> review(const std::string& token);
  void remember(const std::string& digest, verdict answer);

  review_fn review_;
  const std::chrono::seconds ttl_;
  const std::size_t max_entries_;
  const kube::clock_source& clock_;
  std::mutex mutex_;
  std::unordered_map<std::string, cached> cache_;  // by the token's SHA-256
};

// Reviews through `api`, whose io_context runs on another thread.
metrics_authorizer::review_fn api_server_reviews(kube::api_client& api);

// The operator's HTTP port: /metrics (Prometheus text), /healthz (the process serves) and /readyz (ready() says
// whether the caches are filled and the cluster read). One thread of its own; each connection is served by its
// own coroutine, up to max_connections at once (more are closed at once), so a stalled client cannot hold back
// the kubelet's probes. With an authorizer, /metrics answers only the requests it allows; /healthz and /readyz
// stay open to the kubelet.
class health_server {
 public:
  static result<std::unique_ptr<health_server>> start(const std::string& address, std::uint16_t port,
                                                      std::shared_ptr<prometheus::Registry> registry,
                                                      std::function<std::string()> not_ready,
                                                      std::shared_ptr<metrics_authorizer> metrics_auth = nullptr);
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
  std::function<std::string()> not_ready_;            // empty when ready, else why not
  std::shared_ptr<metrics_authorizer> metrics_auth_;  // null: /metrics is open
  std::uint16_t port_ = 0;
  std::size_t connections_ = 0;  // the io_context's thread only
  std::thread thread_;
};

}  // namespace ferry::manager
