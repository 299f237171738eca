#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "coord/cluster_registry.h"
#include "coord/testing/zookeeper_server.h"

namespace ferry::coord::test {

// One ZooKeeper server per test process, started on first use (on the main thread, which it must not
// outlive) and killed at exit. Tests stay apart by each using its own chroot.
testing::zookeeper_server& shared_server();

// The shared server's connect string with a chroot no other test uses, e.g. "127.0.0.1:4242/Suite.Test-1".
std::string fresh_connect();

// A session on `connect` with the tests' short timeouts and the rest of `options` (nullptr, with a test failure,
// if it cannot connect).
std::unique_ptr<zk_session> open_session(const std::string& connect, zk_session_options options = {});

registry_options broker_options(const std::string& connect, std::int32_t id);

// A broker registration without a broker process: broker `id` registered on a session of the caller's own
// (nullptr, with a test failure, if that fails).
std::unique_ptr<zk_session> registered_session(const std::string& connect, std::int32_t id);

// Polls `condition` until it holds or `timeout` passes; for state that has no notification to wait on.
bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = std::chrono::seconds(15));

}  // namespace ferry::coord::test
