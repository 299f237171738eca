#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace ferry::net {

// One io_context per network thread (num.network.threads), each run by exactly one thread. A connection lives
// on one context for its whole life, so its reads, handler and writes never hop threads and an idle thread is
// never woken to run another's work: with one shared io_context every completion could wake any thread, and
// on a small machine the broker spent more time in futex wake-ups than in its own code.
class io_context_pool {
 public:
  explicit io_context_pool(std::size_t threads);

  // The first context: listeners, the admin API and timers live here (it also serves connections).
  [[nodiscard]] boost::asio::io_context& main() { return *contexts_.front(); }
  // The context for the next connection, round-robin.
  [[nodiscard]] boost::asio::io_context& next();
  [[nodiscard]] std::size_t size() const { return contexts_.size(); }

  // Runs every context, the first on the calling thread; returns once all have stopped.
  void run();
  // Stops every context; safe from any thread.
  void stop();

 private:
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  // Keeps a context without connections running until stop().
  std::vector<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> keep_running_;
  std::atomic<std::size_t> next_{0};
};

}  // namespace ferry::net
