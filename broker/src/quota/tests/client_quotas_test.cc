#include "quota/client_quotas.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

// Counts the allocations of the thread that asks, to show that recording into an existing sensor allocates
// nothing.
namespace {
thread_local bool counting_allocations = false;
thread_local std::size_t allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  if (counting_allocations) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t /*size*/) noexcept { std::free(p); }

namespace ferry::quota {
namespace {

constexpr auto produce = quota_key::producer_byte_rate;

entity_name named(std::string name) { return entity_name::of(std::move(name)); }
const entity_name default_name = entity_name::default_name();

std::shared_ptr<const quota_table> table_of(quota_entries entries) {
  return std::make_shared<const quota_table>(std::move(entries));
}

const sensor_totals* find(const std::vector<sensor_totals>& totals, quota_kind kind, std::string_view user,
                          std::string_view client_id) {
  for (const auto& t : totals)
    if (t.kind == kind && t.user == user && t.client_id == client_id) return &t;
  return nullptr;
}

TEST(client_quotas, nothing_is_recorded_while_no_quota_is_set) {
  client_quotas quotas;
  EXPECT_EQ(quotas.record(quota_kind::produce, "alice", "app", 1e12, 0), 0);
  EXPECT_EQ(quotas.sensor_count(), 0U);
}

TEST(client_quotas, the_spike_of_kafkas_test_is_throttled_for_2100_ms) {
  // ClientQuotaManagerTest.testQuotaViolation: clients/<default> at 500 bytes/s, user ANONYMOUS.
  client_quotas quotas;
  quotas.replace_table(table_of({{{std::nullopt, default_name}, {{produce, 500}}}}));
  for (std::int64_t second = 0; second < 10; ++second)
    EXPECT_EQ(quotas.record(quota_kind::produce, "ANONYMOUS", "unknown", 400, second * 1000), 0);
  // (10 × 400 + 2300) / 10.5 s = 600/s; (600 − 500) / 500 × 10500 ms = 2100 ms.
  EXPECT_EQ(quotas.record(quota_kind::produce, "ANONYMOUS", "unknown", 2300, 10'500), 2100);
  const auto totals = quotas.totals();
  const auto* budget = find(totals, quota_kind::produce, "", "unknown");
  ASSERT_NE(budget, nullptr);
  EXPECT_DOUBLE_EQ(budget->recorded, 6300);
  EXPECT_EQ(budget->throttle_ms, 2100);
  EXPECT_EQ(budget->throttled, 1U);
}

TEST(client_quotas, a_user_quota_is_shared_by_the_users_client_ids) {
  client_quotas quotas;
  quotas.replace_table(table_of({{{named("alice"), std::nullopt}, {{produce, 1000}}}}));
  // 6000 / 10 s = 600/s: within 1000.
  EXPECT_EQ(quotas.record(quota_kind::produce, "alice", "app1", 6000, 0), 0);
  // The same budget: 12000 / 10 s = 1200/s; (1200 − 1000) / 1000 × 10000 ms = 2000 ms.
  EXPECT_EQ(quotas.record(quota_kind::produce, "alice", "app2", 6000, 0), 2000);
  EXPECT_EQ(quotas.sensor_count(), 1U);

  // users/<default>: each user has a budget of their own.
  quotas.replace_table(table_of({{{default_name, std::nullopt}, {{produce, 1000}}}}));
  EXPECT_EQ(quotas.record(quota_kind::produce, "bob", "app1", 6000, 0), 0);
  EXPECT_EQ(quotas.record(quota_kind::produce, "carol", "app1", 6000, 0), 0);
  EXPECT_EQ(quotas.record(quota_kind::produce, "bob", "app2", 6000, 0), 2000);
}

TEST(client_quotas, kinds_have_separate_budgets) {
  client_quotas quotas;
  quotas.replace_table(
      table_of({{{named("alice"), std::nullopt}, {{produce, 1000}, {quota_key::consumer_byte_rate, 1000}}}}));
  EXPECT_EQ(quotas.record(quota_kind::produce, "alice", "app", 6000, 0), 0);
  EXPECT_EQ(quotas.record(quota_kind::fetch, "alice", "app", 6000, 0), 0);
  EXPECT_EQ(quotas.sensor_count(), 2U);
}

TEST(client_quotas, request_time_is_a_percentage_of_one_thread_and_its_throttle_is_at_most_one_sample) {
  client_quotas quotas;
  quotas.replace_table(table_of({{{named("alice"), std::nullopt}, {{quota_key::request_percentage, 50}}}}));
  // 5250 ms of thread time is 525 percent-seconds (0.1 per ms), over 10 s: 52.5 % of a thread;
  // (52.5 − 50) / 50 × 10000 ms = 500 ms.
  EXPECT_EQ(quotas.record(quota_kind::request, "alice", "app", 5250, 0), 500);
  // At 1 %, 500 ms is 50 / 10 s = 5 %: (5 − 1) / 1 × 10000 = 40000 ms, bounded to one sample, 1000 ms.
  quotas.replace_table(table_of({{{named("bob"), std::nullopt}, {{quota_key::request_percentage, 1}}}}));
  EXPECT_EQ(quotas.record(quota_kind::request, "bob", "app", 500, 0), 1000);
  // The byte quotas are not bounded: 50 bytes/10 s = 5/s against 1 byte/s also asks for 40000 ms.
  quotas.replace_table(table_of({{{named("bob"), std::nullopt}, {{produce, 1}}}}));
  EXPECT_EQ(quotas.record(quota_kind::produce, "bob", "app", 50, 0), 40'000);
}

TEST(client_quotas, a_new_table_applies_to_existing_sensors) {
  client_quotas quotas;
  quotas.replace_table(table_of({{{named("alice"), std::nullopt}, {{produce, 1000}}}}));
  EXPECT_EQ(quotas.record(quota_kind::produce, "alice", "app", 6000, 0), 0);
  quotas.replace_table(table_of({{{named("alice"), std::nullopt}, {{produce, 500}}}}));
  // The same sensor, 6000 / 10 s = 600/s, now against 500: 2000 ms.
  EXPECT_EQ(quotas.record(quota_kind::produce, "alice", "app", 0, 0), 2000);
  EXPECT_EQ(quotas.sensor_count(), 1U);
  // Quota removed for alice, another one left: recorded, never throttled.
  quotas.replace_table(table_of({{{named("bob"), std::nullopt}, {{produce, 1}}}}));
  EXPECT_EQ(quotas.record(quota_kind::produce, "alice", "app", 1e9, 1), 0);
}

TEST(client_quotas, an_unrecorded_fetch_no_longer_counts) {
  client_quotas quotas;
  quotas.replace_table(table_of({{{std::nullopt, default_name}, {{quota_key::consumer_byte_rate, 500}}}}));
  EXPECT_EQ(quotas.record(quota_kind::fetch, "alice", "app", 6000, 0), 2000);
  quotas.unrecord(quota_kind::fetch, "alice", "app", 6000, 0);
  EXPECT_EQ(quotas.record(quota_kind::fetch, "alice", "app", 0, 0), 0);
  const auto totals = quotas.totals();
  const auto* budget = find(totals, quota_kind::fetch, "", "app");
  ASSERT_NE(budget, nullptr);
  EXPECT_DOUBLE_EQ(budget->recorded, 6000);
  EXPECT_DOUBLE_EQ(budget->unrecorded, 6000);
  // 500 bytes/s × 10 windows × 1 s.
  EXPECT_DOUBLE_EQ(quotas.max_value_in_window(quota_kind::fetch, "alice", "app"), 5000);
  EXPECT_EQ(quotas.max_value_in_window(quota_kind::produce, "alice", "app"), std::numeric_limits<double>::max());
}

TEST(client_quotas, sensors_idle_for_an_hour_expire) {
  client_quotas quotas;
  quotas.replace_table(table_of({{{std::nullopt, default_name}, {{produce, 500}}}}));
  (void)quotas.record(quota_kind::produce, "alice", "app", 1, 0);
  (void)quotas.record(quota_kind::produce, "alice", "cli", 1, 1000);
  EXPECT_EQ(quotas.expire_idle(3'600'000), 0U);  // idle exactly an hour: kept (Kafka: more than)
  EXPECT_EQ(quotas.expire_idle(3'600'001), 1U);
  EXPECT_EQ(quotas.sensor_count(), 1U);
  EXPECT_EQ(quotas.expire_idle(3'601'001), 1U);
  EXPECT_EQ(quotas.sensor_count(), 0U);
}

TEST(client_quotas, new_sensors_sweep_idle_ones_without_being_asked) {
  client_quotas quotas;
  quotas.replace_table(table_of({{{std::nullopt, default_name}, {{produce, 500}}}}));
  for (int i = 0; i < 200; ++i) (void)quotas.record(quota_kind::produce, "u", "old-" + std::to_string(i), 1, 0);
  EXPECT_EQ(quotas.sensor_count(), 200U);
  // Two hours on, 200 new client ids touch every one of the 16 shards and each sweeps its shard once.
  for (int i = 0; i < 200; ++i) (void)quotas.record(quota_kind::produce, "u", "new-" + std::to_string(i), 1, 7'200'000);
  EXPECT_EQ(quotas.sensor_count(), 200U);
}

TEST(client_quotas, recording_into_an_existing_sensor_allocates_nothing) {
  client_quotas quotas;
  // Several kinds of level, so resolve walks them; names past the small-string buffer.
  quotas.replace_table(table_of({
      {{named("a-user-with-a-long-name"), std::nullopt}, {{produce, 1e6}}},
      {{default_name, named("a-client-with-a-long-name")}, {{produce, 1e6}}},
      {{std::nullopt, default_name}, {{produce, 1e6}}},
  }));
  const std::string user = "another-user-with-a-long-name";
  const std::string client = "a-client-with-a-long-name";
  (void)quotas.record(quota_kind::produce, user, client, 100, 0);
  counting_allocations = true;
  for (std::int64_t t = 0; t < 30'000; t += 10) (void)quotas.record(quota_kind::produce, user, client, 100, t);
  counting_allocations = false;
  EXPECT_EQ(allocations, 0U);
}

TEST(client_quotas, threads_record_concurrently_while_the_table_changes) {
  client_quotas quotas;
  quotas.replace_table(table_of({{{std::nullopt, default_name}, {{produce, 1e12}}}}));
  constexpr int threads = 4;
  constexpr int records = 20'000;
  std::atomic<bool> done{false};
  std::thread changer([&] {
    for (double bound = 1e12; !done.load(); bound += 1)
      quotas.replace_table(table_of({{{std::nullopt, default_name}, {{produce, bound}}}}));
  });
  std::vector<std::thread> recorders;
  recorders.reserve(threads);
  for (int t = 0; t < threads; ++t) {
    recorders.emplace_back([&quotas, t] {
      const std::string client = "client-" + std::to_string(t % 2);
      for (int i = 0; i < records; ++i) (void)quotas.record(quota_kind::produce, "u", client, 1, i);
    });
  }
  for (auto& r : recorders) r.join();
  done = true;
  changer.join();
  double total = 0;
  for (const auto& t : quotas.totals()) total += t.recorded;
  EXPECT_DOUBLE_EQ(total, threads * records);
  EXPECT_EQ(quotas.sensor_count(), 2U);
}

}  // namespace
}  // namespace ferry::quota
