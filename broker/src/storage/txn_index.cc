#include "storage/txn_index.h"

#include <algorithm>

#include "base/log.h"
#include "bytes/big_endian.h"
#include "storage/errc.h"

namespace ferry::storage {
namespace {

constexpr std::int16_t entry_version = 0;

using bytes::load_big;
using bytes::store_big;

}  // namespace

std::vector<std::byte> txn_index::encode(const aborted_txn& txn) {
  std::vector<std::byte> out(entry_size);
  store_big<std::int16_t>(out, 0, entry_version);
  store_big<std::int64_t>(out, 2, txn.producer.value());
  store_big<std::int64_t>(out, 10, txn.first.value());
  store_big<std::int64_t>(out, 18, txn.last.value());
  store_big<std::int64_t>(out, 26, txn.last_stable.value());
  return out;
}

result<std::vector<aborted_txn>> txn_index::decode(std::span<const std::byte> bytes) {
  std::vector<aborted_txn> entries;
  for (std::size_t at = 0; at + entry_size <= bytes.size(); at += entry_size) {
    const auto entry = bytes.subspan(at, entry_size);
    if (load_big<std::int16_t>(entry, 0) != entry_version) return errc::corrupt_log;
    entries.push_back({producer_id{load_big<std::int64_t>(entry, 2)}, offset{load_big<std::int64_t>(entry, 10)},
                       offset{load_big<std::int64_t>(entry, 18)}, offset{load_big<std::int64_t>(entry, 26)}});
  }
  return entries;
}

result<void> txn_index::load_locked(io::file_system& fs, const std::filesystem::path& path) {
  if (loaded_) return success();
  FERRY_TRY(const bool present, fs.exists(path));
  if (present) {
    FERRY_TRY(file_, fs.open(path, io::open_mode::read_write));
    FERRY_TRY(const std::uint64_t size, file_->size());
    std::vector<std::byte> bytes(size);
    FERRY_TRY(const std::size_t got, file_->read_at(bytes, 0));
    auto decoded = decode(std::span(bytes).first(got));
    if (!decoded) {
      FERRY_LOG(error, "storage") << path.string() << " holds an entry of an unknown version";
      return decoded.error();
    }
    entries_ = std::move(decoded).value();
    if (got % entry_size != 0) {
      FERRY_LOG(warn, "storage") << path.string() << " ends in a torn entry; cutting it";
      FERRY_TRY(file_->truncate(entries_.size() * entry_size));
    }
  }
  loaded_ = true;
  return success();
}

result<void> txn_index::append(io::file_system& fs, const std::filesystem::path& path, const aborted_txn& txn) {
  std::lock_guard lock(mutex_);
  FERRY_TRY(load_locked(fs, path));
  if (!file_) {
    FERRY_TRY(file_, fs.open(path, io::open_mode::create_read_write));
  }
  FERRY_TRY(file_->write_at(encode(txn), entries_.size() * entry_size));
  entries_.push_back(txn);
  dirty_ = true;
  return success();
}

result<void> txn_index::collect(io::file_system& fs, const std::filesystem::path& path, offset from, offset upto,
                                std::vector<aborted_txn>& out, bool& complete) {
  std::lock_guard lock(mutex_);
  FERRY_TRY(load_locked(fs, path));
  for (const auto& txn : entries_) {
    if (txn.last >= from && txn.first < upto) out.push_back(txn);
    if (txn.last_stable >= upto) {
      complete = true;
      break;
    }
  }
  return success();
}

result<void> txn_index::remove_from(io::file_system& fs, const std::filesystem::path& path, offset from) {
  std::lock_guard lock(mutex_);
  FERRY_TRY(load_locked(fs, path));
  const auto kept = std::ranges::find_if(entries_, [&](const aborted_txn& txn) { return txn.last >= from; });
  if (kept == entries_.end()) return success();
  entries_.erase(kept, entries_.end());
  FERRY_TRY(file_->truncate(entries_.size() * entry_size));
  dirty_ = true;
  return success();
}

result<void> txn_index::sync() {
  std::lock_guard lock(mutex_);
  if (!dirty_ || !file_) return success();
  FERRY_TRY(file_->sync());
  dirty_ = false;
  return success();
}

}  // namespace ferry::storage
