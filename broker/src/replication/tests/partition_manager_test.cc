#include "replication/partition_manager.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "model/testing/batch_builder.h"
#include "replication/errc.h"

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

  view.topics.erase("t");
  manager_->reconcile(view);
  EXPECT_EQ(manager_->leader_for({"t", partition_id{0}}).error(), errc::unknown_partition);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "t-0"));
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

}  // namespace
}  // namespace ferry::replication
