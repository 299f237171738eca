#pragma once

#include <cstdint>
#include <string>

#include <boost/asio/ip/tcp.hpp>

#include "base/result.h"

namespace ferry::net {

// Opens, binds and listens on host:port (empty host: every interface), for the Kafka and the admin
// listeners alike. Returns the bound port (useful when `port` is 0); the error is the OS's, e.g. the port
// already in use.
result<std::uint16_t> open_listener(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host,
                                    std::uint16_t port);

}  // namespace ferry::net
