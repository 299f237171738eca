#include "net/busy_time.h"

#include <gtest/gtest.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace ferry::net {
namespace {
namespace asio = boost::asio;
using namespace std::chrono_literals;
using metered = metered_executor<asio::io_context::executor_type>;

void spin_for(std::chrono::milliseconds time) {
  const auto until = std::chrono::steady_clock::now() + time;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// Busy, then waiting on a timer, then busy again: only the busy pieces count.
asio::awaitable<void> work_around_a_wait(std::chrono::nanoseconds& busy_before_end, busy_meter& meter) {
  spin_for(20ms);
  asio::steady_timer wait(co_await asio::this_coro::executor, 300ms);
  co_await wait.async_wait(asio::as_tuple(asio::use_awaitable));
  spin_for(20ms);
  busy_before_end = meter.take();
}

TEST(busy_meter, counts_the_pieces_a_coroutine_runs_and_not_its_waits) {
  asio::io_context io;
  auto meter = std::make_shared<busy_meter>();
  std::chrono::nanoseconds busy{0};
  // As the broker spawns a connection: the coroutine's executor is an any_io_executor around the metered one.
  asio::co_spawn(metered(io.get_executor(), meter), work_around_a_wait(busy, *meter), asio::detached);
  io.run();
  EXPECT_GE(busy, 40ms);
  EXPECT_LT(busy, 300ms);  // the timer's wait is not in it
  EXPECT_LT(meter->take(), 300ms);
}

TEST(busy_meter, take_starts_again_from_zero) {
  asio::io_context io;
  auto meter = std::make_shared<busy_meter>();
  std::chrono::nanoseconds first{0};
  std::chrono::nanoseconds second{0};
  asio::post(metered(io.get_executor(), meter), [&] {
    spin_for(30ms);
    first = meter->take();
    second = meter->take();
  });
  io.run();
  EXPECT_GE(first, 30ms);
  EXPECT_LT(second, 30ms);
}

// Work of another connection run inline inside a piece (a completion dispatched on the same thread) is not counted
// twice: the outer meter's clock stops while it runs.
TEST(busy_meter, a_piece_run_inside_another_stops_the_outer_clock) {
  asio::io_context io;
  auto outer = std::make_shared<busy_meter>();
  auto inner = std::make_shared<busy_meter>();
  asio::post(metered(io.get_executor(), outer), [&] {
    spin_for(10ms);
    asio::dispatch(metered(io.get_executor(), inner), [] { spin_for(40ms); });
    // The same meter again, inline: counted once.
    asio::dispatch(metered(io.get_executor(), outer), [] { spin_for(10ms); });
  });
  io.run();
  const auto outer_busy = outer->take();
  EXPECT_GE(outer_busy, 20ms);
  EXPECT_LT(outer_busy, 40ms);
  EXPECT_GE(inner->take(), 40ms);
}

}  // namespace
}  // namespace ferry::net
