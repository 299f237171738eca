#include "net/busy_time.h"

namespace ferry::net {
namespace {

// The meter whose piece runs on this thread now.
thread_local busy_meter* running_meter = nullptr;

}  // namespace

std::chrono::nanoseconds busy_meter::take() {
  auto busy = banked_;
  banked_ = std::chrono::nanoseconds{0};
  if (running_) {
    const auto now = std::chrono::steady_clock::now();
    busy += now - running_since_;
    running_since_ = now;
  }
  return busy;
}

void busy_meter::start(std::chrono::steady_clock::time_point now) {
  running_since_ = now;
  running_ = true;
}

void busy_meter::stop(std::chrono::steady_clock::time_point now) {
  banked_ += now - running_since_;
  running_ = false;
}

busy_meter::piece::piece(busy_meter& meter) : meter_(&meter), outer_(running_meter) {
  if (outer_ == meter_) {
    meter_ = nullptr;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (outer_ != nullptr) outer_->stop(now);
  meter_->start(now);
  running_meter = meter_;
}

busy_meter::piece::~piece() {
  if (meter_ == nullptr) return;
  const auto now = std::chrono::steady_clock::now();
  meter_->stop(now);
  running_meter = outer_;
  if (outer_ != nullptr) outer_->start(now);
}

}  // namespace ferry::net
