#include "storage/errc.h"

#include "base/error_category.h"

namespace ferry::storage {
namespace {

const char* describe(errc e) {
  switch (e) {
    case errc::offset_out_of_range:
      return "offset is outside the log";
    case errc::out_of_order_sequence:
      return "producer sequence number is out of order";
    case errc::invalid_producer_epoch:
      return "producer epoch is older than the current one";
    case errc::corrupt_log:
      return "log segment or index is corrupt";
    case errc::log_closed:
      return "log is closed";
    case errc::log_dir_in_use:
      return "the log dir is in use by another process";
    case errc::log_dir_offline:
      return "the log dir is offline after an I/O error (see the broker log and /v1/ready)";
    case errc::out_of_order_offsets:
      return "a replicated batch does not start at the log end";
    case errc::missing_key:
      return "Compacted topic cannot accept message without key";
    case errc::invalid_txn_state:
      return "a non-transactional batch from a producer whose transaction is still open";
    case errc::coordinator_fenced:
      return "the transaction marker comes from an older transaction coordinator epoch";
    case errc::role_changed:
      return "the replica's role or leader epoch changed while the append waited for the log";
    case errc::topic_id_mismatch:
      return "the log on disk belongs to another topic of the same name (its partition.metadata has another topic id)";
  }
  return nullptr;
}

}  // namespace

const std::error_category& error_category() {
  static const enum_error_category<errc> instance("storage", describe);
  return instance;
}

}  // namespace ferry::storage
