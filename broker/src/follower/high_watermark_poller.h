#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "coord/cluster_view.h"
#include "lag/high_watermarks.h"
#include "net/peer_client.h"
#include "replication/partition_manager.h"

namespace ferry::follower {

// The high watermarks consumer lag needs. A partition this broker leads answers from its replica, at once; one
// led elsewhere from the last poll of its leader: every `interval`, one ListOffsets (latest, read_uncommitted:
// the high watermark) per leader broker for the partitions wanted there, over a connection kept per leader.
// Polled values are dropped when a partition is no longer wanted or its leader moves or fails to answer, so a
// stale one never outlives the next poll.
//
// Runs as one coroutine on the io_context given; high_watermark may be called from any thread.
class high_watermark_poller final : public lag::high_watermarks,
                                    public std::enable_shared_from_this<high_watermark_poller> {
 public:
  struct settings {
    std::chrono::milliseconds interval{5000};
    std::chrono::milliseconds timeout{5000};       // connect and each request
    const net::peer_security* security = nullptr;  // the inter-broker listener's TLS and login; null: plaintext
  };
  using view_source = std::function<std::shared_ptr<const coord::cluster_view>()>;
  using wanted_source = std::function<std::set<topic_partition>()>;

  high_watermark_poller(boost::asio::io_context& io, broker_id self, const replication::partition_manager& partitions,
                        view_source view, wanted_source wanted, settings s);

  void start();
  void stop();
  [[nodiscard]] std::optional<offset> high_watermark(const topic_partition& partition) const override;

 private:
  using watermarks = std::map<topic_partition, offset>;
  boost::asio::awaitable<void> run();
  // One round: the wanted partitions led elsewhere, grouped by leader, asked of each.
  boost::asio::awaitable<watermarks> poll();
  boost::asio::awaitable<result<watermarks>> ask(const coord::broker_info& leader,
                                                 const std::vector<topic_partition>& partitions);

  boost::asio::io_context& io_;
  const broker_id self_;
  const replication::partition_manager& partitions_;
  const view_source view_;
  const wanted_source wanted_;
  const settings settings_;
  boost::asio::steady_timer wake_;
  std::atomic<bool> stopped_{false};
  std::int32_t correlation_id_ = 0;
  // One connection per leader broker, with the address it was opened to (the coroutine's own).
  std::map<broker_id, std::pair<coord::broker_info, std::unique_ptr<net::peer_client>>> peers_;
  mutable std::mutex mutex_;
  watermarks polled_;  // guarded by mutex_
};

}  // namespace ferry::follower
