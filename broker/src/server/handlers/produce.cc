#include <chrono>
#include <set>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>

#include "base/log.h"
#include "model/batch_builder.h"
#include "model/record_batch.h"
#include "model/records.h"
#include "server/authorization.h"
#include "server/client_quota_use.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"
#include "server/handlers/leader_hint.h"
#include "server/handlers/partition_waiter.h"
#include "server/internal_topics.h"
#include "server/txn_verification.h"

namespace ferry::server::handlers {
namespace asio = boost::asio;
namespace {

using partition_response = p::produce_response::topic_produce_response::partition_produce_response;

constexpr std::int16_t first_version_with_leader_hints = 10;  // KIP-951

// Checks one partition's records as Kafka does for Produce v3+: exactly one v2 batch, intact, within the
// topic's max.message.bytes as stored (after compression), with a codec this request version may carry, and every
// record in it well formed (model/records.h), so that no batch a consumer cannot parse is ever stored. A CreateTime
// batch whose max timestamp disagrees with its records gets the records' one, as Kafka's LogValidator sets it.
std::error_code validate(std::span<std::byte> records, std::int16_t version, std::int32_t max_message_bytes) {
  if (version < 3) return model::errc::unsupported_magic;  // v0-2 carry the old message formats
  const std::size_t first = model::peek_batch_size(records);
  if (first == 0 || first != records.size())
    return records.size() >= model::batch_header_size && first < records.size() && first > 0
               ? model::errc::invalid_record_count  // more than one batch
               : model::errc::batch_too_short;
  if (const auto error = model::validate_batch(
          records, {.max_batch_bytes = static_cast<std::size_t>(max_message_bytes), .from_client = true}))
    return error;
  const model::batch_header_view header(records);
  if (header.codec() == model::compression::zstd && version < 7) return model::errc::unsupported_compression;
  // max.message.bytes is the stored (compressed) size, checked above, as Kafka's LogValidator does.
  const auto checked = model::validate_records(records, model::max_inflated_batch_bytes);
  if (!checked) return checked.error();
  if (header.ts_type() == model::timestamp_type::create_time && checked.value().max_timestamp != header.max_timestamp())
    model::set_max_timestamp(records, checked.value().max_timestamp);
  return {};
}

// Why a batch is OUT_OF_ORDER_SEQUENCE_NUMBER, for the response's error_message and the broker's log: which
// sequences came, and which batch of that producer the partition holds last. Idempotence breaks in clients'
// retry logic, and this is the broker's side of the story.
std::string out_of_order_detail(replication::partition& partition, std::span<const std::byte> batch) {
  const model::batch_header_view header(batch);
  std::string detail = "sequences " + std::to_string(header.base_sequence()) + ".." +
                       std::to_string(header.last_sequence()) + " of producer " +
                       std::to_string(header.producer().value()) + " epoch " + std::to_string(header.epoch().value());
  const auto entry = partition.log().producer(header.producer());
  if (!entry || entry->batches.empty()) return detail + ": that producer has no batch here";
  const auto& last = entry->batches.back();
  return detail + " do not follow its last batch here, sequences " + std::to_string(last.first_sequence) + ".." +
         std::to_string(last.last_sequence) + " of epoch " + std::to_string(entry->epoch.value()) + " at offsets " +
         std::to_string(last.first_offset.value()) + ".." + std::to_string(last.last_offset.value());
}

std::size_t min_insync_replicas(const replication::partition& partition) {
  return static_cast<std::size_t>(std::max(1, partition.settings()->min_insync_replicas));
}

// A batch appended whose acknowledgement waits: for a flush the flush policy wants, and with acks=all for
// the high watermark to pass it (every replica in the ISR has it).
struct owed {
  std::size_t topic = 0;
  std::size_t partition = 0;
  std::shared_ptr<replication::partition> replica;
  leader_epoch epoch;
  offset upto;  // one past the batch
  bool flush = false;
  bool in_sync = false;
};

// The codec a topic's compression.type asks for; nullopt for "producer" (batches are kept as they came).
std::optional<model::compression> topic_codec(const std::string& compression_type) {
  if (compression_type == "uncompressed") return model::compression::none;
  if (compression_type == "gzip") return model::compression::gzip;
  if (compression_type == "snappy") return model::compression::snappy;
  if (compression_type == "lz4") return model::compression::lz4;
  if (compression_type == "zstd") return model::compression::zstd;
  return std::nullopt;
}

// Appends one partition's batch; `waits` gets what its acknowledgement still waits for.
partition_response append_one(request_context& ctx, const std::string& topic, partition_id index,
                              std::optional<p::record_data>& records, std::int16_t acks,
                              const std::map<topic_partition, verified_batch>& verified, std::optional<owed>& waits) {
  partition_response out;
  out.index = index;
  out.base_offset = no_offset;
  if (is_internal_topic(topic)) {
    // The coordinators write these; a client's records would corrupt what they read back.
    out.error_code = ctx.error(p::error_code::invalid_topic_exception);
    out.error_message = "cannot append to internal topic " + topic;
    return out;
  }
  const auto part = ctx.broker.partitions.leader_for({topic, index});
  if (!part) {
    out.error_code = ctx.error(not_led_here(*ctx.broker.cluster.view(), {topic, index}));
    return out;
  }
  auto& partition = *part.value();
  std::span<std::byte> bytes = records ? records->bytes : std::span<std::byte>{};
  if (const auto invalid = validate(bytes, ctx.version(), partition.settings()->max_message_bytes)) {
    out.error_code = ctx.error(to_kafka_error(invalid));
    out.error_message = invalid.message();
    return out;
  }
  const auto verification = verified.find({topic, index});
  if (verification != verified.end() && verification->second.error != p::error_code::none) {
    out.error_code = ctx.error(verification->second.error);
    out.error_message = "the transaction coordinator did not confirm that the partition is in the transaction";
    return out;
  }
  // compression.type other than "producer": the records are stored in the topic's codec, as Kafka does.
  std::vector<std::byte> recompressed;
  const auto settings = partition.settings();
  if (const auto wanted = topic_codec(settings->compression_type);
      wanted && *wanted != model::batch_header_view(bytes).codec()) {
    auto rebuilt =
        model::recompress(bytes, *wanted, static_cast<std::size_t>(std::max(0, settings->max_message_bytes)));
    if (!rebuilt) {
      out.error_code = ctx.error(to_kafka_error(rebuilt.error()));
      out.error_message = rebuilt.error().message();
      return out;
    }
    recompressed = std::move(rebuilt).value();
    if (recompressed.size() > static_cast<std::size_t>(std::max(0, settings->max_message_bytes))) {
      out.error_code = ctx.error(p::error_code::message_too_large);
      out.error_message = "the batch in the topic's compression.type " + settings->compression_type +
                          " is larger than max.message.bytes";
      return out;
    }
    bytes = recompressed;
  }
  if (acks == -1) {
    // min.insync.replicas: acks=all is only as good as the replicas in sync, and Kafka refuses to pretend.
    const auto isr = partition.in_sync_replicas();
    const auto required = min_insync_replicas(partition);
    if (isr < required) {
      out.error_code = ctx.error(p::error_code::not_enough_replicas);
      out.error_message =
          std::to_string(isr) + " replicas are in sync; min.insync.replicas is " + std::to_string(required);
      return out;
    }
  }
  const auto appended =
      verification == verified.end() || !verification->second.guard
          ? partition.append(bytes)
          : partition.append_verified(bytes, model::batch_header_view(bytes).producer(), *verification->second.guard);
  if (!appended) {
    const auto code = to_kafka_error(appended.error());
    out.error_code = ctx.error(code);
    out.error_message = appended.error().message();
    if (code == p::error_code::out_of_order_sequence_number) {
      out.error_message = out_of_order_detail(partition, bytes);
      FERRY_LOG_LIMITED(info, "server", 100)
          << partition.id() << ": OUT_OF_ORDER_SEQUENCE_NUMBER: " << *out.error_message;
    }
    return out;
  }
  out.base_offset = appended.value().base_offset;
  out.log_append_time_ms = appended.value().log_append_time_ms;
  out.log_start_offset = appended.value().log_start_offset;
  if (!appended.value().duplicate) {
    partition.counters().bytes_in->Increment(static_cast<double>(bytes.size()));
    partition.counters().records_in->Increment(model::batch_header_view(bytes).records_count());
  }
  const bool flush = appended.value().flush_required;
  const bool in_sync = acks == -1;
  if (flush || in_sync)
    waits = owed{0, 0, part.value(), partition.epoch(), next(appended.value().last_offset), flush, in_sync};
  return out;
}

void fail(request_context& ctx, p::produce_response& response, owed& w, p::error_code code) {
  auto& out = response.responses[w.topic].partition_responses[w.partition];
  out.error_code = ctx.error(code);
  out.base_offset = no_offset;
  w.in_sync = false;
}

// One look at every batch still waiting for acks=all; true while any still waits. A batch is acknowledged
// once the high watermark passed it. A leader that lost its leadership meanwhile answers
// NOT_LEADER_OR_FOLLOWER; one whose ISR shrank below min.insync.replicas by then answers
// NOT_ENOUGH_REPLICAS_AFTER_APPEND (the batch is written, but not as safely as asked).
bool settle(request_context& ctx, p::produce_response& response, std::vector<owed>& waiting) {
  bool pending = false;
  for (auto& w : waiting) {
    if (!w.in_sync) continue;
    if (!w.replica->is_leader() || w.replica->epoch() != w.epoch) {
      fail(ctx, response, w, p::error_code::not_leader_or_follower);
    } else if (w.replica->high_watermark() >= w.upto) {
      if (w.replica->in_sync_replicas() < min_insync_replicas(*w.replica))
        fail(ctx, response, w, p::error_code::not_enough_replicas_after_append);
      w.in_sync = false;
    } else {
      pending = true;
    }
  }
  return pending;
}

// acks=all: waits until settle() finds nothing waiting, or the request's timeout (REQUEST_TIMED_OUT). A
// leader alone in the ISR has moved its high watermark already: it waits for nothing and sets no timer.
awaitable<void> await_in_sync(request_context& ctx, std::int32_t timeout_ms, p::produce_response& response,
                              std::vector<owed>& waiting) {
  if (!settle(ctx, response, waiting)) co_return;
  // Counted while it waits, whichever way it ends.
  struct counted {
    prometheus::Gauge& gauge;
    explicit counted(prometheus::Gauge& g) : gauge(g) { gauge.Increment(); }
    ~counted() { gauge.Decrement(); }
    counted(const counted&) = delete;
    counted& operator=(const counted&) = delete;
  } waiting_request(ctx.broker.metrics.replication().produce_requests_waiting_for_replicas());
  auto waiter = std::make_shared<partition_waiter>(co_await asio::this_coro::executor);
  waiting_on waits(waiter);
  for (const auto& w : waiting)
    if (w.in_sync) waits.add(w.replica);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(std::max(0, timeout_ms));
  for (;;) {
    waiter->timer.expires_at(deadline);
    if (!settle(ctx, response, waiting)) co_return;  // registered first: no high watermark move is missed
    if (std::chrono::steady_clock::now() >= deadline) {
      for (auto& w : waiting)
        if (w.in_sync) fail(ctx, response, w, p::error_code::request_timed_out);
      co_return;
    }
    co_await waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

// KIP-951 (v10+): partitions answered NOT_LEADER_OR_FOLLOWER name their leader, when the cluster has a live one.
void point_to_leaders(request_context& ctx, p::produce_response& response) {
  const auto view = ctx.broker.cluster.view();
  for (auto& topic : response.responses) {
    for (auto& out : topic.partition_responses) {
      if (out.error_code != p::code(p::error_code::not_leader_or_follower)) continue;
      const auto* known = view->find_partition({topic.name, out.index});
      if (known != nullptr && known->state && view->is_live(known->state->leader))
        point_to_leader(*view, ctx.connection.listener, known->state->leader, known->state->epoch, out, response);
    }
  }
}

// Whether any partition carries a transactional batch (the first batch's header says; one that is too short to
// tell is refused later, by validate).
bool has_transactional_batches(const p::produce_request& request) {
  for (const auto& topic : request.topic_data)
    for (const auto& partition : topic.partition_data)
      if (partition.records && partition.records->bytes.size() >= model::batch_header_size &&
          model::batch_header_view(partition.records->bytes).is_transactional())
        return true;
  return false;
}

// Kafka's checks, before anything else looks at the batches: transactional batches need Write on the request's
// transactional id (without one they are refused: CVE-2018-17196), or the whole request fails; each topic needs
// Write. The records of a refused topic are dropped, so no transaction coordinator hears of its partitions.
// Returns the refused topics (all, with `whole` set, when the transactional id was).
std::set<std::string, std::less<>> refused_topics(request_context& ctx, p::produce_request& request, bool& whole) {
  std::set<std::string, std::less<>> refused;
  whole = has_transactional_batches(request) &&
          !(request.transactional_id &&
            authorize(ctx, authz::operation::write, authz::resource_type::transactional_id, *request.transactional_id));
  for (auto& topic : request.topic_data) {
    if (!whole && authorize(ctx, authz::operation::write, authz::resource_type::topic, topic.name)) continue;
    refused.insert(topic.name);
    for (auto& partition : topic.partition_data) partition.records.reset();
  }
  return refused;
}

}  // namespace

// Appends each partition's batch to the partition's log through its leader replica. acks=1 answers once the
// batch is in the leader's log; acks=-1 waits until every replica in the ISR has it (await_in_sync), and
// is refused while fewer than min.insync.replicas are in sync; acks=0 sends no response at all, and closes
// the connection if any partition failed. A batch the topic's flush policy wants on disk is flushed (on the
// blocking pool) before it is acknowledged, and fails with KAFKA_STORAGE_ERROR if the flush does.
awaitable<p::produce_response> handle_produce(request_context& ctx, p::produce_request& request) {
  p::produce_response response;
  const bool valid_acks = request.acks == 0 || request.acks == 1 || request.acks == -1;
  std::vector<owed> waiting;
  bool whole_request_refused = false;
  // The produce quota counts the whole request, refused parts too, as Kafka's does.
  record_quota(ctx, quota::quota_kind::produce, static_cast<double>(ctx.request_bytes));
  const auto refused = refused_topics(ctx, request, whole_request_refused);
  const auto verified = co_await verify_transactional_batches(ctx, request);
  for (auto& topic : request.topic_data) {
    auto& topic_out = response.responses.emplace_back();
    topic_out.name = topic.name;
    const bool topic_refused = refused.contains(topic.name);
    for (auto& partition : topic.partition_data) {
      if (!valid_acks || topic_refused) {
        auto& out = topic_out.partition_responses.emplace_back();
        out.index = partition.index;
        out.base_offset = no_offset;
        out.error_code = ctx.error(!valid_acks             ? p::error_code::invalid_required_acks
                                   : whole_request_refused ? p::error_code::transactional_id_authorization_failed
                                                           : p::error_code::topic_authorization_failed);
        continue;
      }
      std::optional<owed> waits;
      topic_out.partition_responses.push_back(
          append_one(ctx, topic.name, partition.index, partition.records, request.acks, verified, waits));
      if (waits) {
        waits->topic = response.responses.size() - 1;
        waits->partition = topic_out.partition_responses.size() - 1;
        waiting.push_back(std::move(*waits));
      }
    }
  }
  for (auto& f : waiting) {
    if (!f.flush) continue;
    const auto done = co_await run_blocking(ctx.broker, [&f] { return f.replica->flush(f.upto); });
    if (done) continue;
    auto& out = response.responses[f.topic].partition_responses[f.partition];
    out.error_code = ctx.error(to_kafka_error(done.error()));
    out.error_message = done.error().message();
    out.base_offset = no_offset;
    f.in_sync = false;
  }
  if (std::any_of(waiting.begin(), waiting.end(), [](const owed& w) { return w.in_sync; }))
    co_await await_in_sync(ctx, request.timeout_ms, response, waiting);
  if (ctx.version() >= first_version_with_leader_hints) point_to_leaders(ctx, response);
  ctx.send_response = request.acks != 0;
  // acks=0 has no response to say it was throttled in: Kafka exempts it from the request quota (not the byte quota).
  ctx.request_quota_exempt = request.acks == 0;
  ctx.close_connection = request.acks == 0 && ctx.errors > 0;
  co_return response;
}

}  // namespace ferry::server::handlers
