#include "net/host_address.h"

#include <gtest/gtest.h>

namespace ferry::net {
namespace {

using boost::asio::ip::make_address;

// What Java's InetAddress.getHostAddress prints for the same addresses, which Kafka's ACL hosts are matched
// against as strings.
TEST(host_address, writes_addresses_as_java_does) {
  EXPECT_EQ(java_host_address(make_address("127.0.0.1")), "127.0.0.1");
  EXPECT_EQ(java_host_address(make_address("::1")), "0:0:0:0:0:0:0:1");
  EXPECT_EQ(java_host_address(make_address("2001:db8::0a:ff00")), "2001:db8:0:0:0:0:a:ff00");
  EXPECT_EQ(java_host_address(make_address("::ffff:10.1.2.3")), "10.1.2.3");
  EXPECT_EQ(java_host_address(make_address("fe80::1%3")), "fe80:0:0:0:0:0:0:1%3");
}

}  // namespace
}  // namespace ferry::net
