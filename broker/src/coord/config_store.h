#pragma once

#include <string_view>

#include "base/result.h"
#include "coord/layout.h"
#include "coord/zk_session.h"

namespace ferry::coord {

// Dynamic configs in Kafka's layout: /config/<entity type>/<name> holds an entity's overrides, and every write
// is announced by a /config/changes notification that the brokers' metadata tables follow. Entity types are
// "topics" and "brokers" (a broker id, or "<default>" for every broker). Blocking and thread-safe.
class config_store {
 public:
  explicit config_store(zk_session& session) : session_(session) {}

  // Replaces the entity's overrides (an empty map leaves an empty node, as Kafka does) and announces it.
  result<void> write(std::string_view entity_type, std::string_view name, const layout::config_map& config);
  // The overrides as ZooKeeper holds them now (empty when the node does not exist), for read-modify-write
  // changes such as IncrementalAlterConfigs: a broker's view may lag behind a change made through another.
  result<layout::config_map> read(std::string_view entity_type, std::string_view name);

 private:
  zk_session& session_;
};

}  // namespace ferry::coord
