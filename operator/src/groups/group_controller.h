#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "coord/cluster_observer.h"
#include "groups/group_admin.h"
#include "groups/group_spec.h"
#include "kube/api_client.h"
#include "kube/controller.h"
#include "kube/event_recorder.h"
#include "kube/informer_group.h"

namespace ferry::groups {

struct group_controller_options {
  // How often a group's status (state, members, lag) is refreshed at most: lag over time belongs in
  // Prometheus, not in etcd.
  std::chrono::seconds status_interval{30};
};

// Reconciles ConsumerGroup resources (consumergroups.ferry.dev). Groups come into being when clients join, so
// the resource observes and commands without owning the group: its status reports the group's state, members,
// protocol and lag, refreshed at most once per status_interval. spec.resetOffsets is a one-shot request
// (requestId, notAfter): applied at most once, only while the group has no members (while it has some, it waits,
// checked at each refresh, until notAfter); its outcome is the OffsetsReset condition, and a final one is recorded
// in status.resetOffsets. The reset's commits carry the request as metadata, so that a recreated resource (no
// status) finds it applied. Deleting the resource leaves the group alone.
class group_controller {
 public:
  using admin_factory = std::function<std::unique_ptr<group_admin>(std::shared_ptr<const coord::cluster_view>)>;

  group_controller(kube::api_client& api, kube::event_recorder& events, coord::cluster_observer& cluster,
                   admin_factory admin, group_controller_options options)
      : api_(api), events_(events), cluster_(cluster), admin_(std::move(admin)), options_(options) {}

  void set_informer(kube::informer_group& groups) { groups_ = &groups; }
  kube::reconcile_result reconcile(const std::string& key);

 private:
  // The outcome of a reset request: the OffsetsReset condition. Every reason but GroupActive is final.
  struct reset_outcome {
    bool done = false;
    std::string reason;
    std::string message;
  };
  // Applies an accepted request (judge_reset's step::apply); nullopt when it must be tried again (the cluster did
  // not answer).
  static std::optional<reset_outcome> reset_offsets(group_admin& admin, const group_spec& spec,
                                                    const coord::cluster_view& view);
  struct observation {
    group_description group;
    lag_summary lag;
  };
  // The group as its coordinator describes it, and its lag against the partition leaders' high watermarks.
  static result<observation> observe(group_admin& admin, const std::string& group, const coord::cluster_view& view);
  bool write_status(const nlohmann::json& resource, const nlohmann::json& status);

  kube::api_client& api_;
  kube::event_recorder& events_;
  coord::cluster_observer& cluster_;
  const admin_factory admin_;
  const group_controller_options options_;
  kube::informer_group* groups_ = nullptr;

  std::mutex refreshed_mutex_;
  std::map<std::string, std::chrono::steady_clock::time_point> refreshed_;  // by key
};

}  // namespace ferry::groups
