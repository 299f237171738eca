#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <cstdint>

namespace ferry::metrics {

// The log cleaner's metrics (storage/log_cleaner.h), in the spirit of Kafka's kafka.log:type=LogCleaner and
// LogCleanerManager beans. Thread-safe: prometheus-cpp's counters and gauges are atomics.
class log_cleaner_metrics {
 public:
  explicit log_cleaner_metrics(prometheus::Registry& registry);

  // A pass over one log ended.
  void record_pass(double seconds, std::uint64_t bytes_read, std::uint64_t bytes_written,
                   std::uint64_t records_removed);
  // What the cleaner's last look over the logs found.
  void record_survey(double max_dirty_ratio, std::size_t uncleanable_partitions);

 private:
  prometheus::Counter& passes_;
  prometheus::Counter& bytes_read_;
  prometheus::Counter& bytes_written_;
  prometheus::Counter& records_removed_;
  prometheus::Gauge& last_pass_seconds_;
  prometheus::Gauge& max_dirty_ratio_;
  prometheus::Gauge& uncleanable_partitions_;
};

}  // namespace ferry::metrics
