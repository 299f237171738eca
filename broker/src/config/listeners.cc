#include "config/listeners.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <sstream>

#include "config/listener_security.h"
#include "config/setting_text.h"

namespace ferry::config {
namespace {

using setting_text::fail;
using setting_text::items;
using setting_text::trim;
using setting_text::upper;

constexpr std::array<const char*, 4> listener_settings{"listeners", "advertised.listeners",
                                                       "listener.security.protocol.map", "inter.broker.listener.name"};
constexpr std::array<security_protocol, 4> security_protocols{security_protocol::plaintext, security_protocol::ssl,
                                                              security_protocol::sasl_plaintext,
                                                              security_protocol::sasl_ssl};

bool valid_name(const std::string& name) {
  return !name.empty() &&
         std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) != 0 || c == '_'; });
}

std::string machine_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

// "NAME://host:port, ..." in order; names upper-cased and unique.
std::vector<std::pair<std::string, endpoint>> parse_addresses(const std::string& key, const std::string& value) {
  std::vector<std::pair<std::string, endpoint>> out;
  for (const auto& item : items(value)) {
    const auto scheme_end = item.find("://");
    if (scheme_end == std::string::npos) fail(key, value, "expected NAME://host:port, e.g. PLAINTEXT://:9092");
    auto name = upper(item.substr(0, scheme_end));
    if (!valid_name(name)) fail(key, value, "a listener name has only letters, digits and '_'");
    const auto rest = item.substr(scheme_end + 3);
    const auto colon = rest.rfind(':');
    if (colon == std::string::npos) fail(key, value, "expected NAME://host:port, e.g. PLAINTEXT://:9092");
    endpoint e;
    e.host = rest.substr(0, colon);
    if (e.host.size() >= 2 && e.host.front() == '[' && e.host.back() == ']')
      e.host = e.host.substr(1, e.host.size() - 2);
    const auto port_text = rest.substr(colon + 1);
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), e.port);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || port_text.empty())
      fail(key, value, "port '" + port_text + "' must be a number between 0 and 65535");
    for (const auto& [other, unused] : out)
      if (other == name) fail(key, value, "listener " + name + " is named twice");
    out.emplace_back(std::move(name), std::move(e));
  }
  if (out.empty()) fail(key, value, "needs at least one NAME://host:port");
  return out;
}

// listener.security.protocol.map: "NAME:PROTOCOL, ..."; Kafka's default maps each protocol's name to itself.
std::map<std::string, security_protocol> parse_protocol_map(const std::map<std::string, std::string>& settings) {
  std::map<std::string, security_protocol> out;
  const auto it = settings.find("listener.security.protocol.map");
  if (it == settings.end()) {
    for (const auto p : security_protocols) out[std::string(name_of(p))] = p;
    return out;
  }
  for (const auto& item : items(it->second)) {
    const auto colon = item.find(':');
    if (colon == std::string::npos)
      fail(it->first, it->second, "expected NAME:PROTOCOL pairs, e.g. INTERNAL:PLAINTEXT");
    const auto name = upper(trim(item.substr(0, colon)));
    const auto protocol = upper(trim(item.substr(colon + 1)));
    const auto known = std::find_if(security_protocols.begin(), security_protocols.end(),
                                    [&protocol](security_protocol p) { return name_of(p) == protocol; });
    if (known == security_protocols.end())
      fail(it->first, it->second,
           "unknown security protocol '" + protocol + "' (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)");
    if (!valid_name(name) || out.contains(name))
      fail(it->first, it->second, "listener '" + name + "' is named twice or badly");
    out[name] = *known;
  }
  return out;
}

std::string names_of(const std::vector<listener_config>& listeners, bool advertised_only) {
  std::string names;
  for (const auto& l : listeners)
    if (!advertised_only || l.advertised) names += (names.empty() ? "" : ", ") + l.name;
  return names;
}

}  // namespace

const listener_config& listeners_config::inter_broker_listener() const {
  return *std::find_if(listeners.begin(), listeners.end(), [this](const auto& l) { return l.name == inter_broker; });
}

bool is_listener_setting(const std::string& key) {
  return std::find(listener_settings.begin(), listener_settings.end(), key) != listener_settings.end() ||
         is_security_setting(key);
}

listeners_config parse_listeners(const std::map<std::string, std::string>& settings) {
  listeners_config out;
  const auto setting = [&settings](const char* key) {
    const auto it = settings.find(key);
    return it == settings.end() ? std::optional<std::string>() : std::optional(it->second);
  };
  if (const auto value = setting("listeners")) {
    out.listeners.clear();
    for (auto& [name, bind] : parse_addresses("listeners", *value))
      out.listeners.push_back({std::move(name), std::move(bind), std::nullopt});
    for (std::size_t i = 0; i < out.listeners.size(); ++i)
      for (std::size_t j = 0; j < i; ++j) {
        const auto& a = out.listeners[i].bind;
        const auto& b = out.listeners[j].bind;
        const bool overlap =
            a.host == b.host || a.host.empty() || b.host.empty() || a.host == "0.0.0.0" || b.host == "0.0.0.0";
        if (a.port != 0 && a.port == b.port && overlap)
          fail("listeners", *value,
               "listeners " + out.listeners[j].name + " and " + out.listeners[i].name + " would share port " +
                   std::to_string(a.port));
      }
  }
  const auto protocols = parse_protocol_map(settings);
  for (auto& l : out.listeners) {
    const auto p = protocols.find(l.name);
    if (p == protocols.end())
      throw config_exception("listener " + l.name +
                             " in 'listeners' has no security protocol: add it to "
                             "'listener.security.protocol.map', e.g. " +
                             l.name + ":PLAINTEXT");
    l.protocol = p->second;
    read_listener_security(settings, l);
  }

  if (const auto value = setting("advertised.listeners")) {
    for (auto& advertised : parse_addresses("advertised.listeners", *value)) {
      const auto& name = advertised.first;
      auto it = std::find_if(out.listeners.begin(), out.listeners.end(), [&](const auto& l) { return l.name == name; });
      if (it == out.listeners.end())
        fail("advertised.listeners", *value,
             "listener " + name + " is not in 'listeners' (" + names_of(out.listeners, false) + ")");
      it->advertised = std::move(advertised.second);
    }
  } else {
    for (auto& l : out.listeners) l.advertised = l.bind;
  }
  for (auto& l : out.listeners) {
    if (!l.advertised) continue;
    if (l.advertised->host.empty() || l.advertised->host == "0.0.0.0") l.advertised->host = machine_name();
    if (l.advertised->port == 0) {
      if (l.bind.port == 0)
        throw config_exception("'advertised.listeners' needs a port for listener " + l.name +
                               " when 'listeners' uses port 0");
      l.advertised->port = l.bind.port;
    }
  }

  if (const auto value = setting("inter.broker.listener.name")) {
    if (setting("security.inter.broker.protocol"))
      throw config_exception(
          "set only one of 'inter.broker.listener.name' and 'security.inter.broker.protocol', as Kafka requires");
    out.inter_broker = upper(trim(*value));
  } else if (const auto protocol = setting("security.inter.broker.protocol")) {
    // Kafka's older form: the listener named after the protocol.
    out.inter_broker = upper(trim(*protocol));
  }
  const auto inter = std::find_if(out.listeners.begin(), out.listeners.end(),
                                  [&](const auto& l) { return l.name == out.inter_broker && l.advertised; });
  if (inter == out.listeners.end()) {
    if (!setting("inter.broker.listener.name"))
      throw config_exception(
          "no listener is named PLAINTEXT: set 'inter.broker.listener.name' to the one brokers "
          "reach each other through (" +
          names_of(out.listeners, true) + ")");
    fail("inter.broker.listener.name", out.inter_broker,
         "must be a listener in 'advertised.listeners' (" + names_of(out.listeners, true) + ")");
  }
  read_security_limits(settings, out);
  return out;
}

}  // namespace ferry::config
