#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/ids.h"
#include "model/record_batch.h"

namespace ferry::model::testing {

// Builds valid RecordBatch v2 bytes the way a client would (model::batch_builder), for tests of every layer.
struct test_record {
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::string>> headers;
  std::int64_t timestamp_delta = 0;
};

struct batch_spec {
  std::vector<test_record> records;
  offset base_offset{0};
  std::int64_t base_timestamp = 1'700'000'000'000;
  producer_id producer{-1};
  producer_epoch epoch{-1};
  std::int32_t base_sequence = -1;
  bool transactional = false;
  compression codec = compression::none;
};

[[nodiscard]] std::vector<std::byte> build_batch(const batch_spec& spec);

// n records with values "value-<i>" and keys "key-<i>".
[[nodiscard]] std::vector<std::byte> build_simple_batch(int n, offset base = offset{0},
                                                        std::int64_t base_timestamp = 1'700'000'000'000);

}  // namespace ferry::model::testing
