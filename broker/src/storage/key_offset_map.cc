#include "storage/key_offset_map.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cstring>

namespace ferry::storage {

void key_offset_map::reset(std::uint64_t keys) {
  // Room for `keys` at the load factor, within the budget.
  const auto wanted = static_cast<std::uint64_t>(static_cast<double>(keys) / load_factor) + 2;
  used_slots_ = static_cast<std::size_t>(std::min<std::uint64_t>(wanted, max_slots_));
  if (slots_.size() < used_slots_) slots_.resize(used_slots_);
  std::fill_n(slots_.begin(), used_slots_, slot{});
  limit_ = std::max<std::size_t>(1, static_cast<std::size_t>(static_cast<double>(used_slots_) * load_factor));
  limit_ = std::min(limit_, used_slots_ - 1);  // one slot stays empty, so probing ends
  size_ = 0;
}

key_offset_map::digest key_offset_map::hash(std::span<const std::byte> key) {
  digest out{};
  unsigned int length = 0;
  EVP_Digest(key.data(), key.size(), reinterpret_cast<unsigned char*>(out.data()), &length, EVP_md5(), nullptr);
  return out;
}

std::size_t key_offset_map::find(const digest& d) const {
  std::uint64_t start = 0;
  std::memcpy(&start, d.data(), sizeof start);
  // Linear probing: the digest is uniformly distributed, and the table is never full.
  for (std::size_t i = start % used_slots_;; i = (i + 1) % used_slots_) {
    const slot& s = slots_[i];
    if (s.value < 0 || s.key == d) return i;
  }
}

bool key_offset_map::put(std::span<const std::byte> key, offset o) {
  const digest d = hash(key);
  slot& s = slots_[find(d)];
  if (s.value < 0) {
    if (size_ >= limit_) return false;
    ++size_;
  }
  s.key = d;
  s.value = o.value();
  return true;
}

std::optional<offset> key_offset_map::get(std::span<const std::byte> key) const {
  if (used_slots_ == 0) return std::nullopt;
  const slot& s = slots_[find(hash(key))];
  if (s.value < 0) return std::nullopt;
  return offset{s.value};
}

}  // namespace ferry::storage
