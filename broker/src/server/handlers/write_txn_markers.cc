#include <mutex>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "server/authorization.h"
#include "server/handlers/coordinator_reply.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;
namespace {

// Every partition's answer, filled in as its marker is replicated; the reply fires with the last one.
struct marker_results {
  std::mutex mutex;
  std::vector<std::vector<std::vector<p::error_code>>> codes;  // by marker, topic, partition
  std::size_t outstanding = 1;  // one for the handler itself, released once everything is handed out
  std::function<void(bool)> done;

  void set(std::size_t m, std::size_t t, std::size_t i, p::error_code code) {
    {
      std::lock_guard lock(mutex);
      codes[m][t][i] = code;
      if (--outstanding != 0) return;
    }
    done(true);
  }
};

}  // namespace

// WriteTxnMarkers, from a transaction coordinator: each marker appended to each of its partitions this broker
// leads, answered per partition once replicated as acks=all.
awaitable<p::write_txn_markers_response> handle_write_txn_markers(request_context& ctx,
                                                                  p::write_txn_markers_request& request) {
  // Only brokers write markers: ClusterAction on the cluster, or every partition is refused.
  if (!authorize_broker_request(ctx)) {
    p::write_txn_markers_response refused;
    for (const auto& marker : request.markers) {
      auto& out = refused.markers.emplace_back();
      out.producer_id = marker.producer_id;
      for (const auto& topic : marker.topics) {
        auto& t = out.topics.emplace_back();
        t.name = topic.name;
        for (const auto index : topic.partition_indexes)
          t.partitions.push_back(
              {.partition_index = index, .error_code = ctx.error(p::error_code::cluster_authorization_failed)});
      }
    }
    co_return refused;
  }
  auto reply = std::make_shared<coordinator_reply<bool>>(ctx.connection.executor);
  auto results = std::make_shared<marker_results>();
  results->done = reply->callback();
  results->codes.resize(request.markers.size());
  for (std::size_t m = 0; m < request.markers.size(); ++m) {
    results->codes[m].resize(request.markers[m].topics.size());
    for (std::size_t t = 0; t < request.markers[m].topics.size(); ++t) {
      results->codes[m][t].resize(request.markers[m].topics[t].partition_indexes.size(), p::error_code::none);
      std::lock_guard lock(results->mutex);
      results->outstanding += request.markers[m].topics[t].partition_indexes.size();
    }
  }
  for (std::size_t m = 0; m < request.markers.size(); ++m) {
    const auto& marker = request.markers[m];
    const model::txn_marker written{marker.transaction_result ? model::marker_type::commit : model::marker_type::abort,
                                    marker.coordinator_epoch};
    for (std::size_t t = 0; t < marker.topics.size(); ++t) {
      const auto& topic = marker.topics[t];
      for (std::size_t i = 0; i < topic.partition_indexes.size(); ++i)
        ctx.broker.markers.append({topic.name, partition_id{topic.partition_indexes[i]}}, marker.producer_id,
                                  marker.producer_epoch, written,
                                  [results, m, t, i](p::error_code code) { results->set(m, t, i, code); });
    }
  }
  {
    bool last = false;
    {
      std::lock_guard lock(results->mutex);
      last = --results->outstanding == 0;
    }
    if (last) results->done(true);
  }
  while (!reply->ready()) co_await reply->timer().async_wait(asio::as_tuple(asio::use_awaitable));

  p::write_txn_markers_response response;
  std::lock_guard lock(results->mutex);
  for (std::size_t m = 0; m < request.markers.size(); ++m) {
    auto& out = response.markers.emplace_back();
    out.producer_id = request.markers[m].producer_id;
    for (std::size_t t = 0; t < request.markers[m].topics.size(); ++t) {
      auto& topic = out.topics.emplace_back();
      topic.name = request.markers[m].topics[t].name;
      for (std::size_t i = 0; i < request.markers[m].topics[t].partition_indexes.size(); ++i)
        topic.partitions.push_back({.partition_index = request.markers[m].topics[t].partition_indexes[i],
                                    .error_code = ctx.error(results->codes[m][t][i])});
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
