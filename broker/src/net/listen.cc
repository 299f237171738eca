#include "net/listen.h"

namespace ferry::net {
namespace asio = boost::asio;

result<std::uint16_t> open_listener(asio::ip::tcp::acceptor& acceptor, const std::string& host, std::uint16_t port) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host.empty() ? "0.0.0.0" : host, ec);
  if (ec) return std::error_code(ec);
  const asio::ip::tcp::endpoint endpoint(address, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return std::error_code(ec);
  return acceptor.local_endpoint().port();
}

}  // namespace ferry::net
