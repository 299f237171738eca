#include "model/testing/batch_builder.h"

#include <stdexcept>

#include "model/batch_builder.h"

namespace ferry::model::testing {
namespace {

std::optional<std::span<const std::byte>> as_bytes(const std::optional<std::string>& s) {
  if (!s) return std::nullopt;
  return std::as_bytes(std::span(s->data(), s->size()));
}

}  // namespace

std::vector<std::byte> build_batch(const batch_spec& spec) {
  batch_builder builder({.codec = spec.codec,
                         .base_offset = spec.base_offset,
                         .producer = spec.producer,
                         .epoch = spec.epoch,
                         .base_sequence = spec.base_sequence,
                         .transactional = spec.transactional,
                         .base_timestamp = spec.base_timestamp});
  for (const auto& r : spec.records) {
    std::vector<batch_builder::header> headers;
    for (const auto& [k, v] : r.headers) headers.emplace_back(k, std::as_bytes(std::span(v.data(), v.size())));
    builder.add(spec.base_timestamp + r.timestamp_delta, as_bytes(r.key), as_bytes(r.value), headers);
  }
  auto built = builder.finish();
  if (!built) throw std::runtime_error("build_batch: " + built.error().message());
  return std::move(built).value();
}

std::vector<std::byte> build_simple_batch(int n, offset base, std::int64_t base_timestamp) {
  batch_spec spec;
  spec.base_offset = base;
  spec.base_timestamp = base_timestamp;
  for (int i = 0; i < n; ++i) spec.records.push_back({"key-" + std::to_string(i), "value-" + std::to_string(i), {}, i});
  return build_batch(spec);
}

}  // namespace ferry::model::testing
