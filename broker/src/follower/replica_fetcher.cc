#include "follower/replica_fetcher.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/guarded.h"
#include "base/log.h"
#include "protocol/error_code.h"
#include "protocol/header.h"

namespace ferry::follower {
namespace asio = boost::asio;
namespace p = protocol;
using asio::awaitable;
using partition_data = p::fetch_response::fetchable_topic_response::partition_data;

namespace {

// Fetch v12: the first version with the last fetched epoch and the diverging epoch, still by topic name.
constexpr std::int16_t fetch_version = 12;

}  // namespace

replica_fetcher::replica_fetcher(asio::io_context& io, broker_id self, leader_address leader, fetch_settings settings,
                                 replication::replication_quota& quota)
    : io_(io),
      self_(self),
      leader_(std::move(leader)),
      settings_(settings),
      quota_(quota),
      peer_(io, settings.security),
      wake_(io) {}

void replica_fetcher::start() {
  asio::co_spawn(
      io_, [self = shared_from_this()] { return self->run(); },
      guarded_detached("the replica fetcher from broker " + std::to_string(leader_.id.value())));
}

void replica_fetcher::stop() {
  stopped_ = true;
  asio::post(io_, guarded("stopping a replica fetcher", [self = shared_from_this()] {
               self->peer_.close();
               self->wake_.cancel();
             }));
}

void replica_fetcher::set_partitions(const std::vector<follow>& partitions) {
  {
    std::lock_guard lock(mutex_);
    std::vector<followed> next;
    for (const auto& f : partitions) {
      followed entry{f, {}};
      for (const auto& old : partitions_)
        if (old.what.partition == f.partition) entry.not_before = old.not_before;
      next.push_back(std::move(entry));
    }
    partitions_ = std::move(next);
  }
  asio::post(io_, guarded("waking a replica fetcher", [self = shared_from_this()] { self->wake_.cancel(); }));
}

void replica_fetcher::back_off(const std::shared_ptr<replication::partition>& partition) {
  std::lock_guard lock(mutex_);
  for (auto& f : partitions_)
    if (f.what.partition == partition)
      f.not_before = std::chrono::steady_clock::now() + std::chrono::milliseconds(settings_.backoff_ms);
}

awaitable<void> replica_fetcher::pause(std::chrono::milliseconds duration) {
  wake_.expires_after(duration);
  co_await wake_.async_wait(asio::as_tuple(asio::use_awaitable));
}

void replica_fetcher::drop_damaged_tails(const std::vector<std::shared_ptr<replication::partition>>& damaged) {
  for (const auto& partition : damaged) {
    const auto from = partition->log().damaged_from();
    if (!from) continue;
    FERRY_LOG(warn, "follower")
        << partition->id() << ": recovery could not read this log from offset " << *from
        << " on (records after it are kept); truncating there to fetch it all again from leader " << leader_.id;
    // A failure (or a leadership taken meanwhile) waits a backoff before the next try, like a failed fetch.
    if (const auto cut = partition->truncate_to(*from); !cut) {
      FERRY_LOG(error, "follower") << partition->id() << ": truncation failed: " << cut.error().message();
      back_off(partition);
    }
  }
}

p::fetch_request replica_fetcher::build_request(std::vector<asked_partition>& asked,
                                                std::vector<std::shared_ptr<replication::partition>>& damaged) {
  p::fetch_request request;
  request.replica_id = self_;
  request.max_wait_ms = settings_.max_wait_ms;
  request.min_bytes = settings_.min_bytes;
  request.max_bytes = settings_.response_max_bytes;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  for (const auto& f : partitions_) {
    if (f.not_before > now) continue;
    auto& partition = *f.what.partition;
    if (partition.log().damaged_from()) {
      damaged.push_back(f.what.partition);  // asked for once its tail is dropped
      continue;
    }
    if (f.what.throttled && !f.what.in_sync && !quota_.admits()) continue;
    const auto& id = partition.id();
    auto topic =
        std::find_if(request.topics.begin(), request.topics.end(), [&](const auto& t) { return t.topic == id.topic; });
    if (topic == request.topics.end()) {
      topic = request.topics.emplace(request.topics.end());
      topic->topic = id.topic;
    }
    auto& wanted = topic->partitions.emplace_back();
    wanted.partition = id.partition;
    wanted.current_leader_epoch = partition.epoch();
    wanted.fetch_offset = partition.log_end_offset();
    wanted.last_fetched_epoch = partition.log().latest_epoch();
    wanted.log_start_offset = partition.log_start_offset();
    wanted.partition_max_bytes = settings_.partition_max_bytes;
    asked.push_back({f.what.partition, wanted.current_leader_epoch, wanted.fetch_offset, f.what.throttled});
  }
  return request;
}

awaitable<void> replica_fetcher::run() {
  auto keep_alive = shared_from_this();
  std::vector<std::byte> body;
  const auto backoff = std::chrono::milliseconds(settings_.backoff_ms);
  while (!stopped_) {
    std::vector<asked_partition> asked;
    std::vector<std::shared_ptr<replication::partition>> damaged;
    const auto request = build_request(asked, damaged);
    if (!damaged.empty()) {
      drop_damaged_tails(damaged);
      continue;
    }
    if (asked.empty()) {
      co_await pause(backoff);  // set_partitions wakes it sooner
      continue;
    }
    if (!peer_.is_open()) {
      if (const auto connected = co_await peer_.connect(leader_.host, leader_.port,
                                                        std::chrono::milliseconds(settings_.socket_timeout_ms));
          !connected) {
        FERRY_LOG_LIMITED(warn, "follower", 10000)
            << "cannot connect to leader " << leader_.id << " at " << leader_.host << ":" << leader_.port << ": "
            << connected.error().message() << "; retrying every " << settings_.backoff_ms << " ms";
        co_await pause(backoff);
        continue;
      }
    }
    if (const auto done = co_await round_trip(request, body); !done) {
      if (!stopped_)
        FERRY_LOG_LIMITED(warn, "follower", 10000)
            << "fetch from leader " << leader_.id << " failed: " << done.error().message() << "; reconnecting";
      peer_.close();
      co_await pause(backoff);
      continue;
    }
    p::reader r(body);
    std::int32_t correlation_id = 0;
    p::fetch_response response;
    if (!p::decode_response_header(r, correlation_id, true) || correlation_id != correlation_id_ ||
        !response.decode(r, fetch_version) || response.error_code != 0) {
      FERRY_LOG_LIMITED(error, "follower", 10000)
          << "leader " << leader_.id << " answered a fetch with a response that does not parse or with error "
          << response.error_code << "; reconnecting";
      peer_.close();
      co_await pause(backoff);
      continue;
    }
    for (const auto& topic : response.responses) {
      for (const auto& answer : topic.partitions) {
        const auto match = std::find_if(asked.begin(), asked.end(), [&](const asked_partition& a) {
          return a.partition->id().topic == topic.topic && a.partition->id().partition == answer.partition_index;
        });
        if (match != asked.end() && !apply(*match, answer)) back_off(match->partition);
      }
    }
  }
}

bool replica_fetcher::apply(const asked_partition& asked, const partition_data& answer) {
  auto& partition = *asked.partition;
  // The replica changed while the fetch was out (a new epoch, a new leader, a truncation): ask again.
  if (partition.is_leader() || partition.epoch() != asked.epoch || partition.leader() != leader_.id ||
      partition.log_end_offset() != asked.from)
    return true;
  const auto code = static_cast<p::error_code>(answer.error_code);
  if (code == p::error_code::offset_out_of_range) return start_over(partition, asked.from, answer);
  if (code != p::error_code::none) {
    FERRY_LOG_LIMITED(info, "follower", 10000)
        << partition.id() << ": leader " << leader_.id << " answered the fetch with error " << answer.error_code;
    return false;
  }
  if (answer.diverging_epoch.end_offset.value() >= 0) {
    const leader_epoch latest = partition.log().latest_epoch();
    const auto truncated =
        truncate_diverged(partition, answer.diverging_epoch.epoch, answer.diverging_epoch.end_offset);
    if (!truncated) {
      FERRY_LOG(error, "follower") << partition.id() << ": truncation failed: " << truncated.error().message();
      return false;
    }
    // Neither the log end nor the last epoch moved, so the next fetch would get the same answer: wait a backoff
    // rather than spin on it.
    if (partition.log_end_offset() == asked.from && partition.log().latest_epoch() == latest) {
      FERRY_LOG_LIMITED(warn, "follower", 10000)
          << partition.id() << ": leader " << leader_.id << " says the log diverged after epoch "
          << answer.diverging_epoch.epoch << ", but it ends at " << asked.from << " in epoch " << latest
          << " either way";
      return false;
    }
    return true;
  }
  if (answer.records && !answer.records->bytes.empty()) {
    if (asked.throttled) quota_.record(answer.records->bytes.size());
    const auto appended = partition.append_from_leader(answer.records->bytes, answer.high_watermark);
    if (!appended) {
      FERRY_LOG_LIMITED(error, "follower", 10000)
          << partition.id() << ": cannot append what leader " << leader_.id << " sent: " << appended.error().message();
      return false;
    }
  } else {
    partition.follow_high_watermark(answer.high_watermark);
  }
  // The leader's log start moves with DeleteRecords (and retention); this log follows it.
  if (answer.log_start_offset > partition.log_start_offset()) {
    if (const auto followed = partition.follow_log_start(answer.log_start_offset); !followed)
      FERRY_LOG_LIMITED(warn, "follower", 10000) << partition.id() << ": cannot move the log start to the leader's "
                                                 << answer.log_start_offset << ": " << followed.error().message();
  }
  return true;
}

bool replica_fetcher::start_over(replication::partition& partition, offset from, const partition_data& answer) {
  // Below the leader's log start (its retention removed what this log needs next): start over there.
  // Otherwise this log ends past the leader's, with no epoch that says where they part: keep what the leader
  // has committed. A leader that gives neither (Kafka's answers -1 on some paths) is asked again after a
  // backoff, as is one whose answer would leave this log where it is: never a refetch at network speed.
  const bool behind = answer.log_start_offset.value() >= 0 && from < answer.log_start_offset;
  const offset to = behind ? answer.log_start_offset : std::min(answer.high_watermark, from);
  if (to.value() < 0 || (!behind && to == from)) {
    FERRY_LOG_LIMITED(warn, "follower", 10000)
        << partition.id() << ": fetch offset " << from << " is out of range on leader " << leader_.id << " (log start "
        << answer.log_start_offset << ", high watermark " << answer.high_watermark << "); asking again in "
        << settings_.backoff_ms << " ms";
    return false;
  }
  FERRY_LOG_LIMITED(warn, "follower", 10000)
      << partition.id() << ": fetch offset " << from << " is out of range on leader " << leader_.id << " (log start "
      << answer.log_start_offset << ", high watermark " << answer.high_watermark << "); "
      << (behind ? "starting over at " : "truncating to ") << to;
  const auto moved = behind ? partition.reset_to(to) : partition.truncate_to(to);
  if (!moved) FERRY_LOG_LIMITED(error, "follower", 10000) << partition.id() << ": " << moved.error().message();
  return moved && partition.log_end_offset() != from;
}

result<void> replica_fetcher::truncate_diverged(replication::partition& partition, leader_epoch epoch, offset end) {
  // Where the leader's epoch `epoch` ends in this log too. If this log never had that epoch, it ends where
  // the largest epoch below it ends here; the next fetch, with that as the last fetched epoch, checks again.
  const auto mine = partition.log().end_offset_for_epoch(epoch);
  offset to = end;
  if (mine.epoch.value() >= 0 && mine.end.value() >= 0) to = mine.epoch == epoch ? std::min(end, mine.end) : mine.end;
  to = std::min(to, partition.log_end_offset());
  FERRY_LOG(info, "follower") << partition.id() << ": the log diverged from leader " << leader_.id << "'s after epoch "
                              << epoch << " (which ends at " << end << " there); truncating to " << to;
  return partition.truncate_to(to);
}

awaitable<result<void>> replica_fetcher::round_trip(const p::fetch_request& request, std::vector<std::byte>& body) {
  p::output_buffer out;
  p::begin_request_frame(out, {1, fetch_version, ++correlation_id_, "ferry-follower-" + std::to_string(self_.value())},
                         true);
  p::writer w(out);
  request.encode(w, fetch_version);
  p::finish_frame(out);
  const auto frame = out.flatten();
  // Bounded: the leader sends at most what was asked for, or one batch past it (KIP-74), and no batch is
  // larger than a produce request may be (socket.request.max.bytes, 100 MiB by default).
  constexpr std::int32_t largest_batch = 100 << 20;
  co_return co_await peer_.round_trip(frame,
                                      std::chrono::milliseconds(settings_.max_wait_ms + settings_.socket_timeout_ms),
                                      std::max(settings_.response_max_bytes, largest_batch) + (1 << 20), body);
}

}  // namespace ferry::follower
