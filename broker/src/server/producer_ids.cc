#include "server/producer_ids.h"

#include "server/broker_context.h"

namespace ferry::server {

result<producer_id> producer_ids::next() {
  std::lock_guard lock(mutex_);
  if (next_ > last_) {
    FERRY_TRY(auto block, cluster_.allocate_producer_id_block());
    next_ = block.first;
    last_ = block.last;
  }
  return producer_id{next_++};
}

}  // namespace ferry::server
