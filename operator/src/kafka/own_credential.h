#pragma once

#include <mutex>
#include <string>

#include "base/result.h"
#include "coord/config_store.h"
#include "kafka/client_settings.h"

namespace ferry::kafka {

// Makes the operator's SCRAM credential (--kafka-sasl-username, the password in --kafka-sasl-password-file)
// in ZooKeeper, where the brokers read users from, when the settings log in with SCRAM or PLAIN: the operator
// owns this user, so a credential of another password (a rotated Secret) is replaced. The user must be one of
// the brokers' super.users to manage Users' ACLs and credentials. Nothing to do without SASL. PBKDF2: slow,
// off the API thread.
result<void> ensure_own_credential(coord::config_store& configs, const client_settings& settings);

// ensure_own_credential again whenever the password file holds another password than the last one stored (a
// rotated Secret), so that the next logins work without a restart. Thread-safe: called before each reconcile's
// connections.
class own_credential_keeper {
 public:
  own_credential_keeper(coord::config_store& configs, const client_settings& settings)
      : configs_(configs), settings_(settings) {}
  result<void> ensure();

 private:
  coord::config_store& configs_;
  const client_settings& settings_;
  std::mutex mutex_;
  std::string stored_;  // the password last stored, under mutex_
};

}  // namespace ferry::kafka
