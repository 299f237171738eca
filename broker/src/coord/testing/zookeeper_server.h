#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "coord/zk_session.h"

namespace ferry::coord::testing {

// A private, standalone ZooKeeper server for tests: the Debian zookeeper jar run directly (QuorumPeerMain)
// on a free port of 127.0.0.1, with its config, data and log in a fresh temporary directory.
//
// Java is started with PR_SET_PDEATHSIG, so it dies with the thread that started it: create the server on a
// thread that outlives it (the test's main thread). Failures to start throw std::runtime_error carrying the
// end of the server log.
class zookeeper_server {
 public:
  // Starts the server and waits until it answers `ruok` with `imok`.
  zookeeper_server();
  zookeeper_server(const zookeeper_server&) = delete;
  zookeeper_server& operator=(const zookeeper_server&) = delete;
  // Kills the server and removes its directory.
  ~zookeeper_server();

  // "127.0.0.1:<port>"; append "/chroot" to give each test its own tree.
  [[nodiscard]] std::string connect_string() const;
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] const std::filesystem::path& directory() const { return dir_; }
  [[nodiscard]] bool running() const { return pid_ > 0; }
  // The server's whole answer to a four-letter command ("wchc": the paths each session watches).
  [[nodiscard]] std::string four_letter_word(const char* command) const;

  // Kills the server (SIGKILL, like a crash; the data directory survives) and reaps it.
  void stop();
  // Starts it again on the same port and data directory; sessions that did not expire carry on.
  void restart();

 private:
  void launch();
  void wait_until_serving();
  [[nodiscard]] std::string log_tail() const;

  std::filesystem::path dir_;
  std::uint16_t port_ = 0;
  int port_lock_ = -1;  // keeps port_ this server's, across stop() and restart(), against other test processes
  pid_t pid_ = -1;
};

// Ends a live session from outside, the way Curator's KillSession does: a second handle joins the session and
// closes it. The server deletes the session's ephemeral nodes at once; the session's own client learns that it
// expired when it next reaches the server.
void expire_session(const std::string& connect, const zk_session::credentials& credentials);

}  // namespace ferry::coord::testing
