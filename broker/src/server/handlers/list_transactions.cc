#include <algorithm>

#include "server/authorization.h"
#include "server/handlers/handlers.h"

namespace ferry::server::handlers {
namespace {

constexpr txn::txn_state listed_states[] = {txn::txn_state::empty,
                                            txn::txn_state::ongoing,
                                            txn::txn_state::prepare_commit,
                                            txn::txn_state::prepare_abort,
                                            txn::txn_state::complete_commit,
                                            txn::txn_state::complete_abort,
                                            txn::txn_state::dead,
                                            txn::txn_state::prepare_epoch_fence};

}  // namespace

// ListTransactions: the transactional ids this broker coordinates, filtered by state, producer id and (v1,
// KIP-994) how long their transaction has been open. COORDINATOR_LOAD_IN_PROGRESS while some partition is
// still loading, as in Kafka.
awaitable<p::list_transactions_response> handle_list_transactions(request_context& ctx,
                                                                  p::list_transactions_request& request) {
  p::list_transactions_response response;
  std::vector<txn::txn_state> states;
  for (const auto& name : request.state_filters) {
    const auto* found = std::find_if(std::begin(listed_states), std::end(listed_states),
                                     [&](txn::txn_state s) { return txn::state_name(s) == name; });
    if (found == std::end(listed_states))
      response.unknown_state_filters.push_back(name);
    else
      states.push_back(*found);
  }
  const auto listed = ctx.broker.transactions.list();
  if (listed.loading) {
    response.error_code = ctx.error(p::error_code::coordinator_load_in_progress);
    co_return response;
  }
  const auto now = ctx.broker.clock.now_ms();
  for (const auto& t : listed.transactions) {
    if (!request.state_filters.empty() && std::find(states.begin(), states.end(), t.state) == states.end()) continue;
    if (!request.producer_id_filters.empty() &&
        std::find(request.producer_id_filters.begin(), request.producer_id_filters.end(), t.pid.value()) ==
            request.producer_id_filters.end())
      continue;
    if (request.duration_filter >= 0 && (t.start_ms < 0 || now - t.start_ms < request.duration_filter)) continue;
    // Only those the client may Describe, as Kafka lists them.
    if (!may(ctx, authz::operation::describe, authz::resource_type::transactional_id, t.transactional_id)) continue;
    response.transaction_states.push_back({.transactional_id = t.transactional_id,
                                           .producer_id = t.pid,
                                           .transaction_state = std::string(txn::state_name(t.state))});
  }
  co_return response;
}

}  // namespace ferry::server::handlers
