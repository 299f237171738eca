#include "base/guarded.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace ferry {
namespace {

TEST(guarded, AThrowingCallbackIsCountedAndDoesNotEscape) {
  const auto before = confined_failures();
  int calls = 0;
  auto callback = guarded("test callback", [&calls](int step) {
    ++calls;
    if (step == 2) throw std::runtime_error("boom");
  });
  callback(1);
  callback(2);
  callback(3);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(confined_failures(), before + 1);
  EXPECT_TRUE(run_guarded("ok", [] {}));
  EXPECT_FALSE(run_guarded("not ok", [] { throw 7; }));
  EXPECT_EQ(confined_failures(), before + 2);
}

TEST(guarded, WhatEscapesADetachedCoroutineIsCountedAndTheLoopGoesOn) {
  const auto before = confined_failures();
  boost::asio::io_context io;
  boost::asio::co_spawn(
      io,
      []() -> boost::asio::awaitable<void> {
        throw std::out_of_range("map::at");
        co_return;
      },
      guarded_detached("test coroutine"));
  bool ran_after = false;
  boost::asio::post(io, guarded("after", [&ran_after] { ran_after = true; }));
  io.run();
  EXPECT_TRUE(ran_after);
  EXPECT_EQ(confined_failures(), before + 1);
}

}  // namespace
}  // namespace ferry
