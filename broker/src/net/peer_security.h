#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/ssl/context.hpp>

#include "base/result.h"

namespace ferry::net {

// The client side of one SASL login (PLAIN or SCRAM), as the broker's own outgoing connections perform it.
class sasl_client_exchange {
 public:
  virtual ~sasl_client_exchange() = default;
  virtual std::string first_token() = 0;
  // The next token for the server's `server_token`; nullopt once the exchange is complete (for SCRAM, after the
  // server's signature has verified). An error when the server's token is wrong.
  virtual result<std::optional<std::string>> respond(std::string_view server_token) = 0;
};

// How the broker's connections to other brokers (the inter-broker listener) are secured: TLS with the peer's
// certificate checked, and a SASL login. Shared by every peer_client; the app builds it from the inter-broker
// listener's settings.
struct peer_security {
  // The TLS context for a new connection (it follows the inter-broker listener's files); empty: plaintext.
  std::function<std::shared_ptr<boost::asio::ssl::context>()> tls;
  bool verify_host = true;     // ssl.endpoint.identification.algorithm=https
  std::string sasl_mechanism;  // empty: no SASL
  std::function<std::unique_ptr<sasl_client_exchange>()> sasl_exchange;
  // Who logs in, for the login's request headers and for messages about it.
  std::string client_id = "ferry-broker";
  std::string login_setting = "inter.broker.sasl.username";  // the setting that names the login's user
  std::string mechanism_setting = "sasl.mechanism.inter.broker.protocol";
};

}  // namespace ferry::net
