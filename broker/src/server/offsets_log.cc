#include "server/offsets_log.h"

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "base/log.h"
#include "group/errc.h"
#include "model/batch_builder.h"
#include "model/compression.h"
#include "model/records.h"
#include "storage/errc.h"

namespace ferry::server {
namespace asio = boost::asio;
namespace {

constexpr std::uint64_t replay_chunk_bytes = std::uint64_t{4} * 1024 * 1024;
// Records of __consumer_offsets are small; this bounds what a damaged batch could make us allocate.
constexpr std::size_t max_replayed_batch_bytes = std::size_t{64} * 1024 * 1024;

std::size_t min_insync_replicas(const replication::partition& p) {
  return static_cast<std::size_t>(std::max(1, p.settings()->min_insync_replicas));
}

// One write waiting for the high watermark to pass it. Everything but notify() runs on the timers' executor.
class replicated_write final : public replication::data_waiter, public std::enable_shared_from_this<replicated_write> {
 public:
  replicated_write(asio::io_context& timers, std::shared_ptr<replication::partition> partition, offset upto,
                   std::function<void(std::error_code)> done)
      : timer_(timers),
        partition_(std::move(partition)),
        epoch_(partition_->epoch()),
        upto_(upto),
        done_(std::move(done)) {}

  void start(std::int32_t timeout_ms) {
    partition_->add_waiter(shared_from_this());
    timer_.expires_after(std::chrono::milliseconds(timeout_ms));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->finish(group::errc::coordinator_not_available);
    });
    check();
  }
  void notify() override {
    asio::post(timer_.get_executor(), [self = shared_from_this()] { self->check(); });
  }

 private:
  void check() {
    if (finished_) return;
    if (!partition_->is_leader() || partition_->epoch() != epoch_) {
      finish(group::errc::not_coordinator);
    } else if (partition_->high_watermark() >= upto_) {
      // Written, but with fewer replicas than min.insync.replicas asks for: Kafka's
      // NOT_ENOUGH_REPLICAS_AFTER_APPEND, which the coordinator reports as unavailable.
      finish(partition_->in_sync_replicas() < min_insync_replicas(*partition_)
                 ? std::error_code(group::errc::coordinator_not_available)
                 : std::error_code());
    }
  }
  void finish(std::error_code outcome) {
    if (std::exchange(finished_, true)) return;
    timer_.cancel();
    partition_->remove_waiter(shared_from_this());
    done_(outcome);
  }

  asio::steady_timer timer_;
  std::shared_ptr<replication::partition> partition_;
  leader_epoch epoch_;
  offset upto_;
  std::function<void(std::error_code)> done_;
  bool finished_ = false;
};

// Every keyed record of one stored batch.
result<void> visit_batch(std::span<const std::byte> batch, std::vector<std::byte>& scratch,
                         const group::offsets_log::record_visitor& fn) {
  const model::batch_header_view header(batch);
  if (header.is_control()) return success();
  auto records = batch.subspan(model::batch_header_size);
  if (header.codec() != model::compression::none) {
    FERRY_TRY(model::decompress_all(header.codec(), records, max_replayed_batch_bytes, scratch));
    records = scratch;
  }
  return model::for_each_record(records, header.records_count(), [&](const model::record_view& r) {
    if (r.key) fn(*r.key, r.value);
  });
}

}  // namespace

replicated_offsets_log::replicated_offsets_log(replication::partition_manager& partitions, const ferry::clock& clock,
                                               asio::io_context& timers, asio::thread_pool& blocking_pool,
                                               std::int32_t commit_timeout_ms)
    : partitions_(partitions),
      clock_(clock),
      timers_(timers),
      blocking_pool_(blocking_pool),
      commit_timeout_ms_(commit_timeout_ms) {}

void replicated_offsets_log::append(std::int32_t partition, std::vector<record> records,
                                    std::function<void(std::error_code)> done) {
  const auto leader = partitions_.leader_for({std::string(group::offsets_topic), partition_id{partition}});
  if (!leader) {
    done(group::errc::not_coordinator);
    return;
  }
  auto replica = leader.value();
  if (replica->in_sync_replicas() < min_insync_replicas(*replica)) {
    done(group::errc::coordinator_not_available);
    return;
  }
  model::batch_builder builder({});
  const auto now = clock_.now_ms();
  for (const auto& r : records) {
    builder.add(now, r.key, r.value ? std::optional<std::span<const std::byte>>(*r.value) : std::nullopt);
  }
  auto batch = builder.finish();
  if (!batch) {
    done(group::errc::coordinator_not_available);
    return;
  }
  const auto appended = replica->append(batch.value());
  if (!appended) {
    FERRY_LOG_LIMITED(warn, "group", 100)
        << replica->id() << ": cannot write group records: " << appended.error().message();
    done(group::errc::not_coordinator);
    return;
  }
  const offset upto = next(appended.value().last_offset);
  auto write = std::make_shared<replicated_write>(timers_, replica, upto, std::move(done));
  const auto timeout = commit_timeout_ms_;
  if (appended.value().flush_required) {
    // flush.messages on __consumer_offsets: the fsync runs off the network threads, then the wait starts.
    asio::post(blocking_pool_, [write, replica, upto, timeout, &timers = timers_] {
      if (const auto flushed = replica->flush(upto); !flushed)
        FERRY_LOG_LIMITED(warn, "group", 100) << replica->id() << ": flush failed: " << flushed.error().message();
      asio::post(timers, [write, timeout] { write->start(timeout); });
    });
    return;
  }
  asio::post(timers_, [write, timeout] { write->start(timeout); });
}

result<void> replicated_offsets_log::replay(std::int32_t partition, const record_visitor& fn) {
  FERRY_TRY(auto replica, partitions_.replica_for({std::string(group::offsets_topic), partition_id{partition}}));
  auto& log = replica->log();
  offset from = log.log_start_offset();
  const offset end = log.log_end_offset();
  std::vector<std::byte> bytes;
  std::vector<std::byte> scratch;
  while (from < end) {
    FERRY_TRY(const auto read, log.read(from, replay_chunk_bytes, end));
    if (read.slices.empty()) break;
    bytes.resize(read.total_bytes);
    std::size_t filled = 0;
    for (const auto& slice : read.slices) {
      FERRY_TRY(const std::size_t got,
                slice.file->read_at(std::span(bytes).subspan(filled, slice.length), slice.position));
      if (got != slice.length) return storage::errc::corrupt_log;
      filled += got;
    }
    std::span<const std::byte> rest(bytes);
    while (rest.size() >= model::batch_header_size) {
      const model::batch_header_view header(rest);
      const auto size = header.total_size();
      if (size > rest.size() || size < model::batch_header_size) return storage::errc::corrupt_log;
      FERRY_TRY(visit_batch(rest.first(size), scratch, fn));
      rest = rest.subspan(size);
    }
    from = read.next_offset;
  }
  return success();
}

}  // namespace ferry::server
