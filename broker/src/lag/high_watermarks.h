#pragma once

#include <optional>

#include "model/ids.h"

namespace ferry::lag {

// Where consumer lag reads partitions' high watermarks. The broker's answers from its own leaders and, for
// partitions led elsewhere, from the last poll of their leaders (follower/high_watermark_poller.h).
class high_watermarks {
 public:
  virtual ~high_watermarks() = default;
  // nullopt while unknown: led elsewhere and not polled yet, or its leader is offline.
  [[nodiscard]] virtual std::optional<offset> high_watermark(const topic_partition& partition) const = 0;
};

}  // namespace ferry::lag
