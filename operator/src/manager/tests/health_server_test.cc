#include "manager/health_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <nlohmann/json.hpp>

namespace ferry::manager {
namespace {

// A blocking client socket on 127.0.0.1 whose reads give up after `timeout`.
class client {
 public:
  client(std::uint16_t port, std::chrono::milliseconds timeout) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
    tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  }
  ~client() { close(fd_); }
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }
  void send_text(const std::string& text) const { (void)::send(fd_, text.data(), text.size(), MSG_NOSIGNAL); }
  // Everything until the server closes, or what came before the read timeout.
  std::string read_all() const {
    std::string out;
    char chunk[4096];
    for (;;) {
      const auto n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return out;
      out.append(chunk, static_cast<std::size_t>(n));
    }
  }
  std::string get(const std::string& path) const {
    send_text("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    return read_all();
  }

 private:
  int fd_;
  bool connected_ = false;
};

std::unique_ptr<health_server> start_server(std::shared_ptr<metrics_authorizer> metrics_auth = nullptr) {
  auto started = health_server::start(
      "127.0.0.1", 0, std::make_shared<prometheus::Registry>(), [] { return std::string(); }, std::move(metrics_auth));
  EXPECT_TRUE(started);
  return started ? std::move(started).value() : nullptr;
}

TEST(health_server, a_stalled_client_does_not_hold_back_healthz) {
  const auto server = start_server();
  ASSERT_TRUE(server);
  const client silent(server->port(), std::chrono::seconds(1));
  ASSERT_TRUE(silent.connected());
  const client half(server->port(), std::chrono::seconds(1));
  ASSERT_TRUE(half.connected());
  half.send_text("GET /metrics HTTP/1.1\r\nHost: loc");

  const auto started = std::chrono::steady_clock::now();
  const client probe(server->port(), std::chrono::seconds(1));
  ASSERT_TRUE(probe.connected());
  const auto answer = probe.get("/healthz");
  EXPECT_EQ(answer.substr(0, 15), "HTTP/1.1 200 OK") << answer;
  EXPECT_NE(answer.find("\r\n\r\nok\n"), std::string::npos) << answer;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

TEST(health_server, a_kept_alive_connection_serves_several_requests) {
  const auto server = start_server();
  ASSERT_TRUE(server);
  const client c(server->port(), std::chrono::seconds(2));
  ASSERT_TRUE(c.connected());
  c.send_text(
      "GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /readyz HTTP/1.1\r\nHost: localhost\r\n"
      "Connection: close\r\n\r\n");
  const auto answers = c.read_all();
  const auto first = answers.find("HTTP/1.1 200 OK");
  ASSERT_NE(first, std::string::npos) << answers;
  EXPECT_NE(answers.find("HTTP/1.1 200 OK", first + 1), std::string::npos) << answers;
}

TEST(health_server, connections_beyond_the_cap_are_closed_at_once) {
  const auto server = start_server();
  ASSERT_TRUE(server);
  std::vector<std::unique_ptr<client>> held;
  for (std::size_t i = 0; i < health_server::max_connections; ++i) {
    held.push_back(std::make_unique<client>(server->port(), std::chrono::seconds(2)));
    ASSERT_TRUE(held.back()->connected());
  }
  // Accepted in the order they connected, so the next one is over the cap: closed, not left waiting.
  const auto started = std::chrono::steady_clock::now();
  const client refused(server->port(), std::chrono::seconds(2));
  EXPECT_EQ(refused.get("/healthz"), "");
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));

  // A held connection that ends frees its place.
  held.pop_back();
  for (;;) {
    const client next(server->port(), std::chrono::seconds(2));
    if (next.get("/healthz").find("200 OK") != std::string::npos) break;
    ASSERT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(4)) << "the place was not freed";
  }
}

// A kube-apiserver's reviews: token "reader" is user "system:serviceaccount:mon:prometheus", allowed to get
// /metrics; "stranger" is a user without the role; any other token is not accepted.
struct fake_api_server {
  std::vector<nlohmann::json> requests;
  std::vector<std::string> paths;
  bool reachable = true;

  result<kube::http_response> answer(const std::string& path, const std::string& body) {
    if (!reachable) return std::make_error_code(std::errc::connection_refused);
    const auto request = nlohmann::json::parse(body);
    paths.push_back(path);
    requests.push_back(request);
    if (request["kind"] == "TokenReview") {
      const auto token = request["spec"]["token"].get<std::string>();
      if (token != "reader" && token != "stranger")
        return kube::http_response{201, R"({"status":{"authenticated":false,"error":"invalid bearer token"}})"};
      const nlohmann::json user = {{"username", token == "reader" ? "system:serviceaccount:mon:prometheus" : "bob"},
                                   {"uid", "u-1"},
                                   {"groups", {"system:authenticated"}}};
      return kube::http_response{201, nlohmann::json{{"status", {{"authenticated", true}, {"user", user}}}}.dump()};
    }
    const bool allowed = request["spec"]["user"] == "system:serviceaccount:mon:prometheus";
    return kube::http_response{201, nlohmann::json{{"status", {{"allowed", allowed}}}}.dump()};
  }
  metrics_authorizer::review_fn reviews() {
    return [this](std::string path, std::string body) -> boost::asio::awaitable<result<kube::http_response>> {
      return respond(this, std::move(path), std::move(body));
    };
  }
  static boost::asio::awaitable<result<kube::http_response>> respond(fake_api_server* server, std::string path,
                                                                     std::string body) {
    co_return server->answer(path, body);
  }
};

class test_clock : public kube::clock_source {
 public:
  [[nodiscard]] time_point now() const override { return now_; }
  void advance(std::chrono::seconds by) { now_ += by; }

 private:
  time_point now_ = std::chrono::steady_clock::now();
};

metrics_authorizer::verdict check(metrics_authorizer& auth, const std::string& header) {
  boost::asio::io_context io;
  auto answer = boost::asio::co_spawn(io, auth.check(header), boost::asio::use_future);
  io.run();
  return answer.get();
}

using verdict = metrics_authorizer::verdict;

TEST(metrics_authorizer, reviews_the_token_then_the_users_access_to_metrics) {
  fake_api_server api;
  metrics_authorizer auth(api.reviews());
  EXPECT_EQ(check(auth, ""), verdict::unauthenticated);
  EXPECT_EQ(check(auth, "Basic cmVhZGVy"), verdict::unauthenticated);
  EXPECT_TRUE(api.requests.empty()) << "nothing to review without a bearer token";
  EXPECT_EQ(check(auth, "Bearer forged"), verdict::unauthenticated);
  EXPECT_EQ(check(auth, "Bearer stranger"), verdict::forbidden);
  EXPECT_EQ(check(auth, "bearer reader"), verdict::allowed);
  ASSERT_EQ(api.paths.size(), 5U);
  EXPECT_EQ(api.paths[0], "/apis/authentication.k8s.io/v1/tokenreviews");
  EXPECT_EQ(api.paths[4], "/apis/authorization.k8s.io/v1/subjectaccessreviews");
  const auto& access = api.requests[4];
  EXPECT_EQ(access["apiVersion"], "authorization.k8s.io/v1");
  EXPECT_EQ(access["spec"]["user"], "system:serviceaccount:mon:prometheus");
  EXPECT_EQ(access["spec"]["uid"], "u-1");
  EXPECT_EQ(access["spec"]["groups"], nlohmann::json::array({"system:authenticated"}));
  EXPECT_EQ(access["spec"]["nonResourceAttributes"], (nlohmann::json{{"path", "/metrics"}, {"verb", "get"}}));
}

TEST(metrics_authorizer, caches_verdicts_per_token_for_the_ttl_but_not_failed_reviews) {
  fake_api_server api;
  test_clock clock;
  metrics_authorizer auth(api.reviews(), std::chrono::seconds(60), 16, clock);
  EXPECT_EQ(check(auth, "Bearer reader"), verdict::allowed);
  EXPECT_EQ(check(auth, "Bearer stranger"), verdict::forbidden);
  const auto reviews = api.paths.size();
  clock.advance(std::chrono::seconds(59));
  EXPECT_EQ(check(auth, "Bearer reader"), verdict::allowed);
  EXPECT_EQ(check(auth, "Bearer stranger"), verdict::forbidden);
  EXPECT_EQ(api.paths.size(), reviews) << "cached";
  clock.advance(std::chrono::seconds(2));
  EXPECT_EQ(check(auth, "Bearer reader"), verdict::allowed);
  EXPECT_EQ(api.paths.size(), reviews + 2) << "expired: reviewed again";

  api.reachable = false;
  EXPECT_EQ(check(auth, "Bearer other"), verdict::unavailable);
  api.reachable = true;
  EXPECT_EQ(check(auth, "Bearer other"), verdict::unauthenticated) << "a failed review is not remembered";
}

TEST(metrics_authorizer, the_cache_is_bounded) {
  fake_api_server api;
  metrics_authorizer auth(api.reviews(), std::chrono::seconds(60), 4);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(check(auth, "Bearer forged-" + std::to_string(i)), verdict::unauthenticated);
  const auto reviews = api.paths.size();
  // Only the last few are still known: the first is reviewed again.
  EXPECT_EQ(check(auth, "Bearer forged-9"), verdict::unauthenticated);
  EXPECT_EQ(api.paths.size(), reviews);
  EXPECT_EQ(check(auth, "Bearer forged-0"), verdict::unauthenticated);
  EXPECT_EQ(api.paths.size(), reviews + 1);
}

TEST(health_server, metrics_needs_an_allowed_token_and_the_probes_none) {
  fake_api_server api;
  const auto server = start_server(std::make_shared<metrics_authorizer>(api.reviews()));
  ASSERT_TRUE(server);
  const auto get = [&](const std::string& path, const std::string& token) {
    const client c(server->port(), std::chrono::seconds(2));
    std::string request = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n";
    if (!token.empty()) request += "Authorization: Bearer " + token + "\r\n";
    c.send_text(request + "\r\n");
    const auto answer = c.read_all();
    return answer.substr(0, answer.find("\r\n"));
  };
  EXPECT_EQ(get("/metrics", ""), "HTTP/1.1 401 Unauthorized");
  EXPECT_EQ(get("/metrics", "forged"), "HTTP/1.1 401 Unauthorized");
  EXPECT_EQ(get("/metrics", "stranger"), "HTTP/1.1 403 Forbidden");
  EXPECT_EQ(get("/metrics", "reader"), "HTTP/1.1 200 OK");
  EXPECT_EQ(get("/healthz", ""), "HTTP/1.1 200 OK");
  EXPECT_EQ(get("/readyz", ""), "HTTP/1.1 200 OK");
}

}  // namespace
}  // namespace ferry::manager
