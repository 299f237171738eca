#include "replication/log_cleaning.h"

#include "base/log.h"

namespace ferry::replication {

storage::cleaner_config to_cleaner_config(const config::broker_config& config) {
  return {.enable = config.log_cleaner_enable,
          .threads = config.log_cleaner_threads,
          .backoff_ms = config.log_cleaner_backoff_ms,
          .dedupe_buffer_size = config.log_cleaner_dedupe_buffer_size,
          .io_buffer_size = config.log_cleaner_io_buffer_size};
}

std::unique_ptr<storage::log_cleaner> make_log_cleaner(storage::log_manager& logs, const ferry::clock& clock,
                                                       const config::broker_config& config,
                                                       metrics::broker_metrics& metrics) {
  auto& cleaner_metrics = metrics.log_cleaner();
  return std::make_unique<storage::log_cleaner>(storage::log_cleaner::options{
      .logs = &logs,
      .clock = &clock,
      .config = to_cleaner_config(config),
      .on_pass =
          [&cleaner_metrics](const storage::log_cleaner::pass_report& pass) {
            const auto& r = pass.result;
            cleaner_metrics.record_pass(pass.duration.count(), r.bytes_read, r.bytes_written, r.records_removed);
            FERRY_LOG(info, "cleaner") << pass.partition << ": read " << r.bytes_read << " bytes, wrote "
                                       << r.bytes_written << " in " << pass.duration.count() << " s";
          },
      .on_survey =
          [&cleaner_metrics](const storage::log_cleaner::survey& s) {
            cleaner_metrics.record_survey(s.max_dirty_ratio, s.uncleanable_partitions);
          }});
}

}  // namespace ferry::replication
