#include "coord/errc.h"

#include <zookeeper/zookeeper.h>

#include "base/error_category.h"

namespace ferry::coord {
namespace {

const char* describe(errc e) {
  switch (e) {
    case errc::no_node:
      return "znode does not exist";
    case errc::node_exists:
      return "znode already exists";
    case errc::bad_version:
      return "znode was changed concurrently (version mismatch)";
    case errc::not_empty:
      return "znode has children";
    case errc::connection_loss:
      return "lost the connection to ZooKeeper (check zookeeper.connect)";
    case errc::session_expired:
      return "ZooKeeper session expired";
    case errc::timeout:
      return "timed out waiting for ZooKeeper (check zookeeper.connect)";
    case errc::closed:
      return "ZooKeeper session is closing";
    case errc::not_controller:
      return "this broker is no longer the controller";
    case errc::invalid_data:
      return "znode content is malformed";
    case errc::invalid_argument:
      return "invalid argument";
    case errc::election_not_needed:
      return "the partition is led by the replica the election would choose";
    case errc::preferred_leader_not_available:
      return "the preferred replica is not alive or not in the ISR";
    case errc::eligible_leaders_not_available:
      return "no live replica can be elected";
    case errc::invalid_replication_factor:
      return "replication factor is larger than the number of live brokers";
    case errc::internal_error:
      return "internal error in the cluster registry (see the broker log)";
    case errc::not_allowed:
      return "the znode's ACL does not allow this (check the ZooKeeper digest identity and zookeeper.set.acl)";
    case errc::zookeeper_error:
      return "ZooKeeper error";
  }
  return nullptr;
}

}  // namespace

const std::error_category& error_category() {
  static const enum_error_category<errc> instance("coord", describe);
  return instance;
}

errc from_zk_code(int rc) {
  switch (rc) {
    case ZNONODE:
      return errc::no_node;
    case ZNODEEXISTS:
      return errc::node_exists;
    case ZBADVERSION:
      return errc::bad_version;
    case ZNOTEMPTY:
      return errc::not_empty;
    case ZCONNECTIONLOSS:
    case ZSESSIONMOVED:
      return errc::connection_loss;
    case ZOPERATIONTIMEOUT:
      return errc::timeout;
    case ZSESSIONEXPIRED:
    case ZINVALIDSTATE:
      return errc::session_expired;
    case ZCLOSING:
      return errc::closed;
    case ZBADARGUMENTS:
      return errc::invalid_argument;
    case ZNOAUTH:
      return errc::not_allowed;
    default:
      return errc::zookeeper_error;
  }
}

}  // namespace ferry::coord
