#pragma once

#include <array>
#include <string>
#include <string_view>

#include <boost/asio/io_context.hpp>

#include "kube/api_client.h"

namespace ferry::manager {

// The schema revision of the CRDs (charts/ferry/crds) this operator is built for, stamped on each as the
// annotation below. A CRD older than the operator silently prunes the fields it does not know, so any schema
// change to one CRD bumps the revision in every CRD file and here (docs/kubernetes.md, "Upgrading the CRDs").
inline constexpr int crd_revision = 3;
inline constexpr std::string_view crd_revision_annotation = "ferry.dev/crd-version";
// The CRDs whose resources this operator reads and writes.
inline constexpr std::array<std::string_view, 3> served_crds = {"topics.ferry.dev", "consumergroups.ferry.dev",
                                                                "users.ferry.dev"};

// What one CRD, as the API server answered GET customresourcedefinitions/<name>, means for an operator that
// needs revision `needed`: usable when at that revision or a newer one (newer revisions stay compatible).
struct crd_verdict {
  bool usable = false;
  // Why it is not usable and how to fix it; a warning for a newer revision; empty for the revision needed.
  std::string message;
};
crd_verdict judge_crd(std::string_view name, const kube::http_response& answer, int needed = crd_revision);

// Reads every served CRD and logs what is wrong with it: false when the operator must not start (a CRD is
// missing, unreadable, unstamped or older than crd_revision). Runs `io` until the reads are done: call it
// before anything else uses `io`.
bool check_crds(boost::asio::io_context& io, kube::api_client& api);

}  // namespace ferry::manager
