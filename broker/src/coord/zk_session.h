#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/result.h"
#include "coord/zk_security.h"

namespace ferry::coord {

enum class create_mode { persistent, ephemeral, persistent_sequential, ephemeral_sequential };

struct node_stat {
  std::int64_t czxid = 0;
  std::int64_t mzxid = 0;
  std::int64_t ctime_ms = 0;
  std::int64_t mtime_ms = 0;
  std::int32_t version = 0;  // data version, the one conditional set/remove compare against
  std::int32_t cversion = 0;
  std::int64_t ephemeral_owner = 0;  // session id of an ephemeral node's owner, 0 for persistent nodes
  std::int32_t num_children = 0;
};

struct node_data {
  std::string data;
  node_stat stat;
};

enum class watch_event { created, deleted, changed, children_changed };

// A one-shot ZooKeeper watch. It runs on the ZooKeeper client's completion thread, so it must only hand the
// event over (enqueue work), never call back into the session. Watches of an expired session never fire.
using watcher = std::function<void(watch_event event, const std::string& path)>;

// One step of zk_session::multi().
struct zk_op {
  enum class kind { create, set, remove, check };

  kind type = kind::check;
  std::string path;
  std::string data;
  create_mode mode = create_mode::persistent;
  std::int32_t version = -1;  // -1: any version

  static zk_op create(std::string path, std::string data, create_mode mode = create_mode::persistent) {
    return {kind::create, std::move(path), std::move(data), mode, -1};
  }
  static zk_op set(std::string path, std::string data, std::int32_t version = -1) {
    return {kind::set, std::move(path), std::move(data), create_mode::persistent, version};
  }
  static zk_op remove(std::string path, std::int32_t version = -1) {
    return {kind::remove, std::move(path), {}, create_mode::persistent, version};
  }
  static zk_op check(std::string path, std::int32_t version) {
    return {kind::check, std::move(path), {}, create_mode::persistent, version};
  }
};

struct zk_session_options {
  // zookeeper.connect: "host:port[,host:port...][/chroot]". A missing chroot node is created at connect.
  std::string connect;
  std::chrono::milliseconds session_timeout{18'000};
  // How long connect() waits for the first session before giving up.
  std::chrono::milliseconds connect_timeout{18'000};
  // How long a call waits out a lost connection (or an expired session's replacement) before failing.
  std::chrono::milliseconds operation_timeout{18'000};
  // Runs on the session's reconnect thread once an expired session has been replaced by a new one: the
  // owner's ephemeral nodes and watches are gone and must be re-created. Not called for the first session.
  std::function<void()> on_new_session;
  // A session of an earlier run of this process to take over if it is still alive (a broker restarted after
  // a crash keeps its registration instead of waiting for the old session to expire). When ZooKeeper says
  // it expired, connect() opens a new one.
  struct resumable {
    std::int64_t session_id = 0;
    std::array<char, 16> password{};
  };
  std::optional<resumable> resume;
  // The identity the session authenticates as, and the ACLs of the nodes it creates.
  zk_security security;
};

// A thread-safe, synchronous wrapper over the ZooKeeper C client (multithreaded flavour).
//
// Connection loss: the C client reconnects by itself within the session; calls wait for that (up to
// operation_timeout) and retry. A retried write may already have been applied, so it can report node_exists,
// no_node or bad_version for its own earlier attempt; callers that care check ownership (see
// cluster_registry). Session expiry: a reconnect thread replaces the dead handle with a new session, then runs
// on_new_session; calls made meanwhile wait for the new session and then run on it.
class zk_session {
 public:
  using credentials = zk_session_options::resumable;
  // Whether the first session was the resumed one.
  [[nodiscard]] bool resumed() const { return resumed_; }

  // Waits up to connect_timeout for a session; errc::timeout (logged with the connect string) if there is
  // none.
  static result<std::unique_ptr<zk_session>> connect(zk_session_options options);

  zk_session(const zk_session&) = delete;
  zk_session& operator=(const zk_session&) = delete;
  // Closes the session: its ephemeral nodes disappear at once.
  ~zk_session();

  // With `watch`, a one-shot watch on the node's data (fires on change or deletion) is set when the node
  // exists.
  result<node_data> get(const std::string& path, watcher watch = {});
  // With `watch`, a one-shot watch on the children list (or the node's deletion) is set when the node exists.
  result<std::vector<std::string>> get_children(const std::string& path, watcher watch = {});
  // nullopt if the node does not exist. With `watch`, the watch is set either way (creation, change or
  // deletion).
  result<std::optional<node_stat>> exists(const std::string& path, watcher watch = {});
  // Returns the path created (with the suffix, for sequential modes). make_parents creates missing ancestors
  // as empty persistent nodes.
  result<std::string> create(const std::string& path, std::string_view data, create_mode mode,
                             bool make_parents = false);
  // version -1 sets unconditionally; otherwise errc::bad_version unless the node has that data version.
  result<node_stat> set(const std::string& path, std::string_view data, std::int32_t version = -1);
  result<void> remove(const std::string& path, std::int32_t version = -1);
  // Gives an existing node the ACL a node created at `path` gets now (security.set_acl), when its own lets anyone
  // but a logged-in identity write or lets anyone read a sensitive path: a node made before zookeeper.set.acl was
  // on. Returns whether it changed the node.
  result<bool> lock_down(const std::string& path);
  // Applies all ops or none. On failure the error is the failing op's and *failed_op, if given, its index
  // (ops.size() when the failure was not an op's, e.g. connection loss).
  result<void> multi(std::span<const zk_op> ops, std::size_t* failed_op = nullptr);

  // Stops waiting and retrying: calls in flight or made later fail with errc::closed, and the handle is
  // closed (ephemeral nodes vanish) once the last call using it returns. Idempotent; the destructor calls it.
  void close();

  // Whether zookeeper.connect names a chroot: the session's "/" is then the cluster's own node.
  [[nodiscard]] bool chrooted() const;

  // Whether a connection is up right now (calls would not wait for one).
  [[nodiscard]] bool connected() const;

  // The current session's id and password, 0 while there is none. Tests use them to expire the session.
  [[nodiscard]] credentials current_credentials() const;
  [[nodiscard]] std::int64_t session_id() const { return current_credentials().session_id; }
  // The session timeout the server granted (it clamps the requested one to 2-20 ticks).
  [[nodiscard]] std::chrono::milliseconds negotiated_timeout() const;

  struct connection;  // one C client handle and its watches; replaced on session expiry

 private:
  explicit zk_session(zk_session_options options);

  result<void> wait_for_first_session(std::chrono::steady_clock::time_point deadline);
  result<std::shared_ptr<connection>> open_connection(const credentials* resume = nullptr);
  // The current connection once it is connected; waits until `deadline`.
  result<std::shared_ptr<connection>> acquire(std::chrono::steady_clock::time_point deadline);
  // Runs attempt(connection&) -> ZooKeeper return code, retrying connection-level failures until the
  // operation timeout.
  template <typename Attempt>
  result<void> retrying(Attempt&& attempt);
  void reconnect_loop();
  void state_changed(connection* conn, int state);

  const zk_session_options options_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::shared_ptr<connection> current_;
  bool expired_ = false;
  bool closing_ = false;
  bool resumed_ = false;
  std::thread reconnect_thread_;
};

}  // namespace ferry::coord
