#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ferry {

// A URL path segment or query part with its %XX escapes decoded (and '+' as a space when `plus_is_space`, as
// query strings write it); nullopt for a malformed escape. The HTTP listeners read what clients send with it.
std::optional<std::string> percent_decoded(std::string_view text, bool plus_is_space = false);

}  // namespace ferry
