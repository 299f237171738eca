#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "avro/avro_schema.h"

namespace ferry::avro {

// JSON text written as Jackson writes it (strings with schema::append_jackson_string) for Avro's `Schema.toString()`,
// so that the canonical text matches what Confluent's registry stores byte for byte: strings escaped as Jackson does,
// doubles as Java's Double.toString.

// Appends a JSON value (a default or a property) compactly; objects keep their member order.
void append_json_value(std::string& out, const json& value);
// Java's Double.toString: "1.0", "1.5E10", "1.0E-5", "NaN".
std::string java_double(double value);
// The nesting depth of a JSON value, counting up to `limit + 1` only, so a hostile value costs no more.
std::size_t json_depth(const json& value, std::size_t limit);

}  // namespace ferry::avro
