#include "replication/partition_manager.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "model/testing/batch_builder.h"
#include "replication/errc.h"
#include "storage/tests/fixture.h"

namespace ferry::replication {
namespace {

coord::partition_info led_by(std::vector<broker_id> replicas, broker_id leader, std::int32_t epoch) {
  coord::partition_info info;
  info.replicas = std::move(replicas);
  info.state = coord::partition_state{leader, leader_epoch{epoch}, {leader}, 1, 0};
  return info;
}

class partition_manager_test : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ferry-pm-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    config_.broker_id = 1;
    config_.log_dirs = {dir_.string()};
    logs_ = storage::log_manager::open({.fs = io::posix_file_system(), .clock = &clock_, .log_dirs = {dir_}}).value();
    manager_ = std::make_unique<partition_manager>(*logs_, config_, metrics_);
  }
  void TearDown() override {
    (void)manager_->close_all();
    std::filesystem::remove_all(dir_);
  }

  system_clock clock_;
  config::broker_config config_;
  metrics::broker_metrics metrics_;
  std::filesystem::path dir_;
  std::unique_ptr<storage::log_manager> logs_;
  std::unique_ptr<partition_manager> manager_;
};

TEST_F(partition_manager_test, hosts_assigned_replicas_and_leads_as_the_state_says) {
  coord::cluster_view view;
  auto& topic = view.topics["orders"];
  topic.partitions[partition_id{0}] = led_by({broker_id{1}, broker_id{2}}, broker_id{1}, 3);
  topic.partitions[partition_id{1}] = led_by({broker_id{2}, broker_id{1}}, broker_id{2}, 0);
  topic.partitions[partition_id{2}] = led_by({broker_id{2}, broker_id{3}}, broker_id{2}, 0);  // not ours
  manager_->reconcile(view);

  const auto led = manager_->leader_for({"orders", partition_id{0}});
  ASSERT_TRUE(led);
  EXPECT_EQ(led.value()->epoch(), leader_epoch{3});
  EXPECT_EQ(manager_->leader_for({"orders", partition_id{1}}).error(), errc::not_leader);
  EXPECT_EQ(manager_->leader_for({"orders", partition_id{2}}).error(), errc::unknown_partition);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "orders-0"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "orders-1"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "orders-2"));
  EXPECT_EQ(manager_->all().size(), 2u);
}

// Readiness: partitions are in line once a view that lists this broker as live has been applied.
TEST_F(partition_manager_test, is_in_line_only_after_a_view_with_this_broker_live) {
  coord::cluster_view view;
  view.topics["orders"].partitions[partition_id{0}] = led_by({broker_id{1}}, broker_id{1}, 0);
  EXPECT_FALSE(manager_->in_line_with_a_live_view());
  manager_->reconcile(view);
  EXPECT_FALSE(manager_->in_line_with_a_live_view());
  view.brokers[broker_id{1}] = coord::broker_info{};
  manager_->reconcile(view);
  EXPECT_TRUE(manager_->in_line_with_a_live_view());
}

TEST_F(partition_manager_test, follows_config_overrides_and_deletes_removed_topics) {
  coord::cluster_view view;
  view.topics["t"].partitions[partition_id{0}] = led_by({broker_id{1}}, broker_id{1}, 0);
  view.topics["t"].config = {{"max.message.bytes", "2000"}};
  manager_->reconcile(view);
  auto p = manager_->leader_for({"t", partition_id{0}}).value();
  EXPECT_EQ(p->settings()->max_message_bytes, 2000);
  auto batch = model::testing::build_simple_batch(2);
  ASSERT_TRUE(p->append(batch));

  view.topics["t"].config = {};
  manager_->reconcile(view);
  EXPECT_EQ(p->settings()->max_message_bytes, config::topic_settings{}.max_message_bytes);

  // Deleted the way Kafka deletes: marked in /admin/delete_topics, which stops the replica and deletes its log
  // (what this broker then acknowledges to the controller), then gone.
  view.topics["other"].partitions[partition_id{0}] = led_by({broker_id{2}}, broker_id{2}, 0);
  view.topics["other"].marked_for_deletion = true;  // not a replica here: nothing to acknowledge
  EXPECT_TRUE(manager_->deletions_done(view).empty());
  view.topics["t"].marked_for_deletion = true;
  EXPECT_TRUE(manager_->deletions_done(view).empty());  // its log is still here
  manager_->reconcile(view);
  EXPECT_EQ(manager_->leader_for({"t", partition_id{0}}).error(), errc::unknown_partition);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "t-0"));
  EXPECT_EQ(manager_->deletions_done(view), std::vector<std::string>{"t"});
  view.topics.clear();
  manager_->reconcile(view);
  EXPECT_TRUE(manager_->deletions_done(view).empty());
  EXPECT_TRUE(storage::testing::holds_only_its_lock(dir_));
}

TEST_F(partition_manager_test, leadership_moves_with_the_epoch) {
  coord::cluster_view view;
  view.topics["t"].partitions[partition_id{0}] = led_by({broker_id{1}, broker_id{2}}, broker_id{2}, 0);
  manager_->reconcile(view);
  EXPECT_EQ(manager_->leader_for({"t", partition_id{0}}).error(), errc::not_leader);
  view.topics["t"].partitions[partition_id{0}] = led_by({broker_id{1}, broker_id{2}}, broker_id{1}, 1);
  manager_->reconcile(view);
  const auto led = manager_->leader_for({"t", partition_id{0}});
  ASSERT_TRUE(led);
  EXPECT_EQ(led.value()->epoch(), leader_epoch{1});
}

// A state naming this broker leader that was written before its registration (a restart, a new session) is
// an earlier run's: it leads only once the controller has elected it again.
TEST_F(partition_manager_test, a_leadership_from_before_this_brokers_registration_waits_for_the_controller) {
  coord::cluster_view view;
  view.brokers[broker_id{1}] = coord::broker_info{.id = broker_id{1}, .epoch = 100};
  auto info = led_by({broker_id{1}, broker_id{2}}, broker_id{1}, 4);
  info.state->written_zxid = 90;
  view.topics["t"].partitions[partition_id{0}] = info;
  manager_->reconcile(view);
  EXPECT_EQ(manager_->leader_for({"t", partition_id{0}}).error(), errc::not_leader);

  info = led_by({broker_id{1}, broker_id{2}}, broker_id{1}, 5);
  info.state->written_zxid = 110;
  view.topics["t"].partitions[partition_id{0}] = info;
  manager_->reconcile(view);
  const auto led = manager_->leader_for({"t", partition_id{0}});
  ASSERT_TRUE(led);
  EXPECT_EQ(led.value()->epoch(), leader_epoch{5});
}

}  // namespace
}  // namespace ferry::replication

namespace ferry::replication {
namespace {

// Directory names in the log dir ending in `suffix`.
std::vector<std::string> dirs_ending(const std::filesystem::path& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().ends_with(suffix)) out.push_back(e.path().filename().string());
  return out;
}

// A topic that vanishes from ZooKeeper without having been marked for deletion (a znode deleted by hand, a
// wrong chroot) is no reason to delete data: its logs are set aside and kept.
TEST_F(partition_manager_test, a_topic_that_vanishes_unasked_is_set_aside_not_deleted) {
  coord::cluster_view view;
  view.topics["t"].partitions[partition_id{0}] = led_by({broker_id{1}}, broker_id{1}, 0);
  manager_->reconcile(view);
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(manager_->leader_for({"t", partition_id{0}}).value()->append(batch));
  view.topics.erase("t");
  manager_->reconcile(view);
  EXPECT_EQ(manager_->leader_for({"t", partition_id{0}}).error(), errc::unknown_partition);
  const auto strays = dirs_ending(dir_, "-stray");
  ASSERT_EQ(strays.size(), 1u);
  EXPECT_TRUE(strays[0].starts_with("t-0."));
  EXPECT_GT(std::filesystem::file_size(dir_ / strays[0] / "00000000000000000000.log"), 0u);
  EXPECT_EQ(logs_->stray_logs(), 1u);
  EXPECT_EQ(metrics_.stray_logs().Value(), 1.0);
}

// A topic znode that cannot be read leaves the view's topic invalid: its replicas stop leading, and keep
// their data until the znode is fixed.
TEST_F(partition_manager_test, an_unreadable_topic_keeps_its_logs_and_leads_nothing) {
  coord::cluster_view view;
  view.topics["t"].partitions[partition_id{0}] = led_by({broker_id{1}}, broker_id{1}, 0);
  manager_->reconcile(view);
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(manager_->leader_for({"t", partition_id{0}}).value()->append(batch));
  auto broken = view;
  broken.topics["t"].partitions.clear();
  broken.topics["t"].invalid = "it is malformed";
  manager_->reconcile(broken);
  EXPECT_EQ(manager_->leader_for({"t", partition_id{0}}).error(), errc::not_leader);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "t-0"));
  EXPECT_EQ(metrics_.invalid_topics().Value(), 1.0);
  manager_->reconcile(view);
  const auto fixed = manager_->leader_for({"t", partition_id{0}});
  ASSERT_TRUE(fixed);
  EXPECT_EQ(fixed.value()->log_end_offset(), offset{3});
  EXPECT_EQ(metrics_.invalid_topics().Value(), 0.0);
}

// A finished reassignment that moved this broker's replica elsewhere is an explicit signal: the log goes.
TEST_F(partition_manager_test, a_replica_moved_elsewhere_is_deleted) {
  coord::cluster_view view;
  view.topics["t"].partitions[partition_id{0}] = led_by({broker_id{1}, broker_id{2}}, broker_id{1}, 0);
  manager_->reconcile(view);
  view.topics["t"].partitions[partition_id{0}] = led_by({broker_id{2}, broker_id{3}}, broker_id{2}, 1);
  manager_->reconcile(view);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "t-0"));
  EXPECT_TRUE(dirs_ending(dir_, "-stray").empty());
}

// Logs on disk that the first view does not name (the broker was down while something happened) are set
// aside at startup, never removed.
TEST_F(partition_manager_test, logs_no_assignment_names_at_startup_are_set_aside) {
  ASSERT_TRUE(logs_->create({"old", partition_id{4}}, {}));
  ASSERT_TRUE(logs_->create({"kept", partition_id{0}}, {}));
  coord::cluster_view view;
  view.topics["kept"].partitions[partition_id{0}] = led_by({broker_id{1}}, broker_id{1}, 0);
  manager_->reconcile(view);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "kept-0"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "old-4"));
  EXPECT_EQ(dirs_ending(dir_, "-stray").size(), 1u);
}

// A topic deleted and created again under the same name never inherits the old topic's records, even when
// this broker saw neither the deletion nor the gap: partition.metadata holds the topic id.
TEST_F(partition_manager_test, a_new_topic_of_an_old_name_starts_empty) {
  coord::cluster_view view;
  auto& first = view.topics["t"];
  first.topic_id = coord::uuid::random();
  first.partitions[partition_id{0}] = led_by({broker_id{1}}, broker_id{1}, 0);
  manager_->reconcile(view);
  auto batch = model::testing::build_simple_batch(3);
  ASSERT_TRUE(manager_->leader_for({"t", partition_id{0}}).value()->append(batch));
  EXPECT_EQ(logs_->topic_id({"t", partition_id{0}}), first.topic_id.to_string());

  view.topics["t"].marked_for_deletion = true;
  manager_->reconcile(view);
  auto again = view;
  again.topics["t"].marked_for_deletion = false;
  again.topics["t"].topic_id = coord::uuid::random();
  manager_->reconcile(again);  // the old topic was seen going: its log is deleted
  EXPECT_EQ(manager_->leader_for({"t", partition_id{0}}).value()->log_end_offset(), offset{0});
  EXPECT_TRUE(dirs_ending(dir_, "-stray").empty());

  ASSERT_TRUE(manager_->leader_for({"t", partition_id{0}}).value()->append(batch));
  auto third = again;
  third.topics["t"].topic_id = coord::uuid::random();  // replaced without this broker seeing a deletion
  manager_->reconcile(third);
  EXPECT_EQ(manager_->leader_for({"t", partition_id{0}}).value()->log_end_offset(), offset{0});
  EXPECT_EQ(dirs_ending(dir_, "-stray").size(), 1u);
}

}  // namespace
}  // namespace ferry::replication
