#include "config/listener_security.h"

#include <algorithm>
#include <array>
#include <optional>

#include "config/setting_text.h"

namespace ferry::config {
namespace {

using setting_text::fail;
using setting_text::items;
using setting_text::lower;
using setting_text::trim;
using setting_text::upper;

constexpr std::string_view listener_prefix = "listener.name.";
constexpr std::string_view admin_prefix = "admin.";

// The settings one listener reads (each also under listener.name.<name>.).
constexpr std::array<std::string_view, 17> listener_keys{"ssl.keystore.type",
                                                         "ssl.keystore.location",
                                                         "ssl.keystore.certificate.chain",
                                                         "ssl.keystore.key",
                                                         "ssl.key.password",
                                                         "ssl.keystore.password",
                                                         "ssl.truststore.type",
                                                         "ssl.truststore.location",
                                                         "ssl.truststore.certificates",
                                                         "ssl.truststore.password",
                                                         "ssl.client.auth",
                                                         "ssl.enabled.protocols",
                                                         "ssl.protocol",
                                                         "ssl.cipher.suites",
                                                         "ssl.principal.mapping.rules",
                                                         "sasl.enabled.mechanisms",
                                                         "connections.max.reauth.ms"};

// Broker-wide ones.
constexpr std::array<std::string_view, 7> broker_keys{
    "sasl.server.max.receive.size",         "connection.failed.authentication.delay.ms",
    "sasl.mechanism.inter.broker.protocol", "inter.broker.sasl.username",
    "inter.broker.sasl.password.file",      "ssl.endpoint.identification.algorithm",
    "security.inter.broker.protocol"};

// Kafka's settings that Ferry does not serve, by prefix, with the reason given when one is set.
struct unserved {
  std::string_view prefix;
  std::string_view why;
};
constexpr std::array<unserved, 14> unserved_settings{{
    {"sasl.jaas.config",
     "Ferry reads no JAAS configuration: users are SCRAM credentials in ZooKeeper "
     "(kafka-configs.sh --alter --entity-type users), and the brokers' own login is "
     "inter.broker.sasl.username with inter.broker.sasl.password.file"},
    {"sasl.kerberos.", "Kerberos (GSSAPI) is not served"},
    {"sasl.oauthbearer.", "OAUTHBEARER is not served"},
    {"sasl.login.", "Ferry's brokers log in to each other with inter.broker.sasl.username"},
    {"sasl.server.callback.handler.class", "pluggable SASL callbacks are not served"},
    {"sasl.client.callback.handler.class", "pluggable SASL callbacks are not served"},
    {"delegation.token.", "delegation tokens are not served"},
    {"principal.builder.class", "principals are built as Kafka's default builder does; no plug-in is served"},
    {"ssl.engine.factory.class", "TLS is OpenSSL's; no engine factory is served"},
    {"ssl.provider", "TLS is OpenSSL's; no security provider is served"},
    {"ssl.keymanager.algorithm", "a Java key manager setting: Ferry reads PEM keys with OpenSSL"},
    {"ssl.trustmanager.algorithm", "a Java trust manager setting: Ferry reads PEM certificates with OpenSSL"},
    {"ssl.secure.random.implementation", "Ferry's TLS uses OpenSSL's random generator"},
    {"sasl.kerberos.service.name", "Kerberos (GSSAPI) is not served"},
}};

constexpr std::array<std::string_view, 3> served_mechanisms{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"};

// A mechanism-scoped setting ("scram-sha-512.sasl.jaas.config") without its mechanism.
std::string_view without_mechanism(std::string_view key) {
  for (const auto mechanism : {"plain.", "scram-sha-256.", "scram-sha-512.", "gssapi.", "oauthbearer."})
    if (key.starts_with(mechanism)) return key.substr(std::string_view(mechanism).size());
  return key;
}

const unserved* unserved_setting(std::string_view key) {
  const auto bare = without_mechanism(without_listener_prefix(key));
  for (const auto& u : unserved_settings)
    if (bare.starts_with(u.prefix)) return &u;
  return nullptr;
}

// Settings read under a prefix ("listener.name.<name>." or "admin."), each falling back to the plain one.
class prefixed_settings {
 public:
  prefixed_settings(const std::map<std::string, std::string>& settings, std::string prefix)
      : settings_(settings), prefix_(std::move(prefix)) {}

  // The prefixed setting, else the plain one; with `key_out` naming the one that was found.
  std::optional<std::string> get(std::string_view key, std::string* key_out = nullptr) const {
    if (const auto it = settings_.find(prefix_ + std::string(key)); it != settings_.end()) {
      if (key_out != nullptr) *key_out = it->first;
      return it->second;
    }
    return get_unprefixed(key, key_out);
  }
  std::optional<std::string> get_prefixed(std::string_view key, std::string* key_out) const {
    const auto it = settings_.find(prefix_ + std::string(key));
    if (it == settings_.end()) return std::nullopt;
    *key_out = it->first;
    return it->second;
  }
  std::optional<std::string> get_unprefixed(std::string_view key, std::string* key_out) const {
    const auto it = settings_.find(std::string(key));
    if (it == settings_.end()) return std::nullopt;
    if (key_out != nullptr) *key_out = it->first;
    return it->second;
  }
  [[nodiscard]] const std::string& prefix() const { return prefix_; }

 private:
  const std::map<std::string, std::string>& settings_;
  std::string prefix_;
};

prefixed_settings listener_settings(const std::map<std::string, std::string>& settings, const std::string& listener) {
  return {settings, listener_setting_prefix(listener)};
}

// `what` names the TLS endpoint in messages ("listener SSL"), `protocol` is what it speaks; with
// `client_auth_prefixed_only`, ssl.client.auth counts only under the prefix.
tls_settings read_tls(const prefixed_settings& s, const std::string& what, std::string_view protocol,
                      bool client_auth_prefixed_only) {
  tls_settings tls;
  std::string key;
  if (const auto type = s.get("ssl.keystore.type", &key); type && upper(trim(*type)) != "PEM")
    fail(key, *type, "only PEM key stores are served; convert a JKS or PKCS12 store with keytool and openssl");
  if (const auto type = s.get("ssl.truststore.type", &key); type && upper(trim(*type)) != "PEM")
    fail(key, *type, "only PEM trust stores are served; convert a JKS or PKCS12 store with keytool and openssl");
  // As Kafka's DefaultSslEngineFactory: PEM stores have no store password (only the key may have one).
  if (s.get("ssl.keystore.password", &key))
    throw config_exception("'" + key + "' cannot be set with PEM key stores: only 'ssl.key.password' may be");
  if (s.get("ssl.truststore.password", &key))
    throw config_exception("'" + key + "' cannot be set with PEM trust stores");

  tls.keystore_location = s.get("ssl.keystore.location").value_or("");
  tls.keystore_certificate_chain = s.get("ssl.keystore.certificate.chain").value_or("");
  tls.keystore_key = s.get("ssl.keystore.key").value_or("");
  tls.key_password = s.get("ssl.key.password").value_or("");
  const bool inline_pair = !tls.keystore_certificate_chain.empty() || !tls.keystore_key.empty();
  if (tls.keystore_location.empty() && !inline_pair)
    throw config_exception(what + " uses " + std::string(protocol) + ": set '" + s.prefix() +
                           "ssl.keystore.location' (a PEM file with the private key and "
                           "the certificate chain), or 'ssl.keystore.key' and 'ssl.keystore.certificate.chain'");
  if (!tls.keystore_location.empty() && inline_pair)
    throw config_exception(what +
                           ": set either 'ssl.keystore.location' or 'ssl.keystore.key' with "
                           "'ssl.keystore.certificate.chain', not both");
  if (inline_pair && (tls.keystore_certificate_chain.empty() || tls.keystore_key.empty()))
    throw config_exception(what + ": 'ssl.keystore.key' and 'ssl.keystore.certificate.chain' go together");
  tls.truststore_location = s.get("ssl.truststore.location").value_or("");
  tls.truststore_certificates = s.get("ssl.truststore.certificates").value_or("");
  if (!tls.truststore_location.empty() && !tls.truststore_certificates.empty())
    throw config_exception(what + ": set either 'ssl.truststore.location' or 'ssl.truststore.certificates', not both");

  const auto client_auth =
      client_auth_prefixed_only ? s.get_prefixed("ssl.client.auth", &key) : s.get("ssl.client.auth", &key);
  if (client_auth) {
    const auto v = lower(trim(*client_auth));
    if (v == "none")
      tls.client_authentication = client_auth::none;
    else if (v == "requested")
      tls.client_authentication = client_auth::requested;
    else if (v == "required")
      tls.client_authentication = client_auth::required;
    else
      fail(key, *client_auth, "must be none, requested or required");
  }

  std::optional<std::string> only_protocol;
  if (const auto protocol = s.get("ssl.protocol", &key)) {
    const auto v = trim(*protocol);
    if (v == "TLSv1.2")
      only_protocol = v;  // a TLSv1.2 context speaks nothing newer, as in Java
    else if (v != "TLS" && v != "TLSv1.3")
      fail(key, *protocol, "must be TLSv1.3, TLSv1.2 or TLS");
  }
  if (const auto protocols = s.get("ssl.enabled.protocols", &key)) {
    tls.enabled_protocols = items(*protocols);
    if (tls.enabled_protocols.empty()) fail(key, *protocols, "needs at least one of TLSv1.2, TLSv1.3");
    for (const auto& p : tls.enabled_protocols)
      if (p != "TLSv1.2" && p != "TLSv1.3")
        fail(key, *protocols, "'" + p + "' is not served: only TLSv1.2 and TLSv1.3 are");
  } else if (only_protocol) {
    tls.enabled_protocols = {*only_protocol};
  }
  if (const auto suites = s.get("ssl.cipher.suites")) tls.cipher_suites = items(*suites);
  if (const auto rules = s.get("ssl.principal.mapping.rules")) tls.principal_mapping_rules = trim(*rules);
  if (const auto algorithm = s.get_unprefixed("ssl.endpoint.identification.algorithm", &key)) {
    const auto v = lower(trim(*algorithm));
    if (v != "https" && !v.empty()) fail(key, *algorithm, "must be https or empty");
    tls.verify_peer_host = v == "https";
  }
  return tls;
}

void read_sasl(const prefixed_settings& s, listener_config& l) {
  std::string key = "sasl.enabled.mechanisms";
  // Kafka's default is GSSAPI, which Ferry does not serve: a SASL listener names its mechanisms.
  const auto mechanisms = s.get("sasl.enabled.mechanisms", &key).value_or("GSSAPI");
  l.sasl.enabled_mechanisms.clear();
  for (const auto& m : items(mechanisms)) {
    const auto name = upper(m);
    if (name == "GSSAPI")
      fail(key, mechanisms,
           "Kerberos (GSSAPI, Kafka's default) is not served: set it to PLAIN, SCRAM-SHA-256 and/or SCRAM-SHA-512 "
           "for listener " +
               l.name);
    if (name == "OAUTHBEARER") fail(key, mechanisms, "OAUTHBEARER is not served (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)");
    if (std::find(served_mechanisms.begin(), served_mechanisms.end(), name) == served_mechanisms.end())
      fail(key, mechanisms, "unknown mechanism '" + m + "' (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)");
    if (std::find(l.sasl.enabled_mechanisms.begin(), l.sasl.enabled_mechanisms.end(), name) ==
        l.sasl.enabled_mechanisms.end())
      l.sasl.enabled_mechanisms.push_back(name);
  }
  if (l.sasl.enabled_mechanisms.empty()) fail(key, mechanisms, "needs at least one mechanism");
  if (const auto reauth = s.get("connections.max.reauth.ms", &key))
    l.sasl.max_reauth_ms = setting_text::to_int<std::int64_t>(key, trim(*reauth), 0, INT64_MAX);
}

}  // namespace

std::string_view name_of(security_protocol p) {
  switch (p) {
    case security_protocol::plaintext:
      return "PLAINTEXT";
    case security_protocol::ssl:
      return "SSL";
    case security_protocol::sasl_plaintext:
      return "SASL_PLAINTEXT";
    case security_protocol::sasl_ssl:
      return "SASL_SSL";
  }
  return "PLAINTEXT";
}

std::string_view without_listener_prefix(std::string_view key) {
  if (!key.starts_with(listener_prefix)) return key;
  const auto rest = key.substr(listener_prefix.size());
  const auto dot = rest.find('.');
  if (dot == std::string_view::npos) return key;
  return rest.substr(dot + 1);
}

std::string listener_setting_prefix(std::string_view listener_name) {
  return std::string(listener_prefix) + lower(std::string(listener_name)) + ".";
}

bool is_security_setting(std::string_view key) {
  if (unserved_setting(key) != nullptr) return true;
  if (std::find(broker_keys.begin(), broker_keys.end(), key) != broker_keys.end()) return true;
  const auto bare = without_listener_prefix(key);
  return std::find(listener_keys.begin(), listener_keys.end(), bare) != listener_keys.end();
}

void read_listener_security(const std::map<std::string, std::string>& settings, listener_config& l) {
  const auto s = listener_settings(settings, l.name);
  // KIP-684: on SASL_SSL the broker-wide ssl.client.auth does not apply, only the listener's own.
  if (uses_tls(l.protocol))
    l.tls = read_tls(s, "listener " + l.name, name_of(l.protocol), l.protocol == security_protocol::sasl_ssl);
  if (uses_sasl(l.protocol)) read_sasl(s, l);
}

bool is_http_security_setting(std::string_view key, std::string_view prefix) {
  if (!key.starts_with(prefix)) return false;
  const auto rest = key.substr(prefix.size());
  if (rest == "listener.protocol" || rest == "authentication" || rest == "authentication.exempt.paths") return true;
  return rest.starts_with("ssl.") && std::find(listener_keys.begin(), listener_keys.end(), rest) != listener_keys.end();
}

bool is_admin_security_setting(std::string_view key) { return is_http_security_setting(key, admin_prefix); }

http_security read_http_security(const std::map<std::string, std::string>& settings, std::string_view prefix,
                                 std::string_view what) {
  http_security out;
  const std::string p(prefix);
  const auto get = [&settings, &p](const char* key) {
    const auto it = settings.find(p + key);
    return it == settings.end() ? std::optional<std::string>() : std::optional(it->second);
  };
  if (const auto protocol = get("listener.protocol")) {
    const auto v = lower(trim(*protocol));
    if (v != "http" && v != "https") fail(p + "listener.protocol", *protocol, "must be http or https");
    out.https = v == "https";
  }
  const prefixed_settings s(settings, p);
  if (out.https) {
    out.tls = read_tls(s, std::string(what), "https", false);
  } else {
    // Settings that would silently not apply.
    for (const auto& [key, value] : settings)
      if (key.starts_with(p + "ssl."))
        throw config_exception(std::string("'")
                                   .append(key)
                                   .append("' is set, but '")
                                   .append(p)
                                   .append("listener.protocol' is http: set it to https"));
  }

  if (const auto methods = get("authentication")) {
    for (const auto& m : items(*methods)) {
      const auto name = lower(m);
      if (name == "basic")
        out.basic = true;
      else if (name == "mtls")
        out.mtls = true;
      else if (name != "none")
        fail(p + "authentication", *methods, "unknown method '" + m + "' (basic, mtls, or none)");
    }
  }
  if (out.mtls) {
    if (!out.https) throw config_exception("'" + p + "authentication' mtls needs '" + p + "listener.protocol' https");
    if (out.tls.truststore_location.empty() && out.tls.truststore_certificates.empty())
      throw config_exception("'" + p + "authentication' mtls needs a truststore to verify client certificates: set '" +
                             p + "ssl.truststore.location' (or 'ssl.truststore.location')");
    if (out.tls.client_authentication == client_auth::none)
      throw config_exception("'" + p + "authentication' mtls needs '" + p + "ssl.client.auth' requested or required");
  }
  if (const auto paths = get("authentication.exempt.paths")) {
    out.exempt_paths = items(*paths);
    for (const auto& path : out.exempt_paths)
      if (!path.starts_with('/'))
        fail(p + "authentication.exempt.paths", *paths, "'" + path + "' is not a path (/...)");
  }
  return out;
}

admin_api_security read_admin_security(const std::map<std::string, std::string>& settings) {
  return read_http_security(settings, admin_prefix, "the admin API");
}

void read_security_limits(const std::map<std::string, std::string>& settings, listeners_config& c) {
  const auto get = [&settings](const char* key) {
    const auto it = settings.find(key);
    return it == settings.end() ? std::optional<std::string>() : std::optional(trim(it->second));
  };
  if (const auto v = get("sasl.server.max.receive.size"))
    c.sasl_max_receive_bytes = setting_text::to_int<std::int32_t>("sasl.server.max.receive.size", *v, 1, INT32_MAX);
  if (const auto v = get("connection.failed.authentication.delay.ms"))
    c.failed_authentication_delay_ms =
        setting_text::to_int<std::int32_t>("connection.failed.authentication.delay.ms", *v, 0, INT32_MAX);

  for (const auto& [key, value] : settings)
    if (const auto* u = unserved_setting(key))
      throw config_exception("'" + key + "' is not served: " + std::string(u->why));
  // Settings of listeners that do not exist are mistakes (a typo in the name would silently not apply).
  for (const auto& [key, value] : settings) {
    if (!key.starts_with(listener_prefix) || !is_security_setting(key)) continue;
    const auto rest = std::string_view(key).substr(listener_prefix.size());
    const auto name = upper(std::string(rest.substr(0, rest.find('.'))));
    if (std::none_of(c.listeners.begin(), c.listeners.end(), [&name](const auto& l) { return l.name == name; }))
      throw config_exception(std::string("'")
                                 .append(key)
                                 .append("' names listener ")
                                 .append(name)
                                 .append(", which is not in 'listeners'"));
  }

  const auto& inter = c.inter_broker_listener();
  auto& login = c.inter_broker_login;
  login.username = get("inter.broker.sasl.username").value_or("");
  login.password_file = get("inter.broker.sasl.password.file").value_or("");
  if (!uses_sasl(inter.protocol)) return;
  const auto mechanism = get("sasl.mechanism.inter.broker.protocol").value_or("GSSAPI");
  login.mechanism = upper(mechanism);
  if (std::find(inter.sasl.enabled_mechanisms.begin(), inter.sasl.enabled_mechanisms.end(), login.mechanism) ==
      inter.sasl.enabled_mechanisms.end())
    fail("sasl.mechanism.inter.broker.protocol", mechanism,
         "must be one of the inter-broker listener " + inter.name + "'s sasl.enabled.mechanisms" +
             (login.mechanism == "GSSAPI" ? " (GSSAPI is Kafka's default, and Kerberos is not served)" : ""));
  if (login.username.empty())
    throw config_exception("the inter-broker listener " + inter.name +
                           " uses SASL: set 'inter.broker.sasl.username' to the brokers' user");
}

}  // namespace ferry::config
