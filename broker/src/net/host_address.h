#pragma once

#include <string>

#include <boost/asio/ip/address.hpp>

namespace ferry::net {

// An address as Java's InetAddress.getHostAddress writes it, which is what Kafka compares an ACL's host with:
// IPv4 dotted; an IPv4-mapped IPv6 address as the IPv4 one (Java makes those Inet4Address); other IPv6 as eight
// lower-case hex groups without leading zeros and without "::" compression ("0:0:0:0:0:0:0:1"), with
// "%<scope id>" when it has one.
[[nodiscard]] std::string java_host_address(const boost::asio::ip::address& address);

}  // namespace ferry::net
