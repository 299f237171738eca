#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"

namespace ferry::kube {

// Which Events go to the API server, as client-go's EventCorrelator decides (simplified): an Event equal to one
// posted less than `window` ago (same object, type, reason and note) is not posted again, only counted; and of
// one object's Events with the same type and reason but different notes, at most `similar_limit` are posted per
// window. The first Event after a window that folded some is posted with their count. Memory is bounded: at most
// `capacity` keys are remembered, the least recently seen forgotten first. Thread-safe.
class event_correlator {
 public:
  struct decision {
    bool post = true;
    std::size_t folded = 0;  // when posting: equal or similar Events not posted since the last one was
  };

  explicit event_correlator(std::chrono::seconds window = std::chrono::minutes(10), std::size_t similar_limit = 10,
                            std::size_t capacity = 4096, const clock_source& clock = clock_source::steady());

  // `object` identifies the regarded object (its uid, or kind/namespace/name).
  decision observe(const std::string& object, std::string_view type, std::string_view reason, std::string_view note);
  [[nodiscard]] std::size_t size() const;

 private:
  struct entry {
    clock_source::time_point window_start;
    std::size_t posted = 0;  // in this window
    std::size_t folded = 0;  // not posted since the last post
  };
  using lru = std::list<std::pair<std::string, entry>>;
  entry& touch(const std::string& key, clock_source::time_point now);

  const std::chrono::seconds window_;
  const std::size_t similar_limit_;
  const std::size_t capacity_;
  const clock_source& clock_;
  mutable std::mutex mutex_;
  lru recent_;  // most recently seen first
  std::unordered_map<std::string, lru::iterator> index_;
};

// Events (events.k8s.io/v1) about an object, for what its users should see in `kubectl describe`. Posting is
// asynchronous and best effort: a failure is logged, never retried. Repeats are folded (event_correlator).
class event_recorder {
 public:
  event_recorder(api_client& client, std::string controller, std::string instance)
      : client_(client), controller_(std::move(controller)), instance_(std::move(instance)) {}

  enum class type { normal, warning };
  // `regarding` is the object as read (kind, apiVersion and metadata are used); `reason` is CamelCase;
  // `action` what the operator did or tried ("Create", "Delete", ...).
  void record(const nlohmann::json& regarding, type t, std::string_view reason, std::string_view action,
              std::string_view note);
  // Called for each Event, with whether it was posted (false: folded into an earlier one).
  void on_recorded(std::function<void(bool posted)> observer) { observer_ = std::move(observer); }

 private:
  api_client& client_;
  const std::string controller_;
  const std::string instance_;
  event_correlator correlator_;
  std::function<void(bool)> observer_;
};

}  // namespace ferry::kube
