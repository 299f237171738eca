#pragma once

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

}  // namespace ferry::kafka
