#pragma once

#include <string>
#include <string_view>

namespace ferry::schema {

// Appends `text` as a quoted JSON string escaped as Jackson (the JSON library of Confluent's registry and of Apache
// Avro's Java code) escapes it: quotes, backslashes and the short escapes, other control characters as \u00XX, every
// other byte as it is. Canonical schema texts use it so that they match what Confluent's registry stores.
void append_jackson_string(std::string& out, std::string_view text);

}  // namespace ferry::schema
