#include "net/host_address.h"

#include <cstdio>

namespace ferry::net {

std::string java_host_address(const boost::asio::ip::address& address) {
  if (address.is_v4()) return address.to_string();
  const auto v6 = address.to_v6();
  if (v6.is_v4_mapped()) return boost::asio::ip::make_address_v4(boost::asio::ip::v4_mapped, v6).to_string();
  const auto bytes = v6.to_bytes();
  std::string out;
  for (std::size_t group = 0; group < 8; ++group) {
    char text[8];
    const unsigned value = (static_cast<unsigned>(bytes[group * 2]) << 8U) | bytes[group * 2 + 1];
    std::snprintf(text, sizeof text, group == 0 ? "%x" : ":%x", value);
    out += text;
  }
  if (v6.scope_id() != 0) out += "%" + std::to_string(v6.scope_id());
  return out;
}

}  // namespace ferry::net
