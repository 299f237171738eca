#include "server/client_quota_use.h"

#include <algorithm>
#include <chrono>

#include "net/busy_time.h"

namespace ferry::server {

std::string_view quota_user(std::string_view principal) {
  const auto colon = principal.find(':');
  return colon == std::string_view::npos ? principal : principal.substr(colon + 1);
}

namespace {

bool quotas_set(const request_context& ctx) { return ctx.broker.quotas != nullptr && ctx.broker.quotas->any(); }

}  // namespace

std::int32_t record_quota(request_context& ctx, quota::quota_kind kind, double amount) {
  if (!quotas_set(ctx)) return 0;
  const auto throttle = ctx.broker.quotas->record(kind, quota_user(ctx.connection.principal),
                                                  ctx.header.client_id.value_or(""), amount, ctx.broker.clock.now_ms());
  ctx.throttle_ms = std::max(ctx.throttle_ms, throttle);
  return throttle;
}

std::int32_t record_request_time(request_context& ctx) {
  if (ctx.connection.busy_time == nullptr) return 0;
  const auto busy = ctx.connection.busy_time->take();
  if (ctx.request_quota_exempt) return 0;
  return record_quota(ctx, quota::quota_kind::request, std::chrono::duration<double, std::milli>(busy).count());
}

void unrecord_quota(request_context& ctx, quota::quota_kind kind, double amount) {
  if (!quotas_set(ctx)) return;
  ctx.broker.quotas->unrecord(kind, quota_user(ctx.connection.principal), ctx.header.client_id.value_or(""), amount,
                              ctx.broker.clock.now_ms());
}

bool spend_mutation_quota(request_context& ctx, std::int64_t partitions, bool strict) {
  if (!quotas_set(ctx)) return true;
  const auto outcome =
      ctx.broker.quotas->record_mutation(quota_user(ctx.connection.principal), ctx.header.client_id.value_or(""),
                                         static_cast<double>(partitions), strict, ctx.broker.clock.now_ms());
  ctx.throttle_ms = std::max(ctx.throttle_ms, outcome.throttle_ms);
  return !outcome.refused;
}

}  // namespace ferry::server
