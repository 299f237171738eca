// The network layer's TLS listeners end to end: a real tcp_server on loopback with the contexts and principals
// the app gives it (security::tls_context_source, security::principal_mapper), and TLS clients trusting the test CA.
// net's own tests cannot make certificates (security sits above net), so these live here.
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/endian/conversion.hpp>

#include "net/io_context_pool.h"
#include "net/tcp_server.h"
#include "net/transport.h"
#include "security/principal_mapper.h"
#include "security/testing/test_certificates.h"
#include "security/tls_context.h"
#include "security/tls_context_source.h"

namespace ferry::security {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using testing::test_certificate;
using tls_client = asio::ssl::stream<tcp::socket>;

constexpr std::uint32_t file_bytes = 8U << 20U;
// Larger than one TLS write chunk, and not a multiple of it: the last chunk is a short one.
constexpr std::uint32_t over_one_chunk = (1U << 20U) + 3;
static_assert(over_one_chunk > net::tls_transport::write_chunk_bytes);

// The file's byte at `offset`: a period (251) prime to the chunk size, so a chunk sent twice or skipped shows.
char file_byte(std::size_t offset) { return static_cast<char>(offset % 251); }

// Answers each frame with the principal the connection has, a newline, the request bytes, then the first
// `file_length` bytes of a file as a file piece (a Fetch's record data).
class echo_with_principal final : public net::request_handler {
 public:
  explicit echo_with_principal(int fd) : fd_(fd) {}
  asio::awaitable<net::request_outcome> handle(std::span<std::byte> frame, const net::connection_info& info) override {
    const std::uint32_t length = file_length.load();
    const std::string head = info.principal + "\n";
    net::request_outcome outcome;
    const auto size = boost::endian::native_to_big(static_cast<std::int32_t>(head.size() + frame.size() + length));
    outcome.response.append(std::as_bytes(std::span(&size, 1)));
    outcome.response.append(std::as_bytes(std::span(head)));
    outcome.response.append(frame);
    outcome.response.append_file({fd_, 0, length, nullptr});
    co_return outcome;
  }
  std::atomic<std::uint32_t> file_length{0};

 private:
  int fd_;
};

std::vector<char> frame_of(const std::string& body) {
  std::vector<char> out(4 + body.size());
  const auto size = boost::endian::native_to_big(static_cast<std::int32_t>(body.size()));
  std::memcpy(out.data(), &size, 4);
  std::memcpy(out.data() + 4, body.data(), body.size());
  return out;
}

std::string file_prefix(std::uint32_t length) {
  std::string out(length, '\0');
  for (std::size_t i = 0; i < length; ++i) out[i] = file_byte(i);
  return out;
}

template <typename Stream>
std::string read_answer(Stream& stream) {
  std::int32_t size = 0;
  asio::read(stream, asio::buffer(&size, 4));
  std::string reply(static_cast<std::size_t>(boost::endian::big_to_native(size)), '\0');
  asio::read(stream, asio::buffer(reply));
  return reply;
}

template <typename Stream>
std::string round_trip(Stream& stream, const std::string& body) {
  asio::write(stream, asio::buffer(frame_of(body)));
  return read_answer(stream);
}

// Waits (at most `limit`) for the server to end the connection: the read's error (message_size when the server
// sent 4 KiB without closing), or none if it stayed open.
template <typename Stream>
std::optional<boost::system::error_code> wait_for_close(Stream& stream, asio::io_context& io,
                                                        std::chrono::milliseconds limit) {
  std::optional<boost::system::error_code> closed;
  std::array<char, 4096> sink{};
  asio::async_read(stream, asio::buffer(sink),
                   [&](boost::system::error_code ec, std::size_t) { closed = ec ? ec : asio::error::message_size; });
  io.restart();
  io.run_for(limit);
  if (!closed) {
    stream.lowest_layer().close();
    io.restart();
    io.run();
    return std::nullopt;
  }
  return closed;
}

class tls_listener_test : public ::testing::Test {
 protected:
  void SetUp() override {
    file_ = std::tmpfile();
    const auto content = file_prefix(file_bytes);
    ASSERT_EQ(std::fwrite(content.data(), 1, content.size(), file_), content.size());
    std::fflush(file_);
    handler_ = std::make_unique<echo_with_principal>(fileno(file_));
  }
  void TearDown() override {
    if (server_) {
      std::promise<void> stopped;
      asio::post(pool_.main(), [&] {
        server_->stop();
        stopped.set_value();
      });
      stopped.get_future().wait();
    }
    pool_.stop();
    if (thread_.joinable()) thread_.join();
    std::fclose(file_);
  }

  // A listener's settings with the keystore in a file; a truststore of the test CA when clients are verified.
  config::tls_settings settings(config::client_auth auth = config::client_auth::none) {
    config::tls_settings out;
    out.keystore_location =
        testing::write_file(dir_.path(), "keystore.pem", testing::keystore_pem(server_certificate_)).string();
    out.client_authentication = auth;
    if (auth != config::client_auth::none)
      out.truststore_location = testing::write_file(dir_.path(), "truststore.pem", ca_.ca().certificate_pem()).string();
    return out;
  }

  // Starts a TLS listener wired as the app wires one (app/listener_security.cc).
  void serve(const config::tls_settings& tls, std::string_view rules = "DEFAULT",
             net::connection_limits limits = {.max_request_bytes = 1 << 20}) {
    auto contexts = tls_context_source::create(tls, "listener.name.ssl.");
    ASSERT_TRUE(contexts) << (contexts ? "" : contexts.error());
    contexts_ = std::move(contexts.value());
    auto mapper = principal_mapper::parse(rules);
    ASSERT_TRUE(mapper) << (mapper ? "" : mapper.error());
    mapper_ = std::make_unique<principal_mapper>(std::move(mapper.value()));
    net::connection_security security;
    security.tls_context = [this] { return contexts_->current(); };
    security.tls_principal = [this](SSL* handshake) { return tls_principal(*mapper_, handshake); };
    security.on_tls_failure = [this](const std::string& reason) {
      const std::scoped_lock lock(failures_mutex_);
      failures_.push_back(reason);
    };
    server_ = std::make_unique<net::tcp_server>(pool_, *handler_, "SSL", std::move(limits), std::move(security));
    ASSERT_TRUE(server_->listen("127.0.0.1", 0));
    server_->start();
    thread_ = std::thread([this] { pool_.run(); });
  }

  // A TLS client trusting the test CA (checking the name localhost), presenting `certificate` when given.
  std::unique_ptr<tls_client> connect_tls(const test_certificate* certificate = nullptr) {
    config::tls_settings tls;
    tls.truststore_certificates = ca_.ca().certificate_pem();
    if (certificate != nullptr) {
      tls.keystore_key = certificate->key_pem();
      tls.keystore_certificate_chain = certificate->certificate_pem();
    }
    auto context = make_client_context(tls, "");
    EXPECT_TRUE(context) << (context ? "" : context.error());
    client_contexts_.push_back(context.value());
    auto client = std::make_unique<tls_client>(client_io_, *context.value());
    SSL_set1_host(client->native_handle(), "localhost");
    client->next_layer().connect({asio::ip::make_address("127.0.0.1"), server_->bound_port()});
    return client;
  }
  // Connects and completes the handshake; the handshake's error, if any.
  boost::system::error_code handshake(tls_client& client) {
    boost::system::error_code ec;
    client.handshake(asio::ssl::stream_base::client, ec);
    return ec;
  }

  // The reasons on_tls_failure was given, once there are `count` (or after two seconds).
  std::vector<std::string> failures(std::size_t count) {
    for (int i = 0; i < 400; ++i) {
      {
        const std::scoped_lock lock(failures_mutex_);
        if (failures_.size() >= count) return failures_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const std::scoped_lock lock(failures_mutex_);
    return failures_;
  }

  testing::temporary_directory dir_;
  testing::test_ca ca_;
  test_certificate server_certificate_ = ca_.server_certificate();
  std::FILE* file_ = nullptr;
  std::unique_ptr<echo_with_principal> handler_;
  std::unique_ptr<tls_context_source> contexts_;
  std::unique_ptr<principal_mapper> mapper_;
  net::io_context_pool pool_{2};
  std::unique_ptr<net::tcp_server> server_;
  std::thread thread_;
  asio::io_context client_io_;
  std::vector<std::shared_ptr<asio::ssl::context>> client_contexts_;
  std::mutex failures_mutex_;
  std::vector<std::string> failures_;
  std::atomic<int> idle_closes_{0};  // outlives the server's connections
};

// File pieces go through TLS in 64 KiB chunks: a piece of many chunks plus a short one arrives byte for byte,
// and pipelined requests (all written before any answer is read) are answered in order.
TEST_F(tls_listener_test, file_pieces_larger_than_a_chunk_arrive_whole_and_in_order) {
  serve(settings());
  handler_->file_length = over_one_chunk;
  auto client = connect_tls();
  ASSERT_FALSE(handshake(*client));
  const std::array<std::string, 3> bodies{"first", "second", "third"};
  std::vector<char> pipelined;
  for (const auto& body : bodies) {
    const auto frame = frame_of(body);
    pipelined.insert(pipelined.end(), frame.begin(), frame.end());
  }
  asio::write(*client, asio::buffer(pipelined));
  const auto file = file_prefix(over_one_chunk);
  for (const auto& body : bodies) {
    const auto answer = read_answer(*client);
    ASSERT_EQ(answer.size(), std::string("User:ANONYMOUS\n").size() + body.size() + file.size());
    std::string expected = "User:ANONYMOUS\n";
    expected += body;
    expected += file;
    EXPECT_TRUE(answer == expected) << "the answer to " << body << " differs";
  }
}

// The memory bound cannot be observed from outside; what can is that an answer far larger than the chunk (a
// fetch of 8 MiB) still arrives whole through the bounded path.
TEST_F(tls_listener_test, an_eight_mib_file_piece_arrives_whole) {
  serve(settings());
  handler_->file_length = file_bytes;
  auto client = connect_tls();
  ASSERT_FALSE(handshake(*client));
  const auto answer = round_trip(*client, "big");
  ASSERT_EQ(answer.size(), std::string("User:ANONYMOUS\nbig").size() + file_bytes);
  EXPECT_TRUE(answer == "User:ANONYMOUS\nbig" + file_prefix(file_bytes));
}

// librdkafka writes a request as many small TLS records. Requests in records of every size from 1 byte up (so
// record headers and bodies straddle the server's receives), pipelined, are read whole and answered in order.
TEST_F(tls_listener_test, requests_in_many_small_records_are_read_whole) {
  serve(settings());
  auto client = connect_tls();
  ASSERT_FALSE(handshake(*client));
  std::vector<std::string> bodies;
  std::vector<char> pipelined;
  for (std::size_t i = 0; i < 4; ++i) {
    bodies.push_back(file_prefix(static_cast<std::uint32_t>(50000 + i)));
    const auto frame = frame_of(bodies.back());
    pipelined.insert(pipelined.end(), frame.begin(), frame.end());
  }
  std::size_t record = 1;
  for (std::size_t done = 0; done < pipelined.size(); record = record % 700 + 1) {
    const auto n = std::min(record, pipelined.size() - done);
    done += client->write_some(asio::buffer(pipelined.data() + done, n));  // one record per call
  }
  for (const auto& body : bodies) {
    const auto answer = read_answer(*client);
    EXPECT_TRUE(answer == "User:ANONYMOUS\n" + body) << "the answer to a request of " << body.size() << " bytes";
  }
}

TEST_F(tls_listener_test, the_principal_is_the_mapped_certificate_subject_or_anonymous) {
  serve(settings(config::client_auth::requested), "RULE:^CN=([^,]+).*$/$1/L,DEFAULT");
  auto anonymous = connect_tls();
  ASSERT_FALSE(handshake(*anonymous));
  EXPECT_EQ(round_trip(*anonymous, "who"), "User:ANONYMOUS\nwho");

  const auto alice = ca_.client_certificate("/O=Ferry tests/OU=Writers/CN=Alice");
  auto client = connect_tls(&alice);
  ASSERT_FALSE(handshake(*client));
  EXPECT_EQ(round_trip(*client, "who"), "User:alice\nwho");
  EXPECT_TRUE(failures(0).empty());
}

// Kafka refuses a client whose subject no rule maps; the failure is reported.
TEST_F(tls_listener_test, a_client_no_rule_maps_is_refused) {
  serve(settings(config::client_auth::requested), "RULE:^CN=([^,]+).*$/$1/L");
  const auto nameless = ca_.client_certificate("/O=Ferry tests/OU=No common name");
  auto client = connect_tls(&nameless);
  // TLS 1.3: the client's handshake ends before the server has looked at its certificate.
  if (!handshake(*client)) asio::write(*client, asio::buffer(frame_of("who")));
  EXPECT_TRUE(wait_for_close(*client, client_io_, std::chrono::seconds(5)));
  EXPECT_EQ(failures(1), std::vector<std::string>{"no principal mapping rule matches"});
}

// ssl.client.auth=required: no certificate, no connection; the listener goes on serving others.
TEST_F(tls_listener_test, a_required_client_certificate_is_required) {
  serve(settings(config::client_auth::required));
  auto without = connect_tls();
  if (!handshake(*without)) {
    boost::system::error_code ignored;
    asio::write(*without, asio::buffer(frame_of("who")), ignored);
  }
  EXPECT_TRUE(wait_for_close(*without, client_io_, std::chrono::seconds(5)));
  EXPECT_EQ(failures(1).size(), 1U);

  const auto bob = ca_.client_certificate("/CN=bob");
  auto with = connect_tls(&bob);
  ASSERT_FALSE(handshake(*with));
  EXPECT_EQ(round_trip(*with, "who"), "User:CN=bob\nwho");
  EXPECT_EQ(failures(1).size(), 1U);
}

// A client speaking Kafka in plaintext to a TLS listener fails the handshake and is closed; nothing else is hurt.
TEST_F(tls_listener_test, a_plaintext_client_is_refused) {
  serve(settings());
  tcp::socket plaintext(client_io_);
  plaintext.connect({asio::ip::make_address("127.0.0.1"), server_->bound_port()});
  // ApiVersions v0 with correlation id 1 and client id "x".
  const std::string api_versions{"\x00\x12\x00\x00\x00\x00\x00\x01\x00\x01x", 11};
  asio::write(plaintext, asio::buffer(frame_of(api_versions)));
  const auto closed = wait_for_close(plaintext, client_io_, std::chrono::seconds(5));
  ASSERT_TRUE(closed);
  EXPECT_NE(*closed, asio::error::message_size) << "the server answered in plaintext";
  EXPECT_EQ(failures(1).size(), 1U);

  auto good = connect_tls();
  ASSERT_FALSE(handshake(*good));
  EXPECT_EQ(round_trip(*good, "still here"), "User:ANONYMOUS\nstill here");
}

// A rotated keystore file, once check_files() has read it, is what new connections see; a connection opened
// before keeps its context and goes on working.
TEST_F(tls_listener_test, a_rotated_certificate_serves_new_connections_only) {
  const auto tls = settings();
  serve(tls);
  auto before = connect_tls();
  ASSERT_FALSE(handshake(*before));
  EXPECT_EQ(round_trip(*before, "one"), "User:ANONYMOUS\none");
  EXPECT_EQ(X509_cmp(SSL_get0_peer_certificate(before->native_handle()), server_certificate_.certificate()), 0);

  const auto renewed = ca_.server_certificate();
  ASSERT_NE(X509_cmp(renewed.certificate(), server_certificate_.certificate()), 0);
  testing::write_file(dir_.path(), "keystore.pem", testing::keystore_pem(renewed));
  ASSERT_TRUE(contexts_->check_files());

  auto after = connect_tls();
  ASSERT_FALSE(handshake(*after));
  EXPECT_EQ(X509_cmp(SSL_get0_peer_certificate(after->native_handle()), renewed.certificate()), 0);
  EXPECT_EQ(round_trip(*after, "new"), "User:ANONYMOUS\nnew");
  EXPECT_EQ(round_trip(*before, "two"), "User:ANONYMOUS\ntwo");
}

// connections.max.idle.ms bounds the handshake: a client that connects and never says hello is closed.
TEST_F(tls_listener_test, a_client_that_never_says_hello_is_closed_after_the_idle_time) {
  serve(settings(), "DEFAULT",
        {.max_request_bytes = 1 << 20, .max_idle_ms = 300, .on_idle_close = [this] { ++idle_closes_; }});
  tcp::socket silent(client_io_);
  silent.connect({asio::ip::make_address("127.0.0.1"), server_->bound_port()});
  const auto started = std::chrono::steady_clock::now();
  const auto closed = wait_for_close(silent, client_io_, std::chrono::seconds(5));
  const auto waited = std::chrono::steady_clock::now() - started;
  ASSERT_TRUE(closed) << "still open after 5 s";
  EXPECT_EQ(*closed, asio::error::eof);
  EXPECT_GE(waited, std::chrono::milliseconds(250));
  for (int i = 0; i < 400 && idle_closes_.load() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(idle_closes_.load(), 1);
  // Counted as an idle connection, not as a failed handshake.
  EXPECT_TRUE(failures(0).empty());
}

}  // namespace
}  // namespace ferry::security
