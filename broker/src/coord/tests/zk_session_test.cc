#include "coord/zk_session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "coord/errc.h"
#include "coord/testing/zookeeper_server.h"
#include "coord/tests/zk_test_support.h"

namespace ferry::coord {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<zk_session> open(const std::string& connect, std::function<void()> on_new_session = {}) {
  zk_session_options options;
  options.on_new_session = std::move(on_new_session);
  return test::open_session(connect, std::move(options));
}

// Collects watch events for the test thread.
struct event_log {
  std::mutex mutex;
  std::vector<std::pair<watch_event, std::string>> events;

  watcher record() {
    return [this](watch_event e, const std::string& path) {
      std::lock_guard lock(mutex);
      events.emplace_back(e, path);
    };
  }
  std::size_t size() {
    std::lock_guard lock(mutex);
    return events.size();
  }
  std::pair<watch_event, std::string> at(std::size_t i) {
    std::lock_guard lock(mutex);
    return events.at(i);
  }
};

TEST(ZkSession, CreateGetSetRemove) {
  auto zk = open(test::fresh_connect());
  ASSERT_TRUE(zk);
  ASSERT_EQ(zk->create("/a", "one", create_mode::persistent).value(), "/a");
  EXPECT_EQ(zk->create("/a", "again", create_mode::persistent).error(), errc::node_exists);
  EXPECT_EQ(zk->create("/missing/child", "", create_mode::persistent).error(), errc::no_node);
  EXPECT_EQ(zk->create("/x/y/z", "deep", create_mode::persistent, true).value(), "/x/y/z");

  auto got = zk->get("/a");
  ASSERT_TRUE(got);
  EXPECT_EQ(got.value().data, "one");
  EXPECT_EQ(got.value().stat.version, 0);
  EXPECT_EQ(got.value().stat.ephemeral_owner, 0);

  EXPECT_EQ(zk->set("/a", "two", 0).value().version, 1);
  EXPECT_EQ(zk->set("/a", "three", 0).error(), errc::bad_version);
  EXPECT_EQ(zk->get("/a").value().data, "two");
  EXPECT_EQ(zk->get("/nope").error(), errc::no_node);

  EXPECT_EQ(zk->remove("/x/y").error(), errc::not_empty);
  EXPECT_EQ(zk->remove("/a", 0).error(), errc::bad_version);
  EXPECT_TRUE(zk->remove("/a", 1));
  EXPECT_FALSE(zk->exists("/a").value());
  EXPECT_EQ(zk->exists("/x/y/z").value()->version, 0);
}

TEST(ZkSession, ChildrenSequentialAndLargeNodes) {
  auto zk = open(test::fresh_connect());
  ASSERT_TRUE(zk);
  ASSERT_TRUE(zk->create("/q", "", create_mode::persistent));
  const auto first = zk->create("/q/item_", "1", create_mode::persistent_sequential).value();
  const auto second = zk->create("/q/item_", "2", create_mode::persistent_sequential).value();
  EXPECT_EQ(first, "/q/item_0000000000");
  EXPECT_EQ(second, "/q/item_0000000001");
  auto children = zk->get_children("/q").value();
  std::sort(children.begin(), children.end());
  EXPECT_EQ(children, (std::vector<std::string>{"item_0000000000", "item_0000000001"}));

  const std::string big(200'000, 'b');
  ASSERT_TRUE(zk->create("/big", big, create_mode::persistent));
  EXPECT_EQ(zk->get("/big").value().data, big);
  ASSERT_TRUE(zk->create("/empty", "", create_mode::persistent));
  EXPECT_EQ(zk->get("/empty").value().data, "");
}

TEST(ZkSession, EphemeralNodesEndWithTheSession) {
  const auto connect = test::fresh_connect();
  auto observer = open(connect);
  auto owner = open(connect);
  ASSERT_TRUE(observer && owner);
  ASSERT_TRUE(owner->create("/e", "", create_mode::ephemeral));
  EXPECT_EQ(observer->exists("/e").value()->ephemeral_owner, owner->session_id());
  owner.reset();
  EXPECT_FALSE(observer->exists("/e").value());
}

TEST(ZkSession, WatchesFireOnce) {
  auto zk = open(test::fresh_connect());
  ASSERT_TRUE(zk);
  event_log log;
  ASSERT_TRUE(zk->create("/w", "0", create_mode::persistent));
  ASSERT_TRUE(zk->get("/w", log.record()));
  ASSERT_TRUE(zk->get_children("/w", log.record()));
  ASSERT_FALSE(zk->exists("/later", log.record()).value());

  ASSERT_TRUE(zk->set("/w", "1"));
  ASSERT_TRUE(test::eventually([&] { return log.size() == 1; }));
  EXPECT_EQ(log.at(0), std::make_pair(watch_event::changed, std::string("/w")));
  ASSERT_TRUE(zk->create("/w/c", "", create_mode::persistent));
  ASSERT_TRUE(test::eventually([&] { return log.size() == 2; }));
  EXPECT_EQ(log.at(1), std::make_pair(watch_event::children_changed, std::string("/w")));
  ASSERT_TRUE(zk->create("/later", "", create_mode::persistent));
  ASSERT_TRUE(test::eventually([&] { return log.size() == 3; }));
  EXPECT_EQ(log.at(2), std::make_pair(watch_event::created, std::string("/later")));

  // One-shot: further changes are not reported. The last event below proves the earlier ones were processed.
  ASSERT_TRUE(zk->set("/w", "2"));
  ASSERT_TRUE(zk->create("/w/d", "", create_mode::persistent));
  ASSERT_TRUE(zk->get("/later", log.record()));
  ASSERT_TRUE(zk->remove("/later"));
  ASSERT_TRUE(test::eventually([&] { return log.size() >= 4; }));
  EXPECT_EQ(log.size(), 4u);
  EXPECT_EQ(log.at(3), std::make_pair(watch_event::deleted, std::string("/later")));
}

TEST(ZkSession, MultiIsAllOrNothing) {
  auto zk = open(test::fresh_connect());
  ASSERT_TRUE(zk);
  ASSERT_TRUE(zk->create("/m", "0", create_mode::persistent));
  std::size_t failed = 99;
  const std::vector<zk_op> doomed = {zk_op::create("/m1", "x"), zk_op::create("/m", "y")};
  EXPECT_EQ(zk->multi(doomed, &failed).error(), errc::node_exists);
  EXPECT_EQ(failed, 1u);
  EXPECT_FALSE(zk->exists("/m1").value());

  const std::vector<zk_op> stale = {zk_op::create("/m1", "x"), zk_op::check("/m", 5)};
  EXPECT_EQ(zk->multi(stale, &failed).error(), errc::bad_version);
  EXPECT_EQ(failed, 1u);

  const std::vector<zk_op> good = {zk_op::check("/m", 0), zk_op::create("/m1", "x"), zk_op::set("/m", "1", 0),
                                   zk_op::create("/m1/s_", "", create_mode::persistent_sequential)};
  ASSERT_TRUE(zk->multi(good));
  EXPECT_EQ(zk->get("/m").value().data, "1");
  EXPECT_EQ(zk->get_children("/m1").value(), std::vector<std::string>{"s_0000000000"});
  ASSERT_TRUE(zk->multi(std::vector<zk_op>{zk_op::remove("/m1/s_0000000000"), zk_op::remove("/m1")}));
  EXPECT_FALSE(zk->exists("/m1").value());
}

TEST(ZkSession, CreatesItsChroot) {
  const auto base = test::fresh_connect();
  const auto chroot = base.substr(base.find('/')) + "/nested";
  auto chrooted = open(base + "/nested");
  ASSERT_TRUE(chrooted);
  ASSERT_TRUE(chrooted->create("/inside", "", create_mode::persistent));
  auto root = open(test::shared_server().connect_string());
  ASSERT_TRUE(root);
  EXPECT_TRUE(root->exists(chroot + "/inside").value());
}

TEST(ZkSession, ConnectTimesOutWithoutServer) {
  // A port nobody listens on: connect fails after connect_timeout, not before, and not forever.
  zk_session_options options;
  options.connect = "127.0.0.1:1";
  options.connect_timeout = 500ms;
  const auto started = std::chrono::steady_clock::now();
  auto session = zk_session::connect(options);
  ASSERT_FALSE(session);
  EXPECT_EQ(session.error(), errc::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST(ZkSession, ConnectTimesOutOnUnresolvableHosts) {
  zk_session_options options;
  options.connect = "zookeeper.invalid:2181";
  options.connect_timeout = 500ms;
  auto session = zk_session::connect(options);
  ASSERT_FALSE(session);
  EXPECT_EQ(session.error(), errc::timeout);
}

TEST(ZkSession, ReplacesAnExpiredSession) {
  const auto connect = test::fresh_connect();
  std::atomic<int> new_sessions{0};
  auto zk = open(connect, [&] { ++new_sessions; });
  auto observer = open(connect);
  ASSERT_TRUE(zk && observer);
  ASSERT_TRUE(zk->create("/mine", "", create_mode::ephemeral));
  const auto old_id = zk->session_id();

  testing::expire_session(connect, zk->current_credentials());
  // Expiry deletes the session's ephemeral nodes at once; the session notices and opens a new one.
  EXPECT_FALSE(observer->exists("/mine").value());
  ASSERT_TRUE(test::eventually([&] { return new_sessions.load() == 1; }));
  EXPECT_NE(zk->session_id(), old_id);
  ASSERT_TRUE(zk->create("/mine", "", create_mode::ephemeral));
  EXPECT_EQ(observer->exists("/mine").value()->ephemeral_owner, zk->session_id());
}

TEST(ZkSession, RidesOutAServerRestart) {
  testing::zookeeper_server server;
  auto zk = open(server.connect_string());
  ASSERT_TRUE(zk);
  ASSERT_TRUE(zk->create("/eph", "", create_mode::ephemeral));
  const auto id = zk->session_id();
  server.stop();
  server.restart();
  // The call waits for the reconnect; the session (and its ephemeral node) survived the restart.
  EXPECT_TRUE(zk->create("/after", "", create_mode::persistent));
  EXPECT_EQ(zk->session_id(), id);
  EXPECT_EQ(zk->exists("/eph").value()->ephemeral_owner, id);
}

}  // namespace
}  // namespace ferry::coord
