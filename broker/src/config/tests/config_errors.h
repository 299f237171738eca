#pragma once

#include <map>
#include <string>

#include "config/broker_config.h"

namespace ferry::config::test {

// The settings a broker needs at least.
inline std::map<std::string, std::string> minimal_settings() {
  return {{"broker.id", "2"}, {"zookeeper.connect", "127.0.0.1:2181"}};
}

// Why parse_broker_config refuses `settings` on top of the minimal ones ("" when it accepts them).
inline std::string error_with_minimal_settings(std::map<std::string, std::string> settings) {
  settings.merge(minimal_settings());
  try {
    (void)parse_broker_config(settings);
  } catch (const config_exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace ferry::config::test
