#pragma once

#include <system_error>

namespace ferry::quota {

// Why a client quota request or a stored quota value was refused. AlterClientQuotas and DescribeClientQuotas
// carry the refusal's message in their error_message; the server maps the code to Kafka's.
enum class errc {
  invalid_request = 1,      // INVALID_REQUEST: a bad entity, key, value or filter
  unsupported_entity_type,  // UNSUPPORTED_VERSION: a filter on an entity type Kafka does not define
  malformed_value,          // a value in ZooKeeper that Kafka's broker would not read as a number of its key's type
};

const std::error_category& error_category();

inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), error_category()}; }

}  // namespace ferry::quota

template <>
struct std::is_error_code_enum<ferry::quota::errc> : std::true_type {};
