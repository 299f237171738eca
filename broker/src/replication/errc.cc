#include "replication/errc.h"

#include "base/error_category.h"

namespace ferry::replication {
namespace {

const char* describe(errc e) {
  switch (e) {
    case errc::not_leader:
      return "this broker is not the leader of the partition";
    case errc::unknown_partition:
      return "this broker does not host the partition";
    case errc::not_follower:
      return "this broker leads the partition: it takes no batches from another leader";
  }
  return nullptr;
}

}  // namespace

const std::error_category& error_category() {
  static const enum_error_category<errc> instance("replication", describe);
  return instance;
}

}  // namespace ferry::replication
