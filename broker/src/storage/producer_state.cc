#include "storage/producer_state.h"

#include "bytes/big_endian.h"
#include "bytes/crc32c.h"
#include "storage/errc.h"

namespace ferry::storage {
namespace {

constexpr std::int16_t snapshot_version = 2;
constexpr std::int16_t snapshot_version_without_txns = 1;
constexpr std::size_t crc_position = 2;
constexpr std::size_t crc_start = 6;

bool in_sequence(std::int32_t last, std::int32_t next) {
  return static_cast<std::int64_t>(next) == static_cast<std::int64_t>(last) + 1 || (next == 0 && last == INT32_MAX);
}

class snapshot_writer {
 public:
  template <typename T>
  void put(T value) {
    const std::size_t at = out.size();
    out.resize(at + sizeof(T));
    bytes::store_big<T>(out, at, value);
  }
  std::vector<std::byte> out;
};

class snapshot_reader {
 public:
  explicit snapshot_reader(std::span<const std::byte> in) : in_(in) {}
  // False once a read ran past the end; the values read are then meaningless.
  template <typename T>
  bool get(T& value) {
    if (in_.size() - at_ < sizeof(T)) return false;
    value = bytes::load_big<T>(in_, at_);
    at_ += sizeof(T);
    return true;
  }
  [[nodiscard]] bool done() const { return at_ == in_.size(); }

 private:
  std::span<const std::byte> in_;
  std::size_t at_ = 0;
};

}  // namespace

result<std::optional<producer_batch>> producer_state_manager::check(const model::batch_header_view& batch) const {
  const auto found = producers_.find(batch.producer());
  // Unknown: the first batch of a new producer, or one whose state retention removed.
  if (found == producers_.end()) return std::optional<producer_batch>{};
  const producer_entry& entry = found->second;
  if (batch.epoch() < entry.epoch) return errc::invalid_producer_epoch;
  if (entry.ongoing_txn && !batch.is_transactional()) return errc::invalid_txn_state;
  if (batch.epoch() > entry.epoch) {
    if (batch.base_sequence() != 0 && entry.epoch.value() >= 0) return errc::out_of_order_sequence;
    return std::optional<producer_batch>{};
  }
  for (const producer_batch& b : entry.batches) {
    if (b.first_sequence == batch.base_sequence() && b.last_sequence == batch.last_sequence())
      return std::optional<producer_batch>{b};
  }
  const std::int32_t last = entry.batches.empty() ? -1 : entry.batches.back().last_sequence;
  if (!in_sequence(last, batch.base_sequence())) return errc::out_of_order_sequence;
  return std::optional<producer_batch>{};
}

result<std::optional<producer_batch>> producer_state_manager::check_epoch(const model::batch_header_view& batch) const {
  const auto found = producers_.find(batch.producer());
  if (found != producers_.end() && batch.epoch() < found->second.epoch) return errc::invalid_producer_epoch;
  return std::optional<producer_batch>{};
}

void producer_state_manager::update(const model::batch_header_view& batch) {
  producer_entry& entry = producers_[batch.producer()];
  if (batch.epoch() != entry.epoch) {
    entry.epoch = batch.epoch();
    entry.batches.clear();
  }
  if (entry.batches.size() == producer_entry::retained_batches) entry.batches.erase(entry.batches.begin());
  entry.batches.push_back(
      {batch.base_sequence(), batch.last_sequence(), batch.base_offset(), batch.last_offset(), batch.max_timestamp()});
  entry.last_timestamp = batch.max_timestamp();
  if (batch.is_transactional() && !entry.ongoing_txn) open_txn(batch.producer(), entry, batch.base_offset());
}

void producer_state_manager::open_txn(producer_id id, producer_entry& entry, offset first) {
  entry.ongoing_txn = first;
  open_txns_.emplace(first, id);
}

result<void> producer_state_manager::check_marker(producer_id producer, producer_epoch epoch,
                                                  std::int32_t coordinator_epoch) const {
  const auto found = producers_.find(producer);
  if (found == producers_.end()) return success();
  if (epoch < found->second.epoch) return errc::invalid_producer_epoch;
  if (coordinator_epoch < found->second.coordinator_epoch) return errc::coordinator_fenced;
  return success();
}

std::optional<completed_txn> producer_state_manager::complete(const model::batch_header_view& marker_batch,
                                                              const model::txn_marker& marker) {
  const producer_id id = marker_batch.producer();
  producer_entry& entry = producers_[id];
  if (marker_batch.epoch() != entry.epoch) {
    entry.epoch = marker_batch.epoch();
    entry.batches.clear();
  }
  entry.coordinator_epoch = marker.coordinator_epoch;
  entry.last_timestamp = marker_batch.max_timestamp();
  if (!entry.ongoing_txn) return std::nullopt;
  const offset first = *entry.ongoing_txn;
  entry.ongoing_txn.reset();
  open_txns_.erase(first);
  const offset last = marker_batch.base_offset();
  unreplicated_txns_.emplace(first, last);
  return completed_txn{id, first, last, marker.type == model::marker_type::abort};
}

std::optional<offset> producer_state_manager::first_unstable_offset(offset high_watermark) {
  std::erase_if(unreplicated_txns_, [&](const auto& txn) { return txn.second < high_watermark; });
  std::optional<offset> first;
  if (!open_txns_.empty()) first = open_txns_.begin()->first;
  if (!unreplicated_txns_.empty() && (!first || unreplicated_txns_.begin()->first < *first))
    first = unreplicated_txns_.begin()->first;
  return first;
}

std::optional<offset> producer_state_manager::first_open_txn() const {
  if (open_txns_.empty()) return std::nullopt;
  return open_txns_.begin()->first;
}

std::optional<producer_entry> producer_state_manager::find(producer_id id) const {
  const auto found = producers_.find(id);
  if (found == producers_.end()) return std::nullopt;
  return found->second;
}

void producer_state_manager::remove_before(offset log_start) {
  std::erase_if(producers_, [&](const auto& p) {
    return !p.second.ongoing_txn && (p.second.batches.empty() || p.second.batches.back().last_offset < log_start);
  });
  std::erase_if(unreplicated_txns_, [&](const auto& txn) { return txn.second < log_start; });
}

std::size_t producer_state_manager::remove_expired(std::int64_t now_ms, std::int64_t expiration_ms) {
  std::size_t removed = 0;
  for (auto it = producers_.begin(); it != producers_.end();) {
    auto& entry = it->second;
    if (!entry.ongoing_txn && entry.last_timestamp < 0) entry.last_timestamp = now_ms;
    if (!entry.ongoing_txn && now_ms - entry.last_timestamp >= expiration_ms) {
      it = producers_.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

std::vector<std::byte> producer_state_manager::serialize() const {
  snapshot_writer w;
  w.put<std::int16_t>(snapshot_version);
  w.put<std::uint32_t>(0);  // the CRC, filled in below
  w.put<std::int32_t>(static_cast<std::int32_t>(producers_.size()));
  for (const auto& [id, entry] : producers_) {
    w.put<std::int64_t>(id.value());
    w.put<std::int16_t>(entry.epoch.value());
    w.put<std::int32_t>(entry.coordinator_epoch);
    w.put<std::int64_t>(entry.ongoing_txn.value_or(no_offset).value());
    w.put<std::int8_t>(static_cast<std::int8_t>(entry.batches.size()));
    for (const producer_batch& b : entry.batches) {
      w.put<std::int32_t>(b.first_sequence);
      w.put<std::int32_t>(b.last_sequence);
      w.put<std::int64_t>(b.first_offset.value());
      w.put<std::int64_t>(b.last_offset.value());
      w.put<std::int64_t>(b.max_timestamp);
    }
  }
  bytes::store_big<std::uint32_t>(w.out, crc_position, bytes::crc32c(std::span(w.out).subspan(crc_start)));
  return std::move(w.out);
}

result<producer_state_manager> producer_state_manager::deserialize(std::span<const std::byte> bytes) {
  snapshot_reader r(bytes);
  std::int16_t version = 0;
  std::uint32_t crc = 0;
  std::int32_t count = 0;
  if (!r.get(version) || (version != snapshot_version && version != snapshot_version_without_txns) || !r.get(crc) ||
      crc != bytes::crc32c(bytes.subspan(crc_start)) || !r.get(count) || count < 0)
    return errc::corrupt_log;
  const bool with_txns = version == snapshot_version;
  producer_state_manager state;
  for (std::int32_t i = 0; i < count; ++i) {
    std::int64_t id = 0;
    std::int16_t epoch = 0;
    std::int32_t coordinator_epoch = -1;
    std::int64_t ongoing = -1;
    std::int8_t batches = 0;
    if (!r.get(id) || !r.get(epoch) || (with_txns && (!r.get(coordinator_epoch) || !r.get(ongoing))) ||
        !r.get(batches) || batches < (with_txns ? 0 : 1) ||
        batches > static_cast<std::int8_t>(producer_entry::retained_batches) || ongoing < -1)
      return errc::corrupt_log;
    producer_entry entry{producer_epoch{epoch}, {}, coordinator_epoch, std::nullopt};
    for (std::int8_t j = 0; j < batches; ++j) {
      producer_batch b;
      std::int64_t first = 0;
      std::int64_t last = 0;
      if (!r.get(b.first_sequence) || !r.get(b.last_sequence) || !r.get(first) || !r.get(last) ||
          !r.get(b.max_timestamp))
        return errc::corrupt_log;
      b.first_offset = offset{first};
      b.last_offset = offset{last};
      entry.batches.push_back(b);
      entry.last_timestamp = b.max_timestamp;
    }
    auto [placed, inserted] = state.producers_.emplace(producer_id{id}, std::move(entry));
    if (!inserted) return errc::corrupt_log;
    if (ongoing >= 0) {
      if (state.open_txns_.contains(offset{ongoing})) return errc::corrupt_log;  // two cannot start at one offset
      state.open_txn(producer_id{id}, placed->second, offset{ongoing});
    }
  }
  if (!r.done()) return errc::corrupt_log;
  return state;
}

}  // namespace ferry::storage
