#pragma once

#include <string>
#include <system_error>

#include "protocol/error_code.h"

namespace ferry::server {

// The one place where errors of the libraries below (model, storage, replication, coord, group, and system I/O
// errors) become Kafka wire error codes.
[[nodiscard]] protocol::error_code to_kafka_error(const std::error_code& error);

// The same for a transactional request of a version that predates PRODUCER_FENCED (KIP-588), whose clients
// know a fenced producer as INVALID_PRODUCER_EPOCH.
[[nodiscard]] protocol::error_code to_kafka_txn_error(const std::error_code& error, bool producer_fenced_known);

}  // namespace ferry::server
