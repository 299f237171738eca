#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <condition_variable>
#include <mutex>
#include <sstream>

#include "kube/controller.h"
#include "kube/metrics.h"

namespace ferry::kube {
namespace {

using namespace std::chrono_literals;

// The value of one series in the metrics' text exposition (-1 when absent).
double value_of(operator_metrics& metrics, const std::string& series) {
  const auto text = prometheus::TextSerializer().Serialize(metrics.registry().Collect());
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(series + " ")) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

// A reconcile that blocks until released, to hold workers busy.
struct gate {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  int entered = 0;
  void wait_entered(int n) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return entered >= n; });
  }
  void pass() {
    std::unique_lock lock(mutex);
    ++entered;
    changed.notify_all();
    changed.wait(lock, [&] { return open; });
  }
  void release() {
    std::lock_guard lock(mutex);
    open = true;
    changed.notify_all();
  }
};

TEST(ControllerMetrics, QueueDepthCountsKeysWaitingBehindBlockedWorkers) {
  operator_metrics metrics;
  gate g;
  controller c(
      "topics",
      [&](const std::string&) {
        g.pass();
        return reconcile_result{};
      },
      metrics);
  c.start(1);
  c.queue().add("ns/a");
  g.wait_entered(1);
  for (const auto* key : {"ns/b", "ns/c", "ns/d"}) c.queue().add(key);
  EXPECT_EQ(value_of(metrics, R"(ferry_operator_queue_depth{controller="topics"})"), 3);
  EXPECT_EQ(value_of(metrics, R"(ferry_operator_queue_adds_total{controller="topics"})"), 4);
  EXPECT_GT(value_of(metrics, R"(ferry_operator_oldest_reconcile_start_time_seconds{controller="topics"})"), 1e9)
      << "a reconcile is running";
  g.release();
  c.stop();
  EXPECT_EQ(value_of(metrics, R"(ferry_operator_oldest_reconcile_start_time_seconds{controller="topics"})"), 0);
}

TEST(ControllerMetrics, ResultsTellRefusalsRequeuesAndErrorsFromSuccess) {
  EXPECT_EQ(result_label({}), "success");
  EXPECT_EQ(result_label({.failed = true}), "error");
  EXPECT_EQ(result_label({.requeue_after = 5s}), "requeue");
  EXPECT_EQ(result_label({.state = resource_state{.ready = false, .reason = "InvalidConfig"}}), "refused");
  EXPECT_EQ(result_label({.requeue_after = 5s, .state = resource_state{.ready = false, .reason = "Creating"}}),
            "requeue");
  EXPECT_EQ(result_label({.requeue_after = 30s, .state = resource_state{.ready = true, .reason = "GroupObserved"}}),
            "success");
  EXPECT_EQ(result_label({.state = resource_state{.gone = true}}), "success");
}

TEST(ControllerMetrics, ReconcilesReportResultsStatesAndRetries) {
  operator_metrics metrics;
  std::mutex mutex;
  std::condition_variable changed;
  int calls = 0;
  controller c(
      "consumergroups",
      [&](const std::string& key) {
        reconcile_result r;
        if (key == "ns/bad") r = {.state = resource_state{.ready = false, .reason = "InvalidReset"}};
        if (key == "ns/good") r = {.state = resource_state{.ready = true, .reason = "GroupObserved"}};
        if (key == "ns/gone") r = {.state = resource_state{.gone = true}};
        if (key == "ns/failing") r = {.failed = true};
        std::lock_guard lock(mutex);
        ++calls;
        changed.notify_all();
        return r;
      },
      metrics);
  c.start(2);
  for (const auto* key : {"ns/bad", "ns/good", "ns/failing"}) c.queue().add(key);
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return calls >= 3; });
  }
  c.queue().add("ns/gone");
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return calls >= 4; });
  }
  c.stop();
  const auto resources = [&](const char* ready, const char* reason) {
    return value_of(metrics, std::string(R"(ferry_operator_resources{kind="consumergroups",ready=")") + ready +
                                 R"(",reason=")" + reason + R"("})");
  };
  EXPECT_EQ(resources("false", "InvalidReset"), 1);
  EXPECT_EQ(resources("true", "GroupObserved"), 1);
  EXPECT_EQ(value_of(metrics, R"(ferry_operator_reconciles_total{controller="consumergroups",result="refused"})"), 1);
  EXPECT_GE(value_of(metrics, R"(ferry_operator_reconciles_total{controller="consumergroups",result="error"})"), 1);
  EXPECT_GE(value_of(metrics, R"(ferry_operator_queue_retries_total{controller="consumergroups"})"), 1);
}

TEST(OperatorMetrics, ResourceStatesAreCountedByKindReadyAndReason) {
  operator_metrics metrics;
  const auto topics = [&](const char* ready, const char* reason) {
    return value_of(metrics, std::string(R"(ferry_operator_resources{kind="topics",ready=")") + ready +
                                 R"(",reason=")" + reason + R"("})");
  };
  metrics.set_resource_state("topics", "ns/a", true, "Ready");
  metrics.set_resource_state("topics", "ns/b", true, "Ready");
  metrics.set_resource_state("topics", "ns/c", false, "InsufficientBrokers");
  metrics.set_resource_state("topics", "ns/c", false, "InsufficientBrokers");  // a repeat changes nothing
  EXPECT_EQ(topics("true", "Ready"), 2);
  EXPECT_EQ(topics("false", "InsufficientBrokers"), 1);
  metrics.set_resource_state("topics", "ns/a", false, "PartitionsOffline");
  EXPECT_EQ(topics("true", "Ready"), 1);
  EXPECT_EQ(topics("false", "PartitionsOffline"), 1);
  metrics.forget_resource("topics", "ns/c");
  metrics.forget_resource("topics", "ns/unknown");
  EXPECT_EQ(topics("false", "InsufficientBrokers"), 0);
  metrics.set_reassignments_in_flight(7);
  metrics.set_leaving_brokers(2);
  metrics.set_replica_floor(3);
  EXPECT_EQ(value_of(metrics, "ferry_operator_reassignments_in_flight"), 7);
  EXPECT_EQ(value_of(metrics, "ferry_operator_leaving_brokers"), 2);
  EXPECT_EQ(value_of(metrics, "ferry_operator_replica_floor"), 3);
}

}  // namespace
}  // namespace ferry::kube
