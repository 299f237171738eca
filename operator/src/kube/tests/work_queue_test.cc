#include "kube/work_queue.h"

#include <gtest/gtest.h>

#include <thread>

namespace ferry::kube {
namespace {

using namespace std::chrono_literals;

TEST(WorkQueue, AddsOfAQueuedKeyFoldIntoOne) {
  work_queue queue;
  queue.add("ns/a");
  queue.add("ns/b");
  queue.add("ns/a");
  EXPECT_EQ(queue.depth(), 2U);
  EXPECT_EQ(queue.get(), "ns/a");
  EXPECT_EQ(queue.get(), "ns/b");
}

TEST(WorkQueue, AKeyAddedWhileWorkedOnComesBackOnlyWhenDone) {
  work_queue queue;
  queue.add("ns/a");
  const auto key = queue.get();
  ASSERT_EQ(key, "ns/a");
  queue.add("ns/a");
  EXPECT_EQ(queue.depth(), 0U) << "a second worker must not get a key being worked on";
  queue.done("ns/a");
  EXPECT_EQ(queue.depth(), 1U);
  EXPECT_EQ(queue.get(), "ns/a");
}

TEST(WorkQueue, FailuresBackOffExponentiallyAndForgetResets) {
  work_queue queue(10ms, 1s);
  queue.add_rate_limited("k");
  queue.add_rate_limited("k");
  queue.add_rate_limited("k");
  EXPECT_EQ(queue.failures("k"), 3U);
  queue.forget("k");
  EXPECT_EQ(queue.failures("k"), 0U);
}

TEST(WorkQueue, DelayedKeysArriveAfterTheirDelay) {
  work_queue queue;
  const auto start = work_queue::clock::now();
  queue.add_after("k", 50ms);
  EXPECT_EQ(queue.depth(), 0U);
  EXPECT_EQ(queue.get(), "k");
  EXPECT_GE(work_queue::clock::now() - start, 50ms);
}

TEST(WorkQueue, AKeyWaitsForOneDelayTheEarliest) {
  work_queue queue;
  for (int i = 0; i < 100; ++i) queue.add_after("k", std::chrono::hours(1) + std::chrono::milliseconds(i));
  EXPECT_EQ(queue.delayed(), 1U);
  queue.add_after("k", 20ms);
  queue.add_after("k", 40ms);
  queue.add_after("marker", 200ms);
  EXPECT_EQ(queue.delayed(), 2U);
  EXPECT_EQ(queue.get(), "k");
  queue.done("k");
  EXPECT_EQ(queue.delayed() + queue.depth(), 1U) << "only the marker, delayed or (on a slow machine) due";
  EXPECT_EQ(queue.get(), "marker") << "the later delays of k were folded into its earliest";
}

TEST(WorkQueue, AQueuedKeyNeedsNoDelay) {
  work_queue queue;
  queue.add_after("k", std::chrono::hours(1));
  queue.add("k");
  EXPECT_EQ(queue.delayed(), 0U) << "the run k is queued for asks for its own requeue";
  queue.add_after("k", std::chrono::hours(1));
  EXPECT_EQ(queue.delayed(), 0U);
  EXPECT_EQ(queue.depth(), 1U);
  ASSERT_EQ(queue.get(), "k");
  queue.add_after("k", 20ms);  // asked by the run, as a controller does before done()
  queue.done("k");
  EXPECT_EQ(queue.delayed(), 1U);
  EXPECT_EQ(queue.get(), "k");
}

TEST(WorkQueue, ShutDownWakesWaitingWorkers) {
  work_queue queue;
  std::optional<std::string> got = "unset";
  std::thread worker([&] { got = queue.get(); });
  queue.shut_down();
  worker.join();
  EXPECT_FALSE(got.has_value());
}

}  // namespace
}  // namespace ferry::kube
