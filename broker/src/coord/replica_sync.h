#pragma once

#include <vector>

#include "coord/cluster_view.h"
#include "model/ids.h"

namespace ferry::coord {

// The partitions broker `self` hosts whose replica on it is not in sync yet, by what the view says: it is a
// follower outside the ISR, or the partition's state (ISR, leadership) predates its current registration, so
// the controller has not decided about it since it came back. Partitions with no live leader, and replicas a
// reassignment is still adding, are left out: nothing this broker does makes them sync.
//
// After a restart, a broker is ready for the next one to restart (a rolling upgrade) once this is empty: every
// partition it hosts is as replicated as before it went away.
std::vector<topic_partition> replicas_catching_up(const cluster_view& view, broker_id self);

}  // namespace ferry::coord
