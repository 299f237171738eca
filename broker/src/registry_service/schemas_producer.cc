#include "registry_service/schemas_producer.h"

#include "base/clock.h"
#include "model/batch_builder.h"
#include "protocol/error_code.h"
#include "protocol/messages/produce.h"

namespace ferry::registry_service {
namespace p = protocol;

namespace {
constexpr std::int16_t produce_version = 9;

std::span<const std::byte> bytes_of(const std::string& text) { return std::as_bytes(std::span(text)); }
}  // namespace

boost::asio::awaitable<registry::schemas_log::appended> schemas_producer::append(
    std::vector<registry::topic_record> records) {
  const auto view = view_();
  const auto* partition = view->find_partition({topic_, partition_id{0}});
  if (partition == nullptr) co_return appended{std::nullopt, "topic " + topic_ + " does not exist yet", false};
  const coord::broker_info* leader = nullptr;
  if (partition->state)
    if (const auto it = view->brokers.find(partition->state->leader); it != view->brokers.end()) leader = &it->second;
  if (leader == nullptr) co_return appended{std::nullopt, topic_ + " has no leader", true};

  model::batch_builder builder({});
  const auto now = system_clock::wall_ms();
  for (const auto& r : records)
    builder.add(now, bytes_of(r.key), r.value ? std::optional(bytes_of(*r.value)) : std::nullopt);
  auto batch = builder.finish();
  if (!batch) co_return appended{std::nullopt, batch.error().message(), false};

  p::produce_request request;
  request.acks = -1;
  request.timeout_ms = static_cast<std::int32_t>(timeout_.count());
  request.topic_data.push_back(
      {.name = topic_,
       .partition_data = {{.index = partition_id{0}, .records = p::record_data{.bytes = batch.value(), .files = {}}}}});
  const auto to = *leader;
  auto response = co_await peers_->call<p::produce_request, p::produce_response>(to, request, produce_version);
  if (!response)
    co_return appended{std::nullopt, "broker " + std::to_string(to.id.value()) + ": " + response.error().message(),
                       false};
  const auto& r = response.value();
  if (r.responses.size() != 1 || r.responses[0].partition_responses.size() != 1)
    co_return appended{std::nullopt, "an answer that does not name the partition", false};
  const auto& answer = r.responses[0].partition_responses[0];
  const auto code = static_cast<p::error_code>(answer.error_code);
  if (code != p::error_code::none)
    co_return appended{std::nullopt, std::string(p::name(code)), code == p::error_code::not_leader_or_follower};
  co_return appended{answer.base_offset.value() + static_cast<std::int64_t>(records.size()), {}, false};
}

}  // namespace ferry::registry_service
