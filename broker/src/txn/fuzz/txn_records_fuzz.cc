// Feeds arbitrary bytes to the decoders of the records of __transaction_state (txn/txn_records.h), which any
// producer to that topic and any Kafka broker that wrote the partition before can have put there. The first
// byte picks the decoder ('k' a key, 'v' a value), the rest is its input. Whatever decodes must encode to
// bytes that decode to the same value.
#include <cstddef>
#include <cstdint>
#include <span>

#include "txn/txn_records.h"

namespace ferry::txn {
namespace {

void check(bool ok) {
  if (!ok) __builtin_trap();
}

void run(char selector, std::span<const std::byte> data) {
  if (selector == 'k') {
    const auto key = decode_txn_key(data);
    if (key) check(decode_txn_key(encode_txn_key(key.value())).value() == key.value());
  } else if (selector == 'v') {
    const auto value = decode_txn_value(data);
    if (!value) return;
    const auto again = decode_txn_value(encode_txn_value(value.value()));
    check(again && again.value() == value.value());
  }
}

}  // namespace
}  // namespace ferry::txn

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  ferry::txn::run(static_cast<char>(data[0]), std::as_bytes(std::span(data + 1, size - 1)));
  return 0;
}
