#include "model/record_batch.h"
#include "model/records.h"
#include "server/error_mapping.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

using partition_response = p::produce_response::topic_produce_response::partition_produce_response;

// Checks one partition's records as Kafka does for Produce v3+: exactly one v2 batch, intact, within the
// topic's max.message.bytes, with a codec this request version may carry, and every record in it well formed
// (model/records.h), so that no batch a consumer cannot parse is ever stored. A CreateTime batch whose max
// timestamp disagrees with its records gets the records' one, as Kafka's LogValidator sets it.
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
  const auto checked = model::validate_records(records, static_cast<std::size_t>(max_message_bytes));
  if (!checked) return checked.error();
  if (header.ts_type() == model::timestamp_type::create_time && checked.value().max_timestamp != header.max_timestamp())
    model::set_max_timestamp(records, checked.value().max_timestamp);
  return {};
}

partition_response append_one(request_context& ctx, const std::string& topic, partition_id index,
                              std::optional<p::record_data>& records) {
  partition_response out;
  out.index = index;
  out.base_offset = no_offset;
  const auto part = ctx.broker.partitions.leader_for({topic, index});
  if (!part) {
    out.error_code = ctx.error(to_kafka_error(part.error()));
    return out;
  }
  auto& partition = *part.value();
  std::span<std::byte> bytes = records ? records->bytes : std::span<std::byte>{};
  if (const auto invalid = validate(bytes, ctx.version(), partition.settings()->max_message_bytes)) {
    out.error_code = ctx.error(to_kafka_error(invalid));
    out.error_message = invalid.message();
    return out;
  }
  if (model::batch_header_view(bytes).is_transactional()) {
    out.error_code = ctx.error(p::error_code::invalid_txn_state);
    out.error_message = "transactions are not supported yet";
    return out;
  }
  const auto appended = partition.append(bytes);
  if (!appended) {
    out.error_code = ctx.error(to_kafka_error(appended.error()));
    out.error_message = appended.error().message();
    return out;
  }
  out.base_offset = appended.value().base_offset;
  out.log_append_time_ms = appended.value().log_append_time_ms;
  out.log_start_offset = appended.value().log_start_offset;
  if (!appended.value().duplicate) {
    partition.counters().bytes_in->Increment(static_cast<double>(bytes.size()));
    partition.counters().records_in->Increment(model::batch_header_view(bytes).records_count());
  }
  return out;
}

}  // namespace

// Appends each partition's batch to the partition's log through its leader replica. acks=1 answers once the
// batch is in the leader's log; acks=-1 waits for the in-sync replicas, which today is the leader alone;
// acks=0 sends no response at all, and closes the connection if any partition failed.
awaitable<p::produce_response> handle_produce(request_context& ctx, p::produce_request& request) {
  p::produce_response response;
  const bool valid_acks = request.acks == 0 || request.acks == 1 || request.acks == -1;
  for (auto& topic : request.topic_data) {
    auto& topic_out = response.responses.emplace_back();
    topic_out.name = topic.name;
    for (auto& partition : topic.partition_data) {
      if (!valid_acks) {
        auto& out = topic_out.partition_responses.emplace_back();
        out.index = partition.index;
        out.base_offset = no_offset;
        out.error_code = ctx.error(p::error_code::invalid_required_acks);
        continue;
      }
      topic_out.partition_responses.push_back(append_one(ctx, topic.name, partition.index, partition.records));
    }
  }
  ctx.send_response = request.acks != 0;
  ctx.close_connection = request.acks == 0 && ctx.errors > 0;
  co_return response;
}

}  // namespace ferry::server::handlers
