#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

#include <boost/asio/thread_pool.hpp>

#include "security/sasl_exchange.h"

namespace ferry::security {

// The broker's password_checker: PLAIN's PBKDF2 runs on a few threads of its own, so logins never occupy a
// network thread, and at most `max_waiting` checks wait for one of them; beyond that a login is refused with
// errc::busy at once, which keeps a storm of wrong passwords from queueing without bound. Shared by every
// connection, called from any network thread.
class password_checker_pool final : public password_checker {
 public:
  password_checker_pool(std::size_t threads, std::size_t max_waiting);
  // Waits for the checks in flight to finish; their callers are resumed on their own executors as usual.
  ~password_checker_pool() override;
  password_checker_pool(const password_checker_pool&) = delete;
  password_checker_pool& operator=(const password_checker_pool&) = delete;

  boost::asio::awaitable<result<bool>> check(scram_mechanism m, scram_credential credential,
                                             std::string password) override;

 private:
  boost::asio::thread_pool pool_;
  const std::size_t max_in_flight_;  // threads + max_waiting
  // Checks started and whose caller has not resumed yet. Shared with the callers, who may resume after the
  // pool is gone.
  std::shared_ptr<std::atomic<std::size_t>> in_flight_;
};

}  // namespace ferry::security
