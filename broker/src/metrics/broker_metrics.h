#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <string>

#include "metrics/authorization_metrics.h"
#include "metrics/log_cleaner_metrics.h"
#include "metrics/replication_metrics.h"

namespace ferry::metrics {

// Counters and histograms for one Kafka API, looked up once at startup so the request path only touches
// atomics.
struct api_metrics {
  prometheus::Counter* requests = nullptr;
  prometheus::Counter* errors = nullptr;  // responses carrying any error code, and closed connections
  prometheus::Histogram* latency = nullptr;
};

// Byte and record counters for one topic, cached by whoever serves the topic's partitions.
struct topic_metrics {
  prometheus::Counter* bytes_in = nullptr;
  prometheus::Counter* records_in = nullptr;
  prometheus::Counter* bytes_out = nullptr;
  prometheus::Counter* records_out = nullptr;
  // Replication traffic, counted apart from clients' (as Kafka's ReplicationBytesIn/OutPerSec are).
  prometheus::Counter* replication_bytes_in = nullptr;   // appended here as a follower
  prometheus::Counter* replication_bytes_out = nullptr;  // sent to followers as the leader
};

// Every metric the broker exports, in one Prometheus registry served on the admin port's /metrics. Names are
// the contract with the dashboards (docs/metrics.md); families are created once, labelled children on
// first use. Thread-safe.
class broker_metrics {
 public:
  broker_metrics();

  [[nodiscard]] std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  api_metrics for_api(const std::string& api_name);
  topic_metrics for_topic(const std::string& topic);
  // Removes a deleted topic's series so dashboards stop showing it.
  void forget_topic(const std::string& topic);

  prometheus::Gauge& open_connections() { return *open_connections_; }
  // The open connections of one Kafka listener, labelled with its security protocol as well.
  prometheus::Gauge& listener_connections(const std::string& listener, const std::string& protocol) {
    return listener_connections_.Add({{"listener", listener}, {"security_protocol", protocol}});
  }
  // Topics whose ZooKeeper assignment cannot be read, and "-stray" logs kept in the log dirs.
  prometheus::Gauge& invalid_topics() { return *invalid_topics_; }
  prometheus::Gauge& stray_logs() { return *stray_logs_; }
  // Log dir health (storage/log_dir.h), per dir and in all.
  prometheus::Gauge& log_dirs_offline() { return *log_dirs_offline_; }
  prometheus::Gauge& log_dir_offline(const std::string& dir) { return log_dir_offline_.Add({{"dir", dir}}); }
  prometheus::Gauge& log_dir_full(const std::string& dir) { return log_dir_full_.Add({{"dir", dir}}); }
  prometheus::Gauge& log_dir_free_bytes(const std::string& dir) { return log_dir_free_bytes_.Add({{"dir", dir}}); }
  prometheus::Gauge& log_dir_total_bytes(const std::string& dir) { return log_dir_total_bytes_.Add({{"dir", dir}}); }
  // ferry_broker_info: one series, always 1, whose labels say which broker this is (set once at startup).
  void set_broker_info(std::int32_t broker_id, const std::string& rack, const std::string& version);
  // Long-polling fetches registered on partitions (a fetch waiting on n partitions counts n times).
  prometheus::Gauge& fetch_waiters() { return *fetch_waiters_; }
  // The Kafka listener: accepts that failed (out of descriptors, ...) and connections closed for idleness.
  prometheus::Counter& accept_errors() { return *accept_errors_; }
  prometheus::Counter& idle_connections_closed() { return *idle_connections_closed_; }
  // Failures of background work (timers, periodic jobs, detached coroutines, a group's state machine) that were
  // logged and confined instead of ending the process (base/guarded.h).
  prometheus::Counter& confined_failures() { return *confined_failures_; }
  prometheus::Gauge& partition_log_size(const std::string& topic, int partition);
  prometheus::Gauge& partition_log_end_offset(const std::string& topic, int partition);
  prometheus::Gauge& partition_log_start_offset(const std::string& topic, int partition);
  void forget_partition(const std::string& topic, int partition);
  replication_metrics& replication() { return replication_; }
  log_cleaner_metrics& log_cleaner() { return log_cleaner_; }
  authorization_metrics& authorization() { return authorization_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Counter>& request_errors_;
  prometheus::Family<prometheus::Histogram>& request_latency_;
  prometheus::Family<prometheus::Counter>& topic_bytes_in_;
  prometheus::Family<prometheus::Counter>& topic_records_in_;
  prometheus::Family<prometheus::Counter>& topic_bytes_out_;
  prometheus::Family<prometheus::Counter>& topic_records_out_;
  prometheus::Family<prometheus::Counter>& topic_replication_bytes_in_;
  prometheus::Family<prometheus::Counter>& topic_replication_bytes_out_;
  prometheus::Family<prometheus::Gauge>& connections_;
  prometheus::Family<prometheus::Gauge>& listener_connections_;
  prometheus::Family<prometheus::Gauge>& log_size_;
  prometheus::Family<prometheus::Gauge>& log_end_offset_;
  prometheus::Family<prometheus::Gauge>& log_start_offset_;
  prometheus::Family<prometheus::Gauge>& log_dirs_offline_family_;
  prometheus::Family<prometheus::Gauge>& log_dir_offline_;
  prometheus::Family<prometheus::Gauge>& log_dir_full_;
  prometheus::Family<prometheus::Gauge>& log_dir_free_bytes_;
  prometheus::Family<prometheus::Gauge>& log_dir_total_bytes_;
  prometheus::Family<prometheus::Gauge>& broker_info_;
  prometheus::Family<prometheus::Gauge>& fetch_waiters_family_;
  prometheus::Family<prometheus::Counter>& accept_errors_family_;
  prometheus::Family<prometheus::Counter>& idle_closed_family_;
  prometheus::Family<prometheus::Counter>& confined_failures_family_;
  prometheus::Family<prometheus::Gauge>& invalid_topics_family_;
  prometheus::Family<prometheus::Gauge>& stray_logs_family_;
  prometheus::Gauge* open_connections_;
  prometheus::Gauge* invalid_topics_;
  prometheus::Gauge* stray_logs_;
  prometheus::Gauge* log_dirs_offline_;
  prometheus::Gauge* fetch_waiters_;
  prometheus::Counter* accept_errors_;
  prometheus::Counter* idle_connections_closed_;
  prometheus::Counter* confined_failures_;
  replication_metrics replication_;
  log_cleaner_metrics log_cleaner_;
  authorization_metrics authorization_;
};

}  // namespace ferry::metrics
