#include "registry/schema_writer.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "registry/schema_records.h"

namespace ferry::registry {
namespace asio = boost::asio;

schema_writer::schema_writer(const asio::any_io_executor& executor, registry_state& state, schemas_log& log,
                             schema::parse_limits limits, std::chrono::milliseconds timeout)
    : state_(state), log_(log), limits_(limits), timeout_(timeout), turn_(executor, 1) {}

asio::awaitable<registry_reply> schema_writer::write(registry_request request, request_target target,
                                                     std::int32_t leader_epoch) {
  // Taking the token waits while another write holds it; giving it back lets the next one in.
  co_await turn_.async_send(boost::system::error_code{}, asio::as_tuple(asio::use_awaitable));
  struct give_back {
    decltype(turn_)& turn;
    ~give_back() {
      turn.try_receive([](boost::system::error_code) {});
    }
  } release{turn_};
  co_return co_await write_in_turn(request, target, leader_epoch);
}

asio::awaitable<std::optional<registry_reply>> schema_writer::catch_up(std::int32_t leader_epoch) {
  if (caught_up_epoch_ == leader_epoch) co_return std::nullopt;
  std::vector<topic_record> records;
  records.push_back({encode_key(noop_key{}), std::string("{}")});
  const auto noop = co_await log_.append(std::move(records));
  if (!noop.next_offset)
    co_return error_reply(noop.not_leader ? error_codes::unknown_leader : error_codes::store_error,
                          "cannot write to the schemas topic: " + noop.error);
  if (!co_await state_.wait_for(*noop.next_offset, timeout_))
    co_return error_reply(error_codes::timeout, "timed out reading the schemas topic to its end");
  caught_up_epoch_ = leader_epoch;
  co_return std::nullopt;
}

asio::awaitable<registry_reply> schema_writer::write_in_turn(const registry_request& request,
                                                             const request_target& target, std::int32_t leader_epoch) {
  if (auto failed = co_await catch_up(leader_epoch)) co_return *failed;
  auto planned = state_.read([&](const schema_store& store) { return plan_write(store, request, target, limits_); });
  if (auto* refused = std::get_if<registry_reply>(&planned)) co_return *refused;
  auto& plan = std::get<write_plan>(planned);
  if (plan.records.empty()) co_return plan.reply;
  const auto appended = co_await log_.append(std::move(plan.records));
  if (!appended.next_offset) {
    // Whether it got in is unknown (a timeout after the append): read to the end again before the next plan.
    caught_up_epoch_.reset();
    co_return error_reply(appended.not_leader ? error_codes::unknown_leader : error_codes::store_error,
                          "cannot write to the schemas topic: " + appended.error);
  }
  if (!co_await state_.wait_for(*appended.next_offset, timeout_))
    co_return error_reply(error_codes::timeout, "the write is in the schemas topic but was not read back in time");
  co_return plan.reply;
}

}  // namespace ferry::registry
