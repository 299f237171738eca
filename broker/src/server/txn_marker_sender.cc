#include "server/txn_marker_sender.h"

#include <map>
#include <mutex>

#include <boost/asio/co_spawn.hpp>

#include "base/guarded.h"
#include "base/log.h"
#include "protocol/messages/write_txn_markers.h"

namespace ferry::server {
namespace p = protocol;
namespace {

// WriteTxnMarkers v1: the flexible version, which Kafka 2.8 and later serve.
constexpr std::int16_t write_txn_markers_version = 1;

// Whether a leader's answer leaves the partition needing the marker.
bool needs_retry(p::error_code code) {
  switch (code) {
    case p::error_code::none:
    case p::error_code::unknown_topic_or_partition:      // deleted with the transaction open
    case p::error_code::invalid_producer_epoch:          // a newer epoch of the producer wrote there already
    case p::error_code::transaction_coordinator_fenced:  // a newer coordinator owns the transaction
      return false;
    default:
      return true;
  }
}

}  // namespace

// The partitions still needing the marker, collected from every leader; `done` runs when the last answers.
struct txn_marker_sender::gather {
  std::mutex mutex;
  std::vector<topic_partition> retry;
  std::size_t outstanding = 1;  // one for write() itself, released when it has handed everything out
  std::function<void(std::vector<topic_partition>)> done;

  void finish(std::vector<topic_partition> failed) {
    std::vector<topic_partition> out;
    {
      std::lock_guard lock(mutex);
      retry.insert(retry.end(), failed.begin(), failed.end());
      if (--outstanding != 0) return;
      out = std::move(retry);
    }
    done(std::move(out));
  }
};

void txn_marker_sender::write(txn::marker_request request, std::function<void(std::vector<topic_partition>)> done) {
  auto results = std::make_shared<gather>();
  results->done = std::move(done);
  const auto view = view_();
  std::vector<topic_partition> here;
  std::map<broker_id, std::vector<topic_partition>> elsewhere;
  std::vector<topic_partition> unled;
  for (const auto& tp : request.partitions) {
    const auto* topic = view->find_topic(tp.topic);
    if (topic == nullptr || topic->marked_for_deletion || !topic->partitions.contains(tp.partition)) continue;
    const auto* info = view->find_partition(tp);
    if (info == nullptr || !info->state || !view->is_live(info->state->leader))
      unled.push_back(tp);
    else if (info->state->leader == self_)
      here.push_back(tp);
    else
      elsewhere[info->state->leader].push_back(tp);
  }
  const model::txn_marker marker{request.type, request.coordinator_epoch};
  {
    std::lock_guard lock(results->mutex);
    results->retry = std::move(unled);
    results->outstanding += here.size() + elsewhere.size();
  }
  for (const auto& tp : here)
    local_.append(tp, request.producer.id, request.producer.epoch, marker, [results, tp](p::error_code code) {
      results->finish(needs_retry(code) ? std::vector{tp} : std::vector<topic_partition>{});
    });
  for (auto& [leader, partitions] : elsewhere) {
    auto part = request;
    part.partitions = std::move(partitions);
    boost::asio::co_spawn(io_, send(view->brokers.at(leader), std::move(part), results),
                          guarded_detached("sending transaction markers"));
  }
  results->finish({});
}

boost::asio::awaitable<void> txn_marker_sender::send(coord::broker_info leader, txn::marker_request request,
                                                     std::shared_ptr<gather> results) {
  p::write_txn_markers_request out;
  auto& marker = out.markers.emplace_back();
  marker.producer_id = request.producer.id;
  marker.producer_epoch = request.producer.epoch;
  marker.transaction_result = request.type == model::marker_type::commit;
  marker.coordinator_epoch = request.coordinator_epoch;
  for (const auto& tp : request.partitions) {
    if (marker.topics.empty() || marker.topics.back().name != tp.topic) marker.topics.emplace_back().name = tp.topic;
    marker.topics.back().partition_indexes.push_back(tp.partition.value());
  }
  const auto answer = co_await peers_->call<p::write_txn_markers_request, p::write_txn_markers_response>(
      leader, out, write_txn_markers_version);
  if (!answer) {
    FERRY_LOG_LIMITED(warn, "txn", 10000)
        << "cannot send transaction markers to broker " << leader.id << " at " << leader.host << ":" << leader.port
        << ": " << answer.error().message() << " (sent again)";
    results->finish(std::move(request.partitions));
    co_return;
  }
  std::vector<topic_partition> failed;
  std::vector<topic_partition> answered;
  for (const auto& m : answer.value().markers) {
    for (const auto& topic : m.topics) {
      for (const auto& part : topic.partitions) {
        const topic_partition tp{topic.name, partition_id{part.partition_index}};
        answered.push_back(tp);
        const auto code = static_cast<p::error_code>(part.error_code);
        if (needs_retry(code)) failed.push_back(tp);
      }
    }
  }
  // A partition the answer left out is tried again.
  std::sort(answered.begin(), answered.end());
  for (const auto& tp : request.partitions)
    if (!std::binary_search(answered.begin(), answered.end(), tp)) failed.push_back(tp);
  results->finish(std::move(failed));
}

}  // namespace ferry::server
