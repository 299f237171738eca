#include "net/io_context_pool.h"

#include <gtest/gtest.h>

#include <future>
#include <set>
#include <thread>

#include <boost/asio/post.hpp>

namespace ferry::net {
namespace {
namespace asio = boost::asio;

TEST(io_context_pool, hands_out_contexts_round_robin) {
  io_context_pool pool(3);
  std::vector<asio::io_context*> seen;
  for (int i = 0; i < 6; ++i) seen.push_back(&pool.next());
  EXPECT_EQ(std::set<asio::io_context*>(seen.begin(), seen.end()).size(), 3u);
  EXPECT_EQ(seen[0], seen[3]);
  EXPECT_EQ(seen[0], &pool.main());
}

TEST(io_context_pool, runs_each_context_on_its_own_thread_until_stopped) {
  io_context_pool pool(2);
  std::promise<std::thread::id> first, second;
  asio::post(pool.next(), [&] { first.set_value(std::this_thread::get_id()); });
  asio::post(pool.next(), [&] { second.set_value(std::this_thread::get_id()); });
  std::thread runner([&] { pool.run(); });
  const auto a = first.get_future().get();
  const auto b = second.get_future().get();
  EXPECT_NE(a, b);
  pool.stop();
  runner.join();  // returns only once every context has stopped
}

// A context with nothing to do yet (no connection) keeps its thread: work posted later still runs.
TEST(io_context_pool, idle_contexts_keep_running_until_stopped) {
  io_context_pool pool(2);
  std::thread runner([&] { pool.run(); });
  [[maybe_unused]] auto& busy = pool.next();  // the main context; the next one stays idle
  std::promise<void> ran;
  asio::post(pool.next(), [&] { ran.set_value(); });
  EXPECT_EQ(ran.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  pool.stop();
  runner.join();
}

TEST(io_context_pool, asks_for_at_least_one_thread) { EXPECT_EQ(io_context_pool(0).size(), 1u); }

}  // namespace
}  // namespace ferry::net
