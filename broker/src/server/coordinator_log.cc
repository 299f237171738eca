#include "server/coordinator_log.h"

#include <algorithm>
#include <utility>

#include <boost/asio/post.hpp>

#include "base/guarded.h"
#include "base/log.h"
#include "model/batch_builder.h"
#include "model/compression.h"
#include "model/control_record.h"
#include "model/records.h"
#include "server/replicated_wait.h"
#include "storage/errc.h"

namespace ferry::server {
namespace asio = boost::asio;
namespace {

constexpr std::uint64_t replay_chunk_bytes = std::uint64_t{4} * 1024 * 1024;
// Coordinator records are small; this bounds what a damaged batch could make us allocate.
constexpr std::size_t max_replayed_batch_bytes = std::size_t{64} * 1024 * 1024;

// Every keyed record of one stored batch, or its transaction marker.
result<void> visit_batch(std::span<const std::byte> batch, std::vector<std::byte>& scratch,
                         const model::coordinator_log::replay_visitor& visit) {
  const model::batch_header_view header(batch);
  if (header.is_control()) {
    // A control batch that is not a transaction marker (none exist in these topics) is skipped.
    if (const auto marker = model::read_marker(batch); marker && header.is_transactional() && visit.marker)
      visit.marker({header.producer(), marker.value().type});
    return success();
  }
  const auto producer = header.is_transactional() ? header.producer() : no_producer_id;
  auto records = batch.subspan(model::batch_header_size);
  if (header.codec() != model::compression::none) {
    FERRY_TRY(model::decompress_all(header.codec(), records, max_replayed_batch_bytes, scratch));
    records = scratch;
  }
  return model::for_each_record(records, header.records_count(), [&](const model::record_view& r) {
    if (r.key) visit.record({*r.key, r.value, producer});
  });
}

}  // namespace

replicated_coordinator_log::replicated_coordinator_log(std::string_view topic, error_codes errors,
                                                       replication::partition_manager& partitions,
                                                       const ferry::clock& clock, asio::io_context& timers,
                                                       asio::thread_pool& blocking_pool, std::int32_t timeout_ms)
    : topic_(topic),
      errors_(errors),
      partitions_(partitions),
      clock_(clock),
      timers_(timers),
      blocking_pool_(blocking_pool),
      timeout_ms_(timeout_ms) {}

void replicated_coordinator_log::append(std::int32_t partition, std::vector<record> records,
                                        std::function<void(std::error_code)> done) {
  write(partition, {}, records, std::move(done));
}

void replicated_coordinator_log::append_transactional(std::int32_t partition, producer_id producer,
                                                      producer_epoch epoch, std::vector<record> records,
                                                      std::function<void(std::error_code)> done) {
  // Sequence 0 in every batch, as Kafka's group coordinator writes them: the log checks only the epoch of a
  // coordinator's batch.
  write(partition, {.producer = producer, .epoch = epoch, .base_sequence = 0, .transactional = true}, records,
        std::move(done));
}

void replicated_coordinator_log::write(std::int32_t partition, model::batch_builder::options batch_options,
                                       const std::vector<record>& records, std::function<void(std::error_code)> done) {
  const auto leader = partitions_.leader_for({topic_, partition_id{partition}});
  if (!leader) {
    done(errors_.not_coordinator);
    return;
  }
  auto replica = leader.value();
  if (replica->in_sync_replicas() < min_insync_replicas(*replica)) {
    done(errors_.unavailable);
    return;
  }
  const bool transactional = batch_options.transactional;
  model::batch_builder builder(batch_options);
  const auto now = clock_.now_ms();
  for (const auto& r : records) {
    builder.add(now, r.key, r.value ? std::optional<std::span<const std::byte>>(*r.value) : std::nullopt);
  }
  auto batch = builder.finish();
  if (!batch) {
    done(errors_.unavailable);
    return;
  }
  const auto appended =
      transactional ? replica->append_from_coordinator(batch.value()) : replica->append(batch.value());
  if (!appended) {
    FERRY_LOG_LIMITED(warn, "coordinator", 100)
        << replica->id() << ": cannot write coordinator records: " << appended.error().message();
    // A producer fenced since: its transaction's offsets are refused as Kafka's coordinator refuses them.
    done(appended.error() == storage::errc::invalid_producer_epoch ? appended.error() : errors_.not_coordinator);
    return;
  }
  const offset upto = next(appended.value().last_offset);
  // Kafka's NOT_ENOUGH_REPLICAS_AFTER_APPEND and a timeout both become unavailable for the coordinator.
  auto finish = [errors = errors_, done = std::move(done)](replicated_outcome outcome) {
    done(outcome == replicated_outcome::replicated   ? std::error_code()
         : outcome == replicated_outcome::not_leader ? errors.not_coordinator
                                                     : errors.unavailable);
  };
  const auto timeout = timeout_ms_;
  if (appended.value().flush_required) {
    // flush.messages on the topic: the fsync runs off the network threads, then the wait starts.
    asio::post(blocking_pool_, guarded("flushing a coordinator's write", [finish = std::move(finish), replica, upto,
                                                                          timeout, &timers = timers_]() mutable {
                 if (const auto flushed = replica->flush(upto); !flushed)
                   FERRY_LOG_LIMITED(warn, "coordinator", 100)
                       << replica->id() << ": flush failed: " << flushed.error().message();
                 await_replicated(timers, replica, upto, timeout, std::move(finish));
               }));
    return;
  }
  await_replicated(timers_, std::move(replica), upto, timeout, std::move(finish));
}

result<void> replicated_coordinator_log::replay(std::int32_t partition, const replay_visitor& visit) {
  FERRY_TRY(auto replica, partitions_.replica_for({topic_, partition_id{partition}}));
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
      FERRY_TRY(visit_batch(rest.first(size), scratch, visit));
      rest = rest.subspan(size);
    }
    from = read.next_offset;
  }
  return success();
}

}  // namespace ferry::server
