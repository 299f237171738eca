#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ferry::avro {

// Why `name` is not a valid Avro name under Java's default `NameValidator.UTF_VALIDATOR` (a letter or '_', then
// letters, digits or '_', judged per UTF-16 unit as Java's Character.isLetter does), or nothing when it is.
// Letters beyond ASCII are classified by the C library's C.UTF-8 tables, which agree with Java's for the
// letters and digits of living scripts; characters outside the BMP are refused, as Java sees surrogates.
std::optional<std::string> name_error(std::string_view name);

}  // namespace ferry::avro
