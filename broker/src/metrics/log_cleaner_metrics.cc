#include "metrics/log_cleaner_metrics.h"

namespace ferry::metrics {
namespace {

template <typename T>
T& single(prometheus::Registry& registry, const std::string& name, const std::string& help) {
  return prometheus::detail::Builder<T>().Name(name).Help(help).Register(registry).Add({});
}

}  // namespace

log_cleaner_metrics::log_cleaner_metrics(prometheus::Registry& registry)
    : passes_(single<prometheus::Counter>(registry, "ferry_log_cleaner_passes_total",
                                          "Log cleaner passes that rewrote segments of a compacted log")),
      bytes_read_(single<prometheus::Counter>(registry, "ferry_log_cleaner_bytes_read_total",
                                              "Segment bytes the log cleaner read (key mapping and copying)")),
      bytes_written_(single<prometheus::Counter>(registry, "ferry_log_cleaner_bytes_written_total",
                                                 "Bytes of cleaned segments the log cleaner wrote")),
      records_removed_(single<prometheus::Counter>(registry, "ferry_log_cleaner_records_removed_total",
                                                   "Records the log cleaner removed (superseded, expired tombstones)")),
      last_pass_seconds_(single<prometheus::Gauge>(registry, "ferry_log_cleaner_last_pass_duration_seconds",
                                                   "How long the log cleaner's last pass took")),
      max_dirty_ratio_(single<prometheus::Gauge>(
          registry, "ferry_log_cleaner_max_dirty_ratio",
          "The largest dirty ratio (dirty bytes over cleanable bytes) of a compacted log at the last look")),
      uncleanable_partitions_(
          single<prometheus::Gauge>(registry, "ferry_log_cleaner_uncleanable_partitions",
                                    "Partitions the log cleaner gave up on after a failed pass (until restart)")) {}

void log_cleaner_metrics::record_pass(double seconds, std::uint64_t bytes_read, std::uint64_t bytes_written,
                                      std::uint64_t records_removed) {
  passes_.Increment();
  bytes_read_.Increment(static_cast<double>(bytes_read));
  bytes_written_.Increment(static_cast<double>(bytes_written));
  records_removed_.Increment(static_cast<double>(records_removed));
  last_pass_seconds_.Set(seconds);
}

void log_cleaner_metrics::record_survey(double max_dirty_ratio, std::size_t uncleanable_partitions) {
  max_dirty_ratio_.Set(max_dirty_ratio);
  uncleanable_partitions_.Set(static_cast<double>(uncleanable_partitions));
}

}  // namespace ferry::metrics
