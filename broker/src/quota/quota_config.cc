#include "quota/quota_config.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace ferry::quota {
namespace {

// 2^63: Long.MAX_VALUE as Java compares it with a double (the long converts to the nearest double).
constexpr double long_max_as_double = 9223372036854775808.0;
// Kafka's tolerance for a LONG value that arrives as a double (ZkAdminManager, ClientQuotaControlManager).
constexpr double integral_epsilon = 1e-6;

std::optional<refusal> invalid(std::string message) { return refusal{errc::invalid_request, std::move(message)}; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Long.parseLong: an optional sign, then one or more decimal digits, within the range of a long.
result<double> parse_java_long(std::string_view text) {
  std::string_view digits = text;
  if (!digits.empty() && (digits.front() == '+' || digits.front() == '-')) digits.remove_prefix(1);
  if (digits.empty()) return errc::malformed_value;
  for (const char c : digits)
    if (!is_digit(c)) return errc::malformed_value;
  // from_chars takes a '-' but not a '+'.
  const std::string_view number = text.front() == '+' ? digits : text;
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc{} || end != number.data() + number.size()) return errc::malformed_value;
  return static_cast<double>(value);
}

// The length of the run of decimal digits at the start of `text`.
std::size_t digit_run(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && is_digit(text[n])) ++n;
  return n;
}

// Double.parseDouble for the decimal forms (Java's FloatingDecimal.readJavaFormatString).
result<double> parse_java_double(std::string_view text) {
  // String.trim: every character up to ' ' goes, at both ends.
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= ' ') text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= ' ') text.remove_suffix(1);
  bool negative = false;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  const double sign = negative ? -1.0 : 1.0;
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "Infinity") return sign * std::numeric_limits<double>::infinity();
  // A type suffix says float or double; parseDouble ignores it.
  if (!text.empty() && (text.back() == 'd' || text.back() == 'D' || text.back() == 'f' || text.back() == 'F'))
    text.remove_suffix(1);
  // digits [. digits] [e [sign] digits], with at least one digit before the exponent.
  const std::size_t whole = digit_run(text);
  std::size_t at = whole;
  std::size_t fraction = 0;
  if (at < text.size() && text[at] == '.') {
    fraction = digit_run(text.substr(at + 1));
    at += 1 + fraction;
  }
  if (whole + fraction == 0) return errc::malformed_value;
  const std::size_t significand_end = at;
  if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
    ++at;
    if (at < text.size() && (text[at] == '+' || text[at] == '-')) ++at;
    const std::size_t exponent_digits = digit_run(text.substr(at));
    if (exponent_digits == 0) return errc::malformed_value;
    at += exponent_digits;
  }
  if (at != text.size()) return errc::malformed_value;

  double magnitude = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude);
  if (ec == std::errc::result_out_of_range) {
    // Java rounds to Infinity or to zero. Which one: the power of ten of the leading nonzero digit, plus the
    // exponent, is far above zero or far below it (an out of range value is hundreds of powers away).
    const std::string_view significand = text.substr(0, significand_end);
    const auto first_nonzero = significand.find_first_of("123456789");
    if (first_nonzero == std::string_view::npos) return sign * 0.0;
    const auto point = whole;
    const long leading_power = first_nonzero < point ? static_cast<long>(point - first_nonzero) - 1
                                                     : -static_cast<long>(first_nonzero - point);
    long exponent = 0;
    if (significand_end < text.size()) {
      std::string_view e = text.substr(significand_end + 1);
      const bool negative_exponent = e.front() == '-';
      if (e.front() == '+' || e.front() == '-') e.remove_prefix(1);
      // A huge exponent saturates; only its sign and size matter here.
      for (const char c : e) exponent = std::min(exponent * 10 + (c - '0'), 100'000L);
      if (negative_exponent) exponent = -exponent;
    }
    return leading_power + exponent > 0 ? sign * std::numeric_limits<double>::infinity() : sign * 0.0;
  }
  if (ec != std::errc{} || end != text.data() + text.size()) return errc::malformed_value;
  return sign * magnitude;
}

// Java's Double.toString: the shortest digits that read back as the same double, plain between 10^-3 and 10^7
// ("0.001", "1234567.0"), otherwise computerized scientific notation ("1.0E7", "1.5E-4").
std::string java_double_text(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  std::array<char, 64> buffer{};
  const auto [end, ec] =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), std::fabs(value), std::chars_format::scientific);
  if (ec != std::errc{}) return "NaN";
  // "d.ddde+XX" or "de-XX"
  const std::string_view scientific(buffer.data(), static_cast<std::size_t>(end - buffer.data()));
  const auto e = scientific.find('e');
  std::string digits(1, scientific.front());
  if (e > 1) digits.append(scientific.substr(2, e - 2));
  std::string_view exponent_text = scientific.substr(e + 1);
  if (exponent_text.front() == '+') exponent_text.remove_prefix(1);
  int exponent = 0;
  std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), exponent);

  std::string out = value < 0 ? "-" : "";
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e-3 && magnitude < 1e7) {
    const int before_point = exponent + 1;  // digits left of the point
    if (before_point <= 0) {
      out += "0.";
      out.append(static_cast<std::size_t>(-before_point), '0');
      out += digits;
    } else if (static_cast<std::size_t>(before_point) >= digits.size()) {
      out += digits;
      out.append(static_cast<std::size_t>(before_point) - digits.size(), '0');
      out += ".0";
    } else {
      out += digits.substr(0, static_cast<std::size_t>(before_point));
      out += '.';
      out += digits.substr(static_cast<std::size_t>(before_point));
    }
  } else {
    out += digits.front();
    out += '.';
    out += digits.size() > 1 ? digits.substr(1) : "0";
    out += 'E';
    out += std::to_string(exponent);
  }
  return out;
}

// Scala's Double.toLong: truncation toward zero, saturating at the ends of the range, NaN as 0.
std::int64_t java_to_long(double value) {
  if (std::isnan(value)) return 0;
  if (value >= long_max_as_double) return std::numeric_limits<std::int64_t>::max();
  if (value <= -long_max_as_double) return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(value);
}

}  // namespace

std::string_view name_of(quota_key key) {
  switch (key) {
    case quota_key::producer_byte_rate:
      return "producer_byte_rate";
    case quota_key::consumer_byte_rate:
      return "consumer_byte_rate";
    case quota_key::request_percentage:
      return "request_percentage";
    case quota_key::controller_mutation_rate:
      return "controller_mutation_rate";
  }
  return "unknown";
}

std::optional<quota_key> parse_quota_key(std::string_view name) {
  for (const quota_key key : all_quota_keys)
    if (name_of(key) == name) return key;
  return std::nullopt;
}

value_type type_of(quota_key key) {
  switch (key) {
    case quota_key::producer_byte_rate:
    case quota_key::consumer_byte_rate:
      return value_type::long_integer;
    case quota_key::request_percentage:
    case quota_key::controller_mutation_rate:
      return value_type::double_precision;
  }
  return value_type::double_precision;
}

std::optional<refusal> check_value(std::string_view key, double value) {
  const auto parsed = parse_quota_key(key);
  if (!parsed) return invalid("Invalid configuration key " + std::string(key));
  if (!(value > 0.0)) return invalid("Quota " + std::string(key) + " must be greater than 0");
  if (type_of(*parsed) == value_type::double_precision) return std::nullopt;
  if (value > long_max_as_double)
    return invalid("Proposed value for " + std::string(key) + " is too large for a LONG.");
  if (std::fabs(std::fmod(value, 1.0)) > integral_epsilon)
    return invalid(std::string(key) + " cannot be a fractional value.");
  return std::nullopt;
}

result<double> parse_stored_value(quota_key key, std::string_view text) {
  return type_of(key) == value_type::long_integer ? parse_java_long(text) : parse_java_double(text);
}

std::string stored_text(quota_key key, double value) {
  if (type_of(key) == value_type::long_integer) return std::to_string(java_to_long(value + integral_epsilon));
  return java_double_text(value);
}

}  // namespace ferry::quota
