#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "base/guarded.h"
#include "storage/background.h"

namespace ferry::app {

// The logs' background work (storage/background.h) on the broker's blocking pool; delays are timers on the
// main event loop, which only hand the work over. Work pending when the broker stops is dropped.
class pool_background final : public storage::background {
 public:
  pool_background(boost::asio::thread_pool& pool, boost::asio::io_context& timers) : pool_(pool), timers_(timers) {}

  void run(std::function<void()> work) override {
    boost::asio::post(pool_, guarded("the logs' background work", std::move(work)));
  }

  void run_after(std::chrono::milliseconds delay, std::function<void()> work) override {
    auto timer = std::make_shared<boost::asio::steady_timer>(timers_, delay);
    timer->async_wait(guarded("a timer of the logs' background work", [timer, &pool = pool_, work = std::move(work)](
                                                                          const boost::system::error_code& ec) mutable {
      if (!ec) boost::asio::post(pool, guarded("the logs' background work", std::move(work)));
    }));
  }

 private:
  boost::asio::thread_pool& pool_;
  boost::asio::io_context& timers_;
};

}  // namespace ferry::app
