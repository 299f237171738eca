#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "json_schema/schema_model.h"
#include "schema/schema_format.h"

namespace ferry::json_schema {

// Parses JSON text without exceptions, refusing it when objects and arrays nest deeper than `max_nesting` (so that
// nothing walking the document recursively can exhaust the stack). `what` names the document in messages ("the
// schema", "reference 'address.json'").
schema::schema_result<json> parse_document(std::string_view text, std::size_t max_nesting, std::string_view what);

// `#/a/b` for the JSON pointer made of these tokens (escaped as RFC 6901 says).
std::string pointer_text(const std::vector<std::string>& tokens);

}  // namespace ferry::json_schema
