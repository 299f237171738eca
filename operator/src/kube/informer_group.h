#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kube/informer.h"

namespace ferry::kube {

// One kind of namespaced resource watched in a list of namespaces, or across all of them: an informer per
// namespace (what a Role in each namespace permits), read as one cache. Keys are namespace/name.
class informer_group {
 public:
  // `api_path` is the resource's API group and version ("/apis/ferry.dev/v1alpha1"), `plural` its resource
  // name ("topics"); no `namespaces`: one informer across all of them.
  informer_group(api_client& client, const std::string& api_path, const std::string& plural,
                 const std::vector<std::string>& namespaces, const std::string& label_selector,
                 const informer::change_handler& on_change, const std::function<void()>& on_restart);

  // Each is run on the client's io_context by the owner.
  [[nodiscard]] const std::vector<std::unique_ptr<informer>>& members() const { return members_; }

  [[nodiscard]] informer::object get(const std::string& key) const;
  [[nodiscard]] std::vector<informer::object> list() const;
  // Whether every member's first list has completed.
  [[nodiscard]] bool synced() const;

 private:
  std::vector<std::unique_ptr<informer>> members_;
  std::map<std::string, informer*, std::less<>> by_namespace_;  // empty when one member watches all
};

}  // namespace ferry::kube
