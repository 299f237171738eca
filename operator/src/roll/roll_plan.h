#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coord/cluster_view.h"

namespace ferry::roll {

// A broker pod as the roll sees it. Broker i runs in pod i of the StatefulSet.
struct broker_pod {
  std::int32_t ordinal = 0;
  std::string name;
  std::string revision;      // its controller-revision-hash label
  bool ready = false;        // condition Ready is True
  bool terminating = false;  // metadata.deletionTimestamp is set
  // The broker container runs but has not passed its startup probe yet: starting, perhaps recovering its log.
  bool starting = false;
};

struct roll_input {
  std::string update_revision;  // the StatefulSet's status.updateRevision
  std::int32_t replicas = 0;    // spec.replicas: pods that should exist
  std::vector<broker_pod> pods;
};

struct roll_plan {
  std::optional<std::string> delete_pod;  // the one pod to delete now, if any
  std::string why;                        // why that pod, or why none (empty when the roll is done)
  std::int32_t updated = 0;               // pods at the update revision, not terminating
  std::int32_t outdated = 0;              // pods at another revision, not terminating
  [[nodiscard]] bool done() const { return outdated == 0 && !delete_pod; }
};

// Why restarting broker `broker` now would take a partition's last spare in-sync replica away: the first
// partition it is in sync for whose other replicas are not all in sync and alive ("orders-3 has ISR 2 of 3"),
// or nullopt when every partition it hosts keeps its full ISR elsewhere (so none can drop below its
// min.insync.replicas because of this restart; a partition whose replication factor is not above it cannot
// avoid that, and is no reason to wait). A partition the broker is out of sync for loses nothing.
std::optional<std::string> roll_blocker(const coord::cluster_view& view, broker_id broker);

// Picks at most one outdated pod to delete, as Strimzi's KafkaRoller does with KafkaAvailability.canRoll:
//  - nothing while a broker pod is terminating or missing;
//  - an outdated pod that is not ready and not starting first (crash-looping, pending, or out of sync: it serves
//    nothing); one still starting (maybe recovering its log) is waited for, never killed;
//  - otherwise, only while every broker pod is ready and registered, a ready outdated broker that roll_blocker
//    lets go, the highest ordinal first, the controller last (only once it is the last outdated one).
roll_plan plan_roll(const roll_input& input, const coord::cluster_view& view);

}  // namespace ferry::roll
