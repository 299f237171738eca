#include "metrics/broker_metrics.h"

namespace ferry::metrics {
namespace {

// Request latency buckets in seconds, from 100 us (a produce to the page cache) to 30 s (a long poll that
// ran out its max wait, or a slow admin operation).
const prometheus::Histogram::BucketBoundaries& latency_buckets() {
  static const prometheus::Histogram::BucketBoundaries buckets{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  return buckets;
}

template <typename T>
prometheus::Family<T>& family(prometheus::Registry& registry, const std::string& name, const std::string& help) {
  return prometheus::detail::Builder<T>().Name(name).Help(help).Register(registry);
}

}  // namespace

broker_metrics::broker_metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(family<prometheus::Counter>(*registry_, "ferry_requests_total", "Kafka requests handled, by API")),
      request_errors_(family<prometheus::Counter>(*registry_, "ferry_request_errors_total",
                                                  "Kafka requests answered with an error or refused, by API")),
      request_latency_(family<prometheus::Histogram>(*registry_, "ferry_request_duration_seconds",
                                                     "Time from a request's arrival to its response, by API")),
      topic_bytes_in_(family<prometheus::Counter>(*registry_, "ferry_topic_bytes_in_total",
                                                  "Record batch bytes appended, by topic")),
      topic_records_in_(
          family<prometheus::Counter>(*registry_, "ferry_topic_records_in_total", "Records appended, by topic")),
      topic_bytes_out_(family<prometheus::Counter>(*registry_, "ferry_topic_bytes_out_total",
                                                   "Record batch bytes sent to fetchers, by topic")),
      topic_records_out_(
          family<prometheus::Counter>(*registry_, "ferry_topic_records_out_total",
                                      "Records sent to fetchers (the offsets the sent batches span), by topic")),
      topic_replication_bytes_in_(family<prometheus::Counter>(*registry_, "ferry_topic_replication_bytes_in_total",
                                                              "Record batch bytes fetched from leaders, by topic")),
      topic_replication_bytes_out_(family<prometheus::Counter>(*registry_, "ferry_topic_replication_bytes_out_total",
                                                               "Record batch bytes sent to followers, by topic")),
      connections_(family<prometheus::Gauge>(*registry_, "ferry_open_connections", "Open Kafka client connections")),
      listener_connections_(family<prometheus::Gauge>(
          *registry_, "ferry_listener_connections", "Open Kafka client connections by listener and security protocol")),
      log_size_(family<prometheus::Gauge>(*registry_, "ferry_partition_log_size_bytes",
                                          "Bytes on disk in a partition's log segments")),
      log_end_offset_(family<prometheus::Gauge>(*registry_, "ferry_partition_log_end_offset",
                                                "The offset the next appended record gets")),
      log_start_offset_(family<prometheus::Gauge>(*registry_, "ferry_partition_log_start_offset",
                                                  "The first offset still in a partition's log")),
      log_dirs_offline_family_(family<prometheus::Gauge>(*registry_, "ferry_log_dirs_offline",
                                                         "Log dirs taken offline by a failed fsync or write")),
      log_dir_offline_(family<prometheus::Gauge>(*registry_, "ferry_log_dir_offline",
                                                 "1 when the log dir is offline (a failed fsync or write)")),
      log_dir_full_(family<prometheus::Gauge>(*registry_, "ferry_log_dir_full",
                                              "1 when the log dir's file system is out of space")),
      log_dir_free_bytes_(family<prometheus::Gauge>(*registry_, "ferry_log_dir_free_bytes",
                                                    "Bytes still free on the log dir's file system")),
      log_dir_total_bytes_(family<prometheus::Gauge>(*registry_, "ferry_log_dir_total_bytes",
                                                     "Size in bytes of the log dir's file system")),
      broker_info_(family<prometheus::Gauge>(*registry_, "ferry_broker_info",
                                             "Always 1; the labels name the broker's id, rack and version")),
      fetch_waiters_family_(family<prometheus::Gauge>(*registry_, "ferry_fetch_waiters",
                                                      "Long-polling fetches registered on partitions")),
      accept_errors_family_(
          family<prometheus::Counter>(*registry_, "ferry_accept_errors_total",
                                      "Kafka connections that could not be accepted (e.g. out of descriptors)")),
      idle_closed_family_(family<prometheus::Counter>(*registry_, "ferry_idle_connections_closed_total",
                                                      "Kafka connections closed after connections.max.idle.ms")),
      confined_failures_family_(family<prometheus::Counter>(
          *registry_, "ferry_confined_failures_total",
          "Failures of background work (timers, periodic jobs, groups) logged and confined instead of ending "
          "the process")),
      invalid_topics_family_(
          family<prometheus::Gauge>(*registry_, "ferry_invalid_topics",
                                    "Topics whose ZooKeeper assignment cannot be read (no leaders, data kept)")),
      stray_logs_family_(family<prometheus::Gauge>(*registry_, "ferry_stray_logs",
                                                   "Logs set aside in the log dirs because no assignment names them")),
      open_connections_(&connections_.Add({})),
      invalid_topics_(&invalid_topics_family_.Add({})),
      stray_logs_(&stray_logs_family_.Add({})),
      log_dirs_offline_(&log_dirs_offline_family_.Add({})),
      fetch_waiters_(&fetch_waiters_family_.Add({})),
      accept_errors_(&accept_errors_family_.Add({})),
      idle_connections_closed_(&idle_closed_family_.Add({})),
      confined_failures_(&confined_failures_family_.Add({})),
      replication_(*registry_),
      log_cleaner_(*registry_),
      authorization_(*registry_) {}

api_metrics broker_metrics::for_api(const std::string& api_name) {
  return {&requests_.Add({{"api", api_name}}), &request_errors_.Add({{"api", api_name}}),
          &request_latency_.Add({{"api", api_name}}, latency_buckets())};
}

topic_metrics broker_metrics::for_topic(const std::string& topic) {
  const std::map<std::string, std::string> labels{{"topic", topic}};
  return {&topic_bytes_in_.Add(labels),
          &topic_records_in_.Add(labels),
          &topic_bytes_out_.Add(labels),
          &topic_records_out_.Add(labels),
          &topic_replication_bytes_in_.Add(labels),
          &topic_replication_bytes_out_.Add(labels)};
}

void broker_metrics::forget_topic(const std::string& topic) {
  const std::map<std::string, std::string> labels{{"topic", topic}};
  for (auto* f : {&topic_bytes_in_, &topic_records_in_, &topic_bytes_out_, &topic_records_out_,
                  &topic_replication_bytes_in_, &topic_replication_bytes_out_})
    f->Remove(&f->Add(labels));
}

prometheus::Gauge& broker_metrics::partition_log_size(const std::string& topic, int partition) {
  return log_size_.Add({{"topic", topic}, {"partition", std::to_string(partition)}});
}

prometheus::Gauge& broker_metrics::partition_log_end_offset(const std::string& topic, int partition) {
  return log_end_offset_.Add({{"topic", topic}, {"partition", std::to_string(partition)}});
}

prometheus::Gauge& broker_metrics::partition_log_start_offset(const std::string& topic, int partition) {
  return log_start_offset_.Add({{"topic", topic}, {"partition", std::to_string(partition)}});
}

void broker_metrics::set_broker_info(std::int32_t broker_id, const std::string& rack, const std::string& version) {
  broker_info_.Add({{"broker_id", std::to_string(broker_id)}, {"rack", rack}, {"version", version}}).Set(1);
}

void broker_metrics::forget_partition(const std::string& topic, int partition) {
  const std::map<std::string, std::string> labels{{"topic", topic}, {"partition", std::to_string(partition)}};
  for (auto* f : {&log_size_, &log_end_offset_, &log_start_offset_}) f->Remove(&f->Add(labels));
}

}  // namespace ferry::metrics
