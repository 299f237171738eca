#include "storage/segment.h"

#include <cstring>
#include <mutex>

#include "base/log.h"
#include "storage/errc.h"
#include "storage/file_names.h"

namespace ferry::storage {
namespace {

// Reads ahead this much when walking batch headers on the request path: an index lookup lands within
// about index.interval.bytes (4 KiB by default) of its target, so one read usually covers the walk.
constexpr std::size_t lookup_read_ahead = std::size_t{16} * 1024;
// Recovery reads every byte, so it reads in larger pieces.
constexpr std::size_t recovery_read_ahead = std::size_t{1024} * 1024;
// The index density of indexes rebuilt lazily, when a sealed segment's fail their check (Kafka's default
// index.interval.bytes; the topic's setting applies to segments as they are written).
constexpr std::int32_t rebuild_index_interval_bytes = 4096;
// Positions must fit the offset index's 4-byte field.
constexpr std::uint64_t max_position = INT32_MAX;

// Walks the batches of a .log file from a batch boundary up to `end`, reading ahead so that a walk over
// many small batches costs few system calls. Checks only that each header is complete and its length
// fits before `end`; recovery checks the rest.
class batch_scanner {
 public:
  batch_scanner(io::file& file, std::uint64_t from, std::uint64_t end, std::size_t read_ahead)
      : file_(file),
        next_(from),
        end_(end),
        capacity_(read_ahead),
        buffer_(std::make_unique_for_overwrite<std::byte[]>(read_ahead)) {}

  // Moves to the next batch: false at `end`; corrupt_log when the bytes there are not a plausible batch.
  result<bool> next() {
    if (next_ >= end_) return false;
    if (end_ - next_ < model::batch_header_size) return errc::corrupt_log;
    if (!buffered(next_, model::batch_header_size)) {
      FERRY_TRY(fill(next_));
      if (!buffered(next_, model::batch_header_size)) return errc::corrupt_log;
    }
    const std::size_t size = model::peek_batch_size(view(next_, model::batch_header_size));
    if (size == 0 || size > end_ - next_) return errc::corrupt_log;
    position_ = next_;
    size_ = size;
    next_ += size;
    return true;
  }

  [[nodiscard]] std::uint64_t position() const { return position_; }
  [[nodiscard]] std::uint64_t size() const { return size_; }
  // Valid until the next call.
  [[nodiscard]] model::batch_header_view header() const {
    return model::batch_header_view(view(position_, model::batch_header_size));
  }

  // The current batch's bytes, valid until the next call.
  result<std::span<const std::byte>> whole_batch() {
    if (buffered(position_, size_)) return view(position_, size_);
    if (size_ <= capacity_) {
      FERRY_TRY(fill(position_));
      if (!buffered(position_, size_)) return errc::corrupt_log;
      return view(position_, size_);
    }
    large_.resize(size_);
    FERRY_TRY(const std::size_t got, file_.read_at(large_, position_));
    if (got != size_) return errc::corrupt_log;
    return std::span<const std::byte>(large_);
  }

 private:
  [[nodiscard]] bool buffered(std::uint64_t position, std::uint64_t length) const {
    return position >= buffer_start_ && position + length <= buffer_start_ + buffer_length_;
  }
  [[nodiscard]] std::span<const std::byte> view(std::uint64_t position, std::uint64_t length) const {
    return {buffer_.get() + (position - buffer_start_), static_cast<std::size_t>(length)};
  }
  result<void> fill(std::uint64_t position) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(capacity_, end_ - position));
    FERRY_TRY(const std::size_t got, file_.read_at({buffer_.get(), want}, position));
    buffer_start_ = position;
    buffer_length_ = got;
    return success();
  }

  io::file& file_;
  std::uint64_t next_;
  std::uint64_t end_;
  std::size_t capacity_;
  std::unique_ptr<std::byte[]> buffer_;
  std::uint64_t buffer_start_ = 0;
  std::size_t buffer_length_ = 0;
  std::vector<std::byte> large_;  // a batch larger than the read-ahead
  std::uint64_t position_ = 0;
  std::uint64_t size_ = 0;
};

// Whether the first batch a walk from index entry `from` finds is the one the entry names. The implied entry
// at position 0 names the segment's base, and the first batch may start past it (compaction removed the
// batches before it); an entry the index stores names its batch exactly.
bool lands_on(const model::batch_header_view& header, const offset_index::entry& from, bool first) {
  if (!first) return true;
  return from.position == 0 ? header.base_offset() >= from.base : header.base_offset() == from.base;
}

segment::batch_location location_of(const batch_scanner& scan) {
  const auto header = scan.header();
  return {scan.position(), scan.size(), header.base_offset(), header.max_timestamp()};
}

}  // namespace
segment::segment(io::file_system& fs, const std::filesystem::path& directory, offset base,
                 std::shared_ptr<io::file> log, std::shared_ptr<io::file> index, std::shared_ptr<io::file> time,
                 std::int32_t index_bytes, bool active, std::string_view file_suffix)
    : fs_(fs),
      directory_(directory),
      base_(base),
      log_(std::move(log)),
      offset_index_(std::move(index), base, index_bytes, active),
      time_index_(std::move(time), base, index_bytes, active),
      extent_{0, base, -1, base},
      index_bytes_(index_bytes),
      sealed_(!active),
      file_suffix_(file_suffix),
      indexes_checked_(active) {}

std::filesystem::path segment::path(std::string_view suffix) const {
  auto p = directory_ / (offset_file_name(base_, suffix) + file_suffix_);
  if (deleted_.load()) p += deleted_suffix;
  return p;
}

result<std::shared_ptr<segment>> segment::create(io::file_system& fs, const std::filesystem::path& directory,
                                                 offset base, std::int32_t index_bytes, std::string_view file_suffix) {
  std::shared_ptr<io::file> files[3];
  const std::string_view suffixes[3] = {log_suffix, index_suffix, time_index_suffix};
  for (int i = 0; i < 3; ++i) {
    const auto name = offset_file_name(base, suffixes[i]) + std::string(file_suffix);
    FERRY_TRY(files[i], fs.open(directory / name, io::open_mode::create_read_write));
    // A leftover index of an earlier life of this offset must not leak into the new segment.
    FERRY_TRY(files[i]->truncate(0));
  }
  FERRY_TRY(fs.remove(directory / (offset_file_name(base, txn_index_suffix) + std::string(file_suffix))));
  auto created = std::shared_ptr<segment>(
      new segment(fs, directory, base, files[0], files[1], files[2], index_bytes, true, file_suffix));
  created->close_index_files();  // empty and in memory: reopened at the first index entry
  return created;
}

result<std::shared_ptr<segment>> segment::open(io::file_system& fs, const std::filesystem::path& directory, offset base,
                                               std::int32_t index_bytes, bool active) {
  FERRY_TRY(auto log, fs.open(directory / offset_file_name(base, log_suffix), io::open_mode::read_write));
  bool missing = false;
  auto open_index = [&](std::string_view suffix) -> result<std::shared_ptr<io::file>> {
    const auto path = directory / offset_file_name(base, suffix);
    FERRY_TRY(const bool present, fs.exists(path));
    if (!present) {
      FERRY_LOG(warn, "storage") << path.string() << " is missing; rebuilding it";
      missing = true;
    }
    return fs.open(path, io::open_mode::create_read_write);
  };
  FERRY_TRY(auto index, open_index(index_suffix));
  FERRY_TRY(auto time, open_index(time_index_suffix));
  auto opened = std::shared_ptr<segment>(
      new segment(fs, directory, base, std::move(log), std::move(index), std::move(time), index_bytes, active));
  if (missing) {
    opened->index_suspect_ = true;
    return opened;
  }
  if (auto loaded = opened->load(); !loaded) {
    if (loaded.error() != errc::corrupt_log) return loaded.error();
    FERRY_LOG(warn, "storage") << "the indexes of " << opened->path(log_suffix).string()
                               << " do not match it; rebuilding them";
    opened->index_suspect_ = true;
    return opened;
  }
  // A sealed segment's are opened again, and then checked in full, on first use; an active one's entries are
  // in memory, and its files are reopened at its next index entry.
  opened->close_index_files();
  return opened;
}

result<void> segment::load() {
  FERRY_TRY(const std::uint64_t size, log_->size());
  FERRY_TRY(offset_index_.load(size));
  // Walk the batches after the last index entry to find where the segment ends. The walk starts at a batch
  // the index names, so a wrong entry shows here.
  FERRY_TRY(const auto last, offset_index_.last());
  extent e{size, last.base, -1, base_};
  batch_scanner scan(*log_, last.position, size, lookup_read_ahead);
  bool first = true;
  while (true) {
    FERRY_TRY(const bool more, scan.next());
    if (!more) break;
    const auto header = scan.header();
    if (!header.offsets_fit() || !lands_on(header, last, first) || header.base_offset() < e.next_offset)
      return errc::corrupt_log;
    first = false;
    e.next_offset = next(header.last_offset());
    if (header.max_timestamp() > e.max_timestamp) {
      e.max_timestamp = header.max_timestamp();
      e.offset_of_max_timestamp = header.base_offset();
    }
  }
  FERRY_TRY(time_index_.load(e.next_offset));
  // The time index's last entry holds the largest timestamp of the batches before the walk.
  FERRY_TRY(const auto latest, time_index_.last());
  if (latest && latest->timestamp >= e.max_timestamp) {
    e.max_timestamp = latest->timestamp;
    e.offset_of_max_timestamp = latest->base;
  }
  if (offset_index_.resident() && size > 0) {
    batch_scanner head(*log_, 0, size, model::batch_header_size);
    FERRY_TRY(const bool any, head.next());
    if (any && head.header().max_timestamp() >= 0) rolling_since_ms_ = head.header().max_timestamp();
  }
  bytes_since_index_ = size - last.position;
  extent_ = e;
  return success();
}

result<std::uint64_t> segment::recover(std::int32_t index_interval_bytes, offset keep_below) {
  std::unique_lock lock(mutex_);
  auto outcome = rebuild_locked(index_interval_bytes, keep_below);
  // Reopened when next used, as after open(): recovering a broker's every log must not hold three
  // descriptors per log.
  close_index_files();
  return outcome;
}

result<std::uint64_t> segment::rebuild_locked(std::int32_t index_interval_bytes, offset keep_below) {
  FERRY_TRY(open_index_files_locked(io::open_mode::create_read_write));
  FERRY_TRY(offset_index_.truncate(0));
  FERRY_TRY(time_index_.truncate(0));
  extent_ = {0, base_, -1, base_};
  bytes_since_index_ = 0;
  FERRY_TRY(const std::uint64_t file_size, log_->size());
  batch_scanner scan(*log_, 0, file_size, recovery_read_ahead);
  std::error_code bad;
  while (true) {
    auto more = scan.next();
    if (!more) {
      if (more.error() != errc::corrupt_log) return more.error();
      bad = more.error();
      break;
    }
    if (!more.value()) break;
    auto batch = scan.whole_batch();
    if (!batch) {
      if (batch.error() != errc::corrupt_log) return batch.error();
      bad = batch.error();
      break;
    }
    const std::span<const std::byte> bytes = batch.value();
    bad = model::validate_batch(bytes, {.max_batch_bytes = SIZE_MAX, .from_client = false});
    if (bad) break;
    const model::batch_header_view header(bytes);
    if (header.base_offset() < extent_.next_offset || header.last_offset().value() - base_.value() > INT32_MAX ||
        scan.position() > max_position) {
      bad = errc::corrupt_log;
      break;
    }
    FERRY_TRY(add_batch(header, scan.position(), index_interval_bytes));
  }
  const std::uint64_t cut = file_size - extent_.size;
  if (cut > 0 && extent_.next_offset >= keep_below) {
    FERRY_LOG(warn, "storage") << "recovery: " << path(log_suffix).string() << ": " << bad.message() << " at position "
                               << extent_.size << "; truncated " << cut << " bytes";
    FERRY_TRY(log_->truncate(extent_.size));
  } else if (cut > 0) {
    damage_ = path(log_suffix).string() + ": " + bad.message() + " at position " + std::to_string(extent_.size) +
              " (offset " + std::to_string(extent_.next_offset.value()) + "), " + std::to_string(cut) +
              " bytes before the end";
    damaged_ = true;
  } else {
    damage_.clear();
    damaged_ = false;
  }
  FERRY_TRY(index_max_timestamp(extent_));
  FERRY_TRY(sync_files());
  index_suspect_ = false;
  indexes_checked_ = true;
  touch_indexes();
  return cut;
}

segment::extent segment::committed() const {
  std::shared_lock lock(mutex_);
  return extent_;
}

result<void> segment::append(std::span<const std::byte> batch, std::int32_t index_interval_bytes, std::int64_t now_ms) {
  const std::uint64_t position = extent_.size;  // only the writer changes it
  if (auto written = log_->write_at(batch, position); !written) {
    (void)log_->truncate(position);
    return written.error();
  }
  {
    std::unique_lock lock(mutex_);
    if (auto added = add_batch(model::batch_header_view(batch), position, index_interval_bytes); !added) {
      (void)log_->truncate(position);
      return added.error();
    }
  }
  if (!rolling_since_ms_) rolling_since_ms_ = now_ms;
  return success();
}

result<void> segment::add_batch(const model::batch_header_view& header, std::uint64_t position,
                                std::int32_t index_interval_bytes) {
  extent e = extent_;
  e.size = position + header.total_size();
  e.next_offset = next(header.last_offset());
  if (header.max_timestamp() > e.max_timestamp) {
    e.max_timestamp = header.max_timestamp();
    e.offset_of_max_timestamp = header.base_offset();
  }
  if (bytes_since_index_ > static_cast<std::uint64_t>(std::max(index_interval_bytes, 0))) {
    FERRY_TRY(open_index_files_locked(io::open_mode::read_write));
    const std::size_t offset_entries = offset_index_.size();
    FERRY_TRY(offset_index_.append(header.base_offset(), position));
    if (auto timed = index_max_timestamp(e); !timed) {
      (void)offset_index_.truncate(offset_entries);
      return timed.error();
    }
    bytes_since_index_ = 0;
  }
  bytes_since_index_ += header.total_size();
  extent_ = e;
  return success();
}

result<void> segment::index_max_timestamp(const extent& e) {
  FERRY_TRY(const auto latest, time_index_.last());
  if (e.max_timestamp < 0 || (latest && latest->timestamp >= e.max_timestamp)) return success();
  FERRY_TRY(open_index_files_locked(io::open_mode::read_write));
  return time_index_.append({e.max_timestamp, e.offset_of_max_timestamp});
}

result<void> segment::sync_files() {
  FERRY_TRY(log_->sync());
  FERRY_TRY(offset_index_.sync());
  return time_index_.sync();
}

result<void> segment::flush() {
  FERRY_TRY(log_->sync());
  return aborted_.sync();
}

std::filesystem::path segment::txn_index_path() const {
  std::shared_lock lock(mutex_);  // file_suffix_ and deleted_ change under it
  return path(txn_index_suffix);
}

result<void> segment::add_aborted(const aborted_txn& txn) { return aborted_.append(fs_, txn_index_path(), txn); }

result<void> segment::remove_aborted_from(offset from) { return aborted_.remove_from(fs_, txn_index_path(), from); }

result<void> segment::collect_aborted(offset from, offset upto, std::vector<aborted_txn>& out, bool& complete) {
  return aborted_.collect(fs_, txn_index_path(), from, upto, out, complete);
}

result<void> segment::seal() {
  {
    std::unique_lock lock(mutex_);
    // Open from here on, and used now: the idle sweep leaves them to the fsync below.
    FERRY_TRY(open_index_files_locked(io::open_mode::read_write));
    FERRY_TRY(index_max_timestamp(extent_));
    // Bytes recover(keep) left past the extent are flushed data that could not be read: they stay.
    if (!damaged_) {
      FERRY_TRY(log_->truncate(extent_.size));
    }
    FERRY_TRY(offset_index_.truncate(offset_index_.size()));
    FERRY_TRY(time_index_.truncate(time_index_.size()));
  }
  FERRY_TRY(sync_files());  // outside the lock: readers of this segment need not wait for the disk
  FERRY_TRY(aborted_.sync());
  std::unique_lock lock(mutex_);
  offset_index_.release_memory();
  time_index_.release_memory();
  sealed_ = true;
  touch_indexes();
  return success();
}

result<void> segment::rename_to_deleted(io::file_system& fs) {
  std::unique_lock lock(mutex_);  // readers reopening index files find them under one name or the other
  result<void> outcome = success();
  for (const auto suffix : segment_file_suffixes) {
    const auto from = path(suffix);
    auto to = from;
    to += deleted_suffix;
    auto renamed = fs.rename(from, to);
    if (!renamed && renamed.error() != std::errc::no_such_file_or_directory && outcome) outcome = renamed;
  }
  deleted_ = true;
  return outcome;
}

result<void> segment::rename_files(io::file_system& fs, std::string_view file_suffix) {
  std::unique_lock lock(mutex_);  // readers reopening index files find them under one name or the other
  for (const auto suffix : {txn_index_suffix, index_suffix, time_index_suffix, log_suffix}) {
    const auto from = path(suffix);
    const auto to = directory_ / (offset_file_name(base_, suffix) + std::string(file_suffix));
    auto renamed = fs.rename(from, to);
    // A segment without aborted transactions has no .txnindex.
    if (!renamed && !(suffix == txn_index_suffix && renamed.error() == std::errc::no_such_file_or_directory))
      return renamed.error();
  }
  file_suffix_ = file_suffix;
  return success();
}

result<void> segment::remove_deleted_files(io::file_system& fs) const {
  result<void> outcome = success();
  for (const auto suffix : segment_file_suffixes) {
    auto removed = fs.remove(path(suffix));
    if (!removed && removed.error() != std::errc::no_such_file_or_directory && outcome) outcome = removed;
  }
  return outcome;
}

void segment::touch_indexes() const {
  last_index_use_.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
}

bool segment::release_idle_indexes(std::chrono::steady_clock::time_point idle_before) {
  if (!indexes_open_ || last_index_use_.load(std::memory_order_relaxed) >= idle_before.time_since_epoch().count())
    return false;
  std::unique_lock lock(mutex_);
  // Checked again under the lock: seal() touches the indexes under it before its fsync outside it.
  if (!indexes_open_ || last_index_use_.load(std::memory_order_relaxed) >= idle_before.time_since_epoch().count())
    return false;
  close_index_files();
  return true;
}

void segment::close_index_files() {
  offset_index_.close();
  time_index_.close();
  indexes_open_ = false;
}

result<void> segment::open_index_files_locked(io::open_mode mode) {
  touch_indexes();
  if (indexes_open_) return success();
  FERRY_TRY(auto index, fs_.open(path(index_suffix), mode));
  FERRY_TRY(auto time, fs_.open(path(time_index_suffix), mode));
  offset_index_.reopen(std::move(index));
  time_index_.reopen(std::move(time));
  indexes_open_ = true;
  return success();
}

result<void> segment::indexes_ready() {
  touch_indexes();
  // An active segment's lookups read its entries in memory.
  if (indexes_open_.load() || !sealed_.load()) return success();
  std::unique_lock lock(mutex_);
  if (indexes_open_) return success();
  auto index = fs_.open(path(index_suffix), io::open_mode::read_write);
  auto time = index ? fs_.open(path(time_index_suffix), io::open_mode::read_write) : index;
  if (!index || !time) {
    const auto error = !index ? index.error() : time.error();
    // Removed by retention under a reader that still held the segment: the offsets are gone.
    if (deleted_) return errc::offset_out_of_range;
    if (error != std::errc::no_such_file_or_directory) return error;
    lock.unlock();
    return rebuild_sealed_indexes("an index file is missing");
  }
  offset_index_.reopen(std::move(index).value());
  time_index_.reopen(std::move(time).value());
  indexes_open_ = true;
  if (indexes_checked_) {
    FERRY_TRY(offset_index_.load(extent_.size));
    return time_index_.load(extent_.next_offset);
  }
  // The first use: every entry is checked, not only the last one (segment::open looked at that).
  auto checked = offset_index_.check_all(extent_.size);
  if (checked) checked = time_index_.check_all(extent_.next_offset);
  if (!checked && checked.error() != errc::corrupt_log) return checked.error();
  if (!checked) {
    lock.unlock();
    return rebuild_sealed_indexes("they fail their check on first use");
  }
  indexes_checked_ = true;
  return success();
}

result<void> segment::rebuild_sealed_indexes(std::string_view why) {
  std::unique_lock lock(mutex_);
  FERRY_LOG(warn, "storage") << "the indexes of " << path(log_suffix).string() << " are damaged (" << why
                             << "); rebuilding them from the log";
  const extent before = extent_;
  // A rebuild reads every batch; the extent it finds is the one the segment had, unless the .log itself is
  // damaged, and then recover(keep) says so and keeps what it cannot read.
  FERRY_TRY(rebuild_locked(rebuild_index_interval_bytes, keep_everything));
  if (damaged_)
    FERRY_LOG(error, "storage") << damage_ << "; the segment stays readable up to there, and the rest is kept on disk";
  if (extent_.size > before.size) extent_ = before;  // never more than readers were promised
  offset_index_.release_memory();
  time_index_.release_memory();
  return success();
}

result<segment::batch_location> segment::locate(offset target, const extent& at) {
  auto found = locate_once(target, at);
  if (found || found.error() != errc::corrupt_log || !sealed_) return found;
  // The index named a batch that is not there: a damaged index, never a reason to fail the read.
  FERRY_TRY(rebuild_sealed_indexes("a lookup found another batch than the one the index names"));
  return locate_once(target, at);
}

result<segment::batch_location> segment::locate_once(offset target, const extent& at) {
  FERRY_TRY(indexes_ready());
  offset_index::entry start;
  {
    std::shared_lock lock(mutex_);
    FERRY_TRY(start, offset_index_.lookup(target));
  }
  batch_scanner scan(*log_, start.position, at.size, lookup_read_ahead);
  bool first = true;
  while (true) {
    FERRY_TRY(const bool more, scan.next());
    if (!more) return errc::corrupt_log;  // the extent holds target, so a batch must
    const auto header = scan.header();
    // Headers of a segment opened clean were never validated: a damaged base offset must not overflow.
    if (!header.offsets_fit() || !lands_on(header, start, first)) return errc::corrupt_log;
    first = false;
    if (header.last_offset() >= target) return location_of(scan);
  }
}

result<segment::boundary> segment::boundary_before(std::uint64_t start, std::uint64_t limit, const extent& at) {
  FERRY_TRY(indexes_ready());
  offset_index::entry indexed;
  {
    std::shared_lock lock(mutex_);
    FERRY_TRY(indexed, offset_index_.lookup_position(limit));
  }
  // An indexed batch at or before `limit` is a boundary; walk on from it rather than from `start`.
  std::uint64_t end = std::max(start, indexed.position);
  batch_scanner scan(*log_, end, at.size, lookup_read_ahead);
  while (true) {
    FERRY_TRY(const bool more, scan.next());
    if (!more) return boundary{end, at.next_offset};
    if (scan.position() + scan.size() > limit) return boundary{end, scan.header().base_offset()};
    end = scan.position() + scan.size();
  }
}

result<std::optional<segment::batch_location>> segment::find_timestamp(std::int64_t ts, const extent& at) {
  if (at.max_timestamp < ts) return std::optional<batch_location>{};
  FERRY_TRY(indexes_ready());
  std::optional<time_index::entry> before;
  {
    std::shared_lock lock(mutex_);
    FERRY_TRY(before, time_index_.last_before(ts));
  }
  // Every batch before the entry's offset is older than the entry, so older than ts.
  const offset from = before ? before->base : base_;
  if (from >= at.next_offset) return std::optional<batch_location>{};
  FERRY_TRY(const auto start, locate(from, at));
  batch_scanner scan(*log_, start.position, at.size, lookup_read_ahead);
  while (true) {
    FERRY_TRY(const bool more, scan.next());
    if (!more) return std::optional<batch_location>{};
    if (scan.header().max_timestamp() >= ts) return std::optional<batch_location>{location_of(scan)};
  }
}

result<void> segment::visit(offset from, const extent& at, const visitor& fn) {
  if (from >= at.next_offset) return success();
  FERRY_TRY(const auto start, locate(from, at));
  batch_scanner scan(*log_, start.position, at.size, lookup_read_ahead);
  while (true) {
    FERRY_TRY(const bool more, scan.next());
    if (!more) return success();
    if (!scan.header().offsets_fit()) return errc::corrupt_log;  // fn may ask for its last offset
    if (scan.header().is_control()) {
      FERRY_TRY(const auto whole, scan.whole_batch());
      fn(model::batch_header_view(whole), whole);
    } else {
      fn(scan.header(), {});
    }
  }
}

}  // namespace ferry::storage
