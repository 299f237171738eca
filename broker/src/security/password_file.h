#pragma once

#include <string>

#include "security/tls_context.h"

namespace ferry::security {

// A password kept in a file (a mounted Secret): its first line. Errors name `setting`: a file that cannot be read
// or holds no password. Logs a warning when every user of the machine may read it.
tls_result<void> read_password_file(const std::string& path, const std::string& setting, std::string& password);

}  // namespace ferry::security
