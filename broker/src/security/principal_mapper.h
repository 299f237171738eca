#pragma once

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "security/tls_context.h"

namespace ferry::security {

// A certificate's subject as Java's X500Principal.getName() writes it, since Kafka's principals, ACLs and
// mapping rules are written against that form (RFC 2253): the last RDN first, "," between RDNs and "+" inside a
// multi-valued one, no spaces; CN, C, L, ST, O, OU, STREET, DC and UID by keyword with `,=+<>#;"\` and leading or
// trailing spaces escaped, other attributes as their OID and the value's DER in hex ("1.2.840.113549.1.9.1=#16...").
// Example: CN=writeuser,OU=Unknown,O=Unknown,L=Unknown,ST=Unknown,C=Unknown.
std::string distinguished_name(const X509* certificate);

// ssl.principal.mapping.rules (KIP-371): the name a client certificate's distinguished name maps to, parsed as
// Kafka parses it: comma-separated DEFAULT (the whole name) and RULE:<regex>/<replacement>/[L|U] entries, where
// the regex and the replacement may hold commas and escape "/" as "\/". The first rule whose regex matches the
// whole name gives the name: every match replaced with the replacement ($1 is a group, \$ a literal $), then
// lower- or upper-cased (ASCII letters) for L or U. Regexes are RE2's (Java's lookarounds and backreferences are
// refused). Immutable once parsed; shared by every connection of a listener.
class principal_mapper {
 public:
  // `setting_prefix` precedes "ssl.principal.mapping.rules" in messages; a refusal names the setting and the rule.
  static tls_result<principal_mapper> parse(std::string_view rules, std::string_view setting_prefix = {});

  // The principal's name; none when no rule matches (the client is then refused, as Kafka does).
  [[nodiscard]] std::optional<std::string> map(std::string_view distinguished_name) const;
  // The rules as parsed, as Kafka's SslPrincipalMapper lists them: "[RULE:^CN=(.*?),OU=.*$/$1/L, DEFAULT]".
  [[nodiscard]] std::string to_string() const;

  struct rule;

 private:
  explicit principal_mapper(std::vector<std::shared_ptr<const rule>> rules) : rules_(std::move(rules)) {}
  std::vector<std::shared_ptr<const rule>> rules_;
};

// The principal of a TLS client after its handshake, as Kafka's default principal builder names it: User:ANONYMOUS
// without a client certificate, else User:<its subject mapped by `mapper`>; nullopt when no rule maps the subject
// (Kafka refuses the client then).
std::optional<std::string> tls_principal(const principal_mapper& mapper, const SSL* handshake);

}  // namespace ferry::security
