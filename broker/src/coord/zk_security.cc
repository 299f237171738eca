#include "coord/zk_security.h"

#include <array>

namespace ferry::coord {

bool is_sensitive_path(std::string_view path) {
  constexpr std::array<std::string_view, 2> sensitive_roots{"/config/users", "/delegation_token"};
  for (const auto root : sensitive_roots) {
    if (path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/')) return true;
  }
  return false;
}

}  // namespace ferry::coord
