#include "manager/health_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <string>

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

std::unique_ptr<health_server> start_server() {
  auto started =
      health_server::start("127.0.0.1", 0, std::make_shared<prometheus::Registry>(), [] { return std::string(); });
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

}  // namespace
}  // namespace ferry::manager
