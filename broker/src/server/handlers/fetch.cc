#include <chrono>
#include <set>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>

#include "replication/errc.h"
#include "server/authorization.h"
#include "server/client_quota_use.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"
#include "server/handlers/leader_hint.h"
#include "server/handlers/partition_waiter.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;
namespace {

using partition_data = p::fetch_response::fetchable_topic_response::partition_data;

// What one pass found in a partition, for the topic's bytes-out and records-out counters.
struct served {
  std::shared_ptr<replication::partition> partition;
  std::uint64_t bytes = 0;
  std::int64_t records = 0;
  bool to_follower = false;  // replication traffic, not the topic's bytes out (as in Kafka)
  bool throttled = false;    // counted against leader.replication.throttled.rate
};

struct pass_result {
  std::uint64_t bytes = 0;
  // An error that answers the fetch at once, as Kafka's read path does (not the leader any more, a fenced
  // epoch, an offset out of range, a storage error).
  bool answer_now = false;
  // Partitions of topics the cluster does not know: Kafka lists them in the answer but they do not end the
  // wait for the others (a consumer of a deleted topic next to live ones must not spin).
  std::size_t unknown = 0;
  std::size_t partitions = 0;
};

// Fetch v12+ names the epoch of the fetcher's last batch. If the leader's log ends that epoch before the
// fetch offset, or never had it, the logs diverged: the fetcher (a follower) must truncate to the returned
// epoch's end before fetching again (KIP-595's check, which Kafka's replicas use from 2.7). OFFSET_OUT_OF_RANGE
// when the log cannot place the epoch, as in Kafka.
std::optional<p::error_code> check_divergence(replication::partition& partition,
                                              const p::fetch_request::fetch_topic::fetch_partition& wanted,
                                              partition_data& out) {
  if (wanted.last_fetched_epoch.value() < 0) return std::nullopt;
  const auto found = partition.log().end_offset_for_epoch(wanted.last_fetched_epoch);
  if (found.epoch.value() < 0 || found.end.value() < 0 || wanted.fetch_offset < partition.log_start_offset())
    return p::error_code::offset_out_of_range;
  if (found.epoch < wanted.last_fetched_epoch || found.end < wanted.fetch_offset) {
    out.diverging_epoch = {found.epoch, found.end};
    return p::error_code::none;
  }
  return std::nullopt;
}

// Whether what followers fetch of `partition` counts against the leader's throttle: the topic names this
// replica in leader.replication.throttled.replicas. As in Kafka, in-sync followers' bytes count too; only
// followers out of the ISR are held back when the rate is exceeded.
bool leader_throttles(const request_context& ctx, const replication::partition& partition) {
  return partition.settings()->leader_replication_throttled_replicas.covers(partition.id().partition.value(),
                                                                            ctx.broker.config.broker_id);
}

// KIP-392, with replica.selector.class set: the in-sync follower a consumer in `client_rack` should read from
// instead of this leader, one whose log holds the fetch offset; nullopt when it should read here.
std::optional<broker_id> preferred_read_replica(const request_context& ctx, const coord::cluster_view& view,
                                                replication::partition& partition, std::string_view client_rack,
                                                offset fetch_offset) {
  if (!ctx.broker.config.replica_selector_rack_aware || client_rack.empty()) return std::nullopt;
  auto candidates = partition.in_sync_followers();
  std::erase_if(candidates,
                [&](const replication::read_candidate& c) { return c.log_end < fetch_offset || !view.is_live(c.id); });
  for (auto& c : candidates) c.rack = view.brokers.at(c.id).rack;
  return replication::rack_aware_read_replica(client_rack, ctx.broker.config.rack, candidates);
}

// The fetcher a request names: a follower (replica id 0 or more) or a consumer.
broker_id fetching_replica(const request_context& ctx, const p::fetch_request& request) {
  return ctx.version() >= 15 ? request.replica_state.replica_id : request.replica_id;
}

// The topics a fetch may not read, decided once for all its passes (Kafka's checks): a follower needs
// ClusterAction on the cluster, or every topic is refused (CVE-2018-1288: a forged follower fetch); a consumer
// needs Read on each topic.
struct fetch_access {
  bool all_refused = false;
  std::set<std::string, std::less<>> refused;

  [[nodiscard]] bool refuses(std::string_view topic) const { return all_refused || refused.contains(topic); }
};

fetch_access check_access(request_context& ctx, const p::fetch_request& request) {
  fetch_access access;
  if (fetching_replica(ctx, request).value() >= 0) {
    access.all_refused = !authorize_broker_request(ctx);
    return access;
  }
  const auto view = ctx.broker.cluster.view();
  for (const auto& topic : request.topics) {
    const std::string* name = ctx.version() >= 13 ? view->find_topic_name(from_wire(topic.topic_id)) : &topic.topic;
    if (name != nullptr && !authorize(ctx, authz::operation::read, authz::resource_type::topic, *name))
      access.refused.insert(*name);
  }
  return access;
}

// One pass over every requested partition.
pass_result read_all(request_context& ctx, const p::fetch_request& request, const fetch_access& access,
                     p::fetch_response& response, std::vector<served>& found, waiting_on& waits) {
  response.responses.clear();
  response.node_endpoints.clear();
  found.clear();
  pass_result pass;
  std::uint64_t budget = request.max_bytes > 0 ? static_cast<std::uint64_t>(request.max_bytes) : 0;
  const auto view = ctx.broker.cluster.view();
  const bool by_id = ctx.version() >= 13;
  // A follower names itself; it reads up to the log end, and its fetch offset is its log end.
  const broker_id replica = fetching_replica(ctx, request);
  const bool from_follower = replica.value() >= 0;
  // Consumers of Fetch v11+ may read from any replica (KIP-392); older ones, and followers, from the leader.
  const bool any_replica = !from_follower && ctx.version() >= 11;
  // read_committed consumers read up to the last stable offset and learn which transactions were aborted; the
  // records of those stay in the response, and the consumer drops them, so the read stays zero-copy.
  constexpr std::int8_t read_committed = 1;
  const auto level = !from_follower && request.isolation_level == read_committed
                         ? replication::partition::isolation::read_committed
                         : replication::partition::isolation::read_uncommitted;
  for (const auto& topic : request.topics) {
    auto& topic_out = response.responses.emplace_back();
    topic_out.topic = topic.topic;
    topic_out.topic_id = topic.topic_id;
    // v13+ names topics by id only; an id the cluster does not know (a deleted or recreated topic) is
    // UNKNOWN_TOPIC_ID, and like an unknown name it does not end the wait for the other partitions.
    const std::string* name = by_id ? view->find_topic_name(from_wire(topic.topic_id)) : &topic.topic;
    for (const auto& wanted : topic.partitions) {
      ++pass.partitions;
      auto& out = topic_out.partitions.emplace_back();
      out.partition_index = wanted.partition;
      out.high_watermark = no_offset;
      out.records.emplace();
      if (name == nullptr) {
        out.error_code = p::code(p::error_code::unknown_topic_id);
        ++pass.unknown;
        continue;
      }
      // Refused partitions do not end the wait for the others either.
      if (access.refuses(*name)) {
        out.error_code = p::code(p::error_code::topic_authorization_failed);
        ++pass.unknown;
        continue;
      }
      const topic_partition tp{*name, wanted.partition};
      const auto part = any_replica ? ctx.broker.partitions.replica_for(tp) : ctx.broker.partitions.leader_for(tp);
      if (!part) {
        const auto* known = view->find_partition(tp);
        if (known == nullptr) {
          out.error_code = p::code(p::error_code::unknown_topic_or_partition);
          ++pass.unknown;
        } else {
          // Known to the cluster but not led here (Kafka: NOT_LEADER_OR_FOLLOWER for both cases).
          out.error_code = p::code(p::error_code::not_leader_or_follower);
          if (known->state && view->is_live(known->state->leader))
            point_to_leader(*view, ctx.connection.listener, known->state->leader, known->state->epoch, out, response);
          pass.answer_now = true;
        }
        continue;
      }
      auto& partition = *part.value();
      if (const auto fenced = check_epoch(partition, wanted.current_leader_epoch)) {
        out.error_code = p::code(*fenced);
        // The leader as this replica knows it: itself, or the one it follows (a consumer may ask a follower).
        const broker_id leader = partition.is_leader() ? broker_id{ctx.broker.config.broker_id} : partition.leader();
        if (*fenced == p::error_code::fenced_leader_epoch && leader != no_broker)
          point_to_leader(*view, ctx.connection.listener, leader, partition.epoch(), out, response);
        pass.answer_now = true;
        continue;
      }
      if (const auto diverged = check_divergence(partition, wanted, out)) {
        out.error_code = p::code(*diverged);
        // A follower below the log start starts over there, so it must learn where that is.
        out.high_watermark = partition.high_watermark();
        out.last_stable_offset = partition.last_stable_offset();
        out.log_start_offset = partition.log_start_offset();
        pass.answer_now = true;
        continue;
      }
      if (any_replica && partition.is_leader()) {
        if (const auto preferred =
                preferred_read_replica(ctx, *view, partition, request.rack_id, wanted.fetch_offset)) {
          // No records: the consumer fetches from the replica named, and comes back here when it refreshes
          // its metadata or that replica fails it.
          out.preferred_read_replica = *preferred;
          out.high_watermark = partition.high_watermark();
          out.last_stable_offset = partition.last_stable_offset();
          out.log_start_offset = partition.log_start_offset();
          pass.answer_now = true;
          continue;
        }
      }
      waits.add(part.value());
      out.aborted_transactions.emplace();
      // The first batch always goes out, even above the limits (KIP-74); after that the response budget holds.
      const std::uint64_t limit = std::min<std::uint64_t>(
          wanted.partition_max_bytes > 0 ? static_cast<std::uint64_t>(wanted.partition_max_bytes) : 0, budget);
      if (pass.bytes > 0 && limit == 0) continue;
      const std::uint64_t max_bytes = std::max<std::uint64_t>(limit, 1);
      auto read = from_follower
                      ? partition.read_for_follower(replica, wanted.fetch_offset, max_bytes,
                                                    steady_ms(ctx.broker.clock.steady_now()), wanted.log_start_offset)
                  : any_replica ? partition.read_any_replica(wanted.fetch_offset, max_bytes, level)
                                : partition.read(wanted.fetch_offset, max_bytes, level);
      // A throttled replica out of the ISR gets no records while the leader's throttle rate is exceeded, as from
      // Kafka's leader; the read still told the partition where the follower is.
      const bool throttled = read && from_follower && leader_throttles(ctx, partition);
      if (throttled && !partition.has_in_sync_follower(replica) && !ctx.broker.leader_replication_quota.admits())
        read.value() = storage::read_result{};
      // After the read: a follower's fetch may have moved it.
      out.high_watermark = partition.high_watermark();
      out.last_stable_offset = partition.last_stable_offset();
      out.log_start_offset = partition.log_start_offset();
      if (read && level == replication::partition::isolation::read_committed && read.value().total_bytes > 0) {
        auto aborted = partition.aborted_transactions(wanted.fetch_offset, read.value().next_offset);
        if (aborted) {
          for (const auto& txn : aborted.value()) out.aborted_transactions->push_back({txn.producer, txn.first});
        } else {
          read = aborted.error();
        }
      }
      if (!read) {
        out.error_code = p::code(to_kafka_error(read.error()));
        pass.answer_now = true;
        continue;
      }
      for (const auto& slice : read.value().slices)
        out.records->files.push_back(
            p::file_chunk{slice.file->native_handle(), slice.position, slice.length, slice.file});
      pass.bytes += read.value().total_bytes;
      if (read.value().total_bytes > 0)
        found.push_back({part.value(), read.value().total_bytes,
                         read.value().next_offset.value() - read.value().first_offset.value(), from_follower,
                         throttled});
      budget -= std::min(budget, read.value().total_bytes);
    }
  }
  return pass;
}

}  // namespace

// Serves record batches straight from segment files, to consumers and to followers alike: the response
// carries file regions that the connection sends with sendfile, so record bytes never enter user space. If
// fewer than min_bytes are available the request waits (up to max_wait_ms) for an append to any of its
// partitions, then reads again.
awaitable<p::fetch_response> handle_fetch(request_context& ctx, p::fetch_request& request) {
  p::fetch_response response;
  if (request.session_epoch > 0 && request.session_id != 0) {
    // Fetch sessions are not kept: the client falls back to full fetches after this error.
    response.error_code = ctx.error(p::error_code::fetch_session_id_not_found);
    co_return response;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, request.max_wait_ms));
  auto waiter = std::make_shared<partition_waiter>(co_await asio::this_coro::executor);
  waiting_on waits(waiter);
  std::vector<served> found;
  const auto access = check_access(ctx, request);
  for (;;) {
    waiter->timer.expires_at(deadline);
    const auto pass = read_all(ctx, request, access, response, found, waits);
    const bool all_unknown = pass.unknown == pass.partitions;
    if (pass.bytes >= static_cast<std::uint64_t>(std::max(1, request.min_bytes)) || pass.answer_now || all_unknown ||
        std::chrono::steady_clock::now() >= deadline)
      break;
    co_await waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  for (auto& topic : response.responses)
    for (auto& partition : topic.partitions)
      if (partition.error_code != 0) ++ctx.errors;
  // A consumer over its fetch quota or its request quota gets no data and the throttle time (Kafka's throttled
  // response), and what was read is taken back from its byte budget: it was never sent.
  if (fetching_replica(ctx, request).value() < 0) {
    double bytes = 0;
    for (const auto& s : found) bytes += static_cast<double>(s.bytes);
    const bool over_bytes = record_quota(ctx, quota::quota_kind::fetch, bytes) > 0;
    if (record_request_time(ctx) > 0 || over_bytes) {
      unrecord_quota(ctx, quota::quota_kind::fetch, bytes);
      response.responses.clear();
      response.node_endpoints.clear();
      co_return response;
    }
  }
  for (const auto& s : found) {
    // Once per response, whatever passes the long poll took.
    if (s.throttled) ctx.broker.leader_replication_quota.record(s.bytes);
    const auto& counters = s.partition->counters();
    if (s.to_follower) {
      counters.replication_bytes_out->Increment(static_cast<double>(s.bytes));
    } else {
      counters.bytes_out->Increment(static_cast<double>(s.bytes));
      counters.records_out->Increment(static_cast<double>(s.records));
    }
  }
  co_return response;
}

}  // namespace ferry::server::handlers
