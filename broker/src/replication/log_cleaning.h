#pragma once

#include <memory>

#include "base/clock.h"
#include "config/broker_config.h"
#include "metrics/broker_metrics.h"
#include "storage/log_cleaner.h"
#include "storage/log_manager.h"

namespace ferry::replication {

// The log.cleaner.* broker settings as the storage layer takes them.
[[nodiscard]] storage::cleaner_config to_cleaner_config(const config::broker_config& config);

// The broker's log cleaner over every log of `logs`, configured from the broker settings and reporting each pass
// to the broker's metrics (metrics/log_cleaner_metrics.h) and log. Not started: the caller calls start(), and
// stop() before it shuts the logs down. `logs`, `clock` and `metrics` must outlive it.
[[nodiscard]] std::unique_ptr<storage::log_cleaner> make_log_cleaner(storage::log_manager& logs,
                                                                     const ferry::clock& clock,
                                                                     const config::broker_config& config,
                                                                     metrics::broker_metrics& metrics);

}  // namespace ferry::replication
