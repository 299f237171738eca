#include "storage/producer_state.h"

#include <boost/endian/conversion.hpp>

#include "bytes/crc32c.h"
#include "storage/errc.h"

namespace ferry::storage {
namespace {

constexpr std::int16_t snapshot_version = 1;
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
    boost::endian::endian_store<T, sizeof(T), boost::endian::order::big>(
        reinterpret_cast<unsigned char*>(out.data() + at), value);
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
    value = boost::endian::endian_load<T, sizeof(T), boost::endian::order::big>(
        reinterpret_cast<const unsigned char*>(in_.data() + at_));
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

void producer_state_manager::update(const model::batch_header_view& batch) {
  producer_entry& entry = producers_[batch.producer()];
  if (batch.epoch() != entry.epoch) {
    entry.epoch = batch.epoch();
    entry.batches.clear();
  }
  if (entry.batches.size() == producer_entry::retained_batches) entry.batches.erase(entry.batches.begin());
  entry.batches.push_back(
      {batch.base_sequence(), batch.last_sequence(), batch.base_offset(), batch.last_offset(), batch.max_timestamp()});
}

std::optional<producer_entry> producer_state_manager::find(producer_id id) const {
  const auto found = producers_.find(id);
  if (found == producers_.end()) return std::nullopt;
  return found->second;
}

void producer_state_manager::remove_before(offset log_start) {
  std::erase_if(producers_, [&](const auto& p) {
    return p.second.batches.empty() || p.second.batches.back().last_offset < log_start;
  });
}

std::vector<std::byte> producer_state_manager::serialize() const {
  snapshot_writer w;
  w.put<std::int16_t>(snapshot_version);
  w.put<std::uint32_t>(0);  // the CRC, filled in below
  w.put<std::int32_t>(static_cast<std::int32_t>(producers_.size()));
  for (const auto& [id, entry] : producers_) {
    w.put<std::int64_t>(id.value());
    w.put<std::int16_t>(entry.epoch.value());
    w.put<std::int8_t>(static_cast<std::int8_t>(entry.batches.size()));
    for (const producer_batch& b : entry.batches) {
      w.put<std::int32_t>(b.first_sequence);
      w.put<std::int32_t>(b.last_sequence);
      w.put<std::int64_t>(b.first_offset.value());
      w.put<std::int64_t>(b.last_offset.value());
      w.put<std::int64_t>(b.max_timestamp);
    }
  }
  boost::endian::store_big_u32(reinterpret_cast<unsigned char*>(w.out.data() + crc_position),
                               bytes::crc32c(std::span(w.out).subspan(crc_start)));
  return std::move(w.out);
}

result<producer_state_manager> producer_state_manager::deserialize(std::span<const std::byte> bytes) {
  snapshot_reader r(bytes);
  std::int16_t version = 0;
  std::uint32_t crc = 0;
  std::int32_t count = 0;
  if (!r.get(version) || version != snapshot_version || !r.get(crc) || crc != bytes::crc32c(bytes.subspan(crc_start)) ||
      !r.get(count) || count < 0)
    return errc::corrupt_log;
  producer_state_manager state;
  for (std::int32_t i = 0; i < count; ++i) {
    std::int64_t id = 0;
    std::int16_t epoch = 0;
    std::int8_t batches = 0;
    if (!r.get(id) || !r.get(epoch) || !r.get(batches) || batches < 1 ||
        batches > static_cast<std::int8_t>(producer_entry::retained_batches))
      return errc::corrupt_log;
    producer_entry entry{producer_epoch{epoch}, {}};
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
    }
    state.producers_.emplace(producer_id{id}, std::move(entry));
  }
  if (!r.done()) return errc::corrupt_log;
  return state;
}

}  // namespace ferry::storage
