#pragma once

#include <string>

#include "json_schema/schema_model.h"

namespace ferry::json_schema {

// Compact JSON as Jackson writes it: no spaces, `\uXXXX` escapes in upper-case hex for control characters other
// than \b \f \n \r \t, everything else as UTF-8. `sorted` sorts every object's keys (Confluent's normalize).
std::string write_compact(const json& value, bool sorted);

}  // namespace ferry::json_schema
