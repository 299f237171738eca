#include "kube/give_up_clock.h"

namespace ferry::kube {

bool give_up_clock::unreachable(const std::string& key, clock::time_point now) {
  std::lock_guard lock(mutex_);
  const auto first = first_failure_.try_emplace(key, now).first->second;
  return now - first >= timeout_;
}

void give_up_clock::reached(const std::string& key) {
  std::lock_guard lock(mutex_);
  first_failure_.erase(key);
}

}  // namespace ferry::kube
