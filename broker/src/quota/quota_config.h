#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "quota/errc.h"

namespace ferry::quota {

// Kafka's client quota keys (QuotaConfig.java): the same four for user, client-id and user + client-id entities.
enum class quota_key : std::uint8_t {
  producer_byte_rate,        // bytes per second a client may produce to this broker
  consumer_byte_rate,        // bytes per second a client may fetch from this broker
  request_percentage,        // percent of one request thread's time (KIP-124)
  controller_mutation_rate,  // partitions created or deleted per second (KIP-599)
};
inline constexpr std::size_t quota_key_count = 4;
inline constexpr std::array<quota_key, quota_key_count> all_quota_keys{
    quota_key::producer_byte_rate, quota_key::consumer_byte_rate, quota_key::request_percentage,
    quota_key::controller_mutation_rate};

// The type Kafka's ConfigDef gives a key: it decides which values AlterClientQuotas accepts and how ZooKeeper
// stores them ("1024" for a LONG, Java's Double.toString for a DOUBLE).
enum class value_type : std::uint8_t { long_integer, double_precision };

// Kafka's one key for ip entities (KIP-612): a connection rate Ferry does not enforce, so it refuses to set it.
inline constexpr std::string_view connection_creation_rate = "connection_creation_rate";

[[nodiscard]] std::string_view name_of(quota_key key);
[[nodiscard]] std::optional<quota_key> parse_quota_key(std::string_view name);
[[nodiscard]] value_type type_of(quota_key key);

// A refused client quota request: the code and the message that goes into the response's error_message.
struct refusal {
  errc code = errc::invalid_request;
  std::string message;
};

// Why AlterClientQuotas refuses to set the user/client-id key `key` to `value` (the checks of Kafka's
// ClientQuotaControlManager.validateQuotaKeyValue, in its order): an unknown key, a value not above 0 (NaN too,
// which Kafka's `value <= 0.0` lets through), a LONG above Long.MAX_VALUE or with a fraction above 1e-6.
[[nodiscard]] std::optional<refusal> check_value(std::string_view key, double value);

// A value of the "config" map of /config/users/... or /config/clients/..., read as Kafka's broker reads it
// (ConfigHandler.updateQuotaConfig): a LONG key with Java's Long.parseLong (an optional sign and decimal
// digits, nothing else), a DOUBLE key with Double.parseDouble (surrounding whitespace, "NaN", "Infinity", an
// exponent and a trailing d or f allowed; hexadecimal is refused).
[[nodiscard]] result<double> parse_stored_value(quota_key key, std::string_view text);

// The text ZooKeeper stores for a value AlterClientQuotas accepted, as Kafka's ZooKeeper-mode broker writes it
// (ZkAdminManager.alterClientQuotas): a LONG as the integer (value + 1e-6) truncates to, since Kafka's brokers
// read LONG keys back with Long.parseLong and would fail on "1024.0"; a DOUBLE as Java's Double.toString does
// ("50.0", "1.0E7").
[[nodiscard]] std::string stored_text(quota_key key, double value);

}  // namespace ferry::quota
