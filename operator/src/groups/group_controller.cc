#include "groups/group_controller.h"

#include <algorithm>

#include "base/log.h"
#include "kafka/errc.h"
#include "kube/conditions.h"
#include "kube/resource_meta.h"
#include "kube/time_format.h"
#include "protocol/error_code.h"

namespace ferry::groups {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

constexpr auto cluster_retry = 5s;

std::int64_t generation_of(const json& resource) { return resource["metadata"].value("generation", std::int64_t{0}); }

constexpr std::string_view group_active = "GroupActive";

// status.resetOffsets.outcome for a final OffsetsReset reason.
std::string_view outcome_of(std::string_view reason) {
  if (reason == "OffsetsReset") return "Applied";
  if (reason == "AlreadyApplied") return "AlreadyApplied";
  if (reason == "ResetExpired") return "Expired";
  return "Invalid";
}

// How long until a waiting request expires (the requeue that notices it), rounded up.
std::chrono::milliseconds until(kube::system_time deadline, kube::system_time now) {
  return std::max(std::chrono::ceil<std::chrono::milliseconds>(deadline - now), std::chrono::milliseconds(1));
}

// Whether this generation's reset was already found waiting for the group to have no members.
bool waiting_for_empty_group(const json& resource, std::int64_t generation) {
  const auto status = resource.find("status");
  if (status == resource.end() || !status->is_object() || !status->contains("conditions") ||
      !(*status)["conditions"].is_array()) {
    return false;
  }
  for (const auto& c : (*status)["conditions"]) {
    if (c.is_object() && c.value("type", "") == "OffsetsReset" && c.value("reason", "") == group_active &&
        c.contains("observedGeneration") && c["observedGeneration"] == generation) {
      return true;
    }
  }
  return false;
}

bool refused_because_active(const std::error_code& error) {
  if (error.category() != kafka::kafka_error_category()) return false;
  const auto e = static_cast<protocol::error_code>(error.value());
  return e == protocol::error_code::unknown_member_id || e == protocol::error_code::illegal_generation ||
         e == protocol::error_code::rebalance_in_progress;
}

std::string topics_of(const std::vector<topic_reset>& reset) {
  std::string list;
  for (const auto& r : reset) list += (list.empty() ? "" : ", ") + r.topic;
  return list;
}

json lag_json(const lag_summary& lag) {
  json out = {{"total", lag.total}, {"partitions", lag.partitions}};
  if (lag.worst) {
    out["worstPartition"] = {{"topic", lag.worst->first.topic},
                             {"partition", lag.worst->first.partition.value()},
                             {"lag", lag.worst->second}};
  }
  return out;
}

}  // namespace

std::optional<group_controller::reset_outcome> group_controller::reset_offsets(group_admin& admin,
                                                                               const group_spec& spec,
                                                                               const coord::cluster_view& view) {
  const auto& group = spec.group_id;
  const auto& request = spec.request_id;
  auto described = admin.describe(group);
  if (!described) return std::nullopt;
  // Applied before, by this resource or by one deleted since (restored, replaced, re-applied): never again.
  auto committed = admin.committed(group);
  if (!committed) return std::nullopt;
  if (marked_applied(committed.value(), request)) {
    return reset_outcome{true, "AlreadyApplied",
                         "request " + request +
                             " was applied before (its mark is in the group's committed offsets); "
                             "it is not applied again"};
  }
  const auto active_message = [&](const std::string& why) {
    return "group " + group + why + ": offsets are reset only while it has no members; request " + request +
           " waits for its consumers to stop until " + kube::format_time(*spec.not_after) + ", then expires";
  };
  if (described.value().members > 0) {
    return reset_outcome{false, std::string(group_active),
                         active_message(" is " + described.value().state + " with " +
                                        std::to_string(described.value().members) + " members")};
  }
  auto planned = plan_reset(spec.reset, view);
  if (auto* error = std::get_if<std::string>(&planned)) {
    return reset_outcome{false, "InvalidReset", "request " + request + ": " + *error};
  }
  const auto& lookup = std::get<reset_lookup>(planned);
  std::map<topic_partition, std::int64_t> offsets = lookup.explicit_offsets;
  if (!lookup.timestamps.empty()) {
    auto found = admin.list_offsets(lookup.timestamps);
    if (!found) return std::nullopt;
    offsets.merge(found.value());
  }
  if (auto done = admin.commit(group, offsets, reset_marker(request)); !done) {
    if (refused_because_active(done.error())) {
      return reset_outcome{false, std::string(group_active), active_message(" gained members before the commit")};
    }
    FERRY_LOG(warn, "groups") << "resetting offsets of group " << group << ": " << done.error().message();
    return std::nullopt;
  }
  return reset_outcome{true, "OffsetsReset",
                       "request " + request + ": committed offsets of " + std::to_string(offsets.size()) +
                           " partitions of " + topics_of(spec.reset)};
}

result<group_controller::observation> group_controller::observe(group_admin& admin, const std::string& group,
                                                                const coord::cluster_view& view) {
  auto described = admin.describe(group);
  if (!described) return described.error();
  auto committed = admin.committed(group);
  if (!committed) return committed.error();
  std::map<topic_partition, std::int64_t> latest;
  for (const auto& [tp, at] : committed.value()) {
    if (view.topics.contains(tp.topic)) latest[tp] = latest_timestamp;
  }
  auto ends = admin.list_offsets(latest);
  if (!ends) return ends.error();
  return observation{std::move(described.value()), summarize_lag(committed.value(), ends.value())};
}

kube::reconcile_result group_controller::reconcile(const std::string& key) {
  const auto object = groups_->get(key);
  if (!object) {
    std::lock_guard lock(refreshed_mutex_);
    refreshed_.erase(key);
    return {.state = kube::resource_state{.gone = true}};
  }
  const json& resource = *object;
  const auto generation = generation_of(resource);
  const auto read = read_group_spec(resource);
  const auto now = std::chrono::system_clock::now();
  using step = reset_verdict::step;
  const auto verdict = judge_reset(read, read_reset_record(resource), generation, now);
  const bool reset_pending = verdict.what != step::none && verdict.what != step::recorded;
  // A request waiting for the group to empty is looked at again at each refresh, and when its notAfter comes.
  auto next_look = std::chrono::duration_cast<std::chrono::milliseconds>(options_.status_interval);
  const auto look_by_expiry = [&](std::chrono::milliseconds wait) {
    return std::min(wait, until(*read.spec.not_after, now));
  };
  const bool waiting = verdict.what == step::apply && waiting_for_empty_group(resource, generation);
  if (!reset_pending || waiting) {
    // Status refreshes (and the checks of a reset waiting for the group to empty) are bounded whatever queues the
    // key, including the watch event of our own status write.
    std::lock_guard lock(refreshed_mutex_);
    const auto last = refreshed_.find(key);
    if (last != refreshed_.end() && clock::now() - last->second < options_.status_interval) {
      const auto rest =
          std::chrono::ceil<std::chrono::milliseconds>(options_.status_interval - (clock::now() - last->second));
      return {.requeue_after = waiting ? look_by_expiry(rest) : rest};
    }
  }

  const auto old = resource.value("status", json::object());
  const auto old_conditions = old.value("conditions", json::array());
  json status = old;
  status["observedGeneration"] = generation;
  status["groupId"] = read.spec.group_id;
  const auto set_condition = [&](const json& condition) { kube::set_condition(status, condition); };
  // The outcome as a condition and an Event (a request still waiting is announced once); a final one is recorded,
  // and the request is never looked at again.
  const auto conclude = [&](const reset_outcome& outcome) {
    const bool still_waiting = outcome.reason == group_active;
    if (!still_waiting || !waiting) {
      events_.record(resource, outcome.done ? kube::event_recorder::type::normal : kube::event_recorder::type::warning,
                     outcome.reason, "ResetOffsets", outcome.message);
    }
    set_condition(kube::make_condition(old_conditions, "OffsetsReset", outcome.done, outcome.reason, outcome.message,
                                       generation));
    if (still_waiting) {
      next_look = look_by_expiry(next_look);
      return;
    }
    status["resetOffsets"] = {{"requestId", read.spec.request_id},
                              {"outcome", outcome_of(outcome.reason)},
                              {"time", kube::format_time(now)},
                              {"generation", generation}};
  };
  if (verdict.what == step::refuse) conclude({false, "InvalidReset", verdict.message});
  if (verdict.what == step::expire) {
    const bool had_members = waiting_for_empty_group(resource, generation);
    conclude({false, "ResetExpired", verdict.message + (had_members ? "; the group had members until then" : "")});
  }

  if (!cluster_.connected() || !cluster_.ready()) {
    set_condition(kube::make_condition(old_conditions, "Ready", false, "ClusterUnavailable",
                                       "cannot reach the Ferry cluster's ZooKeeper", generation));
    return {.failed = !write_status(resource, status),
            .requeue_after = cluster_retry,
            .state = kube::resource_state{.reason = "ClusterUnavailable"}};
  }
  const auto view = cluster_.view();
  auto admin = admin_(view);

  if (verdict.what == step::apply) {
    const auto outcome = reset_offsets(*admin, read.spec, *view);
    if (!outcome) {
      set_condition(kube::make_condition(old_conditions, "OffsetsReset", false, "Retrying",
                                         "the group's coordinator or a partition leader did not answer; trying again",
                                         generation));
      write_status(resource, status);
      return {.failed = true};
    }
    conclude(*outcome);
  }

  auto observed = observe(*admin, read.spec.group_id, *view);
  if (!observed) {
    set_condition(kube::make_condition(
        old_conditions, "Ready", false, "GroupUnavailable",
        "cannot describe group " + read.spec.group_id + ": " + observed.error().message(), generation));
    return {.failed = !write_status(resource, status),
            .requeue_after = next_look,
            .state = kube::resource_state{.reason = "GroupUnavailable"}};
  }
  const auto& group = observed.value().group;
  const auto& lag = observed.value().lag;
  status["state"] = group.state;
  status["members"] = group.members;
  status["protocolType"] = group.protocol_type;
  status["protocol"] = group.protocol;
  status["lag"] = lag_json(lag);
  set_condition(kube::make_condition(old_conditions, "Ready", true, "GroupObserved",
                                     group.state == "Dead" ? "group " + read.spec.group_id +
                                                                 " does not exist (yet): no member has joined and no "
                                                                 "offsets are committed"
                                                           : "group " + read.spec.group_id + " is " + group.state +
                                                                 " with " + std::to_string(group.members) +
                                                                 " members and a lag of " + std::to_string(lag.total),
                                     generation));
  {
    std::lock_guard lock(refreshed_mutex_);
    refreshed_[key] = clock::now();
  }
  return {.failed = !write_status(resource, status),
          .requeue_after = next_look,
          .state = kube::resource_state{.ready = true, .reason = "GroupObserved"}};
}

bool group_controller::write_status(const json& resource, const json& status) {
  return kube::write_status(api_, kube::resource_path(resource, "/apis/ferry.dev/v1alpha1", "consumergroups"), resource,
                            status, "groups");
}

}  // namespace ferry::groups
