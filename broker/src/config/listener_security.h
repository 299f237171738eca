#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/listeners.h"

namespace ferry::config {

// Whether `key` is a TLS or SASL setting (Kafka's ssl.*, sasl.* and their listener.name.<name>. forms, the
// authentication limits, Ferry's inter-broker login). Settings Kafka has and Ferry does not serve (Kerberos,
// OAUTHBEARER, delegation tokens, JAAS files, Java key stores, pluggable classes) count as security settings
// too: read_listener_security refuses them by name rather than calling them unknown.
bool is_security_setting(std::string_view key);

// "listener.name.<name>.<rest>" -> <rest>; the key itself otherwise.
std::string_view without_listener_prefix(std::string_view key);

// "listener.name.<lower-case name>.": what prefixes a listener's own settings.
std::string listener_setting_prefix(std::string_view listener_name);

// Fills `l.tls` and `l.sasl` from the settings for the listener's protocol: a `listener.name.<lower-case
// name>.` setting wins over the plain one, except that a SASL_SSL listener takes ssl.client.auth only in the
// prefixed form (KIP-684). Throws config_exception naming the setting.
void read_listener_security(const std::map<std::string, std::string>& settings, listener_config& l);

// The authentication limits and the inter-broker login (which needs the inter-broker listener's protocol).
void read_security_limits(const std::map<std::string, std::string>& settings, listeners_config& c);

// The HTTP admin API's security (Ferry's settings).
// An HTTP listener's security, under a prefix ("admin." for the admin API, "schema.registry." for the registry).
struct http_security {
  bool https = false;  // <prefix>listener.protocol: http (the default) or https
  // <prefix>ssl.*, each falling back to the broker-wide ssl.* setting; when https.
  tls_settings tls;
  // <prefix>authentication: basic (HTTP Basic against the users' SCRAM credentials) and/or mtls (a client
  // certificate's mapped subject); neither (none, the default): no authentication.
  bool basic = false;
  bool mtls = false;
  // <prefix>authentication.exempt.paths: exact paths left open (Prometheus and kubelet probes).
  std::vector<std::string> exempt_paths{"/metrics", "/v1/health", "/v1/ready"};

  [[nodiscard]] bool authenticates() const { return basic || mtls; }
};
using admin_api_security = http_security;

// Whether `key` is one of the settings read_http_security reads under `prefix`.
bool is_http_security_setting(std::string_view key, std::string_view prefix);
bool is_admin_security_setting(std::string_view key);

// Reads an HTTP listener's security (`what` names the listener in messages). Throws config_exception naming the
// setting: an unknown protocol or method, mtls without https, a truststore or <prefix>ssl.client.auth, https without
// a key, <prefix>ssl.* with http.
http_security read_http_security(const std::map<std::string, std::string>& settings, std::string_view prefix,
                                 std::string_view what);
admin_api_security read_admin_security(const std::map<std::string, std::string>& settings);

}  // namespace ferry::config
