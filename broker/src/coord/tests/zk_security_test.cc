#include "coord/zk_security.h"

#include <gtest/gtest.h>

#include "coord/errc.h"
#include "coord/tests/zk_test_support.h"
#include "coord/zk_lockdown.h"
#include "coord/zk_session.h"

namespace ferry::coord {
namespace {

std::unique_ptr<zk_session> open(const std::string& connect, zk_security security) {
  zk_session_options options;
  options.security = std::move(security);
  return test::open_session(connect, std::move(options));
}

zk_security identity(std::string user, std::string password, bool set_acl) {
  return {.digest_username = std::move(user), .digest_password = std::move(password), .set_acl = set_acl};
}

TEST(ZkSecurity, SensitivePathsAreKafkas) {
  EXPECT_TRUE(is_sensitive_path("/config/users"));
  EXPECT_TRUE(is_sensitive_path("/config/users/alice"));
  EXPECT_TRUE(is_sensitive_path("/delegation_token/tokens/t1"));
  EXPECT_FALSE(is_sensitive_path("/config"));
  EXPECT_FALSE(is_sensitive_path("/config/topics/users"));
  EXPECT_FALSE(is_sensitive_path("/config/users-archive"));
  EXPECT_FALSE(is_sensitive_path("/brokers/topics/t"));
}

TEST(ZkSecurity, LockedNodesAreReadableByAnyoneAndWritableByTheClusterIdentityOnly) {
  const auto connect = test::fresh_connect();
  auto cluster = open(connect, identity("ferry", "secret", true));
  ASSERT_TRUE(cluster);
  ASSERT_TRUE(cluster->create("/brokers/topics/t", "assignment", create_mode::persistent, true));
  ASSERT_TRUE(cluster->create("/config/users/alice", "credential", create_mode::persistent, true));
  ASSERT_TRUE(cluster->multi(std::vector{zk_op::create("/config/users/bob", "credential")}));

  auto anonymous = open(connect, {});
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->get("/brokers/topics/t").value().data, "assignment");
  EXPECT_EQ(anonymous->set("/brokers/topics/t", "rewritten").error(), errc::not_allowed);
  EXPECT_EQ(anonymous->remove("/brokers/topics/t").error(), errc::not_allowed);
  EXPECT_EQ(anonymous->create("/brokers/topics/u", "", create_mode::persistent).error(), errc::not_allowed);
  EXPECT_EQ(anonymous->get("/config/users/alice").error(), errc::not_allowed);
  EXPECT_EQ(anonymous->get("/config/users/bob").error(), errc::not_allowed);
  EXPECT_EQ(anonymous->get_children("/config/users").error(), errc::not_allowed);

  auto intruder = open(connect, identity("intruder", "secret", false));
  auto wrong_password = open(connect, identity("ferry", "guess", false));
  ASSERT_TRUE(intruder && wrong_password);
  for (auto* other : {intruder.get(), wrong_password.get()}) {
    EXPECT_EQ(other->set("/brokers/topics/t", "rewritten").error(), errc::not_allowed);
    EXPECT_EQ(other->get("/config/users/alice").error(), errc::not_allowed);
  }

  // Another writer of the cluster (a broker, the operator) logs in as the same identity.
  auto operator_session = open(connect, identity("ferry", "secret", true));
  ASSERT_TRUE(operator_session);
  EXPECT_TRUE(operator_session->set("/brokers/topics/t", "moved"));
  EXPECT_EQ(operator_session->get("/config/users/alice").value().data, "credential");
  EXPECT_TRUE(operator_session->remove("/config/users/bob"));
  EXPECT_EQ(anonymous->get("/brokers/topics/t").value().data, "moved");
}

TEST(ZkSecurity, WithoutSetAclNodesStayOpen) {
  const auto connect = test::fresh_connect();
  auto logged_in = open(connect, identity("ferry", "secret", false));
  ASSERT_TRUE(logged_in);
  ASSERT_TRUE(logged_in->create("/config/users/alice", "credential", create_mode::persistent, true));
  auto anonymous = open(connect, {});
  ASSERT_TRUE(anonymous);
  EXPECT_TRUE(anonymous->set("/config/users/alice", "changed"));
}

TEST(ZkSecurity, NodesMadeBeforeSetAclAreLockedOnceAndOthersLeftAlone) {
  const auto connect = test::fresh_connect();
  auto before = open(connect, {});
  ASSERT_TRUE(before);
  ASSERT_TRUE(before->create("/brokers/topics/t/partitions/0/state", "state", create_mode::persistent, true));
  ASSERT_TRUE(before->create("/config/users/alice", "credential", create_mode::persistent, true));
  ASSERT_TRUE(before->create("/another-application/data", "theirs", create_mode::persistent, true));

  auto cluster = open(connect, identity("ferry", "secret", true));
  ASSERT_TRUE(cluster);
  ASSERT_TRUE(cluster->create("/brokers/ids", "", create_mode::persistent));  // locked when made
  // The chroot, /brokers, /brokers/topics, .../t, .../partitions, .../0, .../state, /config, /config/users and
  // .../alice.
  EXPECT_EQ(lock_down_existing_nodes(*cluster).value(), 10U);
  EXPECT_EQ(lock_down_existing_nodes(*cluster).value(), 0U);

  EXPECT_EQ(before->get("/brokers/topics/t/partitions/0/state").value().data, "state");
  EXPECT_EQ(before->set("/brokers/topics/t/partitions/0/state", "forged").error(), errc::not_allowed);
  EXPECT_EQ(before->get("/config/users/alice").error(), errc::not_allowed);
  EXPECT_EQ(before->create("/intruder", "", create_mode::persistent).error(), errc::not_allowed);
  // Outside the cluster's root paths, nothing is touched.
  EXPECT_TRUE(before->set("/another-application/data", "still theirs"));
  EXPECT_TRUE(cluster->set("/brokers/topics/t/partitions/0/state", "moved"));
}

}  // namespace
}  // namespace ferry::coord
