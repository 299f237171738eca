// Feeds arbitrary bytes to every SCRAM message parser, to a server exchange as its client-first and, after a
// good client-first, as its client-final, and to a client as the server-final. Whatever parses must format
// again, and nothing may crash, leak or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

#include "security/scram_client.h"
#include "security/scram_messages.h"
#include "security/scram_server.h"

namespace {
using namespace ferry;
using namespace ferry::security;

// "user" with password "pencil" (RFC 7677).
class one_user final : public credential_source {
 public:
  one_user() : credential_(derive_credential(scram_mechanism::sha256, "pencil", "salt", min_scram_iterations)) {}
  [[nodiscard]] std::optional<scram_credential> find(std::string_view user, scram_mechanism m) const override {
    if (user != "user" || m != scram_mechanism::sha256) return std::nullopt;
    return credential_;
  }

 private:
  scram_credential credential_;
};

void respond(sasl_server_exchange& exchange, std::string_view token) {
  boost::asio::io_context io;
  boost::asio::co_spawn(
      io,
      [&]() -> boost::asio::awaitable<void> {
        auto reply = exchange.respond(token);
        // NOLINTNEXTLINE(clang-analyzer-core.CallAndMessage): Asio's frame state, analysed without a caller.
        (void)co_await std::move(reply);
      },
      boost::asio::detached);
  io.run();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const one_user users;
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  if (auto first = parse_client_first(text)) {
    if (first.value().gs2_header.size() + first.value().bare.size() != text.size()) std::abort();
  }
  if (auto server_first = parse_server_first(text)) (void)format_server_first(server_first.value());
  if (auto final_message = parse_client_final(text)) {
    (void)format_client_final(final_message.value().without_proof, final_message.value().proof);
  }
  if (auto server_final = parse_server_final(text)) (void)format_server_final(server_final.value().signature);

  auto as_client_first = make_scram_exchange(scram_mechanism::sha256, users);
  respond(*as_client_first, text);
  respond(*as_client_first, text);

  // A fixed server nonce, so that the seeds reach the proof's check with "r=fuzzserver".
  auto as_client_final = make_scram_exchange(scram_mechanism::sha256, users, "server");
  respond(*as_client_final, "n,,n=user,r=fuzz");
  respond(*as_client_final, text);
  if (as_client_final->complete()) std::abort();  // a proof guessed by a fuzzer means a broken check

  const scram_client client(scram_mechanism::sha256, "user", "pencil");
  (void)client.verify_server_final(text);
  return 0;
}
