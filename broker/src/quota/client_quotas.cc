#include "quota/client_quotas.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace ferry::quota {
namespace {

// Kafka records request time as a percentage of one thread over a second (ClientRequestQuotaManager:
// nanos × 100 / 10^9, so a millisecond is 0.1), which makes the rate comparable with request_percentage as it is.
constexpr double request_units_per_ms = 0.1;

double units_of(quota_kind kind, double amount) {
  return kind == quota_kind::request ? amount * request_units_per_ms : amount;
}

// throttle_time_ms is an int32 on the wire. Kafka's Long.toInt wraps around instead (a zero bound's infinite
// delay becomes -1, no throttle); a delay never goes below zero.
std::int32_t as_throttle(std::int64_t ms) {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(ms, 0, std::numeric_limits<std::int32_t>::max()));
}

}  // namespace

quota_key key_of(quota_kind kind) {
  switch (kind) {
    case quota_kind::produce:
      return quota_key::producer_byte_rate;
    case quota_kind::fetch:
      return quota_key::consumer_byte_rate;
    case quota_kind::request:
      return quota_key::request_percentage;
    case quota_kind::controller_mutation:
      return quota_key::controller_mutation_rate;
  }
  return quota_key::producer_byte_rate;
}

std::size_t client_quotas::sensor_key_hash::operator()(const sensor_key_view& k) const noexcept {
  std::size_t h = std::hash<std::string_view>{}(k.user);
  h ^= std::hash<std::string_view>{}(k.client_id) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 31 + static_cast<std::size_t>(k.kind);
}

client_quotas::client_quotas(client_quota_settings settings)
    : settings_(settings), table_(std::make_shared<const quota_table>()) {}

void client_quotas::replace_table(std::shared_ptr<const quota_table> table) {
  if (!table) table = std::make_shared<const quota_table>();
  const bool any = !table->empty();
  {
    std::unique_lock lock(table_mutex_);
    table_.swap(table);
  }
  any_quota_.store(any, std::memory_order_relaxed);
  // The old table is released here, outside the lock.
}

std::shared_ptr<const quota_table> client_quotas::table() const {
  std::shared_lock lock(table_mutex_);
  return table_;
}

client_quotas::sensor& client_quotas::sensor_for(shard& s, const sensor_key_view& key, std::int64_t now_ms) {
  if (const auto it = s.sensors.find(key); it != s.sensors.end()) return it->second;
  if (now_ms - s.last_sweep_ms >= settings_.expiry_sweep_ms) {
    sweep(s, now_ms);
    s.last_sweep_ms = now_ms;
  }
  return s.sensors
      .emplace(sensor_key{key.kind, std::string(key.user), std::string(key.client_id)},
               sensor{rate_sampler(settings_.window), token_bucket(settings_.window)})
      .first->second;
}

std::size_t client_quotas::sweep(shard& s, std::int64_t now_ms) {
  return std::erase_if(
      s.sensors, [&](const auto& entry) { return now_ms - entry.second.last_record_ms > settings_.idle_expiry_ms; });
}

std::int32_t client_quotas::record(quota_kind kind, std::string_view user, std::string_view client_id, double amount,
                                   std::int64_t now_ms) {
  if (!any_quota_.load(std::memory_order_relaxed)) return 0;
  quota_resolution resolved;
  {
    std::shared_lock lock(table_mutex_);
    if (table_->empty()) return 0;
    resolved = table_->resolve(user, client_id, key_of(kind));
  }
  const sensor_key_view key{kind, resolved.tags.user, resolved.tags.client_id};
  shard& s = shards_[sensor_key_hash{}(key) % shard_count];
  std::lock_guard lock(s.mutex);
  sensor& budget = sensor_for(s, key, now_ms);
  budget.last_record_ms = now_ms;
  budget.recorded += amount;
  budget.rate.record(units_of(kind, amount), now_ms);
  // Measured even without a bound: measuring clears expired samples, and Kafka measures every sensor.
  const double observed = budget.rate.rate(now_ms);
  if (!resolved.bound || observed <= *resolved.bound) return 0;
  std::int64_t delay = throttle_time_ms(observed, *resolved.bound, budget.rate.elapsed_ms(now_ms));
  // ClientRequestQuotaManager bounds its delay to one sample; the byte quotas are not bounded.
  if (kind == quota_kind::request) delay = std::min(delay, settings_.window.sample_ms);
  const std::int32_t throttle = as_throttle(delay);
  if (throttle > 0) {
    budget.throttle_ms += throttle;
    ++budget.throttled;
  }
  return throttle;
}

client_quotas::mutation_outcome client_quotas::record_mutation(std::string_view user, std::string_view client_id,
                                                               double partitions, bool strict, std::int64_t now_ms) {
  if (!any_quota_.load(std::memory_order_relaxed)) return {};
  quota_resolution resolved;
  {
    std::shared_lock lock(table_mutex_);
    if (table_->empty()) return {};
    resolved = table_->resolve(user, client_id, quota_key::controller_mutation_rate);
  }
  const sensor_key_view key{quota_kind::controller_mutation, resolved.tags.user, resolved.tags.client_id};
  shard& s = shards_[sensor_key_hash{}(key) % shard_count];
  std::lock_guard lock(s.mutex);
  sensor& budget = sensor_for(s, key, now_ms);
  budget.last_record_ms = now_ms;
  if (!resolved.bound) {
    budget.recorded += partitions;
    return {};
  }
  const double bound = *resolved.bound;
  mutation_outcome out;
  if (strict) {
    out.throttle_ms = as_throttle(debt_throttle_ms(budget.bucket.tokens(bound, now_ms), bound));
    out.refused = out.throttle_ms > 0;
  }
  if (!out.refused) {
    budget.bucket.take(partitions, bound, now_ms);
    budget.recorded += partitions;
    if (!strict) out.throttle_ms = as_throttle(debt_throttle_ms(budget.bucket.tokens(bound, now_ms), bound));
  }
  if (out.throttle_ms > 0) {
    budget.throttle_ms += out.throttle_ms;
    ++budget.throttled;
  }
  return out;
}

void client_quotas::unrecord(quota_kind kind, std::string_view user, std::string_view client_id, double amount,
                             std::int64_t now_ms) {
  if (!any_quota_.load(std::memory_order_relaxed)) return;
  quota_resolution resolved;
  {
    std::shared_lock lock(table_mutex_);
    if (table_->empty()) return;
    resolved = table_->resolve(user, client_id, key_of(kind));
  }
  const sensor_key_view key{kind, resolved.tags.user, resolved.tags.client_id};
  shard& s = shards_[sensor_key_hash{}(key) % shard_count];
  std::lock_guard lock(s.mutex);
  sensor& budget = sensor_for(s, key, now_ms);
  budget.last_record_ms = now_ms;
  budget.unrecorded += amount;
  budget.rate.record(-units_of(kind, amount), now_ms);
}

double client_quotas::max_value_in_window(quota_kind kind, std::string_view user, std::string_view client_id) const {
  std::shared_lock lock(table_mutex_);
  const auto bound = table_->resolve(user, client_id, key_of(kind)).bound;
  if (!bound) return std::numeric_limits<double>::max();
  return *bound * (settings_.window.samples - 1) * (static_cast<double>(settings_.window.sample_ms) / 1000.0);
}

std::size_t client_quotas::expire_idle(std::int64_t now_ms) {
  std::size_t dropped = 0;
  for (auto& s : shards_) {
    std::lock_guard lock(s.mutex);
    dropped += sweep(s, now_ms);
    s.last_sweep_ms = now_ms;
  }
  return dropped;
}

std::vector<sensor_totals> client_quotas::totals() const {
  std::vector<sensor_totals> out;
  for (const auto& s : shards_) {
    std::lock_guard lock(s.mutex);
    for (const auto& [key, budget] : s.sensors)
      out.push_back({key.kind, key.user, key.client_id, budget.recorded, budget.unrecorded, budget.throttle_ms,
                     budget.throttled});
  }
  return out;
}

std::size_t client_quotas::sensor_count() const {
  std::size_t n = 0;
  for (const auto& s : shards_) {
    std::lock_guard lock(s.mutex);
    n += s.sensors.size();
  }
  return n;
}

}  // namespace ferry::quota
