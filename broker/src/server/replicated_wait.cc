#include "server/replicated_wait.h"

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/guarded.h"

namespace ferry::server {
namespace asio = boost::asio;
namespace {

// One write waiting for the high watermark to pass it. Everything but notify() runs on the timers' executor.
class replicated_write final : public replication::data_waiter, public std::enable_shared_from_this<replicated_write> {
 public:
  replicated_write(asio::io_context& timers, std::shared_ptr<replication::partition> partition, offset upto,
                   std::function<void(replicated_outcome)> done)
      : timer_(timers),
        partition_(std::move(partition)),
        epoch_(partition_->epoch()),
        upto_(upto),
        done_(std::move(done)) {}

  void start(std::int32_t timeout_ms) {
    partition_->add_waiter(shared_from_this());
    timer_.expires_after(std::chrono::milliseconds(timeout_ms));
    timer_.async_wait(
        guarded("a replicated write's timeout", [self = shared_from_this()](const boost::system::error_code& ec) {
          if (!ec) self->finish(replicated_outcome::timed_out);
        }));
    check();
  }
  void notify() override {
    asio::post(timer_.get_executor(),
               guarded("a replicated write's check", [self = shared_from_this()] { self->check(); }));
  }

 private:
  void check() {
    if (finished_) return;
    if (!partition_->is_leader() || partition_->epoch() != epoch_) {
      finish(replicated_outcome::not_leader);
    } else if (partition_->high_watermark() >= upto_) {
      // Written, but with fewer replicas than min.insync.replicas asks for: Kafka's
      // NOT_ENOUGH_REPLICAS_AFTER_APPEND, which the coordinator reports as unavailable.
      finish(partition_->in_sync_replicas() < min_insync_replicas(*partition_) ? replicated_outcome::too_few_replicas
                                                                               : replicated_outcome::replicated);
    }
  }
  void finish(replicated_outcome outcome) {
    if (std::exchange(finished_, true)) return;
    timer_.cancel();
    partition_->remove_waiter(shared_from_this());
    done_(outcome);
  }

  asio::steady_timer timer_;
  std::shared_ptr<replication::partition> partition_;
  leader_epoch epoch_;
  offset upto_;
  std::function<void(replicated_outcome)> done_;
  bool finished_ = false;
};

}  // namespace

std::size_t min_insync_replicas(const replication::partition& p) {
  return static_cast<std::size_t>(std::max(1, p.settings()->min_insync_replicas));
}

void await_replicated(asio::io_context& timers, std::shared_ptr<replication::partition> partition, offset upto,
                      std::int32_t timeout_ms, std::function<void(replicated_outcome)> done) {
  auto write = std::make_shared<replicated_write>(timers, std::move(partition), upto, std::move(done));
  asio::post(timers, guarded("a replicated write's start", [write, timeout_ms] { write->start(timeout_ms); }));
}

}  // namespace ferry::server
