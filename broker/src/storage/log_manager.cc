#include "storage/log_manager.h"

#include <algorithm>
#include <charconv>
#include <mutex>
#include <optional>
#include <random>

#include "base/log.h"
#include "storage/atomic_file.h"
#include "storage/errc.h"
#include "storage/segment.h"

namespace ferry::storage {
namespace {

constexpr std::string_view delete_suffix = "-delete";
constexpr std::string_view stray_suffix = "-stray";
constexpr std::string_view metadata_file = "partition.metadata";

std::string encode_partition_metadata(const std::string& topic_id) {
  return "version: 0\ntopic_id: " + topic_id + "\n";
}

// The topic id of a partition.metadata file; empty when the file does not say (an unknown version is refused).
result<std::string> decode_partition_metadata(std::string_view text) {
  constexpr std::string_view version_line = "version: 0\n";
  constexpr std::string_view id_prefix = "topic_id: ";
  if (!text.starts_with(version_line)) return errc::corrupt_log;
  text.remove_prefix(version_line.size());
  if (!text.starts_with(id_prefix)) return errc::corrupt_log;
  text.remove_prefix(id_prefix.size());
  const auto end = text.find('\n');
  return std::string(text.substr(0, end));
}

// "<topic>-<partition>", the partition number after the last '-'.
std::optional<topic_partition> parse_partition_directory(std::string_view name) {
  const auto dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  const std::string_view digits = name.substr(dash + 1);
  std::int32_t partition = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), partition);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || partition < 0) return std::nullopt;
  return topic_partition{std::string(name.substr(0, dash)), partition_id{partition}};
}

// 32 random hex digits, like the UUID Kafka puts in the names of deleted logs.
std::string unique_suffix() {
  std::random_device random;
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 32; i += 8) {
    std::uint32_t bits = random();
    for (int j = 0; j < 8; ++j, bits >>= 4) out.push_back(hex[bits & 0xF]);
  }
  return out;
}

// "<topic>-<partition>.<unique><suffix>", with the topic cut short so that the name fits the 255 bytes a file
// name may have (as Kafka's LocalLog.logDeleteDirName does): a topic name may have 249 characters, and the
// suffix adds up to 51.
std::string detached_directory_name(const topic_partition& tp, std::string_view kind) {
  constexpr std::size_t max_file_name = 255;
  const std::string suffix = "-" + std::to_string(tp.partition.value()) + "." + unique_suffix() + std::string(kind);
  return tp.topic.substr(0, max_file_name - std::min(max_file_name, suffix.size())) + suffix;
}

// Keeps the first error of several independent steps.
void keep_first(result<void>& outcome, const std::error_code& ec) {
  if (outcome) outcome = ec;
}

}  // namespace

result<std::unique_ptr<log_manager>> log_manager::open(options opts) {
  std::unique_ptr<log_manager> manager(new log_manager(std::move(opts)));
  for (const auto& dir : manager->options_.log_dirs) manager->dirs_.push_back(std::make_shared<log_dir_state>(dir));
  for (std::size_t dir = 0; dir < manager->options_.log_dirs.size(); ++dir) {
    FERRY_TRY(manager->open_dir(dir));
  }
  return manager;
}

result<void> log_manager::open_dir(std::size_t dir) {
  io::file_system& fs = *options_.fs;
  const std::filesystem::path& root = options_.log_dirs[dir];
  FERRY_TRY(fs.create_directories(root));
  // Two brokers on one dir would corrupt each other's logs (and share a ZooKeeper session file).
  FERRY_TRY(auto lock, fs.open(root / ".lock", io::open_mode::create_read_write));
  if (auto locked = lock->try_lock(); !locked) {
    FERRY_LOG(error, "storage") << "log dir " << root.string() << " is in use by another process ("
                                << locked.error().message() << "); check log.dirs";
    return errc::log_dir_in_use;
  }
  locks_.push_back(std::move(lock));
  const auto marker = root / clean_shutdown_marker;
  FERRY_TRY(const bool clean, fs.exists(marker));
  if (clean) {
    FERRY_TRY(fs.remove(marker));
    FERRY_TRY(fs.sync_directory(root));
  }
  std::size_t recovered = 0;
  // Read after a clean shutdown too: its recovery points are the log ends, past which nothing belongs.
  offset_map recovery_points;
  {
    FERRY_TRY(const auto text, read_small_file(fs, root / recovery_point_checkpoint));
    if (text) {
      auto decoded = decode_offset_checkpoint(*text);
      if (decoded)
        recovery_points = std::move(decoded).value();
      else
        FERRY_LOG(warn, "storage") << (root / recovery_point_checkpoint).string()
                                   << " is unreadable; recovering every segment of its logs";
    }
  }
  offset_map log_starts;
  {
    FERRY_TRY(const auto text, read_small_file(fs, root / log_start_checkpoint));
    if (text) {
      if (auto decoded = decode_offset_checkpoint(*text))
        log_starts = std::move(decoded).value();
      else
        FERRY_LOG(warn, "storage") << (root / log_start_checkpoint).string()
                                   << " is unreadable; its logs start at their first segments";
    }
  }
  FERRY_TRY(const auto names, fs.list(root));
  for (const auto& name : names) {
    if (name.ends_with(delete_suffix)) {
      FERRY_TRY(fs.remove_all(root / name));
      continue;
    }
    if (name.ends_with(stray_suffix)) {
      ++stray_logs_;
      continue;
    }
    auto tp = parse_partition_directory(name);
    if (!tp) continue;
    if (const auto existing = logs_.find(*tp); existing != logs_.end()) {
      FERRY_LOG(error, "storage") << "partition " << *tp << " has a log in both "
                                  << options_.log_dirs[existing->second.dir].string() << " and " << root.string();
      return std::make_error_code(std::errc::file_exists);
    }
    const auto point = recovery_points.find(*tp);
    const auto start = log_starts.find(*tp);
    FERRY_TRY(auto opened, open_log({.fs = options_.fs,
                                     .clock = options_.clock,
                                     .directory = root / name,
                                     .config = config_for(tp->topic),
                                     .needs_recovery = !clean,
                                     .recovery_point = point != recovery_points.end() ? point->second
                                                       : clean                        ? offset{INT64_MAX}
                                                                                      : offset{0},
                                     .log_start = start != log_starts.end() ? start->second : offset{-1},
                                     .work = options_.work,
                                     .dir = dirs_[dir],
                                     .on_recovery_point_moved = [this] { checkpoint_recovery_point_moved(); }}));
    FERRY_TRY(const auto metadata, read_small_file(fs, root / name / metadata_file));
    std::string topic_id;
    if (metadata) {
      auto decoded = decode_partition_metadata(*metadata);
      if (!decoded)
        FERRY_LOG(warn, "storage") << (root / name / metadata_file).string()
                                   << " is unreadable; the log's topic id is unknown";
      else
        topic_id = std::move(decoded).value();
    }
    logs_.emplace(std::move(*tp), entry{std::move(opened), dir, std::move(topic_id)});
    if (!clean) ++recovered;
  }
  if (recovered > 0) {
    FERRY_LOG(info, "storage") << root.string() << " was not shut down cleanly; recovered " << recovered << " logs";
  }
  if (stray_logs_ > 0) {
    FERRY_LOG(warn, "storage") << "the log dirs hold " << stray_logs_
                               << " stray logs (\"-stray\" directories no assignment named); they are kept";
  }
  return success();
}

log_config log_manager::config_for(const std::string& topic) const {
  return options_.topic_config ? options_.topic_config(topic) : log_config{};
}

std::shared_ptr<log> log_manager::get(const topic_partition& tp) const {
  std::shared_lock lock(mutex_);
  const auto found = logs_.find(tp);
  return found == logs_.end() ? nullptr : found->second.partition_log;
}

result<std::shared_ptr<log>> log_manager::create(const topic_partition& tp, const log_config& config,
                                                 const std::string& topic_id) {
  // A log's own locks are never taken under mutex_: its seals read the map (checkpoint_recovery_point_moved), and
  // with inline background work they do so under the log's write lock.
  std::shared_ptr<log> existing;
  {
    std::unique_lock lock(mutex_);
    const auto found = logs_.find(tp);
    if (found == logs_.end()) return create_locked(tp, config, topic_id);
    auto& e = found->second;
    if (!topic_id.empty() && !e.topic_id.empty() && e.topic_id != topic_id) return errc::topic_id_mismatch;
    if (!topic_id.empty() && e.topic_id.empty()) {
      FERRY_TRY(write_file_atomically(*options_.fs, options_.log_dirs[e.dir] / tp.directory_name() / metadata_file,
                                      encode_partition_metadata(topic_id)));
      e.topic_id = topic_id;
    }
    existing = e.partition_log;
  }
  existing->update_config(config);
  return existing;
}

result<std::shared_ptr<log>> log_manager::create_locked(const topic_partition& tp, const log_config& config,
                                                        const std::string& topic_id) {
  // The online dir holding the fewest partitions (an offline one would only fail).
  std::vector<std::size_t> counts(options_.log_dirs.size(), 0);
  for (const auto& [_, e] : logs_) ++counts[e.dir];
  std::optional<std::size_t> chosen;
  for (std::size_t d = 0; d < counts.size(); ++d)
    if (!dirs_[d]->offline() && (!chosen || counts[d] < counts[*chosen])) chosen = d;
  if (!chosen) return errc::log_dir_offline;
  const std::size_t dir = *chosen;
  const auto& root = options_.log_dirs[dir];
  FERRY_TRY(auto opened, open_log({.fs = options_.fs,
                                   .clock = options_.clock,
                                   .directory = root / tp.directory_name(),
                                   .config = config,
                                   .needs_recovery = false,
                                   .work = options_.work,
                                   .dir = dirs_[dir],
                                   .on_recovery_point_moved = [this] { checkpoint_recovery_point_moved(); }}));
  if (!topic_id.empty()) {
    FERRY_TRY(write_file_atomically(*options_.fs, root / tp.directory_name() / metadata_file,
                                    encode_partition_metadata(topic_id)));
  }
  // The new directory's own entry must survive a crash too.
  FERRY_TRY(options_.fs->sync_directory(root));
  std::shared_ptr<log> created = std::move(opened);
  logs_.emplace(tp, entry{created, dir, topic_id});
  return created;
}

std::string log_manager::topic_id(const topic_partition& tp) const {
  std::shared_lock lock(mutex_);
  const auto found = logs_.find(tp);
  return found == logs_.end() ? std::string{} : found->second.topic_id;
}

result<std::optional<std::filesystem::path>> log_manager::detach(const topic_partition& tp, std::string_view suffix) {
  std::optional<entry> found;
  {
    std::shared_lock lock(mutex_);
    if (const auto it = logs_.find(tp); it != logs_.end()) found = it->second;
  }
  if (!found) return std::optional<std::filesystem::path>{};
  // Closed outside the lock (it fsyncs); requests that get the log meanwhile see log_closed.
  if (auto closed = found->partition_log->close(); !closed) {
    FERRY_LOG(warn, "storage") << "closing " << tp << " before setting it apart: " << closed.error().message();
  }
  const std::filesystem::path& root = options_.log_dirs[found->dir];
  const auto renamed = root / detached_directory_name(tp, suffix);
  {
    std::unique_lock lock(mutex_);
    const auto it = logs_.find(tp);
    if (it == logs_.end() || it->second.partition_log != found->partition_log)
      return std::optional<std::filesystem::path>{};  // detached already
    // Renamed under the lock so that a create() right after cannot open the old files.
    FERRY_TRY(options_.fs->rename(root / tp.directory_name(), renamed));
    logs_.erase(it);
  }
  FERRY_TRY(options_.fs->sync_directory(root));
  return std::optional<std::filesystem::path>(renamed);
}

result<void> log_manager::remove(const topic_partition& tp) {
  FERRY_TRY(const auto renamed, detach(tp, delete_suffix));
  if (!renamed) return success();
  return options_.fs->remove_all(*renamed);
}

result<void> log_manager::set_aside(const topic_partition& tp) {
  FERRY_TRY(const auto renamed, detach(tp, stray_suffix));
  if (!renamed) return success();
  ++stray_logs_;
  FERRY_LOG(warn, "storage") << "no assignment names " << tp << " any more and nobody deleted it: its log is kept as "
                             << renamed->string();
  return success();
}

std::vector<topic_partition> log_manager::partitions() const {
  std::vector<topic_partition> out;
  {
    std::shared_lock lock(mutex_);
    out.reserve(logs_.size());
    for (const auto& [tp, _] : logs_) out.push_back(tp);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::pair<topic_partition, log_manager::entry>> log_manager::snapshot() const {
  std::shared_lock lock(mutex_);
  return {logs_.begin(), logs_.end()};
}

std::vector<std::pair<topic_partition, std::size_t>> log_manager::placements() const {
  std::shared_lock lock(mutex_);
  std::vector<std::pair<topic_partition, std::size_t>> out;
  out.reserve(logs_.size());
  for (const auto& [tp, e] : logs_) out.emplace_back(tp, e.dir);
  return out;
}

result<std::size_t> log_manager::apply_retention_all() {
  std::size_t deleted = 0;
  result<void> outcome = success();
  for (const auto& [tp, e] : snapshot()) {
    auto applied = e.partition_log->apply_retention();
    if (applied) {
      deleted += applied.value();
      continue;
    }
    FERRY_LOG(warn, "storage") << "retention of " << tp << " failed: " << applied.error().message();
    keep_first(outcome, applied.error());
  }
  if (!outcome) return outcome.error();
  return deleted;
}

result<void> log_manager::flush_all_by_time() {
  result<void> outcome = success();
  for (const auto& [tp, e] : snapshot()) {
    if (auto flushed = e.partition_log->maybe_flush_by_time(); !flushed) {
      FERRY_LOG(warn, "storage") << "flushing " << tp << " failed: " << flushed.error().message();
      keep_first(outcome, flushed.error());
    }
  }
  return outcome;
}

result<void> log_manager::shutdown() {
  result<void> outcome = success();
  std::vector<bool> dir_clean(options_.log_dirs.size(), true);
  for (std::size_t dir = 0; dir < dirs_.size(); ++dir) dir_clean[dir] = !dirs_[dir]->offline();
  for (const auto& [tp, e] : snapshot()) {
    if (auto closed = e.partition_log->close(); !closed) {
      FERRY_LOG(error, "storage") << "closing " << tp << " failed: " << closed.error().message();
      dir_clean[e.dir] = false;
      keep_first(outcome, closed.error());
    }
  }
  io::file_system& fs = *options_.fs;
  for (std::size_t dir = 0; dir < options_.log_dirs.size(); ++dir) {
    if (!dir_clean[dir]) continue;
    const std::filesystem::path& root = options_.log_dirs[dir];
    auto marked = [&]() -> result<void> {
      FERRY_TRY(auto marker, fs.open(root / clean_shutdown_marker, io::open_mode::create_read_write));
      FERRY_TRY(marker->sync());
      return fs.sync_directory(root);
    }();
    if (!marked) keep_first(outcome, marked.error());
  }
  if (auto checkpointed = checkpoint_recovery_points(); !checkpointed) keep_first(outcome, checkpointed.error());
  return outcome;
}

result<void> log_manager::checkpoint_recovery_points() {
  offset_map points;
  for (const auto& [tp, e] : snapshot()) points[tp] = e.partition_log->flushed_offset();
  return write_checkpoint(recovery_point_checkpoint, points);
}

void log_manager::checkpoint_recovery_point_moved() {
  if (seal_checkpoint_requests_.fetch_add(1, std::memory_order_acq_rel) > 0)
    return;  // the thread writing now will write again
  for (;;) {
    const auto covered = seal_checkpoint_requests_.load(std::memory_order_acquire);
    if (auto written = checkpoint_recovery_points(); !written)
      FERRY_LOG(warn, "storage") << "writing the recovery point checkpoint failed: " << written.error().message();
    if (seal_checkpoint_requests_.fetch_sub(covered, std::memory_order_acq_rel) == covered) return;
  }
}

result<void> log_manager::write_checkpoint(std::string_view name, const offset_map& offsets) {
  const std::scoped_lock lock(checkpoint_write_mutex_);
  std::vector<offset_map> per_dir(options_.log_dirs.size());
  for (const auto& [tp, e] : snapshot()) {
    if (const auto it = offsets.find(tp); it != offsets.end()) per_dir[e.dir].insert(*it);
  }
  result<void> outcome = success();
  for (std::size_t dir = 0; dir < per_dir.size(); ++dir) {
    if (dirs_[dir]->offline()) continue;
    auto written =
        write_file_atomically(*options_.fs, options_.log_dirs[dir] / name, encode_offset_checkpoint(per_dir[dir]));
    if (!written) {
      dirs_[dir]->note_io_error("writing " + std::string(name), written.error());
      keep_first(outcome, written.error());
    }
  }
  return outcome;
}

offset_map log_manager::read_checkpoint(std::string_view name) const {
  offset_map out;
  for (const auto& root : options_.log_dirs) {
    const auto text = read_small_file(*options_.fs, root / name);
    if (!text || !text.value()) continue;
    auto decoded = decode_offset_checkpoint(*text.value());
    if (!decoded) {
      FERRY_LOG(warn, "storage") << (root / name).string() << " is unreadable; ignoring it";
      continue;
    }
    out.merge(decoded.value());
  }
  return out;
}

void log_manager::refresh_free_space() {
  for (const auto& dir : dirs_) {
    if (auto free = options_.fs->free_bytes(dir->path()); free) dir->refresh_free_bytes(free.value());
    if (auto total = options_.fs->total_bytes(dir->path()); total) dir->refresh_total_bytes(total.value());
  }
}

std::size_t log_manager::release_idle_indexes() {
  const auto idle_before = std::chrono::steady_clock::now() - segment::idle_index_close;
  std::size_t closed = 0;
  for (const auto& [tp, e] : snapshot()) closed += e.partition_log->release_idle_indexes(idle_before);
  return closed;
}

}  // namespace ferry::storage
