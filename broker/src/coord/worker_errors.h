#pragma once

#include <string>
#include <system_error>

#include "base/guarded.h"
#include "base/result.h"
#include "coord/errc.h"

namespace ferry::coord {

// How the threads that read ZooKeeper on behalf of others (cluster_registry, cluster_observer) treat errors.

inline bool is_disconnection(std::error_code e) {
  return e == errc::connection_loss || e == errc::session_expired || e == errc::timeout;
}

// Errors that go away by themselves (reconnects, lost races): the work is repeated after a pause.
inline bool is_transient(std::error_code e) {
  return is_disconnection(e) || e == errc::bad_version || e == errc::node_exists || e == errc::no_node ||
         e == errc::internal_error;
}

// Runs one piece of a worker's work. The worker is its process's only reader of ZooKeeper, so an exception
// (a bug, or memory running out) must not end it, and with it the process: it is logged and counted
// (base/guarded.h), and the work counts as failed and is retried like any transient error.
template <typename Work>
result<void> run_worker_step(Work&& work, const std::string& what) {
  result<void> out = errc::internal_error;
  (void)run_guarded(what, [&] { out = std::forward<Work>(work)(); });
  return out;
}

}  // namespace ferry::coord
