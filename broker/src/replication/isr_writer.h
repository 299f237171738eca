#pragma once

#include <vector>

#include "base/result.h"
#include "coord/cluster_view.h"
#include "model/ids.h"

namespace ferry::replication {

// Writes a partition's new ISR for its leader, conditionally on the state it leads under
// (cluster_registry::alter_isr in the broker). Blocking.
class isr_writer {
 public:
  virtual ~isr_writer() = default;
  virtual result<void> alter_isr(const topic_partition& tp, const coord::partition_state& expected,
                                 std::vector<broker_id> isr) = 0;
};

}  // namespace ferry::replication
