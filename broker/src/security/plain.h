#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"

namespace ferry::security {

// PLAIN's one message (RFC 4616): "[authzid] NUL user NUL password", from unauthenticated clients; refused
// above max_plain_message_bytes.
inline constexpr std::size_t max_plain_message_bytes = 8192;

struct plain_message {
  std::string authorization_id;  // empty when absent
  std::string user;
  std::string password;
};

// errc::malformed_message unless there are exactly two NULs and a non-empty user and password;
// errc::authorization_id_mismatch for an authzid other than the user (CVE-2017-12610). kafka-python sends
// "user NUL user NUL password", which passes.
result<plain_message> parse_plain_message(std::string_view token);

}  // namespace ferry::security
