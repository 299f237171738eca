#pragma once

#include <mutex>

#include "base/result.h"
#include "model/ids.h"
#include "txn/txn_coordinator.h"

namespace ferry::server {

class cluster_writes;

// Hands out producer ids (idempotent and transactional) from blocks reserved in ZooKeeper (/latest_producer_id_block),
// so ids are unique across the cluster and across restarts. Blocking on ZooKeeper: call through run_on_zookeeper.
class producer_ids final : public txn::producer_id_source {
 public:
  explicit producer_ids(cluster_writes& cluster) : cluster_(cluster) {}

  result<producer_id> next() override;

 private:
  cluster_writes& cluster_;
  std::mutex mutex_;
  std::int64_t next_ = 0;
  std::int64_t last_ = -1;  // inclusive end of the current block; -1: none yet
};

}  // namespace ferry::server
