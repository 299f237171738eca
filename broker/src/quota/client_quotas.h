#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "quota/quota_entity.h"
#include "quota/rate_sampler.h"
#include "quota/token_bucket.h"

namespace ferry::quota {

// What a client spends, one budget each (Kafka's Produce, Fetch and Request quota managers).
enum class quota_kind : std::uint8_t {
  produce,              // bytes produced, bound by producer_byte_rate
  fetch,                // bytes fetched, bound by consumer_byte_rate
  request,              // request thread time, bound by request_percentage (percent of one thread)
  controller_mutation,  // partitions created or deleted, bound by controller_mutation_rate (KIP-599)
};
inline constexpr std::size_t quota_kind_count = 4;

[[nodiscard]] quota_key key_of(quota_kind kind);

struct client_quota_settings {
  rate_window window;                       // quota.window.num, quota.window.size.seconds
  std::int64_t idle_expiry_ms = 3'600'000;  // Kafka's InactiveSensorExpirationTimeSeconds: 1 hour
  std::int64_t expiry_sweep_ms = 30'000;    // how often record() sweeps a shard (Kafka's ExpireSensorTask)
};

// One budget's counters since its sensor was created, for metrics: the sensor's tags say whose budget it is.
struct sensor_totals {
  quota_kind kind = quota_kind::produce;
  std::string user;  // the metric tags
  std::string client_id;
  double recorded = 0;    // bytes, milliseconds of request thread time or partitions mutated, as recorded
  double unrecorded = 0;  // taken back by unrecord() (a throttled fetch's bytes, never sent)
  std::int64_t throttle_ms = 0;
  std::uint64_t throttled = 0;  // records that returned a throttle time
};

// Kafka's client quota enforcement for the network threads: one sensor (a rate_sampler) per budget, a budget
// being the metric tags quota_table::resolve gives a connection. record() adds to the budget and returns how
// long to throttle the client.
//
// Thread-safe, and cheap once a sensor exists: the table behind a reader-writer lock taken only to resolve,
// sensors in shards with a lock each, lookups by the names as given, no allocation. The first record of a
// budget creates its sensor; sensors idle for idle_expiry_ms are dropped (memory stays bounded by the clients
// of the last hour), by expire_idle() and by record() itself, which sweeps a shard at most every
// expiry_sweep_ms when it creates a sensor there.
//
// Time is passed in (the steady clock's milliseconds), never read.
class client_quotas {
 public:
  explicit client_quotas(client_quota_settings settings = {});

  // New bounds apply from the next record, to existing sensors too; a connection whose tags change moves to
  // another (maybe new) sensor, as in Kafka.
  void replace_table(std::shared_ptr<const quota_table> table);
  [[nodiscard]] std::shared_ptr<const quota_table> table() const;
  // Whether any quota is set: without one, callers skip what recording costs them (reading the clock).
  [[nodiscard]] bool any() const { return any_quota_.load(std::memory_order_relaxed); }

  // Records `amount` for the client of a windowed-rate kind (not controller_mutation: record_mutation) (bytes; for
  // `request`, milliseconds of request thread time, fractions
  // allowed) and returns the throttle time in ms, 0 when within the quota. As Kafka: the amount counts before
  // the check; nothing is recorded while no quota is set at all; the request quota's throttle is at most one
  // sample (quota.window.size.seconds), the byte quotas' unbounded but for the int32 of throttle_time_ms.
  // `user` is the principal's name ("ANONYMOUS" when unauthenticated).
  [[nodiscard]] std::int32_t record(quota_kind kind, std::string_view user, std::string_view client_id, double amount,
                                    std::int64_t now_ms);
  // What a topic mutation of `partitions` partitions (created or deleted) gets from the controller mutation quota
  // (KIP-599's token bucket). Strict (CreateTopics v6+, CreatePartitions v3+, DeleteTopics v5+): a client already in
  // debt is refused, nothing is taken, and the throttle is the time its debt takes to clear; otherwise the tokens
  // are taken, into debt if need be, without a throttle. Permissive (older versions): the tokens are always taken,
  // and the throttle is the debt's. Nothing happens without a quota.
  struct mutation_outcome {
    bool refused = false;
    std::int32_t throttle_ms = 0;
  };
  [[nodiscard]] mutation_outcome record_mutation(std::string_view user, std::string_view client_id, double partitions,
                                                 bool strict, std::int64_t now_ms);
  // Takes back an amount recorded (Kafka's unrecordQuotaSensor: a throttled fetch returns no data).
  void unrecord(quota_kind kind, std::string_view user, std::string_view client_id, double amount, std::int64_t now_ms);
  // The most that can be recorded without a certain throttle: bound × (samples − 1) × sample seconds
  // (getMaxValueInQuotaWindow, which caps a fetch's size); the largest double when no quota applies.
  [[nodiscard]] double max_value_in_window(quota_kind kind, std::string_view user, std::string_view client_id) const;

  // Drops sensors idle for longer than idle_expiry_ms; returns how many.
  std::size_t expire_idle(std::int64_t now_ms);

  [[nodiscard]] std::vector<sensor_totals> totals() const;
  [[nodiscard]] std::size_t sensor_count() const;

 private:
  struct sensor {
    rate_sampler rate;
    token_bucket bucket;  // controller_mutation only
    std::int64_t last_record_ms = 0;
    double recorded = 0;
    double unrecorded = 0;
    std::int64_t throttle_ms = 0;
    std::uint64_t throttled = 0;
  };
  struct sensor_key {
    quota_kind kind;
    std::string user;
    std::string client_id;
  };
  struct sensor_key_view {
    quota_kind kind;
    std::string_view user;
    std::string_view client_id;
  };
  struct sensor_key_hash {
    using is_transparent = void;
    std::size_t operator()(const sensor_key_view& k) const noexcept;
    std::size_t operator()(const sensor_key& k) const noexcept {
      return (*this)(sensor_key_view{k.kind, k.user, k.client_id});
    }
  };
  struct sensor_key_equal {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const noexcept {
      return a.kind == b.kind && std::string_view(a.user) == std::string_view(b.user) &&
             std::string_view(a.client_id) == std::string_view(b.client_id);
    }
  };
  struct shard {
    mutable std::mutex mutex;
    std::unordered_map<sensor_key, sensor, sensor_key_hash, sensor_key_equal> sensors;
    std::int64_t last_sweep_ms = 0;
  };
  static constexpr std::size_t shard_count = 16;

  // The sensor of a budget, created if new; the caller holds the shard's lock.
  sensor& sensor_for(shard& s, const sensor_key_view& key, std::int64_t now_ms);
  std::size_t sweep(shard& s, std::int64_t now_ms);

  client_quota_settings settings_;
  mutable std::shared_mutex table_mutex_;
  std::shared_ptr<const quota_table> table_;
  // Whether table_ holds any quota: read before the lock, so that a broker without quotas pays one relaxed load
  // per request instead of a shared lock every network thread contends on.
  std::atomic<bool> any_quota_{false};
  std::array<shard, shard_count> shards_;
};

}  // namespace ferry::quota
