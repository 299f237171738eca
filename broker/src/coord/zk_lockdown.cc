#include "coord/zk_lockdown.h"

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "coord/errc.h"
#include "coord/layout.h"

namespace ferry::coord {
namespace {

// Kafka's ZooKeeper-mode root paths (ZkData.SecureRootPaths and the ones it leaves out) and Ferry's own. Only
// these: without a chroot, the rest of the tree may belong to other applications.
constexpr std::array<std::string_view, 16> cluster_roots{"/admin",
                                                         "/brokers",
                                                         "/cluster",
                                                         "/config",
                                                         "/controller",
                                                         "/controller_epoch",
                                                         "/delegation_token",
                                                         "/feature",
                                                         "/ferry",
                                                         "/isr_change_notification",
                                                         "/kafka-acl",
                                                         "/kafka-acl-changes",
                                                         "/kafka-acl-extended",
                                                         "/kafka-acl-extended-changes",
                                                         "/latest_producer_id_block",
                                                         "/log_dir_event_notification"};

}  // namespace

result<std::size_t> lock_down_existing_nodes(zk_session& session) {
  std::size_t changed = 0;
  // The chroot is the cluster's too: locked, nobody else may delete the top-level nodes or add others.
  if (session.chrooted()) {
    FERRY_TRY(const bool locked, session.lock_down("/"));
    if (locked) ++changed;
  }
  std::vector<std::string> pending(cluster_roots.begin(), cluster_roots.end());
  while (!pending.empty()) {
    const auto path = std::move(pending.back());
    pending.pop_back();
    auto locked = session.lock_down(path);
    if (!locked && locked.error() == errc::no_node) continue;
    if (!locked) return locked.error();
    if (locked.value()) ++changed;
    auto children = session.get_children(path);
    if (!children && children.error() == errc::no_node) continue;
    if (!children) return children.error();
    for (const auto& child : children.value()) pending.push_back(layout::child_path(path, child));
  }
  return changed;
}

}  // namespace ferry::coord
