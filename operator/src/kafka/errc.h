#pragma once

#include <cstdint>
#include <system_error>

namespace ferry::kafka {

// Why the operator could not talk to the brokers, before any answer of theirs.
enum class errc {
  no_listener = 1,             // a broker registered no listener of the --kafka-listener name
  security_protocol_mismatch,  // the listener's security protocol is not --kafka-security-protocol
  unusable_settings,           // the --kafka-* TLS or SASL files cannot be used (the log says why)
};
const std::error_category& error_category();
inline std::error_code make_error_code(errc e) { return {static_cast<int>(e), error_category()}; }

// An error code the Kafka protocol answered with, as a std::error_code whose message is Kafka's name for it
// (TOPIC_AUTHORIZATION_FAILED).
std::error_code kafka_error(std::int16_t code);
const std::error_category& kafka_error_category();

}  // namespace ferry::kafka

template <>
struct std::is_error_code_enum<ferry::kafka::errc> : std::true_type {};
