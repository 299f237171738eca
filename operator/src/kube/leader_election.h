#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <string>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "kube/api_client.h"
#include "kube/time_format.h"

namespace ferry::kube {

struct lease_options {
  std::string lease_namespace;
  std::string name;
  std::string identity;  // unique per replica: the pod name, or host and pid
  std::chrono::seconds lease_duration{15};
  std::chrono::seconds renew_deadline{10};
  std::chrono::seconds retry_period{2};
};

// Leader election on a coordination.k8s.io/v1 Lease, as client-go does it: a replica takes the lease when
// it is free or its holder has not renewed it for lease_duration (measured on our own clock from when we last
// saw it change, so clocks need not agree), then renews it every retry_period. Writes are conditional on the
// resourceVersion read, so two replicas never both hold it. A leader that cannot renew within renew_deadline
// stops leading (on_stopped_leading; the operator exits and is restarted) before another replica may take
// over. A leader that shuts down releases the lease (release()). Runs on the client's io_context.
class leader_election {
 public:
  leader_election(api_client& client, lease_options options, std::function<void()> on_started_leading,
                  std::function<void()> on_stopped_leading)
      : client_(client),
        options_(std::move(options)),
        on_started_(std::move(on_started_leading)),
        on_stopped_(std::move(on_stopped_leading)),
        retry_timer_(client.io()) {}

  boost::asio::awaitable<void> run();
  [[nodiscard]] bool leading() const { return leading_.load(); }
  // Ends run(), from a thread other than the io_context's, once the work that leading allowed has stopped. A
  // leader hands the lease over at once, as client-go's ReleaseOnCancel: it clears the holder, conditional on
  // the resourceVersion of its own last write, so a standby need not wait out lease_duration. Waits at most
  // renew_deadline for that.
  void release();

 private:
  // Whether we hold the lease after this attempt.
  boost::asio::awaitable<bool> try_acquire_or_renew();
  boost::asio::awaitable<void> release_lease();
  // Ends the leadership once renew_deadline passes without a renewal, even while an attempt is still waiting
  // for a slow or unreachable API server.
  boost::asio::awaitable<void> watchdog();
  void stop_leading();

  api_client& client_;
  const lease_options options_;
  const std::function<void()> on_started_;
  const std::function<void()> on_stopped_;
  std::atomic<bool> leading_{false};
  std::string observed_record_;  // holder and renew time last seen
  std::chrono::steady_clock::time_point observed_at_{};
  std::chrono::steady_clock::time_point last_renewal_{};  // io_context thread only
  nlohmann::json written_;                                // the lease as our last write left it; io_context thread only
  boost::asio::steady_timer retry_timer_;
  bool stopped_ = false;
  bool releasing_ = false;
  std::promise<void> ended_;  // run() is over
};

}  // namespace ferry::kube
