#pragma once

#include <string>
#include <system_error>

#include "protocol/error_code.h"

namespace ferry::server {

// The one place where errors of the libraries below (model, storage, replication, coord, group, and system I/O
// errors) become Kafka wire error codes.
[[nodiscard]] protocol::error_code to_kafka_error(const std::error_code& error);

}  // namespace ferry::server
