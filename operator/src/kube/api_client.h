#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/http/verb.hpp>

#include "base/result.h"
#include "kube/api_config.h"

namespace ferry::kube {

struct http_response {
  unsigned status = 0;
  std::string body;
};

// Content types of the API server's write verbs.
inline constexpr std::string_view json_content = "application/json";
inline constexpr std::string_view merge_patch = "application/merge-patch+json";
inline constexpr std::string_view json_patch = "application/json-patch+json";
inline constexpr std::string_view apply_patch = "application/apply-patch+yaml";

// Monotonic time behind an interface, so that tests can move it (the rate limiter, the event correlator).
class clock_source {
 public:
  using time_point = std::chrono::steady_clock::time_point;
  virtual ~clock_source() = default;
  [[nodiscard]] virtual time_point now() const = 0;
  // std::chrono::steady_clock.
  static const clock_source& steady();
};

// A token bucket, as client-go's flowcontrol.NewTokenBucketRateLimiter: `burst` requests at once, then `qps` a
// second. reserve() takes a token, possibly one that is only refilled later, and answers how long the caller
// must wait before it may use it, so waiting callers go in the order they came. qps <= 0: no limit. Thread-safe.
class token_bucket {
 public:
  explicit token_bucket(double qps, std::size_t burst, const clock_source& clock = clock_source::steady());
  std::chrono::nanoseconds reserve();
  [[nodiscard]] double qps() const { return qps_; }
  [[nodiscard]] std::size_t burst() const { return burst_; }

 private:
  const double qps_;
  const std::size_t burst_;
  const clock_source& clock_;
  std::mutex mutex_;
  double tokens_;  // below 0 while callers wait for tokens not yet refilled
  clock_source::time_point refilled_;
};

// HTTPS to the API server (Boost.Beast over OpenSSL). All I/O runs on one io_context; the coroutine calls
// must run there, and send() may be called from any other thread. Idle keep-alive connections are reused.
class api_client {
 public:
  using verb = boost::beast::http::verb;
  // One line of a streamed answer (a watch event); return false to stop reading.
  using line_handler = std::function<bool(std::string_view line)>;

  static result<std::unique_ptr<api_client>> create(boost::asio::io_context& io, const api_config& config);
  ~api_client();
  api_client(const api_client&) = delete;
  api_client& operator=(const api_client&) = delete;

  // One request and its whole answer (bodies up to 64 MiB). Transport failures are errors; any HTTP status
  // is a response. A request on a reused connection that fails before an answer is retried once on a new one.
  boost::asio::awaitable<result<http_response>> async_send(verb method, std::string target, std::string body = {},
                                                           std::string_view content_type = json_content);
  // The same from a thread other than the io_context's, waiting for the answer.
  result<http_response> send(verb method, std::string target, std::string body = {},
                             std::string_view content_type = json_content);

  // Writes (POST, PUT, PATCH, DELETE) take a token from a bucket of `qps` a second and `burst` at once before
  // they go out, waiting for one on the calling thread (send) or on a timer (async_send); reads, watches and the
  // Lease (coordination.k8s.io, renewed by deadline) are not limited. Set before any request; qps 0: no limit.
  void limit_writes(double qps, std::size_t burst);
  // Called with each limited write's wait (0 when a token was there), on the thread that waited.
  void on_throttled(std::function<void(std::chrono::nanoseconds waited)> observer) { throttled_ = std::move(observer); }

  // A GET whose answer is a stream of lines (a watch): `on_line` sees each line as it arrives. Ends when the
  // server ends the answer, `on_line` returns false, or nothing arrives for `idle_timeout`. A status other than
  // 200 comes back with its body and no lines.
  boost::asio::awaitable<result<http_response>> async_stream(std::string target, line_handler on_line,
                                                             std::chrono::seconds idle_timeout);

  [[nodiscard]] boost::asio::io_context& io() { return io_; }
  // Called on the io_context's thread after every request with its verb and status (0: no answer).
  void on_request(std::function<void(verb method, unsigned status)> observer) { observer_ = std::move(observer); }

 private:
  struct connection;
  api_client(boost::asio::io_context& io, const api_config& config);
  boost::asio::awaitable<result<std::unique_ptr<connection>>> connect();
  // The wait a request must make before it goes out (reserves a token), 0 when it is not limited.
  std::chrono::nanoseconds admit(verb method, const std::string& target);
  boost::asio::awaitable<result<http_response>> send_now(verb method, std::string target, std::string body,
                                                         std::string content_type);
  boost::asio::awaitable<result<http_response>> send_once(verb method, const std::string& target,
                                                          const std::string& body, const std::string& content_type);
  // New connections present the exec plugin's client certificate once it gave a new one.
  void use_renewed_certificate();
  boost::asio::awaitable<result<http_response>> exchange(connection& c, verb method, const std::string& target,
                                                         const std::string& body, std::string_view content_type);

  boost::asio::io_context& io_;
  api_config config_;
  boost::asio::ssl::context tls_;
  token_source token_;
  std::vector<std::unique_ptr<connection>> idle_;  // io_context thread only
  std::function<void(verb, unsigned)> observer_;
  std::unique_ptr<token_bucket> writes_;
  std::function<void(std::chrono::nanoseconds)> throttled_;
};

}  // namespace ferry::kube
