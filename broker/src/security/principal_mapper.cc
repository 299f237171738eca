#include "security/principal_mapper.h"

#include <openssl/asn1.h>
#include <openssl/objects.h>
#include <re2/re2.h>

#include <algorithm>
#include <variant>

namespace ferry::security {

using boost::outcome_v2::failure;

// A rule, its regex compiled, its replacement split into literal text and group references.
struct principal_mapper::rule {
  enum class letter_case { keep, lower, upper };
  struct group_reference {
    int index;
  };
  using piece = std::variant<std::string, group_reference>;

  bool is_default = false;
  std::string pattern_text;
  std::string replacement_text;
  letter_case to = letter_case::keep;
  std::unique_ptr<re2::RE2> pattern;
  std::vector<piece> replacement;
};

namespace {

using rule = principal_mapper::rule;
constexpr std::size_t npos = std::string_view::npos;

// Java's \s, and the characters Java's "." does not match: Kafka's rule grammar is written with them.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\x0B' || c == '\f' || c == '\r'; }
bool is_line_end(char c) { return c == '\n' || c == '\r'; }

// Where the separator after a rule (optional spaces, then a comma and spaces or the end) that starts at `at` ends;
// npos when there is none there.
std::size_t separator_end(std::string_view s, std::size_t at) {
  std::size_t i = at;
  while (i < s.size() && is_space(s[i])) ++i;
  if (i == s.size()) return i;
  if (s[i] != ',') return npos;
  ++i;
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

struct span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

// The shortest run of characters from `from` (not crossing a line end) followed by a separator: the run, and
// where the separator ends.
std::optional<std::pair<std::size_t, std::size_t>> run_to_separator(std::string_view s, std::size_t from) {
  for (std::size_t t = from;; ++t) {
    const std::size_t end = separator_end(s, t);
    if (end != npos) return std::pair{t, end};
    if (t == s.size() || is_line_end(s[t])) return std::nullopt;
  }
}

// A regex or replacement field: up to the first "/" that no backslash escapes.
std::size_t field_end(std::string_view s, std::size_t from) {
  std::size_t i = from;
  while (i < s.size() && s[i] != '/') {
    if (s[i] == '\\') {
      if (i + 1 == s.size() || is_line_end(s[i + 1])) break;
      ++i;
    }
    ++i;
  }
  return i;
}

struct rule_syntax {
  span pattern;
  span replacement;
  char letter_case = 0;  // 'L', 'U' or none
  std::size_t end = 0;
};

// RULE:<pattern>/<replacement>/ and an optional L or U at `at`.
std::optional<rule_syntax> match_rule(std::string_view s, std::size_t at) {
  constexpr std::string_view keyword = "RULE:";
  if (s.substr(at, keyword.size()) != keyword) return std::nullopt;
  rule_syntax r;
  r.pattern = {at + keyword.size(), field_end(s, at + keyword.size())};
  if (r.pattern.end == s.size() || s[r.pattern.end] != '/') return std::nullopt;
  r.replacement = {r.pattern.end + 1, field_end(s, r.pattern.end + 1)};
  if (r.replacement.end == s.size() || s[r.replacement.end] != '/') return std::nullopt;
  r.end = r.replacement.end + 1;
  if (r.end < s.size() && (s[r.end] == 'L' || s[r.end] == 'U')) r.letter_case = s[r.end++];
  return r;
}

struct item_match {
  std::string_view item;
  std::size_t end;
};

// One rule and its separator at `at`, the way Kafka's splitting regex finds them: DEFAULT, else a RULE (whose
// regex and replacement may hold commas) up to the next separator, else anything up to the next separator.
std::optional<item_match> match_item(std::string_view s, std::size_t at) {
  std::size_t q = at;
  while (q < s.size() && is_space(s[q])) ++q;
  constexpr std::string_view default_keyword = "DEFAULT";
  if (s.substr(q, default_keyword.size()) == default_keyword) {
    const std::size_t end = separator_end(s, q + default_keyword.size());
    if (end != npos) return item_match{s.substr(q, default_keyword.size()), end};
  }
  if (auto r = match_rule(s, q)) {
    if (auto run = run_to_separator(s, r->end)) return item_match{s.substr(q, run->first - q), run->second};
  }
  if (auto run = run_to_separator(s, q)) return item_match{s.substr(q, run->first - q), run->second};
  return std::nullopt;
}

std::string_view java_trim(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  return s;
}

// The rules' texts; a match that finds nothing at a position is retried one character later, and an empty one
// moves the search on by one, as Java's Matcher.find() does.
std::vector<std::string_view> split_rules(std::string_view text) {
  const std::string_view s = java_trim(text);
  std::vector<std::string_view> items;
  std::size_t from = 0;
  while (from <= s.size()) {
    std::optional<item_match> found;
    std::size_t start = from;
    for (; start <= s.size() && !found; ++start) found = match_item(s, start);
    if (!found) break;
    --start;
    items.push_back(found->item);
    from = found->end == start ? found->end + 1 : found->end;
  }
  return items;
}

// Java's replacement syntax: "\x" is x, "$n" group n (more digits join while the number stays a group),
// "${name}" a named group. As Kafka does, "$n" beyond the groups is literal text when the regex has groups.
tls_result<std::vector<rule::piece>> parse_replacement(std::string_view text, const re2::RE2& pattern,
                                                       const std::string& where) {
  const int groups = pattern.NumberOfCapturingGroups();
  std::vector<rule::piece> pieces;
  auto literal = [&pieces](char c) {
    if (pieces.empty() || !std::holds_alternative<std::string>(pieces.back())) pieces.emplace_back(std::string());
    std::get<std::string>(pieces.back()) += c;
  };
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\\') {
      if (++i == text.size()) return failure(where + ": the replacement ends with a lone \\");
      literal(text[i]);
    } else if (c != '$') {
      literal(c);
    } else if (i + 1 < text.size() && is_digit(text[i + 1])) {
      int index = text[++i] - '0';
      if (index > groups) {
        if (groups == 0) return failure(where + ": the replacement names $" + text[i] + " but the regex has no group");
        literal('$');
        literal(text[i]);
        continue;
      }
      while (i + 1 < text.size() && is_digit(text[i + 1]) && index * 10 + (text[i + 1] - '0') <= groups)
        index = index * 10 + (text[++i] - '0');
      pieces.emplace_back(rule::group_reference{index});
    } else if (i + 1 < text.size() && text[i + 1] == '{') {
      const std::size_t close = text.find('}', i + 2);
      if (close == npos) return failure(where + ": the replacement has an unclosed ${");
      const std::string name(text.substr(i + 2, close - i - 2));
      const auto& named = pattern.NamedCapturingGroups();
      const auto group = named.find(name);
      if (group == named.end())
        return failure(std::string(where).append(": the regex has no group named ").append(name));
      pieces.emplace_back(rule::group_reference{group->second});
      i = close;
    } else {
      return failure(where + ": the replacement has a $ that is neither $<digit> nor ${name} (write \\$)");
    }
  }
  return pieces;
}

tls_result<std::shared_ptr<const rule>> parse_rule(std::string_view item, const std::string& setting) {
  auto parsed = std::make_shared<rule>();
  if (item == "DEFAULT") {
    parsed->is_default = true;
    return parsed;
  }
  const std::string where = setting + ": rule \"" + std::string(item) + "\"";
  const auto syntax = match_rule(item, 0);
  if (!syntax || syntax->end != item.size())
    return failure(where + " is neither DEFAULT nor RULE:<regex>/<replacement>/ with an optional L or U");
  parsed->pattern_text = item.substr(syntax->pattern.begin, syntax->pattern.end - syntax->pattern.begin);
  parsed->replacement_text =
      item.substr(syntax->replacement.begin, syntax->replacement.end - syntax->replacement.begin);
  if (syntax->letter_case == 'L') parsed->to = rule::letter_case::lower;
  if (syntax->letter_case == 'U') parsed->to = rule::letter_case::upper;
  re2::RE2::Options options;
  options.set_log_errors(false);
  parsed->pattern = std::make_unique<re2::RE2>(parsed->pattern_text, options);
  if (!parsed->pattern->ok()) return failure(where + ": the regex does not compile: " + parsed->pattern->error());
  FERRY_TRY(parsed->replacement, parse_replacement(parsed->replacement_text, *parsed->pattern, where));
  return parsed;
}

// Java's Matcher.replaceAll: each match in turn, an empty one moving the search on by one character.
std::string replace_all(const rule& r, std::string_view text) {
  const int group_count = r.pattern->NumberOfCapturingGroups() + 1;
  std::vector<re2::StringPiece> groups(group_count);
  std::string out;
  std::size_t copied = 0;
  std::size_t search = 0;
  while (search <= text.size() &&
         r.pattern->Match(text, search, text.size(), re2::RE2::UNANCHORED, groups.data(), group_count)) {
    const auto begin = static_cast<std::size_t>(groups[0].data() - text.data());
    const std::size_t end = begin + groups[0].size();
    out.append(text.substr(copied, begin - copied));
    for (const auto& piece : r.replacement) {
      if (const auto* literal = std::get_if<std::string>(&piece)) {
        out += *literal;
      } else {
        const auto& group = groups[std::get<rule::group_reference>(piece).index];
        if (group.data() != nullptr) out.append(group.data(), group.size());
      }
    }
    copied = end;
    search = end == begin ? end + 1 : end;
  }
  out.append(text.substr(copied));
  return out;
}

std::optional<std::string> apply(const rule& r, std::string_view name) {
  if (r.is_default) return std::string(name);
  if (!re2::RE2::FullMatch(name, *r.pattern)) return std::nullopt;
  std::string out = replace_all(r, name);
  if (r.to == rule::letter_case::lower)
    std::transform(out.begin(), out.end(), out.begin(), [](char c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; });
  if (r.to == rule::letter_case::upper)
    std::transform(out.begin(), out.end(), out.begin(), [](char c) { return c >= 'a' && c <= 'z' ? c - 32 : c; });
  return out;
}

// RFC 2253's keywords, the only ones Java writes by name.
const char* rfc2253_keyword(int nid) {
  switch (nid) {
    case NID_commonName:
      return "CN";
    case NID_countryName:
      return "C";
    case NID_localityName:
      return "L";
    case NID_stateOrProvinceName:
      return "ST";
    case NID_organizationName:
      return "O";
    case NID_organizationalUnitName:
      return "OU";
    case NID_streetAddress:
      return "STREET";
    case NID_domainComponent:
      return "DC";
    case NID_userId:
      return "UID";
    default:
      return nullptr;
  }
}

// The string types Java writes as text; any other value is written as its DER in hex.
bool is_text(int asn1_type) {
  switch (asn1_type) {
    case V_ASN1_PRINTABLESTRING:
    case V_ASN1_T61STRING:
    case V_ASN1_IA5STRING:
    case V_ASN1_GENERALSTRING:
    case V_ASN1_UTF8STRING:
    case V_ASN1_BMPSTRING:
      return true;
    default:
      return false;
  }
}

std::string escaped_value(std::string_view utf8) {
  constexpr std::string_view escapees = ",=+<>#;\"\\";
  std::string out;
  const std::size_t lead = std::min(utf8.find_first_not_of(" \r"), utf8.size());
  const std::size_t last = utf8.find_last_not_of(" \r");
  const std::size_t trail = last == npos ? 0 : last + 1;
  for (std::size_t i = 0; i < utf8.size(); ++i) {
    const char c = utf8[i];
    if (c == '\0') {
      out += "\\00";
      continue;
    }
    if (escapees.find(c) != npos || i < lead || i >= trail) out += '\\';
    out += c;
  }
  return out;
}

std::string hex_der(const ASN1_STRING* value) {
  std::unique_ptr<ASN1_TYPE, openssl_deleter<ASN1_TYPE_free>> wrapped(ASN1_TYPE_new());
  if (!wrapped || ASN1_TYPE_set1(wrapped.get(), ASN1_STRING_type(value), value) != 1) return "#";
  unsigned char* der = nullptr;
  const int length = i2d_ASN1_TYPE(wrapped.get(), &der);
  std::string out = "#";
  static constexpr char digits[] = "0123456789abcdef";
  for (int i = 0; i < length; ++i) {
    out += digits[der[i] >> 4];
    out += digits[der[i] & 0xF];
  }
  OPENSSL_free(der);
  return out;
}

std::string attribute(const X509_NAME_ENTRY* entry) {
  const ASN1_OBJECT* object = X509_NAME_ENTRY_get_object(entry);
  const ASN1_STRING* value = X509_NAME_ENTRY_get_data(entry);
  const char* keyword = rfc2253_keyword(OBJ_obj2nid(object));
  std::string out;
  if (keyword != nullptr) {
    out = keyword;
  } else {
    char oid[128];
    OBJ_obj2txt(oid, sizeof oid, object, 1);
    out = oid;
  }
  out += '=';
  unsigned char* utf8 = nullptr;
  const int length = keyword != nullptr && is_text(ASN1_STRING_type(value)) ? ASN1_STRING_to_UTF8(&utf8, value) : -1;
  if (length < 0) return out + hex_der(value);
  out += escaped_value({reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(length)});
  OPENSSL_free(utf8);
  return out;
}

}  // namespace

std::string distinguished_name(const X509* certificate) {
  const X509_NAME* name = X509_get_subject_name(certificate);
  std::vector<std::string> rdns;  // in the certificate's order; the attributes of one RDN joined with "+"
  int previous_set = -1;
  for (int i = 0; i < X509_NAME_entry_count(name); ++i) {
    const X509_NAME_ENTRY* entry = X509_NAME_get_entry(name, i);
    const int set = X509_NAME_ENTRY_set(entry);
    if (set != previous_set || rdns.empty()) {
      rdns.emplace_back();
    } else {
      rdns.back() += '+';
    }
    previous_set = set;
    rdns.back() += attribute(entry);
  }
  std::string out;
  for (auto rdn = rdns.rbegin(); rdn != rdns.rend(); ++rdn) {
    if (!out.empty()) out += ',';
    out += *rdn;
  }
  return out;
}

tls_result<principal_mapper> principal_mapper::parse(std::string_view rules, std::string_view setting_prefix) {
  const std::string setting = std::string(setting_prefix) + "ssl.principal.mapping.rules";
  std::vector<std::shared_ptr<const rule>> parsed;
  for (const std::string_view item : split_rules(rules)) {
    if (item.empty()) continue;  // as Kafka: ",," and trailing commas are no rules
    FERRY_TRY(auto one, parse_rule(item, setting));
    parsed.push_back(std::move(one));
  }
  return principal_mapper(std::move(parsed));
}

std::optional<std::string> principal_mapper::map(std::string_view distinguished_name) const {
  for (const auto& r : rules_) {
    if (auto name = apply(*r, distinguished_name)) return name;
  }
  return std::nullopt;
}

std::string principal_mapper::to_string() const {
  std::string out = "[";
  for (const auto& r : rules_) {
    if (out.size() > 1) out += ", ";
    if (r->is_default) {
      out += "DEFAULT";
      continue;
    }
    out += "RULE:" + r->pattern_text + "/" + r->replacement_text;
    if (r->to == rule::letter_case::lower) out += "/L";
    if (r->to == rule::letter_case::upper) out += "/U";
  }
  return out + "]";
}

std::optional<std::string> tls_principal(const principal_mapper& mapper, const SSL* handshake) {
  const X509* certificate = SSL_get0_peer_certificate(handshake);
  if (certificate == nullptr) return "User:ANONYMOUS";
  auto mapped = mapper.map(distinguished_name(certificate));
  if (!mapped) return std::nullopt;
  return "User:" + *mapped;
}

}  // namespace ferry::security
