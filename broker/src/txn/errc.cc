#include "txn/errc.h"

#include "base/error_category.h"

namespace ferry::txn {
namespace {

const char* describe(errc e) {
  switch (e) {
    case errc::not_coordinator:
      return "this broker is not the transaction coordinator of the transactional id";
    case errc::coordinator_loading:
      return "the coordinator is loading the transactions of the transactional id's partition";
    case errc::coordinator_not_available:
      return "the transaction coordinator cannot reserve a producer id now";
    case errc::concurrent_transactions:
      return "the transactional id's previous request or transaction is still completing";
    case errc::invalid_producer_id_mapping:
      return "the producer id is not the transactional id's current one";
    case errc::producer_fenced:
      return "a newer producer with the same transactional id fenced this one";
    case errc::invalid_txn_state:
      return "the request does not fit the transaction's state";
    case errc::invalid_transaction_timeout:
      return "transaction.timeout.ms is above transaction.max.timeout.ms or not positive";
    case errc::transactional_id_not_found:
      return "no transaction with this transactional id";
    case errc::field_too_long:
      return "the transactional id is longer than 32767 bytes";
  }
  return nullptr;
}

}  // namespace

const std::error_category& error_category() {
  static const enum_error_category<errc> instance("txn", describe);
  return instance;
}

}  // namespace ferry::txn
