#pragma once

#include <chrono>
#include <string>
#include <variant>

#include "certs/certificate_authority.h"
#include "kube/api_client.h"

namespace ferry::certs {

// The CA kept in Secret `ns`/`name` (keys ca.crt and ca.key, PEM): the one there, brought by the user or made
// before, or a new one named `subject` and valid for `validity`, stored there when the Secret does not exist. Why
// not, when the Secret cannot be read, holds no usable CA, or cannot be written.
std::variant<certificate_authority, std::string> load_or_create_ca(kube::api_client& api, const std::string& ns,
                                                                   const std::string& name, const std::string& subject,
                                                                   std::chrono::seconds validity);

}  // namespace ferry::certs
