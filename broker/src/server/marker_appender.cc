#include "server/marker_appender.h"

#include <boost/asio/post.hpp>

#include "base/guarded.h"
#include "base/log.h"
#include "group/group_coordinator.h"
#include "server/error_mapping.h"
#include "server/replicated_wait.h"

namespace ferry::server {
namespace asio = boost::asio;

void marker_appender::append(const topic_partition& partition, producer_id producer, producer_epoch epoch,
                             model::txn_marker marker, done_callback done) {
  const auto leader = partitions_.leader_for(partition);
  if (!leader) return done(to_kafka_error(leader.error()));
  auto replica = leader.value();
  if (replica->in_sync_replicas() < min_insync_replicas(*replica))
    return done(protocol::error_code::not_enough_replicas);
  const auto appended = replica->append_marker(producer, epoch, marker);
  if (!appended) {
    const auto code = to_kafka_error(appended.error());
    FERRY_LOG_LIMITED(warn, "txn", 1000) << partition << ": refused the "
                                         << (marker.type == model::marker_type::commit ? "commit" : "abort")
                                         << " marker of producer " << producer << " epoch " << epoch << ": "
                                         << appended.error().message();
    return done(code);
  }
  const offset upto = next(appended.value().last_offset);
  auto finish = [this, partition, producer, type = marker.type, done = std::move(done)](replicated_outcome outcome) {
    if (outcome == replicated_outcome::replicated && partition.topic == group::offsets_topic && offsets_listener_)
      offsets_listener_(partition.partition.value(), producer, type);
    switch (outcome) {
      case replicated_outcome::replicated:
        return done(protocol::error_code::none);
      case replicated_outcome::not_leader:
        return done(protocol::error_code::not_leader_or_follower);
      case replicated_outcome::too_few_replicas:
        return done(protocol::error_code::not_enough_replicas_after_append);
      case replicated_outcome::timed_out:
        return done(protocol::error_code::request_timed_out);
    }
  };
  if (appended.value().flush_required) {
    asio::post(blocking_pool_,
               guarded("flushing a transaction marker", [this, finish = std::move(finish), replica, upto]() mutable {
                 if (const auto flushed = replica->flush(upto); !flushed)
                   FERRY_LOG_LIMITED(warn, "txn", 100)
                       << replica->id() << ": flush failed: " << flushed.error().message();
                 await_replicated(timers_, replica, upto, timeout_ms_, std::move(finish));
               }));
    return;
  }
  await_replicated(timers_, std::move(replica), upto, timeout_ms_, std::move(finish));
}

}  // namespace ferry::server
