#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/guarded.h"

namespace ferry::server::handlers {

// A coordinator's answer to a request it may park (JoinGroup until the rebalance completes, SyncGroup
// until the leader's assignment is stored, a commit until it is replicated). The coordinator calls callback()
// once, on any thread; the answer is posted to the connection's executor, where the request waits on timer()
// (the same wait as a long-polling fetch's):
//
//   auto reply = std::make_shared<coordinator_reply<T>>(ctx.connection.executor);
//   coordinator.call(..., reply->callback());
//   while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));
template <typename T>
class coordinator_reply final : public std::enable_shared_from_this<coordinator_reply<T>> {
 public:
  explicit coordinator_reply(const boost::asio::any_io_executor& executor) : timer_(executor) {
    timer_.expires_at(boost::asio::steady_timer::time_point::max());
  }

  [[nodiscard]] std::function<void(T)> callback() {
    return [self = this->shared_from_this()](T value) {
      boost::asio::post(self->timer_.get_executor(),
                        guarded("handing a coordinator's answer on", [self, value = std::move(value)]() mutable {
                          self->value_ = std::move(value);
                          self->timer_.cancel();
                        }));
    };
  }
  [[nodiscard]] bool ready() const { return value_.has_value(); }
  [[nodiscard]] boost::asio::steady_timer& timer() { return timer_; }
  [[nodiscard]] T& value() { return *value_; }

 private:
  boost::asio::steady_timer timer_;
  std::optional<T> value_;
};

}  // namespace ferry::server::handlers
