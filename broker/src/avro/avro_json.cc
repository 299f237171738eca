#include "avro/avro_json.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <system_error>

#include "schema/json_text.h"

namespace ferry::avro {

std::string java_double(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  // The shortest digits that round-trip, as Java (19 and later) picks them, then Java's layout.
  std::array<char, 64> buffer{};
  auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::scientific);
  std::string_view sci(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
  std::string result;
  if (sci.front() == '-') {
    result.push_back('-');
    sci.remove_prefix(1);
  }
  const auto e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  const int exponent = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    if (exponent >= 0) {
      const auto int_len = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() < int_len) digits.append(int_len - digits.size(), '0');
      result += digits.substr(0, int_len);
      result.push_back('.');
      result += digits.size() > int_len ? digits.substr(int_len) : "0";
    } else {
      result += "0.";
      result.append(static_cast<std::size_t>(-exponent - 1), '0');
      result += digits;
    }
    return result;
  }
  result.push_back(digits.front());
  result.push_back('.');
  result += digits.size() > 1 ? digits.substr(1) : "0";
  result += "E" + std::to_string(exponent);
  return result;
}

void append_json_value(std::string& out, const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      out += "null";
      break;
    case json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      break;
    case json::value_t::number_integer:
      out += std::to_string(value.get<std::int64_t>());
      break;
    case json::value_t::number_unsigned:
      out += std::to_string(value.get<std::uint64_t>());
      break;
    case json::value_t::number_float: {
      const double d = value.get<double>();
      // Jackson quotes the non-finite values it writes.
      if (std::isfinite(d)) {
        out += java_double(d);
      } else {
        schema::append_jackson_string(out, java_double(d));
      }
      break;
    }
    case json::value_t::string:
      schema::append_jackson_string(out, value.get_ref<const std::string&>());
      break;
    case json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& element : value) {
        if (!first) out.push_back(',');
        first = false;
        append_json_value(out, element);
      }
      out.push_back(']');
      break;
    }
    case json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, member] : value.items()) {
        if (!first) out.push_back(',');
        first = false;
        schema::append_jackson_string(out, key);
        out.push_back(':');
        append_json_value(out, member);
      }
      out.push_back('}');
      break;
    }
    default:
      out += "null";
  }
}

std::size_t json_depth(const json& value, std::size_t limit) {
  if (!value.is_structured()) return 0;
  if (limit == 0) return 1;
  std::size_t deepest = 0;
  for (const auto& element : value) {
    deepest = std::max(deepest, json_depth(element, limit - 1));
    if (deepest >= limit) break;
  }
  return deepest + 1;
}

}  // namespace ferry::avro
