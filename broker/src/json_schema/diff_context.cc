#include "json_schema/diff_context.h"

#include <algorithm>

namespace ferry::json_schema {

diff_context diff_context::subcontext() const {
  diff_context sub(*shared_);
  sub.path_ = path_;
  return sub;
}

std::string diff_context::path_text() const {
  std::string out = "#/";
  for (std::size_t i = 0; i < path_.size(); ++i) {
    if (i != 0) out += '/';
    out += path_[i];
  }
  return out;
}

void diff_context::add(difference_type type) { differences_.push_back({type, path_text()}); }

void diff_context::add(std::string_view attribute, difference_type type) {
  path_scope scope(*this, std::string(attribute));
  add(type);
}

void diff_context::add_all(const std::vector<difference>& differences) {
  differences_.insert(differences_.end(), differences.begin(), differences.end());
}

void diff_context::add_rebased(const std::vector<difference>& differences) {
  if (path_.empty()) {
    add_all(differences);
    return;
  }
  const std::string prefix = path_text();
  for (const auto& d : differences)
    differences_.push_back({d.type, d.path.size() <= 2 ? prefix : prefix + "/" + d.path.substr(2)});
}

std::vector<difference> diff_context::memoized(const schema_node* original, const schema_node* update,
                                               const std::function<void(diff_context&)>& compare) {
  const node_pair key{original, update};
  if (auto it = shared_->memo.find(key); it != shared_->memo.end()) return it->second;
  if (!shared_->in_progress.insert(key).second) {
    if (auto it = shared_->incompatible_seed.find(key); it != shared_->incompatible_seed.end()) return it->second;
    shared_->optimism_used = true;
    return {};
  }
  diff_context sub(*shared_);
  compare(sub);
  shared_->in_progress.erase(key);
  shared_->memo.emplace(key, sub.differences_);
  return sub.differences_;
}

bool diff_context::compatible() const {
  return std::all_of(differences_.begin(), differences_.end(),
                     [](const difference& d) { return is_compatible(d.type); });
}

}  // namespace ferry::json_schema
