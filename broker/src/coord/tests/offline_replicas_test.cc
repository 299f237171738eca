// Review finding 4: a broker whose log dir went offline reports the replicas on it (/ferry/offline_replicas); the
// controller moves their leaderships to in-sync replicas elsewhere and takes them out of the ISRs, and nothing else
// of that broker's changes. A restart (even one that takes over its earlier session) forgets the report.
#include <gtest/gtest.h>

#include <algorithm>

#include "coord/cluster_registry.h"
#include "coord/layout.h"
#include "coord/tests/zk_test_support.h"

namespace ferry::coord {
namespace {

using namespace std::chrono_literals;

constexpr auto wait_time = 15s;

std::unique_ptr<cluster_registry> start_broker(const std::string& connect, std::int32_t id) {
  auto registry = cluster_registry::start(test::broker_options(connect, id));
  EXPECT_TRUE(registry) << "broker " << id << ": " << registry.error().message();
  return registry ? std::move(registry).value() : nullptr;
}

std::vector<broker_id> ids(std::initializer_list<std::int32_t> values) {
  std::vector<broker_id> out;
  for (const auto v : values) out.emplace_back(v);
  return out;
}

const partition_state* state_of(const cluster_view& v, const std::string& topic, std::int32_t p) {
  const auto* partition = v.find_partition({topic, partition_id{p}});
  return partition != nullptr && partition->state ? &*partition->state : nullptr;
}

std::shared_ptr<const cluster_view> await(cluster_registry& r,
                                          const std::function<bool(const cluster_view&)>& condition) {
  auto view = r.wait_for(condition, wait_time);
  EXPECT_TRUE(view) << "condition not met within " << wait_time.count() << " s";
  return view ? view.value() : r.view();
}

TEST(OfflineReplicas, TheControllerMovesLeadershipsOffAnOfflineLogDir) {
  const auto connect = test::fresh_connect();
  std::vector<std::unique_ptr<cluster_registry>> brokers;
  for (std::int32_t id = 1; id <= 2; ++id) brokers.push_back(start_broker(connect, id));
  for (const auto& b : brokers) ASSERT_TRUE(b);
  await(*brokers[0], [](const cluster_view& v) { return v.brokers.size() == 2; });
  // Broker 1 leads both partitions; only "bad" is on the dir that goes offline.
  ASSERT_TRUE(brokers[0]->topics().create_topic("bad", {{partition_id{0}, ids({1, 2})}}, {}));
  ASSERT_TRUE(brokers[0]->topics().create_topic("good", {{partition_id{0}, ids({1, 2})}}, {}));
  const auto full_isr = [](const cluster_view& v) {
    return state_of(v, "bad", 0) != nullptr && state_of(v, "good", 0) != nullptr &&
           state_of(v, "bad", 0)->isr.size() == 2 && state_of(v, "good", 0)->isr.size() == 2;
  };
  const auto before = await(*brokers[0], full_isr);
  ASSERT_EQ(state_of(*before, "bad", 0)->leader, broker_id{1});

  ASSERT_TRUE(brokers[0]->report_offline_replicas(1, {{"bad", partition_id{0}}}));
  const auto after = await(*brokers[1], [](const cluster_view& v) {
    return state_of(v, "bad", 0) != nullptr && state_of(v, "bad", 0)->leader == broker_id{2};
  });
  EXPECT_EQ(state_of(*after, "bad", 0)->isr, ids({2}));
  EXPECT_EQ(state_of(*after, "bad", 0)->epoch, leader_epoch{state_of(*before, "bad", 0)->epoch.value() + 1});
  EXPECT_EQ(state_of(*after, "good", 0)->leader, broker_id{1}) << "the other dir's partitions stay";
  EXPECT_EQ(state_of(*after, "good", 0)->isr.size(), 2u);
  EXPECT_TRUE(after->offline_replicas.at(broker_id{1}).contains({"bad", partition_id{0}}));
  EXPECT_FALSE(after->hosts(broker_id{1}, {"bad", partition_id{0}}));
  EXPECT_TRUE(after->hosts(broker_id{1}, {"good", partition_id{0}}));

  // A restart forgets it.
  brokers[0].reset();
  brokers[0] = start_broker(connect, 1);
  ASSERT_TRUE(brokers[0]);
  await(*brokers[1], [](const cluster_view& v) { return v.brokers.size() == 2 && v.offline_replicas.empty(); });
}

TEST(OfflineReplicas, TheReportIsReadAndWrittenAsTheLayoutSays) {
  const std::vector<topic_partition> partitions{{"a", partition_id{0}}, {"b.c", partition_id{7}}};
  const auto decoded = layout::decode_offline_replicas(layout::encode_offline_replicas(partitions));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded.value(), partitions);
  EXPECT_EQ(layout::offline_replicas_child(broker_id{12}, 3), "12_3");
  EXPECT_EQ(layout::offline_replicas_broker("12_3"), broker_id{12});
  EXPECT_FALSE(layout::offline_replicas_broker("x_3"));
  EXPECT_FALSE(layout::offline_replicas_broker("_3"));
  EXPECT_FALSE(layout::decode_offline_replicas(R"({"version":1,"partitions":[{"topic":"a","partition":-1}]})"));
}

}  // namespace
}  // namespace ferry::coord
