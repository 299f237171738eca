#include "coord/testing/zookeeper_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

// The ZooKeeper C client (3.8) leaks a queued session event when one arrives while the handle closes: its
// completion thread exits without draining completions_to_process. Tests close handles mid-reconnect on
// purpose (expire_session, server restarts), so LeakSanitizer would report that leak; it is the library's,
// not ours. The unwinder cannot walk the uninstrumented library's frames, hence one entry per allocator.
// NOLINTNEXTLINE(bugprone-reserved-identifier): the sanitizer runtime's hook has this name.
extern "C" __attribute__((used, visibility("default"))) const char* __lsan_default_suppressions() {
  return "leak:queue_session_event\n"
         "leak:collectWatchers\n"
         "leak:clone_watcher_object\n"
         "leak:create_buffer_oarchive\n";
}

namespace ferry::coord::testing {
namespace {

using namespace std::chrono_literals;

// zookeeper.jar's manifest lists its dependencies; the slf4j binding and log4j make it log to the console,
// which is redirected to the log file.
constexpr const char* class_path =
    "/etc/zookeeper/conf:/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-log4j12.jar:"
    "/usr/share/java/log4j-1.2.jar";

std::uint16_t pick_free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket: " + std::generic_category().message(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free port: " + std::generic_category().message(errno));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Holds `port` against the ZooKeeper servers of other test processes for as long as the returned descriptor stays
// open (a socket bound to an abstract Unix address named after the port: released when closed or when the process
// dies, and no file left behind); -1 if another one holds it. Without it, a test whose server is stopped for a
// restart frees its port, another test's new server picks it, and each test then reaches the other's server (ruok
// answers imok whoever serves it).
int reserve_port(std::uint16_t port) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + std::generic_category().message(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = "ferry-test-zookeeper-port-" + std::to_string(port);
  std::memcpy(addr.sun_path + 1, name.data(), name.size());  // sun_path[0] == 0: the abstract namespace
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), length) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends a four-letter command and returns the whole answer ("" if the server is not there yet).
std::string four_letter_word(std::uint16_t port, const char* command) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return {};
  timeval timeout{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::send(fd, command, std::strlen(command), MSG_NOSIGNAL) == static_cast<ssize_t>(std::strlen(command))) {
    char buffer[256];
    ssize_t n;
    while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

std::string java_binary() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read on the thread that starts the server, before java runs.
  if (const char* home = std::getenv("JAVA_HOME"); home != nullptr && *home != '\0') {
    std::string candidate = std::string(home) + "/bin/java";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "/usr/bin/java";
}

}  // namespace

zookeeper_server::zookeeper_server() {
  std::string pattern = (std::filesystem::temp_directory_path() / "ferry-zk-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp: " + std::generic_category().message(errno));
  }
  dir_ = pattern;
  std::filesystem::create_directories(dir_ / "data");
  // Another process may take the port between picking and binding it; then ZooKeeper exits and we pick again.
  for (int attempt = 1;; ++attempt) {
    if (port_lock_ >= 0) ::close(port_lock_);
    do {
      port_ = pick_free_port();
      port_lock_ = reserve_port(port_);
    } while (port_lock_ < 0);
    try {
      launch();
      wait_until_serving();
      return;
    } catch (const std::exception&) {
      stop();
      if (attempt == 3) {
        std::error_code ignored;
        const std::string tail = log_tail();
        std::filesystem::remove_all(dir_, ignored);
        ::close(port_lock_);
        throw std::runtime_error("ZooKeeper did not start; end of its log:\n" + tail);
      }
    }
  }
}

zookeeper_server::~zookeeper_server() {
  stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
  ::close(port_lock_);
}

std::string zookeeper_server::connect_string() const { return "127.0.0.1:" + std::to_string(port_); }

void zookeeper_server::launch() {
  {
    std::ofstream cfg(dir_ / "zoo.cfg");
    // Short ticks so test sessions can be short; no fsync and small log preallocation for speed.
    cfg << "tickTime=200\n"
        << "maxSessionTimeout=60000\n"
        << "dataDir=" << (dir_ / "data").string() << "\n"
        << "clientPort=" << port_ << "\n"
        << "clientPortAddress=127.0.0.1\n"
        << "admin.enableServer=false\n"
        << "4lw.commands.whitelist=*\n"
        << "forceSync=no\n"
        << "preAllocSize=1024\n";
  }
  // Everything the child needs is prepared before fork: after it only async-signal-safe calls are allowed.
  const std::string java = java_binary();
  const std::vector<std::string> args = {java,
                                         "-Xmx256m",
                                         "-XX:+UseSerialGC",
                                         "-XX:TieredStopAtLevel=1",
                                         "-Dzookeeper.root.logger=INFO,CONSOLE",
                                         "-Dzookeeper.log.dir=" + dir_.string(),
                                         "-Dzookeeper.snapshot.trust.empty=true",
                                         "-cp",
                                         class_path,
                                         "org.apache.zookeeper.server.quorum.QuorumPeerMain",
                                         (dir_ / "zoo.cfg").string()};
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int log_fd = ::open((dir_ / "zookeeper.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (log_fd < 0 || null_fd < 0) throw std::runtime_error("cannot open the ZooKeeper log file");
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid == 0) {
    // Java must not outlive a crashed test run.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    // Inherited sockets (ZooKeeper client connections of the test) would otherwise stay open in java.
    if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
      for (int fd = 3; fd < 4096; ++fd) ::close(fd);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) throw std::runtime_error("fork: " + std::generic_category().message(errno));
  pid_ = pid;
}

void zookeeper_server::wait_until_serving() {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("ZooKeeper exited during startup");
    }
    if (four_letter_word("ruok") == "imok") return;
    std::this_thread::sleep_for(50ms);
  }
  throw std::runtime_error("ZooKeeper did not answer ruok within 60 s");
}

std::string zookeeper_server::four_letter_word(const char* command) const {
  return testing::four_letter_word(port_, command);
}

void zookeeper_server::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

void zookeeper_server::restart() {
  stop();
  try {
    launch();
    wait_until_serving();
  } catch (const std::exception& e) {
    stop();
    throw std::runtime_error(std::string(e.what()) + "; end of the ZooKeeper log:\n" + log_tail());
  }
}

std::string zookeeper_server::log_tail() const {
  std::ifstream in(dir_ / "zookeeper.log");
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  return text.size() > 4000 ? text.substr(text.size() - 4000) : text;
}

namespace {

struct twin_state {
  std::mutex mutex;
  std::condition_variable changed;
  int state = 0;
};

// The twin handle's connection losses are the point of the exercise, not news.
void quiet(const char*) {}

void twin_watcher(zhandle_t*, int type, int state, const char*, void* context) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* twin = static_cast<twin_state*>(context);
  std::lock_guard lock(twin->mutex);
  twin->state = state;
  twin->changed.notify_all();
}

}  // namespace

void expire_session(const std::string& connect, const zk_session::credentials& credentials) {
  clientid_t id{};
  id.client_id = credentials.session_id;
  std::memcpy(id.passwd, credentials.password.data(), sizeof id.passwd);
  // Joining a session makes the server drop the session's other connection, whose client then rejoins at once
  // and drops ours: the close may lose that race. Repeat until joining reports the session expired.
  for (int attempt = 0; attempt < 100; ++attempt) {
    twin_state twin;
    zhandle_t* zh = zookeeper_init2(connect.c_str(), &twin_watcher, 10'000, &id, &twin, ZOO_NO_LOG_CLIENTENV, &quiet);
    if (zh == nullptr) throw std::runtime_error("zookeeper_init failed for " + connect);
    int state;
    {
      std::unique_lock lock(twin.mutex);
      twin.changed.wait_for(
          lock, 10s, [&] { return twin.state == ZOO_CONNECTED_STATE || twin.state == ZOO_EXPIRED_SESSION_STATE; });
      state = twin.state;
    }
    // Closing a joined handle closes the session for every connection that uses it.
    zookeeper_close(zh);
    if (state == ZOO_EXPIRED_SESSION_STATE) return;
  }
  throw std::runtime_error("could not expire the session");
}

}  // namespace ferry::coord::testing
