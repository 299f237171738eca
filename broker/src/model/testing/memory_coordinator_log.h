#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <system_error>
#include <vector>

#include "model/coordinator_log.h"

namespace ferry::model::testing {

// A coordinator's internal topic in memory for tests: writes and replays succeed at once, unless told to fail.
class memory_coordinator_log final : public coordinator_log {
 public:
  void append(std::int32_t partition, std::vector<record> records, std::function<void(std::error_code)> done) override {
    {
      std::lock_guard lock(mutex_);
      if (!failure)
        for (auto& r : records) written[partition].push_back(std::move(r));
    }
    done(failure);
  }
  result<void> replay(std::int32_t partition, const record_visitor& fn) override {
    if (during_replay) during_replay();
    if (replay_failure) return replay_failure;
    std::lock_guard lock(mutex_);
    for (const auto& r : written[partition])
      fn(r.key, r.value ? std::optional<std::span<const std::byte>>(*r.value) : std::nullopt);
    return success();
  }

  std::map<std::int32_t, std::vector<record>> written;
  std::error_code failure;         // what appends fail with
  std::error_code replay_failure;  // what replays fail with
  std::function<void()> during_replay;

 private:
  std::mutex mutex_;
};

}  // namespace ferry::model::testing
