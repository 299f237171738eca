#include "quota/quota_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace ferry::quota {
namespace {

// name{kind,user,client_id} -> value
std::map<std::string, double> series(const quota_metrics& metrics) {
  std::map<std::string, double> out;
  for (const auto& family : metrics.Collect())
    for (const auto& m : family.metric) {
      std::string key = family.name + "{";
      for (const auto& l : m.label) key += l.name + "=" + l.value + ",";
      out[key + "}"] = m.counter.value;
    }
  return out;
}

TEST(quota_metrics, no_series_while_no_quota_is_set) {
  client_quotas quotas;
  (void)quotas.record(quota_kind::produce, "alice", "app", 1000, 0);
  EXPECT_TRUE(series(quota_metrics(quotas)).empty());
}

TEST(quota_metrics, each_budget_is_a_series_labelled_with_its_entity) {
  client_quotas quotas;
  const auto produce = quota_key::producer_byte_rate;
  const auto fetch = quota_key::consumer_byte_rate;
  quotas.replace_table(
      std::make_shared<const quota_table>(quota_entries{{{entity_name::of("alice"), std::nullopt}, {{produce, 500}}},
                                                        {{std::nullopt, entity_name::of("reader")}, {{fetch, 1000}}}}));
  // alice's clients share her budget (no client_id tag).
  (void)quotas.record(quota_kind::produce, "alice", "app-1", 400, 0);
  const auto throttle = quotas.record(quota_kind::produce, "alice", "app-2", 20'000, 1000);
  ASSERT_GT(throttle, 0);
  (void)quotas.record(quota_kind::fetch, "bob", "reader", 3000, 0);
  quotas.unrecord(quota_kind::fetch, "bob", "reader", 1000, 0);

  const auto s = series(quota_metrics(quotas));
  EXPECT_EQ(s.at("ferry_client_quota_bytes_total{kind=produce,user=alice,client_id=,}"), 20'400);
  EXPECT_EQ(s.at("ferry_client_quota_throttle_time_seconds_total{kind=produce,user=alice,client_id=,}"),
            throttle / 1000.0);
  EXPECT_EQ(s.at("ferry_client_quota_throttled_requests_total{kind=produce,user=alice,client_id=,}"), 1);
  EXPECT_EQ(s.at("ferry_client_quota_bytes_total{kind=fetch,user=,client_id=reader,}"), 2000);
  EXPECT_EQ(s.at("ferry_client_quota_throttled_requests_total{kind=fetch,user=,client_id=reader,}"), 0);
  EXPECT_EQ(s.size(), 6U);  // two budgets
}

TEST(quota_metrics, request_time_is_counted_in_seconds) {
  client_quotas quotas;
  quotas.replace_table(std::make_shared<const quota_table>(
      quota_entries{{{entity_name::default_name(), std::nullopt}, {{quota_key::request_percentage, 50}}}}));
  (void)quotas.record(quota_kind::request, "alice", "app", 250, 0);
  const auto s = series(quota_metrics(quotas));
  EXPECT_EQ(s.at("ferry_client_quota_request_time_seconds_total{kind=request,user=alice,client_id=,}"), 0.25);
}

}  // namespace
}  // namespace ferry::quota
