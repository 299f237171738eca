#pragma once

#include <prometheus/collectable.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "coord/cluster_view.h"
#include "group/group_coordinator.h"
#include "lag/consumer_lag.h"
#include "metrics/broker_metrics.h"
#include "replication/partition_manager.h"

namespace ferry::admin {

// What the admin API reads. The JSON shapes are the contract in docs/admin-api.md, which the operator uses.
struct admin_sources {
  std::int32_t broker_id = -1;
  std::function<std::shared_ptr<const coord::cluster_view>()> view;
  replication::partition_manager* partitions = nullptr;
  metrics::broker_metrics* metrics = nullptr;
  // The groups this broker coordinates and their lag (/v1/groups; the lag metrics on /metrics).
  group::group_coordinator* groups = nullptr;
  const lag::consumer_lag* lag = nullptr;
  // Why the broker is not ready (not registered in ZooKeeper yet, not serving, a log dir offline or full);
  // empty when it is registered and serving. With `in_sync`, also until every partition it hosts has been back
  // in sync once since it started (/v1/ready?in_sync=true: the readiness a rolling restart waits for).
  std::function<std::vector<std::string>(bool in_sync)> not_ready;
  // Brings gauges up to date before /metrics is rendered (partition offsets and sizes, open connections).
  std::function<void()> refresh_metrics;
  // Series computed at scrape time besides the registry's and the lag's (the client quota budgets).
  std::vector<const prometheus::Collectable*> collectables;
};

struct http_reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

// Routes one request: GET /metrics, /v1/health, /v1/ready, /v1/brokers, /v1/topics, /v1/topics/<name>, /v1/groups,
// /v1/groups/<id> (percent-encoded).
// Other paths are 404 and other methods 405, each with a JSON {"error": "..."} body.
http_reply route(const admin_sources& sources, const std::string& method, const std::string& target);

// A request target's path: the target without its query.
std::string_view path_of(std::string_view target);

// An error the way every error of the API is answered: {"error": message}.
http_reply error_reply(int status, const std::string& message);

}  // namespace ferry::admin
