#include "kube/informer_group.h"

#include <algorithm>

namespace ferry::kube {

informer_group::informer_group(api_client& client, const std::string& api_path, const std::string& plural,
                               const std::vector<std::string>& namespaces, const std::string& label_selector,
                               const informer::change_handler& on_change, const std::function<void()>& on_restart) {
  if (namespaces.empty()) {
    members_.push_back(std::make_unique<informer>(
        client, resource_kind{plural, api_path + "/" + plural, label_selector}, on_change, on_restart));
    return;
  }
  for (const auto& ns : namespaces) {
    if (by_namespace_.contains(ns)) continue;
    std::string path = api_path;
    path.append("/namespaces/").append(ns).append("/").append(plural);
    members_.push_back(std::make_unique<informer>(client, resource_kind{plural, std::move(path), label_selector},
                                                  on_change, on_restart));
    by_namespace_.emplace(ns, members_.back().get());
  }
}

informer::object informer_group::get(const std::string& key) const {
  if (by_namespace_.empty()) return members_.front()->get(key);
  const auto slash = key.find('/');
  if (slash == std::string::npos) return nullptr;
  const auto member = by_namespace_.find(std::string_view(key).substr(0, slash));
  return member == by_namespace_.end() ? nullptr : member->second->get(key);
}

std::vector<informer::object> informer_group::list() const {
  std::vector<informer::object> all;
  for (const auto& member : members_) {
    auto some = member->list();
    all.insert(all.end(), std::make_move_iterator(some.begin()), std::make_move_iterator(some.end()));
  }
  return all;
}

bool informer_group::synced() const {
  return std::all_of(members_.begin(), members_.end(), [](const auto& member) { return member->synced(); });
}

}  // namespace ferry::kube
