#include "registry/registry_state.h"

#include <algorithm>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/guarded.h"

namespace ferry::registry {
namespace asio = boost::asio;

namespace {
// A missed wake-up costs at most this much: waits also look again on their own.
constexpr auto recheck_interval = std::chrono::milliseconds(200);
}  // namespace

void registry_state::apply(const std::vector<read_record>& records, std::int64_t next_offset) {
  {
    std::unique_lock lock(mutex_);
    for (const auto& r : records)
      store_.apply(r.key, r.value ? std::optional<std::string_view>(*r.value) : std::nullopt);
    next_offset_ = next_offset;
  }
  wake_waiters();
}

void registry_state::reset() {
  {
    std::unique_lock lock(mutex_);
    store_ = schema_store();
    next_offset_ = 0;
  }
  wake_waiters();
}

void registry_state::wake_waiters() {
  std::vector<std::shared_ptr<asio::steady_timer>> woken;
  {
    std::lock_guard lock(waiters_mutex_);
    woken.swap(waiters_);
  }
  // Each timer is cancelled on its own executor: a timer is not safe to touch from two threads at once.
  for (auto& timer : woken)
    asio::post(timer->get_executor(), guarded("waking a wait for the schemas topic", [timer] { timer->cancel(); }));
}

asio::awaitable<bool> registry_state::wait_for(std::int64_t offset, std::chrono::milliseconds timeout) {
  const auto executor = co_await asio::this_coro::executor;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (next_offset() < offset) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) co_return false;
    auto timer = std::make_shared<asio::steady_timer>(
        executor, std::min<std::chrono::steady_clock::duration>(deadline - now, recheck_interval));
    {
      std::lock_guard lock(waiters_mutex_);
      // Timers of waits that ended without a wake-up go now, so the list stays as long as the waits.
      std::erase_if(waiters_, [now](const auto& t) { return t->expiry() < now; });
      waiters_.push_back(timer);
    }
    if (next_offset() >= offset) break;
    co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  }
  co_return true;
}

}  // namespace ferry::registry
