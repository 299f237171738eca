#pragma once

// How long a connection keeps its network thread busy: the request quota (request_percentage, KIP-124) charges a
// client for the thread time its requests take, as Kafka charges request-handler and network thread time. A
// connection's coroutine runs on an executor that times each piece of work it runs (a resumption: reading a frame,
// handling it up to its next wait, writing the answer), by the steady clock, as Kafka times its threads; the
// waits in between (a long poll, the disk, a replica) cost nothing.
#include <chrono>
#include <memory>
#include <type_traits>
#include <utility>

#include <boost/asio/prefer.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/require.hpp>

namespace ferry::net {

// The busy time of one connection. Used on the connection's thread only.
class busy_meter {
 public:
  // The busy time since the last take() (the piece running now included), which then starts again from zero.
  std::chrono::nanoseconds take();

  // Times one piece of work. A piece run inside another (a completion dispatched inline) stops the outer one's
  // clock while it runs, so no time counts twice; one run inside a piece of the same meter is already counted.
  class piece {
   public:
    explicit piece(busy_meter& meter);
    ~piece();
    piece(const piece&) = delete;
    piece& operator=(const piece&) = delete;

   private:
    busy_meter* meter_;  // null when nested in a piece of the same meter
    busy_meter* outer_;
  };

 private:
  void start(std::chrono::steady_clock::time_point now);
  void stop(std::chrono::steady_clock::time_point now);

  std::chrono::nanoseconds banked_{0};
  std::chrono::steady_clock::time_point running_since_{};
  bool running_ = false;
};

// Properties an executor answers a query on, can be required to have, or can be asked to prefer (Asio's traits).
template <typename Property, typename Executor>
concept queryable_on = boost::asio::can_query<const Executor&, const Property&>::value;
template <typename Property, typename Executor>
concept requirable_of = boost::asio::can_require<const Executor&, const Property&>::value;
template <typename Property, typename Executor>
concept preferable_of = boost::asio::can_prefer<const Executor&, const Property&>::value;

// An executor that runs its work through `Inner`, each piece timed by the meter (shared: work may be queued on the
// executor after the coroutine that made it has ended). Properties are those of `Inner`.
template <typename Inner>
class metered_executor {
 public:
  metered_executor(Inner inner, std::shared_ptr<busy_meter> meter) noexcept
      : inner_(std::move(inner)), meter_(std::move(meter)) {}

  template <queryable_on<Inner> Property>
  decltype(auto) query(const Property& property) const
      noexcept(boost::asio::is_nothrow_query<const Inner&, const Property&>::value) {
    return boost::asio::query(inner_, property);
  }

  template <requirable_of<Inner> Property>
  auto require(const Property& property) const {
    using required = std::decay_t<decltype(boost::asio::require(inner_, property))>;
    return metered_executor<required>(boost::asio::require(inner_, property), meter_);
  }

  template <preferable_of<Inner> Property>
  auto prefer(const Property& property) const {
    using preferred = std::decay_t<decltype(boost::asio::prefer(inner_, property))>;
    return metered_executor<preferred>(boost::asio::prefer(inner_, property), meter_);
  }

  template <typename Function>
  void execute(Function&& work) const {
    inner_.execute([meter = meter_, work = std::forward<Function>(work)]() mutable {
      const busy_meter::piece timed(*meter);
      std::move(work)();
    });
  }

  friend bool operator==(const metered_executor& a, const metered_executor& b) noexcept {
    return a.inner_ == b.inner_ && a.meter_ == b.meter_;
  }
  friend bool operator!=(const metered_executor& a, const metered_executor& b) noexcept { return !(a == b); }

 private:
  template <typename>
  friend class metered_executor;

  Inner inner_;
  std::shared_ptr<busy_meter> meter_;
};

}  // namespace ferry::net
