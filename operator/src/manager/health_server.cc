#include "manager/health_server.h"

#include <openssl/evp.h>
#include <prometheus/text_serializer.h>

#include <cctype>
#include <optional>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include "base/guarded.h"
#include "base/log.h"

namespace ferry::manager {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);
using json = nlohmann::json;
using verdict = metrics_authorizer::verdict;

std::string sha256(std::string_view text) {
  std::string digest(EVP_MAX_MD_SIZE, '\0');
  unsigned length = 0;
  EVP_Digest(text.data(), text.size(), reinterpret_cast<unsigned char*>(digest.data()), &length, EVP_sha256(), nullptr);
  digest.resize(length);
  return digest;
}

// The token of "Bearer <token>" (the scheme is case-insensitive, RFC 7235), or empty.
std::string bearer_token(std::string_view authorization) {
  constexpr std::string_view scheme = "bearer ";
  if (authorization.size() <= scheme.size()) return {};
  for (std::size_t i = 0; i < scheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(authorization[i])) != scheme[i]) return {};
  }
  auto token = authorization.substr(scheme.size());
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
  return std::string(token);
}

// A review's status, an empty object when the answer has none.
json status_of(const std::string& body) {
  const auto answer = json::parse(body, nullptr, false);
  if (!answer.is_object() || !answer.contains("status") || !answer["status"].is_object()) return json::object();
  return answer["status"];
}

// An answer handed from the API server's io_context to the health server's. The health server's coroutine owns
// it and the API side only sees it weakly, so neither io_context ever holds a handler of the other: they stop and
// are destroyed in any order.
struct handoff {
  explicit handoff(const asio::any_io_executor& executor) : wake(executor) {}
  asio::steady_timer wake;
  std::optional<result<kube::http_response>> answer;  // the health server's thread only
};

asio::awaitable<void> send_for(kube::api_client& api, std::weak_ptr<handoff> waiting, asio::any_io_executor executor,
                               std::string path, std::string body) {
  auto answer = co_await api.async_send(kube::api_client::verb::post, std::move(path), std::move(body));
  if (auto state = waiting.lock()) {
    asio::post(executor, [state, answer = std::move(answer)]() mutable {
      state->answer = std::move(answer);
      state->wake.cancel();
    });
  }
}

asio::awaitable<result<kube::http_response>> review_through(kube::api_client& api, std::string path, std::string body) {
  auto executor = co_await asio::this_coro::executor;
  auto state = std::make_shared<handoff>(executor);
  asio::co_spawn(api.io(), send_for(api, state, executor, std::move(path), std::move(body)),
                 guarded_detached("a /metrics token review"));
  state->wake.expires_after(std::chrono::seconds(10));
  (void)co_await state->wake.async_wait(use_tuple);
  if (!state->answer) co_return std::make_error_code(std::errc::timed_out);
  co_return std::move(*state->answer);
}

}  // namespace

metrics_authorizer::review_fn api_server_reviews(kube::api_client& api) {
  return [&api](std::string path, std::string body) { return review_through(api, std::move(path), std::move(body)); };
}

metrics_authorizer::metrics_authorizer(review_fn review, std::chrono::seconds ttl, std::size_t max_entries,
                                       const kube::clock_source& clock)
    : review_(std::move(review)), ttl_(ttl), max_entries_(max_entries), clock_(clock) {}

asio::awaitable<verdict> metrics_authorizer::check(std::string_view authorization) {
  const auto token = bearer_token(authorization);
  if (token.empty()) co_return verdict::unauthenticated;
  const auto digest = sha256(token);
  {
    std::lock_guard lock(mutex_);
    const auto at = cache_.find(digest);
    if (at != cache_.end() && clock_.now() < at->second.expires) co_return at->second.answer;
  }
  const auto answer = co_await review(token);
  if (answer != verdict::unavailable) remember(digest, answer);  // a failed review is asked again next time
  co_return answer;
}

void metrics_authorizer::remember(const std::string& digest, verdict answer) {
  std::lock_guard lock(mutex_);
  const auto now = clock_.now();
  if (cache_.size() >= max_entries_) {
    std::erase_if(cache_, [now](const auto& entry) { return entry.second.expires <= now; });
    if (cache_.size() >= max_entries_) cache_.clear();  // bounded; only costs the reviews again
  }
  cache_[digest] = cached{answer, now + ttl_};
}

asio::awaitable<verdict> metrics_authorizer::review(const std::string& token) {
  const json token_review = {
      {"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", token}}}};
  const auto authenticated = co_await review_("/apis/authentication.k8s.io/v1/tokenreviews", token_review.dump());
  // Neither the request nor the answer's body is logged: both may hold the token.
  if (!authenticated || (authenticated.value().status != 200 && authenticated.value().status != 201)) {
    FERRY_LOG(warn, "manager") << "cannot review a /metrics token: "
                               << (authenticated ? "HTTP " + std::to_string(authenticated.value().status) +
                                                       " (the operator needs create on tokenreviews)"
                                                 : authenticated.error().message());
    co_return verdict::unavailable;
  }
  const auto status = status_of(authenticated.value().body);
  if (!status.value("authenticated", false)) co_return verdict::unauthenticated;
  auto user = status.value("user", json::object());
  if (!user.is_object()) user = json::object();
  json spec = {{"user", user.value("username", "")},
               {"nonResourceAttributes", {{"path", "/metrics"}, {"verb", "get"}}}};
  for (const auto* field : {"uid", "groups", "extra"}) {
    if (user.contains(field)) spec[field] = user[field];
  }
  const json access_review = {
      {"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", spec}};
  const auto authorized = co_await review_("/apis/authorization.k8s.io/v1/subjectaccessreviews", access_review.dump());
  if (!authorized || (authorized.value().status != 200 && authorized.value().status != 201)) {
    FERRY_LOG(warn, "manager") << "cannot review access to /metrics: "
                               << (authorized ? "HTTP " + std::to_string(authorized.value().status) +
                                                    " (the operator needs create on subjectaccessreviews)"
                                              : authorized.error().message());
    co_return verdict::unavailable;
  }
  if (status_of(authorized.value().body).value("allowed", false)) co_return verdict::allowed;
  FERRY_LOG(debug, "manager") << "/metrics refused to " << user.value("username", "") << ": not allowed to get it";
  co_return verdict::forbidden;
}

result<std::unique_ptr<health_server>> health_server::start(const std::string& address, std::uint16_t port,
                                                            std::shared_ptr<prometheus::Registry> registry,
                                                            std::function<std::string()> not_ready,
                                                            std::shared_ptr<metrics_authorizer> metrics_auth) {
  std::unique_ptr<health_server> server(new health_server());
  server->registry_ = std::move(registry);
  server->not_ready_ = std::move(not_ready);
  server->metrics_auth_ = std::move(metrics_auth);
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(address, ec);
  if (ec) {
    FERRY_LOG(error, "manager") << "--http-address '" << address << "' is not an IP address";
    return std::error_code(ec);
  }
  server->acceptor_ = std::make_unique<tcp::acceptor>(server->io_);
  const tcp::endpoint endpoint(ip, port);
  server->acceptor_->open(endpoint.protocol(), ec);
  if (!ec) server->acceptor_->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) server->acceptor_->bind(endpoint, ec);
  if (!ec) server->acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    FERRY_LOG(error, "manager") << "cannot listen on " << address << ":" << port
                                << " (--http-address): " << ec.message();
    return std::error_code(ec);
  }
  server->port_ = server->acceptor_->local_endpoint().port();
  asio::co_spawn(server->io_, server->accept(), guarded_detached("the HTTP port's accept loop"));
  server->thread_ = std::thread([s = server.get()] { s->io_.run(); });
  return server;
}

health_server::~health_server() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

asio::awaitable<void> health_server::accept() {
  for (;;) {
    auto [accept_error, socket] = co_await acceptor_->async_accept(use_tuple);
    if (accept_error == asio::error::operation_aborted) co_return;
    if (accept_error) continue;  // e.g. out of file descriptors for a moment: the next accept may succeed
    // Bounded: beyond the cap a client is turned away at once rather than queued behind the others.
    if (connections_ >= max_connections) {
      boost::system::error_code ignored;
      socket.close(ignored);
      continue;
    }
    ++connections_;
    asio::co_spawn(io_, serve(std::move(socket)), guarded_detached("an HTTP connection", [this] { --connections_; }));
  }
}

asio::awaitable<void> health_server::serve(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    // Each connection has its own coroutine, so a slow or silent client only holds itself up.
    stream.expires_after(read_timeout);
    http::request<http::string_body> request;
    auto [read_error, read] = co_await http::async_read(stream, buffer, request, use_tuple);
    if (read_error) co_return;
    http::response<http::string_body> response{http::status::ok, request.version()};
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    const auto target = std::string(request.target().substr(0, request.target().find('?')));
    const auto allowed = target != "/metrics" || !metrics_auth_
                             ? verdict::allowed
                             : co_await metrics_auth_->check(request[http::field::authorization]);
    if (allowed == verdict::unauthenticated) {
      response.result(http::status::unauthorized);
      response.set(http::field::www_authenticate, "Bearer");
      response.body() = "Unauthorized: /metrics needs a bearer token the API server accepts\n";
    } else if (allowed == verdict::forbidden) {
      response.result(http::status::forbidden);
      response.body() = "Forbidden: the token's user may not get /metrics (bind it to ferry-metrics-reader)\n";
    } else if (allowed == verdict::unavailable) {
      response.result(http::status::service_unavailable);
      response.body() = "cannot review the token now\n";
    } else if (target == "/metrics") {
      response.set(http::field::content_type, "text/plain; version=0.0.4");
      response.body() = prometheus::TextSerializer().Serialize(registry_->Collect());
    } else if (target == "/healthz") {
      response.body() = "ok\n";
    } else if (target == "/readyz") {
      const auto why = not_ready_();
      if (!why.empty()) response.result(http::status::service_unavailable);
      response.body() = why.empty() ? "ok\n" : why + "\n";
    } else {
      response.result(http::status::not_found);
      response.body() = "not found: try /metrics, /healthz or /readyz\n";
    }
    response.keep_alive(request.keep_alive());
    response.prepare_payload();
    stream.expires_after(read_timeout);
    auto [write_error, written] = co_await http::async_write(stream, response, use_tuple);
    if (write_error || !response.keep_alive()) co_return;
  }
}

}  // namespace ferry::manager
