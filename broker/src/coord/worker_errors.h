#pragma once

#include <exception>
#include <string>
#include <system_error>

#include "base/log.h"
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
// (a bug, or memory running out) must not end it, and with it the process: it is logged, and the work
// counts as failed and is retried like any transient error.
template <typename Work>
result<void> guarded(Work&& work, const std::string& what) {
  try {
    return work();
  } catch (const std::exception& e) {
    FERRY_LOG(error, "coord") << "internal error while handling " << what << ": " << e.what();
  } catch (...) {
    FERRY_LOG(error, "coord") << "internal error while handling " << what;
  }
  return errc::internal_error;
}

}  // namespace ferry::coord
