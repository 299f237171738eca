#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "net/peer_security.h"

namespace ferry::security {

// The broker's own SASL logins to other brokers (net::peer_client): a factory of client exchanges for
// `mechanism` (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) with the brokers' user and password. errc::malformed_message
// for a mechanism that is none of them.
result<std::function<std::unique_ptr<net::sasl_client_exchange>()>> make_sasl_client_factory(
    const std::string& mechanism, std::string user, std::string password);

}  // namespace ferry::security
