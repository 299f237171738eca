#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/result.h"
#include "model/ids.h"
#include "net/peer_client.h"
#include "protocol/api_table.h"
#include "replication/partition.h"
#include "replication/replication_quota.h"

namespace ferry::follower {

// How a follower fetches (the broker's replica.fetch.* settings; Kafka's defaults).
struct fetch_settings {
  std::int32_t max_wait_ms = 500;                // replica.fetch.wait.max.ms
  std::int32_t min_bytes = 1;                    // replica.fetch.min.bytes
  std::int32_t partition_max_bytes = 1048576;    // replica.fetch.max.bytes
  std::int32_t response_max_bytes = 10485760;    // replica.fetch.response.max.bytes
  std::int32_t backoff_ms = 1000;                // replica.fetch.backoff.ms
  std::int32_t socket_timeout_ms = 30000;        // replica.socket.timeout.ms
  const net::peer_security* security = nullptr;  // the inter-broker listener's TLS and login; null: plaintext
};

// The leader broker a fetcher fetches from, and where it listens.
struct leader_address {
  broker_id id;
  std::string host;
  std::uint16_t port = 0;
  friend bool operator==(const leader_address&, const leader_address&) = default;
};

// Fetches every partition this broker follows from one leader broker, as Kafka's ReplicaFetcherThread
// does: one connection, Fetch v12 as replica `self` (the leader reads up to its log end, and the fetch
// offset tells it where this log ends), the leader's batches appended as they are, truncation where the logs
// diverged (the leader's diverging epoch, KIP-279), and the leader's high watermark followed.
//
// A partition whose fetch failed (the leader lost leadership, an epoch is fenced, a local disk failed) sits
// out replica.fetch.backoff.ms; a connection that fails is opened again after the same backoff. Runs as one
// coroutine on the io_context given; set_partitions and stop may be called from any thread.
class replica_fetcher : public std::enable_shared_from_this<replica_fetcher> {
 public:
  replica_fetcher(boost::asio::io_context& io, broker_id self, leader_address leader, fetch_settings settings,
                  replication::replication_quota& quota);

  void start();
  // Ends the loop and closes the connection; the coroutine finishes soon after.
  void stop();
  // A partition to follow. `throttled`: its fetched bytes count against follower.replication.throttled.rate (the
  // topic names this replica in follower.replication.throttled.replicas); while the rate is exceeded it is left
  // out of fetches unless `in_sync` (in the ISR as the cluster view has it).
  struct follow {
    std::shared_ptr<replication::partition> partition;
    bool throttled = false;
    bool in_sync = false;
  };
  void set_partitions(const std::vector<follow>& partitions);
  [[nodiscard]] const leader_address& leader() const { return leader_; }

 private:
  struct followed {
    follow what;
    std::chrono::steady_clock::time_point not_before{};  // backing off after a failed fetch until then
  };

  boost::asio::awaitable<void> run();
  // Sends one Fetch and reads its response into `body`.
  boost::asio::awaitable<result<void>> round_trip(const protocol::fetch_request& request, std::vector<std::byte>& body);
  // A partition in a fetch on its way, with what the fetch assumed of it.
  struct asked_partition {
    std::shared_ptr<replication::partition> partition;
    leader_epoch epoch;
    offset from;
    bool throttled = false;
  };
  // What to fetch now: the partitions not backing off, and throttled ones only while the throttle admits them;
  // those whose recovery left a hole in flushed data (storage::log::damaged_from) go to `damaged` instead.
  [[nodiscard]] protocol::fetch_request build_request(std::vector<asked_partition>& asked,
                                                      std::vector<std::shared_ptr<replication::partition>>& damaged);
  // Such replicas drop everything from the hole on, so they fetch the leader's records instead of keeping a log
  // that skips some (blocking: the fetcher's thread).
  void drop_damaged_tails(const std::vector<std::shared_ptr<replication::partition>>& damaged);
  // Applies one partition's answer; false when the partition should back off.
  bool apply(const asked_partition& asked,
             const protocol::fetch_response::fetchable_topic_response::partition_data& answer);
  // OFFSET_OUT_OF_RANGE: starts over at the leader's log start, or truncates to its high watermark (Kafka's
  // handleOutOfRangeError); false when the partition should back off.
  bool start_over(replication::partition& partition, offset from,
                  const protocol::fetch_response::fetchable_topic_response::partition_data& answer);
  // Truncates to where the logs agree, from the leader's diverging epoch (KIP-279).
  result<void> truncate_diverged(replication::partition& partition, leader_epoch epoch, offset end);
  void back_off(const std::shared_ptr<replication::partition>& partition);
  boost::asio::awaitable<void> pause(std::chrono::milliseconds duration);

  boost::asio::io_context& io_;
  const broker_id self_;
  const leader_address leader_;
  const fetch_settings settings_;
  replication::replication_quota& quota_;
  net::peer_client peer_;
  boost::asio::steady_timer wake_;  // cancelled when the partitions change or the fetcher stops
  std::atomic<bool> stopped_{false};
  std::int32_t correlation_id_ = 0;
  std::mutex mutex_;
  std::vector<followed> partitions_;  // guarded by mutex_
};

}  // namespace ferry::follower
