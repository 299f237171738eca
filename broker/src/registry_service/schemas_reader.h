#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "coord/cluster_view.h"
#include "net/peer_client.h"
#include "registry/registry_state.h"

namespace ferry::registry_service {

// The records of fetched record batches (a Fetch response's records), with the offset after the last record of
// the last whole batch. A trailing partial batch (a fetch cut at its size limit) is left for the next fetch;
// control batches are skipped; a batch that does not parse ends the read with `damaged` set.
struct decoded_records {
  std::vector<registry::read_record> records;
  std::int64_t next_offset = 0;
  bool damaged = false;
};
decoded_records decode_fetched(std::span<const std::byte> bytes, std::int64_t from);

// Every broker's reader of `_schemas` partition 0: a consumer that fetches from the partition's leader (this
// broker too, over its own inter-broker listener) and applies what it reads to the registry's copy, long-polling
// so a write is seen within milliseconds. Follows the leader through the cluster view; starts over from the
// log start when its position is out of range (the topic was made again).
class schemas_reader {
 public:
  struct settings {
    std::string topic;
    broker_id self;
    std::chrono::milliseconds max_wait{500};
    std::chrono::milliseconds backoff{500};
    std::int32_t max_bytes = 4 << 20;
    const net::peer_security* security = nullptr;
  };
  schemas_reader(boost::asio::io_context& io, registry::registry_state& state,
                 std::function<std::shared_ptr<const coord::cluster_view>()> view, settings s);

  void start();
  // Stops at the next round; call on the io_context's thread.
  void stop();

 private:
  boost::asio::awaitable<void> run();
  boost::asio::awaitable<bool> fetch_once(const coord::broker_info& leader);
  boost::asio::awaitable<void> pause();

  boost::asio::io_context& io_;
  registry::registry_state& state_;
  std::function<std::shared_ptr<const coord::cluster_view>()> view_;
  settings settings_;
  net::peer_client peer_;
  broker_id connected_to_{-1};
  std::int32_t correlation_id_ = 0;
  boost::asio::steady_timer backoff_timer_;
  std::atomic<bool> stopped_{false};
};

}  // namespace ferry::registry_service
