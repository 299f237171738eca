#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <system_error>
#include <variant>
#include <vector>

#include "model/coordinator_log.h"

namespace ferry::model::testing {

// A coordinator's internal topic in memory for tests: writes and replays succeed at once, unless told to fail.
class memory_coordinator_log final : public coordinator_log {
 public:
  // One stored record, with the producer of its transaction (no_producer_id: none).
  struct entry {
    record r;
    producer_id producer = no_producer_id;
  };
  using item = std::variant<entry, replayed_marker>;

  void append(std::int32_t partition, std::vector<record> records, std::function<void(std::error_code)> done) override {
    append_transactional(partition, no_producer_id, producer_epoch{-1}, std::move(records), std::move(done));
  }
  void append_transactional(std::int32_t partition, producer_id producer, producer_epoch /*epoch*/,
                            std::vector<record> records, std::function<void(std::error_code)> done) override {
    {
      std::lock_guard lock(mutex_);
      if (!failure)
        for (auto& r : records) items[partition].emplace_back(entry{std::move(r), producer});
      if (hold_completions) {
        held.push_back([done = std::move(done), failure = failure] { done(failure); });
        return;
      }
    }
    done(failure);
  }
  // With hold_completions, writes reach the log at once but their callbacks wait here, to be run in any order
  // (as replicated writes' callbacks may run).
  bool hold_completions = false;
  std::vector<std::function<void()>> held;
  // A marker as a partition leader would write it.
  void add_marker(std::int32_t partition, producer_id producer, marker_type type) {
    std::lock_guard lock(mutex_);
    items[partition].emplace_back(replayed_marker{producer, type});
  }
  result<void> replay(std::int32_t partition, const replay_visitor& visit) override {
    if (during_replay) during_replay();
    if (replay_failure) return replay_failure;
    std::lock_guard lock(mutex_);
    for (const auto& i : items[partition]) {
      if (const auto* e = std::get_if<entry>(&i)) {
        visit.record({e->r.key, e->r.value ? std::optional<std::span<const std::byte>>(*e->r.value) : std::nullopt,
                      e->producer});
      } else if (visit.marker) {
        visit.marker(std::get<replayed_marker>(i));
      }
    }
    return success();
  }

  // The partition's records, in order.
  std::vector<record> records(std::int32_t partition) {
    std::lock_guard lock(mutex_);
    std::vector<record> out;
    for (const auto& i : items[partition])
      if (const auto* e = std::get_if<entry>(&i)) out.push_back(e->r);
    return out;
  }

  std::map<std::int32_t, std::vector<item>> items;  // records and markers, in order
  std::error_code failure;                          // what appends fail with
  std::error_code replay_failure;                   // what replays fail with
  std::function<void()> during_replay;

 private:
  std::mutex mutex_;
};

}  // namespace ferry::model::testing
