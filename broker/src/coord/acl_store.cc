#include "coord/acl_store.h"

#include <algorithm>
#include <optional>

#include "coord/acl_layout.h"
#include "coord/errc.h"

namespace ferry::coord {
namespace {

// Writers racing on one node each win within a few rounds; more means something keeps rewriting it.
constexpr int max_attempts = 16;

// Creates `path` (and its ancestors) if it is missing.
result<void> ensure(zk_session& session, const std::string& path) {
  auto made = session.create(path, "", create_mode::persistent, /*make_parents=*/true);
  if (!made && made.error() != errc::node_exists) return made.error();
  return success();
}

}  // namespace

result<std::vector<authz::acl_binding>> acl_store::read_all(std::vector<std::string>* unreadable) {
  std::vector<authz::acl_binding> out;
  for (const auto pattern : {authz::pattern_type::literal, authz::pattern_type::prefixed}) {
    for (auto type = authz::resource_type::topic; type <= authz::resource_type::user;
         type = static_cast<authz::resource_type>(static_cast<int>(type) + 1)) {
      const auto parent = layout::acl_type_path(type, pattern);
      auto names = session_.get_children(parent);
      if (!names) {
        if (names.error() == errc::no_node) continue;
        return names.error();
      }
      for (auto& name : names.value()) {
        authz::resource_pattern resource{type, std::move(name), pattern};
        auto got = session_.get(layout::acl_path(resource));
        if (!got) {
          if (got.error() == errc::no_node) continue;  // deleted since the listing
          return got.error();
        }
        auto entries = layout::decode_acls(got.value().data);
        if (!entries) {
          if (unreadable != nullptr) unreadable->push_back(layout::acl_path(resource));
          continue;
        }
        for (auto& e : entries.value()) out.push_back({resource, std::move(e)});
      }
    }
  }
  return out;
}

result<std::vector<authz::acl_entry>> acl_store::read(const authz::resource_pattern& resource) {
  auto got = session_.get(layout::acl_path(resource));
  if (!got) {
    if (got.error() == errc::no_node) return std::vector<authz::acl_entry>{};
    return got.error();
  }
  return layout::decode_acls(got.value().data);
}

result<void> acl_store::add(const authz::resource_pattern& resource, std::span<const authz::acl_entry> entries) {
  return update(resource, [&](const std::vector<authz::acl_entry>& current) {
    auto next = current;
    for (const auto& e : entries)
      if (std::find(next.begin(), next.end(), e) == next.end()) next.push_back(e);
    return next;
  });
}

result<std::vector<authz::acl_entry>> acl_store::remove_if(const authz::resource_pattern& resource,
                                                           const std::function<bool(const authz::acl_entry&)>& doomed) {
  std::vector<authz::acl_entry> removed;
  FERRY_TRY(update(resource, [&](const std::vector<authz::acl_entry>& current) {
    removed.clear();  // a retry starts over from what the node holds then
    std::vector<authz::acl_entry> next;
    for (const auto& e : current) (doomed(e) ? removed : next).push_back(e);
    return next;
  }));
  return removed;
}

result<void> acl_store::update(const authz::resource_pattern& resource, const change& next) {
  const std::string path = layout::acl_path(resource);
  const std::string changes = std::string(layout::acl_changes_path(resource.pattern));
  for (int attempt = 0; attempt < max_attempts; ++attempt) {
    std::vector<authz::acl_entry> current;
    std::optional<std::int32_t> version;
    auto got = session_.get(path);
    if (got) {
      // A node that does not decode is someone else's: refused rather than overwritten.
      auto decoded = layout::decode_acls(got.value().data);
      if (!decoded) return decoded.error();
      current = std::move(decoded).value();
      version = got.value().stat.version;
    } else if (got.error() != errc::no_node) {
      return got.error();
    }
    const auto wanted = next(current);
    if (wanted == current) return success();
    if (!version) {
      FERRY_TRY(ensure(session_, layout::acl_type_path(resource.type, resource.pattern)));
    }
    FERRY_TRY(ensure(session_, changes));
    std::vector<zk_op> ops;
    if (wanted.empty())
      ops.push_back(zk_op::remove(path, *version));
    else if (version)
      ops.push_back(zk_op::set(path, layout::encode_acls(wanted), *version));
    else
      ops.push_back(zk_op::create(path, layout::encode_acls(wanted)));
    ops.push_back(zk_op::create(changes + "/" + std::string(layout::acl_change_prefix),
                                layout::encode_acl_change(resource), create_mode::persistent_sequential));
    auto written = session_.multi(ops);
    if (written) return success();
    const auto lost_race = written.error() == errc::bad_version || written.error() == errc::node_exists ||
                           written.error() == errc::no_node;
    if (!lost_race) return written.error();
  }
  return errc::bad_version;
}

}  // namespace ferry::coord
