#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "model/ids.h"
#include "storage/log.h"

namespace ferry::storage {

class log_manager;
class key_offset_map;

// The broker settings of the log cleaner, by Kafka's names and with its defaults.
struct cleaner_config {
  bool enable = true;                           // log.cleaner.enable
  std::int32_t threads = 1;                     // log.cleaner.threads
  std::int64_t backoff_ms = 15000;              // log.cleaner.backoff.ms
  std::int64_t dedupe_buffer_size = 134217728;  // log.cleaner.dedupe.buffer.size: for all threads
  std::int32_t io_buffer_size = 524288;         // log.cleaner.io.buffer.size: for all threads
};

// The log cleaner, Kafka's LogCleaner: log.cleaner.threads threads of its own (disk work, never on a network
// thread) that each pick the compacted log most in need of cleaning and run one pass on it (log::compact), then
// look again; with nothing to clean they wait log.cleaner.backoff.ms. A log is due when max.compaction.lag.ms
// ran out for its oldest dirty record, or when its dirty ratio (dirty bytes over cleanable bytes) reached its
// min.cleanable.dirty.ratio; overdue logs go first, then the dirtiest. A log is cleaned by one thread at a time.
//
// Memory: each thread has a key_offset_map of log.cleaner.dedupe.buffer.size / threads bytes (allocated as passes
// need it, up to that) and reads through log.cleaner.io.buffer.size / threads bytes (Ferry writes batch by
// batch, so the whole buffer is for reading).
//
// A pass that fails (a damaged segment, an I/O error) marks the partition uncleanable until the broker
// restarts, as Kafka does; the other logs go on being cleaned.
//
// Thread-safe. stop() (or the destructor) waits for a pass in progress to end.
class log_cleaner {
 public:
  // One pass, for metrics and the broker's log.
  struct pass_report {
    topic_partition partition;
    std::chrono::duration<double> duration{};
    compaction_result result;
  };
  // What the last look over the logs found.
  struct survey {
    double max_dirty_ratio = 0;  // over the compacted logs that have something to clean
    std::size_t uncleanable_partitions = 0;
  };
  struct options {
    log_manager* logs = nullptr;
    const ferry::clock* clock = nullptr;
    cleaner_config config;
    std::function<void(const pass_report&)> on_pass;  // called on a cleaner thread
    std::function<void(const survey&)> on_survey;     // likewise, after each look
  };

  explicit log_cleaner(options opts) : options_(std::move(opts)) {}
  ~log_cleaner() { stop(); }
  log_cleaner(const log_cleaner&) = delete;
  log_cleaner& operator=(const log_cleaner&) = delete;

  // Starts the threads (none when log.cleaner.enable is false).
  void start();
  void stop();

  // One look and at most one pass, on the caller's thread with `map`: true when a log was cleaned. For start()'s
  // threads and for tests.
  result<bool> clean_once(key_offset_map& map);

 private:
  struct choice {
    topic_partition partition;
    std::shared_ptr<log> chosen;
  };
  // The log to clean next, marked in progress; nullopt when none is due.
  std::optional<choice> choose();
  void run();

  const options options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;                  // guarded by mutex_
  std::set<topic_partition> in_progress_;  // guarded by mutex_
  std::set<topic_partition> uncleanable_;  // guarded by mutex_
  std::vector<std::thread> threads_;
};

}  // namespace ferry::storage
