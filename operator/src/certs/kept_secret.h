#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "kube/api_client.h"

namespace ferry::certs {

// A Secret the operator keeps certificates in (a CA's, the brokers', a public trust bundle), as last read.
struct kept_secret {
  std::string ns;
  std::string name;
  nlohmann::json object;  // as the API server answered; null when the Secret does not exist

  [[nodiscard]] bool exists() const { return object.is_object(); }
  // data[key], decoded; nullopt when absent or not base64.
  [[nodiscard]] std::optional<std::string> value(const std::string& key) const;
  [[nodiscard]] std::string annotation(const std::string& key) const;
  // Whether the operator made it (labelled app.kubernetes.io/managed-by=ferry-operator).
  [[nodiscard]] bool operator_made() const;
  [[nodiscard]] std::string where() const { return "Secret " + ns + "/" + name; }
};

// Secret `ns`/`name`, or why it cannot be read.
std::variant<kept_secret, std::string> read_secret(kube::api_client& api, const std::string& ns,
                                                   const std::string& name);

// Makes `secret` hold exactly `data` (decoded values) and carry `annotations` (an empty value: none): creates it,
// labelled as the operator's, when it does not exist, and otherwise replaces the version read when anything differs. A
// Secret of that name the operator did not make is left alone and refused. Whether it wrote, or why not.
std::variant<bool, std::string> write_secret(kube::api_client& api, const kept_secret& secret,
                                             const std::map<std::string, std::string>& data,
                                             const std::map<std::string, std::string>& annotations = {});

}  // namespace ferry::certs
