#include "security/scram_messages.h"

#include <charconv>
#include <optional>
#include <vector>

#include "security/errc.h"
#include "security/scram_credential.h"

namespace ferry::security {
namespace {

// A message's comma-separated attributes, as views into it. At most max_scram_message_bytes / 2 of them.
std::vector<std::string_view> split_attributes(std::string_view text) {
  std::vector<std::string_view> fields;
  for (;;) {
    const auto comma = text.find(',');
    fields.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return fields;
    text.remove_prefix(comma + 1);
  }
}

// The value of "<name>=<value>", nullopt when the field is another attribute.
std::optional<std::string_view> value_of(std::string_view field, char name) {
  if (field.size() < 2 || field[0] != name || field[1] != '=') return std::nullopt;
  return field.substr(2);
}

// printable = %x21-2B / %x2D-7E (RFC 5802 §7): what a nonce is made of.
bool is_printable(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text)
    if (c < 0x21 || c > 0x7e) return false;  // ',' never reaches here: it separates attributes
  return true;
}

// saslname (RFC 5802 §5.1): any character but NUL, with ',' and '=' written as "=2C" and "=3D".
std::optional<std::string> unescape_saslname(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\0') return std::nullopt;
    if (c != '=') {
      out += c;
      continue;
    }
    const std::string_view escape = text.substr(i + 1, 2);
    if (escape == "2C") {
      out += ',';
    } else if (escape == "3D") {
      out += '=';
    } else {
      return std::nullopt;
    }
    i += 2;
  }
  return out;
}

std::string escape_saslname(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    if (c == ',') {
      out += "=2C";
    } else if (c == '=') {
      out += "=3D";
    } else {
      out += c;
    }
  }
  return out;
}

// An extension attribute "<alpha name>=<value>"; its name, or nullopt when the field is not one. "m=" is not
// an extension: RFC 5802 reserves it, and a message carrying it fails.
std::optional<std::string_view> extension_name(std::string_view field) {
  const auto equals = field.find('=');
  if (equals == 0 || equals == std::string_view::npos || equals + 1 == field.size()) return std::nullopt;
  const std::string_view name = field.substr(0, equals);
  for (const char c : name)
    if ((c < 'a' || c > 'z') && (c < 'A' || c > 'Z')) return std::nullopt;
  if (name == "m") return std::nullopt;
  if (field.find('\0') != std::string_view::npos) return std::nullopt;
  return name;
}

bool all_extensions(const std::vector<std::string_view>& fields, std::size_t from, std::size_t to) {
  for (std::size_t i = from; i < to; ++i)
    if (!extension_name(fields[i])) return false;
  return true;
}

std::optional<std::int32_t> parse_positive(std::string_view text) {
  std::int32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value <= 0 || text.front() == '+') return std::nullopt;
  return value;
}

std::optional<std::string> nonempty_base64(std::string_view text) {
  auto bytes = base64_decode(text);
  if (!bytes || bytes->empty()) return std::nullopt;
  return bytes;
}

std::size_t offset_in(std::string_view whole, std::string_view part) {
  return static_cast<std::size_t>(part.data() - whole.data());
}

}  // namespace

result<client_first_message> parse_client_first(std::string_view text) {
  if (text.size() > max_scram_message_bytes) return errc::malformed_message;
  const auto fields = split_attributes(text);
  // gs2-header = gs2-cbind-flag "," [authzid] "," then n=, r=: four fields at least.
  if (fields.size() < 4) return errc::malformed_message;
  if (value_of(fields[0], 'p')) return errc::bad_channel_binding;
  if (fields[0] != "n" && fields[0] != "y") return errc::malformed_message;
  client_first_message message;
  if (!fields[1].empty()) {
    const auto authzid = value_of(fields[1], 'a');
    if (!authzid) return errc::malformed_message;
    auto unescaped = unescape_saslname(*authzid);
    if (!unescaped) return errc::malformed_message;
    message.authorization_id = std::move(*unescaped);
  }
  const auto user = value_of(fields[2], 'n');
  const auto nonce = value_of(fields[3], 'r');
  if (!user || !nonce || !is_printable(*nonce)) return errc::malformed_message;
  auto unescaped_user = unescape_saslname(*user);
  if (!unescaped_user) return errc::malformed_message;
  for (std::size_t i = 4; i < fields.size(); ++i) {
    const auto name = extension_name(fields[i]);
    if (!name) return errc::malformed_message;
    if (*name == "tokenauth") return errc::unsupported_extension;
  }
  message.user = std::move(*unescaped_user);
  message.nonce = std::string(*nonce);
  message.gs2_header = std::string(text.substr(0, offset_in(text, fields[2])));
  message.bare = std::string(text.substr(offset_in(text, fields[2])));
  return message;
}

std::string format_client_first(std::string_view user, std::string_view nonce) {
  std::string text = "n,,n=" + escape_saslname(user);
  text += ",r=";
  text += nonce;
  return text;
}

result<server_first_message> parse_server_first(std::string_view text) {
  if (text.size() > max_scram_message_bytes) return errc::malformed_message;
  const auto fields = split_attributes(text);
  if (fields.size() < 3 || !all_extensions(fields, 3, fields.size())) return errc::malformed_message;
  const auto nonce = value_of(fields[0], 'r');
  const auto salt = value_of(fields[1], 's');
  const auto iterations = value_of(fields[2], 'i');
  if (!nonce || !salt || !iterations || !is_printable(*nonce)) return errc::malformed_message;
  auto salt_bytes = nonempty_base64(*salt);
  const auto count = parse_positive(*iterations);
  if (!salt_bytes || !count) return errc::malformed_message;
  return server_first_message{std::string(*nonce), std::move(*salt_bytes), *count};
}

std::string format_server_first(const server_first_message& m) {
  std::string text = "r=" + m.nonce;
  text += ",s=" + base64_encode(m.salt);
  text += ",i=" + std::to_string(m.iterations);
  return text;
}

result<client_final_message> parse_client_final(std::string_view text) {
  if (text.size() > max_scram_message_bytes) return errc::malformed_message;
  const auto fields = split_attributes(text);
  if (fields.size() < 3 || !all_extensions(fields, 2, fields.size() - 1)) return errc::malformed_message;
  const auto channel_binding = value_of(fields[0], 'c');
  const auto nonce = value_of(fields[1], 'r');
  const auto proof = value_of(fields.back(), 'p');
  if (!channel_binding || !nonce || !proof || !is_printable(*nonce)) return errc::malformed_message;
  auto binding_bytes = nonempty_base64(*channel_binding);
  auto proof_bytes = nonempty_base64(*proof);
  if (!binding_bytes || !proof_bytes) return errc::malformed_message;
  // Without the comma before p=.
  std::string without_proof(text.substr(0, offset_in(text, fields.back()) - 1));
  return client_final_message{std::move(*binding_bytes), std::string(*nonce), std::move(*proof_bytes),
                              std::move(without_proof)};
}

std::string format_client_final_without_proof(std::string_view nonce) {
  std::string text = "c=" + base64_encode("n,,");
  text += ",r=";
  text += nonce;
  return text;
}

std::string format_client_final(std::string_view without_proof, std::string_view proof) {
  std::string text(without_proof);
  text += ",p=" + base64_encode(proof);
  return text;
}

result<server_final_message> parse_server_final(std::string_view text) {
  if (text.size() > max_scram_message_bytes) return errc::malformed_message;
  const auto fields = split_attributes(text);
  if (!all_extensions(fields, 1, fields.size())) return errc::malformed_message;
  if (const auto error = value_of(fields[0], 'e')) {
    if (error->empty()) return errc::malformed_message;
    return server_final_message{std::string(*error), {}};
  }
  const auto signature = value_of(fields[0], 'v');
  if (!signature) return errc::malformed_message;
  auto signature_bytes = nonempty_base64(*signature);
  if (!signature_bytes) return errc::malformed_message;
  return server_final_message{{}, std::move(*signature_bytes)};
}

std::string format_server_final(std::string_view signature) { return "v=" + base64_encode(signature); }

}  // namespace ferry::security
