#include "registry_service/schemas_reader.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/guarded.h"
#include "base/log.h"
#include "model/record_batch.h"
#include "model/records.h"
#include "protocol/error_code.h"
#include "protocol/header.h"
#include "protocol/messages/fetch.h"
#include "protocol/output_buffer.h"

namespace ferry::registry_service {
namespace asio = boost::asio;
namespace p = protocol;

namespace {
constexpr std::int16_t fetch_version = 12;  // topics by name
// Registry records are small; this bounds what a damaged batch could make the reader inflate.
constexpr std::size_t max_batch_records_bytes = std::size_t{64} << 20;

std::string text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}
}  // namespace

decoded_records decode_fetched(std::span<const std::byte> bytes, std::int64_t from) {
  decoded_records out;
  out.next_offset = from;
  std::vector<std::byte> scratch;
  while (bytes.size() >= model::batch_header_size) {
    const model::batch_header_view header(bytes);
    const auto size = header.total_size();
    if (header.batch_length() <= 0 || size > bytes.size()) break;
    const auto batch = bytes.subspan(0, size);
    bytes = bytes.subspan(size);
    if (model::validate_batch(batch, {.max_batch_bytes = size, .from_client = false})) {
      out.damaged = true;
      break;
    }
    if (header.last_offset().value() < out.next_offset) continue;  // before our position (a batch fetched whole)
    if (!header.is_control()) {
      const auto base = header.base_offset().value();
      const auto walked =
          model::for_each_stored_record(batch, max_batch_records_bytes, scratch, [&](const model::record_view& r) {
            if (base + r.offset_delta < out.next_offset || !r.key) return true;
            registry::read_record record{text(*r.key), std::nullopt};
            if (r.value) record.value = text(*r.value);
            out.records.push_back(std::move(record));
            return true;
          });
      if (!walked) {
        out.damaged = true;
        break;
      }
    }
    out.next_offset = header.last_offset().value() + 1;
  }
  return out;
}

schemas_reader::schemas_reader(asio::io_context& io, registry::registry_state& state,
                               std::function<std::shared_ptr<const coord::cluster_view>()> view, settings s)
    : io_(io),
      state_(state),
      view_(std::move(view)),
      settings_(std::move(s)),
      peer_(io, settings_.security),
      backoff_timer_(io) {}

void schemas_reader::start() { asio::co_spawn(io_, run(), guarded_detached("the schemas topic's reader")); }

void schemas_reader::stop() {
  stopped_ = true;
  backoff_timer_.cancel();
  peer_.close();
}

asio::awaitable<void> schemas_reader::pause() {
  backoff_timer_.expires_after(settings_.backoff);
  co_await backoff_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
}

asio::awaitable<void> schemas_reader::run() {
  while (!stopped_) {
    const auto view = view_();
    const auto* partition = view->find_partition({settings_.topic, partition_id{0}});
    const coord::broker_info* leader = nullptr;
    if (partition != nullptr && partition->state)
      if (const auto it = view->brokers.find(partition->state->leader); it != view->brokers.end()) leader = &it->second;
    if (leader == nullptr) {
      co_await pause();
      continue;
    }
    const auto to = *leader;  // the view may change while the fetch is out
    if (!co_await fetch_once(to)) {
      peer_.close();
      connected_to_ = broker_id{-1};
      co_await pause();
    }
  }
}

asio::awaitable<bool> schemas_reader::fetch_once(const coord::broker_info& leader) {
  if (connected_to_ != leader.id || !peer_.is_open()) {
    peer_.close();
    if (auto connected =
            co_await peer_.connect(leader.host, static_cast<std::uint16_t>(leader.port), settings_.max_wait * 10);
        !connected) {
      FERRY_LOG_LIMITED(warn, "registry", 10000) << "cannot reach broker " << leader.id << ", which leads "
                                                 << settings_.topic << ": " << connected.error().message();
      co_return false;
    }
    connected_to_ = leader.id;
  }
  const auto from = state_.next_offset();
  p::fetch_request request;
  request.replica_id = broker_id{-1};
  request.max_wait_ms = static_cast<std::int32_t>(settings_.max_wait.count());
  request.min_bytes = 1;
  request.max_bytes = settings_.max_bytes;
  request.topics.push_back(
      {.topic = settings_.topic,
       .partitions = {
           {.partition = partition_id{0}, .fetch_offset = offset{from}, .partition_max_bytes = settings_.max_bytes}}});
  p::output_buffer out;
  p::begin_request_frame(out, {1, fetch_version, ++correlation_id_, "ferry-schema-registry"}, true);
  p::writer w(out);
  request.encode(w, fetch_version);
  p::finish_frame(out);
  std::vector<std::byte> body;
  if (auto done =
          co_await peer_.round_trip(out.flatten(), settings_.max_wait * 4, settings_.max_bytes + (1 << 20), body);
      !done) {
    FERRY_LOG_LIMITED(warn, "registry", 10000)
        << "fetching " << settings_.topic << " from broker " << leader.id << " failed: " << done.error().message();
    co_return false;
  }
  p::reader r(body);
  std::int32_t correlation_id = 0;
  p::fetch_response response;
  if (!p::decode_response_header(r, correlation_id, true) || correlation_id != correlation_id_ ||
      !response.decode(r, fetch_version) || response.responses.size() != 1 ||
      response.responses[0].partitions.size() != 1)
    co_return false;
  const auto& answer = response.responses[0].partitions[0];
  const auto code = static_cast<p::error_code>(answer.error_code);
  if (code == p::error_code::offset_out_of_range) {
    FERRY_LOG(warn, "registry") << settings_.topic << " no longer holds offset " << from
                                << " (the topic was made again or truncated): reading it again from its start";
    state_.reset();
    co_return true;
  }
  if (code != p::error_code::none) {
    FERRY_LOG_LIMITED(info, "registry", 10000)
        << "broker " << leader.id << " answered a fetch of " << settings_.topic << " with error " << answer.error_code;
    co_return false;
  }
  if (answer.records && !answer.records->bytes.empty()) {
    auto decoded = decode_fetched(answer.records->bytes, from);
    if (decoded.damaged)
      FERRY_LOG_LIMITED(error, "registry", 10000)
          << settings_.topic << " holds a batch that does not parse after offset " << decoded.next_offset;
    if (decoded.next_offset > from) state_.apply(decoded.records, decoded.next_offset);
    if (decoded.damaged) co_return false;
  }
  if (!state_.loaded() && state_.next_offset() >= answer.high_watermark.value()) {
    state_.mark_loaded();
    FERRY_LOG(info, "registry") << "read " << settings_.topic << " to offset " << state_.next_offset()
                                << ": serving the schema registry";
  }
  co_return true;
}

}  // namespace ferry::registry_service
