#include "coord/zk_session.h"

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

#include "base/log.h"
#include "coord/errc.h"

namespace ferry::coord {
namespace {

using std::chrono::steady_clock;

// The C client's own log lines go through ours. It reports every refused reconnect as an error; those are
// expected while ZooKeeper restarts, and the callers log real failures, so nothing here is above warn.
void log_from_zookeeper(const char* message) {
  std::string_view text(message);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
  if (text.find("ZOO_ERROR") != std::string_view::npos || text.find("ZOO_WARN") != std::string_view::npos) {
    FERRY_LOG(warn, "zookeeper") << text;
  } else {
    FERRY_LOG(debug, "zookeeper") << text;
  }
}

void set_client_log_level() {
  static std::once_flag once;
  std::call_once(once, [] {
    zoo_set_debug_level(log::current_level() == log::level::debug ? ZOO_LOG_LEVEL_INFO : ZOO_LOG_LEVEL_WARN);
  });
}

// Errors after which the same call can be repeated once the client has (re)connected.
bool is_retriable(int rc) {
  return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE ||
         rc == ZSESSIONMOVED || rc == ZCLOSING || rc == ZTHROTTLEDOP;
}

int create_flags(create_mode mode) {
  switch (mode) {
    case create_mode::persistent:
      return 0;
    case create_mode::ephemeral:
      return ZOO_EPHEMERAL;
    case create_mode::persistent_sequential:
      return ZOO_SEQUENCE;
    case create_mode::ephemeral_sequential:
      return ZOO_EPHEMERAL | ZOO_SEQUENCE;
  }
  return 0;
}

// What set_acl gives a new node: ALL for the identities of the session creating it (ZooKeeper's "auth" scheme)
// and READ for anyone, except at and below the sensitive paths.
const ACL_vector* acl_for(const zk_security& security, const std::string& path) {
  if (!security.set_acl) return &ZOO_OPEN_ACL_UNSAFE;
  if (is_sensitive_path(path)) return &ZOO_CREATOR_ALL_ACL;
  static ACL creator_all_anyone_read[] = {{ZOO_PERM_ALL, ZOO_AUTH_IDS}, {ZOO_PERM_READ, ZOO_ANYONE_ID_UNSAFE}};
  static ACL_vector readable{2, creator_all_anyone_read};
  return &readable;
}

// Whether an ACL already keeps out everyone but logged-in identities (and, at a sensitive path, readers too).
bool locked(const ACL_vector& acl, bool sensitive) {
  bool identity = false;
  for (std::int32_t i = 0; i < acl.count; ++i) {
    const auto& entry = acl.data[i];
    if (std::strcmp(entry.id.scheme, "world") == 0) {
      if (sensitive || entry.perms != ZOO_PERM_READ) return false;
    } else {
      identity = true;
    }
  }
  return identity;
}

void on_auth_answer(int rc, const void* /*data*/) {
  if (rc != ZOK) FERRY_LOG(warn, "coord") << "ZooKeeper refused the digest login: " << zerror(rc);
}

node_stat to_stat(const Stat& s) {
  return node_stat{s.czxid, s.mzxid, s.ctime, s.mtime, s.version, s.cversion, s.ephemeralOwner, s.numChildren};
}

watch_event to_event(int type) {
  if (type == ZOO_CREATED_EVENT) return watch_event::created;
  if (type == ZOO_DELETED_EVENT) return watch_event::deleted;
  if (type == ZOO_CHILD_EVENT) return watch_event::children_changed;
  return watch_event::changed;
}

std::string describe(int rc) { return std::string(zerror(rc)) + " (" + std::to_string(rc) + ")"; }

// Splits "h1:2181,h2:2181/kafka" into the server list and the chroot ("" when there is none).
std::pair<std::string, std::string> split_chroot(const std::string& connect) {
  const auto slash = connect.find('/');
  if (slash == std::string::npos) return {connect, ""};
  std::string chroot = connect.substr(slash);
  while (chroot.size() > 1 && chroot.back() == '/') chroot.pop_back();
  return {connect.substr(0, slash), chroot == "/" ? "" : chroot};
}

}  // namespace

struct zk_session::connection {
  explicit connection(zk_session* owner) : owner(owner) {}
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  // zookeeper_close joins the client's threads, so no callback can reach this object afterwards.
  ~connection() {
    if (handle != nullptr) zookeeper_close(handle);
  }

  // Registers `fn` for one event; the returned id travels through the C client as the watcher context.
  void* add_watch(watcher fn) {
    std::lock_guard lock(watch_mutex);
    const std::uint64_t id = next_watch_id++;
    watches.emplace(id, std::move(fn));
    // An id, not a pointer: a watch that fires after its entry is gone finds nothing instead of freed memory.
    return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id));  // NOLINT(performance-no-int-to-ptr)
  }

  watcher take_watch(void* context) {
    std::lock_guard lock(watch_mutex);
    const auto it = watches.find(static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(context)));
    if (it == watches.end()) return {};
    watcher fn = std::move(it->second);
    watches.erase(it);
    return fn;
  }

  static void on_session_event(zhandle_t*, int type, int state, const char*, void* context) {
    if (type != ZOO_SESSION_EVENT) return;
    auto* self = static_cast<connection*>(context);
    self->owner->state_changed(self, state);
  }

  static void on_node_event(zhandle_t* zh, int type, int, const char* path, void* context) {
    // Per-watch session events only repeat what on_session_event already reports.
    if (type == ZOO_SESSION_EVENT) return;
    auto* self = static_cast<connection*>(const_cast<void*>(zoo_get_context(zh)));
    watcher fn = self->take_watch(context);
    if (!fn || type == ZOO_NOTWATCHING_EVENT) return;
    fn(to_event(type), path != nullptr ? std::string(path) : std::string());
  }

  zk_session* const owner;
  zhandle_t* handle = nullptr;
  int state = 0;  // last session state reported by the client; guarded by the owner's mutex_

  std::mutex watch_mutex;
  std::unordered_map<std::uint64_t, watcher> watches;
  std::uint64_t next_watch_id = 1;
};

zk_session::zk_session(zk_session_options options) : options_(std::move(options)) {}

zk_session::~zk_session() { close(); }

result<std::unique_ptr<zk_session>> zk_session::connect(zk_session_options options) {
  set_client_log_level();
  const auto [servers, chroot] = split_chroot(options.connect);
  options.connect = servers + chroot;
  if (!chroot.empty()) {
    // The C client does not create its chroot; like Kafka, create it through a session without one.
    zk_session_options root = options;
    root.connect = servers;
    root.on_new_session = nullptr;
    root.resume.reset();  // taking the broker's session over here would end it when this one closes
    FERRY_TRY(auto bootstrap, connect(std::move(root)));
    auto created = bootstrap->create(chroot, "", create_mode::persistent, true);
    if (!created && created.error() != errc::node_exists) {
      FERRY_LOG(error, "coord") << "cannot create the ZooKeeper chroot " << chroot << " of zookeeper.connect '"
                                << options.connect << "': " << created.error().message();
      return created.error();
    }
  }

  std::unique_ptr<zk_session> session(new zk_session(std::move(options)));
  FERRY_TRY(session->wait_for_first_session(steady_clock::now() + session->options_.connect_timeout));
  FERRY_LOG(info, "coord") << "connected to ZooKeeper at " << session->options_.connect << ", session 0x" << std::hex
                           << session->session_id() << std::dec << ", timeout " << session->negotiated_timeout().count()
                           << " ms";
  session->reconnect_thread_ = std::thread([s = session.get()] { s->reconnect_loop(); });
  return session;
}

result<void> zk_session::wait_for_first_session(steady_clock::time_point deadline) {
  if (options_.resume && options_.resume->session_id != 0) {
    auto resumed = open_connection(&*options_.resume);
    if (resumed) {
      std::unique_lock lock(mutex_);
      current_ = resumed.value();
      const auto& conn = resumed.value();
      changed_.wait_until(lock, deadline, [&] {
        return conn->state == ZOO_CONNECTED_STATE || conn->state == ZOO_EXPIRED_SESSION_STATE ||
               conn->state == ZOO_AUTH_FAILED_STATE;
      });
      if (conn->state == ZOO_CONNECTED_STATE && zoo_client_id(conn->handle)->client_id == options_.resume->session_id) {
        resumed_ = true;
        FERRY_LOG(info, "coord") << "took over the earlier ZooKeeper session 0x" << std::hex
                                 << options_.resume->session_id << std::dec;
        return success();
      }
      FERRY_LOG(info, "coord") << "the earlier ZooKeeper session 0x" << std::hex << options_.resume->session_id
                               << std::dec << " has expired; opening a new one";
      expired_ = false;
      auto dead = std::move(current_);
      lock.unlock();
      dead.reset();
    }
  }
  std::shared_ptr<connection> conn;
  for (;;) {
    auto opened = open_connection();
    if (opened) {
      conn = std::move(opened).value();
      break;
    }
    // Host names may not resolve yet, e.g. a ZooKeeper service that is still being created: retry until the
    // deadline.
    if (steady_clock::now() >= deadline) {
      FERRY_LOG(error, "coord") << "cannot use zookeeper.connect='" << options_.connect
                                << "': its host names do not resolve or it is malformed (" << opened.error().message()
                                << ")";
      return errc::timeout;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  std::unique_lock lock(mutex_);
  current_ = conn;
  if (!changed_.wait_until(lock, deadline, [&] { return conn->state == ZOO_CONNECTED_STATE; })) {
    lock.unlock();
    FERRY_LOG(error, "coord") << "could not connect to ZooKeeper at zookeeper.connect='" << options_.connect
                              << "' within " << options_.connect_timeout.count() << " ms";
    return errc::timeout;
  }
  return success();
}

result<std::shared_ptr<zk_session::connection>> zk_session::open_connection(const credentials* resume) {
  auto conn = std::make_shared<connection>(this);
  clientid_t id{};
  if (resume != nullptr) {
    id.client_id = resume->session_id;
    std::copy(resume->password.begin(), resume->password.end(), std::begin(id.passwd));
  }
  conn->handle = zookeeper_init2(options_.connect.c_str(), &connection::on_session_event,
                                 static_cast<int>(options_.session_timeout.count()), resume != nullptr ? &id : nullptr,
                                 conn.get(), ZOO_NO_LOG_CLIENTENV, &log_from_zookeeper);
  if (conn->handle == nullptr) return std::error_code(errno, std::generic_category());
  const auto& security = options_.security;
  if (!security.digest_username.empty()) {
    // Queued before the first request; the client sends it again after every reconnect of this handle.
    const std::string login = security.digest_username + ":" + security.digest_password;
    const int rc =
        zoo_add_auth(conn->handle, "digest", login.data(), static_cast<int>(login.size()), &on_auth_answer, nullptr);
    if (rc != ZOK) return from_zk_code(rc);
  }
  return conn;
}

void zk_session::close() {
  std::shared_ptr<connection> last;
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
    changed_.notify_all();
  }
  if (reconnect_thread_.joinable()) reconnect_thread_.join();
  {
    std::lock_guard lock(mutex_);
    last = std::move(current_);
  }
  // Outside the lock: closing joins the client's threads, which take mutex_ in state_changed.
  last.reset();
}

void zk_session::state_changed(connection* conn, int state) {
  std::lock_guard lock(mutex_);
  conn->state = state;
  if (conn == current_.get() && (state == ZOO_EXPIRED_SESSION_STATE || state == ZOO_AUTH_FAILED_STATE)) {
    expired_ = true;
  }
  changed_.notify_all();
}

void zk_session::reconnect_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return closing_ || expired_; });
    if (closing_) return;
    expired_ = false;
    auto dead = std::move(current_);
    lock.unlock();
    FERRY_LOG(warn, "coord") << "ZooKeeper session expired; opening a new one";
    // Calls still running on the dead handle keep it alive; it closes when the last of them returns.
    dead.reset();
    auto fresh = open_connection();
    lock.lock();
    if (!fresh) {
      FERRY_LOG(warn, "coord") << "cannot open a ZooKeeper session for '" << options_.connect
                               << "': " << fresh.error().message();
      expired_ = true;  // try again after a pause: only a connect string that stopped resolving gets here
      changed_.wait_for(lock, std::chrono::seconds(1), [&] { return closing_; });
      continue;
    }
    current_ = fresh.value();
    changed_.wait(lock, [&] { return closing_ || expired_ || current_->state == ZOO_CONNECTED_STATE; });
    if (closing_) return;
    if (expired_) continue;
    lock.unlock();
    FERRY_LOG(info, "coord") << "new ZooKeeper session 0x" << std::hex << session_id() << std::dec;
    if (options_.on_new_session) options_.on_new_session();
    lock.lock();
  }
}

result<std::shared_ptr<zk_session::connection>> zk_session::acquire(steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (closing_) return errc::closed;
    if (current_ && current_->state == ZOO_CONNECTED_STATE) return current_;
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      if (closing_) return errc::closed;
      if (current_ && current_->state == ZOO_CONNECTED_STATE) return current_;
      return errc::connection_loss;
    }
  }
}

template <typename Attempt>
result<void> zk_session::retrying(Attempt&& attempt) {
  const auto deadline = steady_clock::now() + options_.operation_timeout;
  for (;;) {
    FERRY_TRY(auto conn, acquire(deadline));
    const int rc = attempt(*conn);
    if (rc == ZOK) return success();
    if (!is_retriable(rc)) return from_zk_code(rc);
    std::unique_lock lock(mutex_);
    // The state change that goes with the failure may not have been reported yet; pause instead of spinning.
    changed_.wait_for(lock, std::chrono::milliseconds(50), [&] { return closing_; });
    if (closing_) return errc::closed;
    if (steady_clock::now() >= deadline) {
      FERRY_LOG(warn, "coord") << "ZooKeeper call failed: " << describe(rc);
      return from_zk_code(rc);
    }
  }
}

result<node_data> zk_session::get(const std::string& path, watcher watch) {
  node_data out;
  FERRY_TRY(retrying([&](connection& c) {
    Stat stat{};
    std::string buffer(4096, '\0');
    int length = static_cast<int>(buffer.size());
    int rc;
    if (watch) {
      void* context = c.add_watch(watch);
      rc = zoo_wget(c.handle, path.c_str(), &connection::on_node_event, context, buffer.data(), &length, &stat);
      if (rc != ZOK) c.take_watch(context);
    } else {
      rc = zoo_get(c.handle, path.c_str(), 0, buffer.data(), &length, &stat);
    }
    // Larger than the first buffer: read again at full size (the watch, if any, is already set).
    while (rc == ZOK && stat.dataLength > length) {
      buffer.assign(static_cast<std::size_t>(stat.dataLength), '\0');
      length = stat.dataLength;
      rc = zoo_get(c.handle, path.c_str(), 0, buffer.data(), &length, &stat);
    }
    if (rc == ZOK) {
      buffer.resize(static_cast<std::size_t>(std::max(length, 0)));  // -1 for a node without data
      out = node_data{std::move(buffer), to_stat(stat)};
    }
    return rc;
  }));
  return out;
}

result<std::vector<std::string>> zk_session::get_children(const std::string& path, watcher watch) {
  std::vector<std::string> out;
  FERRY_TRY(retrying([&](connection& c) {
    String_vector children{};
    int rc;
    if (watch) {
      void* context = c.add_watch(watch);
      rc = zoo_wget_children(c.handle, path.c_str(), &connection::on_node_event, context, &children);
      if (rc != ZOK) c.take_watch(context);
    } else {
      rc = zoo_get_children(c.handle, path.c_str(), 0, &children);
    }
    if (rc == ZOK) {
      out.assign(children.data, children.data + children.count);
      deallocate_String_vector(&children);
    }
    return rc;
  }));
  return out;
}

result<std::optional<node_stat>> zk_session::exists(const std::string& path, watcher watch) {
  std::optional<node_stat> out;
  FERRY_TRY(retrying([&](connection& c) {
    Stat stat{};
    int rc;
    if (watch) {
      void* context = c.add_watch(watch);
      rc = zoo_wexists(c.handle, path.c_str(), &connection::on_node_event, context, &stat);
      // On ZNONODE the watch stays set, waiting for the node's creation.
      if (rc != ZOK && rc != ZNONODE) c.take_watch(context);
    } else {
      rc = zoo_exists(c.handle, path.c_str(), 0, &stat);
    }
    out = rc == ZOK ? std::optional<node_stat>(to_stat(stat)) : std::nullopt;
    return rc == ZNONODE ? ZOK : rc;
  }));
  return out;
}

result<std::string> zk_session::create(const std::string& path, std::string_view data, create_mode mode,
                                       bool make_parents) {
  if (make_parents) {
    for (auto slash = path.find('/', 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
      auto parent = create(path.substr(0, slash), "", create_mode::persistent, false);
      if (!parent && parent.error() != errc::node_exists) return parent.error();
    }
  }
  std::string created;
  FERRY_TRY(retrying([&](connection& c) {
    std::string buffer(path.size() + 32, '\0');  // room for the 10-digit sequence suffix
    const int rc =
        zoo_create(c.handle, path.c_str(), data.data(), static_cast<int>(data.size()), acl_for(options_.security, path),
                   create_flags(mode), buffer.data(), static_cast<int>(buffer.size()));
    if (rc == ZOK) created = buffer.c_str();
    return rc;
  }));
  return created;
}

result<node_stat> zk_session::set(const std::string& path, std::string_view data, std::int32_t version) {
  node_stat out;
  FERRY_TRY(retrying([&](connection& c) {
    Stat stat{};
    const int rc = zoo_set2(c.handle, path.c_str(), data.data(), static_cast<int>(data.size()), version, &stat);
    if (rc == ZOK) out = to_stat(stat);
    return rc;
  }));
  return out;
}

result<void> zk_session::remove(const std::string& path, std::int32_t version) {
  return retrying([&](connection& c) { return zoo_delete(c.handle, path.c_str(), version); });
}

result<bool> zk_session::lock_down(const std::string& path) {
  bool changed = false;
  FERRY_TRY(retrying([&](connection& c) {
    ACL_vector acl{};
    Stat stat{};
    int rc = zoo_get_acl(c.handle, path.c_str(), &acl, &stat);
    if (rc != ZOK) return rc;
    const bool already = locked(acl, is_sensitive_path(path));
    deallocate_ACL_vector(&acl);
    if (already) return static_cast<int>(ZOK);
    rc = zoo_set_acl(c.handle, path.c_str(), -1, acl_for(options_.security, path));
    changed = rc == ZOK;
    return rc;
  }));
  return changed;
}

result<void> zk_session::multi(std::span<const zk_op> ops, std::size_t* failed_op) {
  if (failed_op != nullptr) *failed_op = ops.size();
  if (ops.empty()) return success();
  return retrying([&](connection& c) {
    std::vector<zoo_op_t> raw(ops.size());
    std::vector<zoo_op_result_t> results(ops.size());
    std::vector<std::string> path_buffers(ops.size());
    std::vector<Stat> stats(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const auto& op = ops[i];
      switch (op.type) {
        case zk_op::kind::create:
          path_buffers[i].assign(op.path.size() + 32, '\0');
          zoo_create_op_init(&raw[i], op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()),
                             acl_for(options_.security, op.path), create_flags(op.mode), path_buffers[i].data(),
                             static_cast<int>(path_buffers[i].size()));
          break;
        case zk_op::kind::set:
          zoo_set_op_init(&raw[i], op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()), op.version,
                          &stats[i]);
          break;
        case zk_op::kind::remove:
          zoo_delete_op_init(&raw[i], op.path.c_str(), op.version);
          break;
        case zk_op::kind::check:
          zoo_check_op_init(&raw[i], op.path.c_str(), op.version);
          break;
      }
    }
    const int rc = zoo_multi(c.handle, static_cast<int>(raw.size()), raw.data(), results.data());
    if (rc != ZOK && failed_op != nullptr && !is_retriable(rc)) {
      // Ops before the failing one report ZOK, the ones after it ZRUNTIMEINCONSISTENCY.
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (results[i].err != ZOK && results[i].err != ZRUNTIMEINCONSISTENCY) {
          *failed_op = i;
          break;
        }
      }
    }
    return rc;
  });
}

bool zk_session::chrooted() const { return !split_chroot(options_.connect).second.empty(); }

bool zk_session::connected() const {
  std::lock_guard lock(mutex_);
  return current_ && current_->state == ZOO_CONNECTED_STATE;
}

zk_session::credentials zk_session::current_credentials() const {
  std::lock_guard lock(mutex_);
  credentials out;
  if (!current_) return out;
  const clientid_t* id = zoo_client_id(current_->handle);
  out.session_id = id->client_id;
  std::copy(std::begin(id->passwd), std::end(id->passwd), out.password.begin());
  return out;
}

std::chrono::milliseconds zk_session::negotiated_timeout() const {
  std::lock_guard lock(mutex_);
  if (!current_) return options_.session_timeout;
  return std::chrono::milliseconds(zoo_recv_timeout(current_->handle));
}

}  // namespace ferry::coord
