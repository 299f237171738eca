#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "certs/ca_rotation.h"
#include "certs/certificate_authority.h"
#include "kube/api_client.h"

namespace ferry::certs {

// A CA kept in Secret `ns`/`name` (ca.crt and ca.key, PEM, and the keys of its renewal: ca_material): one the
// user brought, used as it is (also a CA that cert-manager keeps: tls.crt and tls.key, its issuer's ca.crt trusted
// too), or one the operator makes when the Secret does not exist and renews in phases (ca_rotation.h). Beside it the
// operator keeps Secret `<name>-cert` whose ca.crt is the trust bundle, for pods that must trust the CA and may not
// read its key. refresh() runs on one thread at a time; current() on any.
class ca_keeper {
 public:
  // `makes`: whether a missing Secret gets a new CA; false when someone else (the user, cert-manager) makes it, and
  // the operator waits for it.
  ca_keeper(kube::api_client& api, std::string ns, std::string name, std::string subject, ca_timing timing,
            bool makes = true);

  // Reads the Secret (making the CA when there is none), moves its renewal on to `now`, writes back what changed
  // and the trust bundle's Secret. Why not, when the Secret cannot be read or written or holds no usable CA.
  std::optional<std::string> refresh(std::chrono::system_clock::time_point now);

  struct state {
    certificate_authority signing;
    std::string trust_bundle;  // PEM: every CA certificate to trust
  };
  // What the last successful refresh() found; null before one.
  [[nodiscard]] std::shared_ptr<const state> current() const;
  // "Secret <ns>/<name>", for messages.
  [[nodiscard]] std::string where() const { return "Secret " + ns_ + "/" + name_; }

 private:
  std::optional<std::string> publish(const ca_material& material, std::chrono::system_clock::time_point now);

  kube::api_client& api_;
  const std::string ns_;
  const std::string name_;
  const std::string subject_;
  const ca_timing timing_;
  const bool makes_;
  bool warned_ending_ = false;  // a brought CA near its end was logged
  mutable std::mutex mutex_;
  std::shared_ptr<const state> current_;  // under mutex_
};

}  // namespace ferry::certs
