#include "security/password_checker_pool.h"

#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "security/errc.h"

namespace ferry::security {
namespace {

boost::asio::awaitable<bool> check_on_pool(scram_mechanism m, scram_credential credential, std::string password) {
  co_return password_matches(m, credential, password);
}

// Counts a check in flight from its start until its caller resumes, whatever way the caller's frame ends.
class in_flight_slot {
 public:
  explicit in_flight_slot(std::shared_ptr<std::atomic<std::size_t>> counter) : counter_(std::move(counter)) {}
  ~in_flight_slot() { counter_->fetch_sub(1); }
  in_flight_slot(const in_flight_slot&) = delete;
  in_flight_slot& operator=(const in_flight_slot&) = delete;

 private:
  std::shared_ptr<std::atomic<std::size_t>> counter_;
};

}  // namespace

password_checker_pool::password_checker_pool(std::size_t threads, std::size_t max_waiting)
    : pool_(threads),
      max_in_flight_(threads + max_waiting),
      in_flight_(std::make_shared<std::atomic<std::size_t>>(0)) {}

password_checker_pool::~password_checker_pool() { pool_.join(); }

boost::asio::awaitable<result<bool>> password_checker_pool::check(scram_mechanism m, scram_credential credential,
                                                                  std::string password) {
  if (in_flight_->fetch_add(1) >= max_in_flight_) {
    in_flight_->fetch_sub(1);
    co_return errc::busy;
  }
  const in_flight_slot slot(in_flight_);
  // co_spawn's completion resumes this coroutine through its own executor, so the caller carries on on its thread.
  auto checked = boost::asio::co_spawn(pool_, check_on_pool(m, std::move(credential), std::move(password)),
                                       boost::asio::use_awaitable);
  const bool matches = co_await std::move(checked);
  co_return matches;
}

}  // namespace ferry::security
