#include "avro/avro_names.h"

#include <locale.h>
#include <wctype.h>

#include <cstdint>

namespace ferry::avro {
namespace {

locale_t utf8_locale() {
  static const locale_t locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return locale;
}

// Decodes one UTF-8 sequence (nlohmann has already refused invalid UTF-8); 0xFFFFFFFF when malformed.
std::uint32_t next_code_point(std::string_view text, std::size_t& i) {
  const auto lead = static_cast<unsigned char>(text[i++]);
  int extra = 0;
  std::uint32_t code = 0;
  if (lead < 0x80) return lead;
  if ((lead & 0xE0U) == 0xC0) {
    extra = 1;
    code = lead & 0x1FU;
  } else if ((lead & 0xF0U) == 0xE0) {
    extra = 2;
    code = lead & 0x0FU;
  } else if ((lead & 0xF8U) == 0xF0) {
    extra = 3;
    code = lead & 0x07U;
  } else {
    return 0xFFFFFFFF;
  }
  for (int k = 0; k < extra; ++k) {
    if (i >= text.size()) return 0xFFFFFFFF;
    code = (code << 6U) | (static_cast<unsigned char>(text[i++]) & 0x3FU);
  }
  return code;
}

bool is_letter(std::uint32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  const locale_t locale = utf8_locale();
  return c <= 0xFFFF && locale != nullptr && iswalpha_l(static_cast<wint_t>(c), locale) != 0;
}

bool is_letter_or_digit(std::uint32_t c) {
  if (c < 0x80) return is_letter(c) || (c >= '0' && c <= '9');
  const locale_t locale = utf8_locale();
  return c <= 0xFFFF && locale != nullptr && iswalnum_l(static_cast<wint_t>(c), locale) != 0;
}

}  // namespace

std::optional<std::string> name_error(std::string_view name) {
  if (name.empty()) return "empty name";
  std::size_t i = 0;
  const std::uint32_t first = next_code_point(name, i);
  if (!(is_letter(first) || first == '_')) return "illegal initial character";
  while (i < name.size()) {
    const std::uint32_t c = next_code_point(name, i);
    if (!(is_letter_or_digit(c) || c == '_')) return "illegal character";
  }
  return std::nullopt;
}

}  // namespace ferry::avro
