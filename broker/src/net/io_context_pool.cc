#include "net/io_context_pool.h"

#include <algorithm>
#include <thread>

namespace ferry::net {

io_context_pool::io_context_pool(std::size_t threads) {
  for (std::size_t i = 0; i < std::max<std::size_t>(1, threads); ++i) {
    contexts_.push_back(std::make_unique<boost::asio::io_context>(1));  // hint: one thread runs it
    keep_running_.push_back(boost::asio::make_work_guard(*contexts_.back()));
  }
}

boost::asio::io_context& io_context_pool::next() { return *contexts_[next_++ % contexts_.size()]; }

void io_context_pool::run() {
  std::vector<std::thread> workers;
  for (std::size_t i = 1; i < contexts_.size(); ++i) workers.emplace_back([this, i] { contexts_[i]->run(); });
  contexts_.front()->run();
  for (auto& w : workers) w.join();
}

void io_context_pool::stop() {
  for (auto& context : contexts_) context->stop();
}

}  // namespace ferry::net
