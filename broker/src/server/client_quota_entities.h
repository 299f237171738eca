#pragma once

// Client quota entities between the cluster view (coord: config maps under /config/users and /config/clients) and
// the quota library's model of them.
#include <string>
#include <utility>

#include "coord/cluster_view.h"
#include "quota/quota_entity.h"

namespace ferry::server {

// Every quota the view holds: the quota keys of users' entities and of client-id entities, their stored values
// parsed as Kafka's brokers parse them (a value that does not parse is logged and left out).
[[nodiscard]] quota::quota_entries client_quota_entries(const coord::cluster_view& view);

// Where an entity's config lives: ("users", "<sanitized u>"), ("users", "<u>/clients/<c>") or ("clients", "<c>"),
// with "<default>" for a default part, as coord::config_store reads and writes entities.
[[nodiscard]] std::pair<std::string, std::string> config_entity_of(const quota::quota_entity& entity);

}  // namespace ferry::server
