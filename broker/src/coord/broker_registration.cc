#include "coord/broker_registration.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "base/log.h"
#include "coord/errc.h"
#include "coord/layout.h"

namespace ferry::coord {
namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

result<void> register_broker(zk_session& session, const broker_endpoint& self,
                             std::optional<std::chrono::steady_clock::time_point> deadline) {
  const std::string path = layout::broker_path(self.id);
  layout::broker_registration registration;
  if (!self.endpoints.empty()) {
    registration.host = self.endpoints.front().host;
    registration.port = self.endpoints.front().port;
  }
  registration.rack = self.rack;
  registration.endpoints = self.endpoints;
  registration.schema_registry = self.schema_registry;
  registration.timestamp_ms = now_ms();
  const std::string data = layout::encode_broker(registration);

  struct vanished {
    std::mutex mutex;
    std::condition_variable changed;
    bool fired = false;
  };
  bool waiting_logged = false;
  for (;;) {
    auto created = session.create(path, data, create_mode::ephemeral);
    if (created) return success();
    if (created.error() != errc::node_exists) return created.error();

    auto signal = std::make_shared<vanished>();
    FERRY_TRY(const auto stat, session.exists(path, [signal](watch_event, const std::string&) {
      std::lock_guard lock(signal->mutex);
      signal->fired = true;
      signal->changed.notify_all();
    }));
    if (!stat) continue;  // gone meanwhile: create again
    // The registration of a session this process took over after a restart (or a retried create that had in
    // fact succeeded): the node is ours, and is created again, so its czxid (the broker epoch) is this run's.
    // The controller sees the restart by it and moves the leaderships of the earlier run, which may have
    // acknowledged records this run's log lost.
    if (stat->ephemeral_owner == session.session_id()) {
      auto removed = session.remove(path, stat->version);
      if (!removed && removed.error() != errc::no_node && removed.error() != errc::bad_version) return removed.error();
      continue;
    }
    if (!deadline || std::chrono::steady_clock::now() >= *deadline) {
      FERRY_LOG(error, "coord") << "broker id " << self.id << " is registered by another live broker (session 0x"
                                << std::hex << stat->ephemeral_owner << std::dec
                                << "); check broker.id, it must be unique in the cluster";
      return errc::node_exists;
    }
    if (!waiting_logged) {
      FERRY_LOG(info, "coord") << path << " exists from an earlier session; waiting for it to expire";
      waiting_logged = true;
    }
    std::unique_lock lock(signal->mutex);
    signal->changed.wait_until(lock, *deadline, [&] { return signal->fired; });
  }
}

}  // namespace ferry::coord
