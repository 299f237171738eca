#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>

#include "registry/schema_store.h"

namespace ferry::registry {

// A record of `_schemas` as this broker read it.
struct read_record {
  std::string key;
  std::optional<std::string> value;
};

// This broker's copy of the registry: the store, how far into `_schemas` it has read, and the waits for it to
// get somewhere. The reader applies what it fetches; requests read under a shared lock; the writer waits until
// its own records are applied before it answers, so a client reads its write back from the broker it wrote to.
class registry_state {
 public:
  template <typename Read>
  auto read(Read&& reader) const {
    std::shared_lock lock(mutex_);
    return reader(store_);
  }

  // Applies records read from the topic, in offset order, and moves the position to `next_offset`.
  void apply(const std::vector<read_record>& records, std::int64_t next_offset);
  // Starts over from an empty store (the topic was deleted and made again, or truncated below our position).
  void reset();
  [[nodiscard]] std::int64_t next_offset() const { return next_offset_.load(); }
  // Whether the reader has reached the end of the topic once since the start: until then reads would show
  // an incomplete registry, and the listener answers 503.
  [[nodiscard]] bool loaded() const { return loaded_.load(); }
  void mark_loaded() { loaded_ = true; }

  // Completes once the position reaches `offset` (true) or after `timeout` (false). Any executor.
  boost::asio::awaitable<bool> wait_for(std::int64_t offset, std::chrono::milliseconds timeout);

 private:
  void wake_waiters();

  mutable std::shared_mutex mutex_;
  schema_store store_;  // guarded by mutex_
  std::atomic<std::int64_t> next_offset_{0};
  std::atomic<bool> loaded_{false};
  std::mutex waiters_mutex_;
  std::vector<std::shared_ptr<boost::asio::steady_timer>> waiters_;  // guarded by waiters_mutex_
};

}  // namespace ferry::registry
