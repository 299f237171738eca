#include "kube/exec_credential.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <map>
#include <system_error>

#include <nlohmann/json.hpp>

#include "base/log.h"
#include "kube/errc.h"
#include "kube/time_format.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace ferry::kube {
namespace {

using json = nlohmann::json;
using steady = std::chrono::steady_clock;

constexpr std::size_t max_stdout = 1U << 20U;  // an ExecCredential is a few KiB
constexpr std::size_t max_stderr = 4096;       // what an error quotes of the plugin's stderr

class file_descriptor {
 public:
  file_descriptor() = default;
  ~file_descriptor() { reset(); }
  file_descriptor(const file_descriptor&) = delete;
  file_descriptor& operator=(const file_descriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct pipe_ends {
  file_descriptor read;
  file_descriptor write;
};

bool make_pipe(pipe_ends& ends) {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) return false;
  ends.read.reset(fds[0]);
  ends.write.reset(fds[1]);
  return true;
}

// The plugin's environment: ours, its kubeconfig `env`, and KUBERNETES_EXEC_INFO.
std::vector<std::string> plugin_environment(const exec_plugin& plugin) {
  std::map<std::string, std::string> vars;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals != std::string_view::npos) vars[std::string(text.substr(0, equals))] = text.substr(equals + 1);
  }
  for (const auto& [name, value] : plugin.env) vars[name] = value;
  const json info = {
      {"apiVersion", plugin.api_version}, {"kind", "ExecCredential"}, {"spec", {{"interactive", false}}}};
  vars["KUBERNETES_EXEC_INFO"] = info.dump();
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) out.push_back(std::string(name).append("=").append(value));
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct finished {
  int status = 0;  // waitpid's
  bool timed_out = false;
  bool too_long = false;
  int unreadable = 0;  // poll's errno
  std::string out;
  std::string err;
};

// Reads both pipes until they close, the deadline passes, stdout grows too long or poll fails (then the plugin
// is killed), and reaps the plugin.
finished collect(pid_t pid, file_descriptor& out, file_descriptor& err, steady::time_point deadline) {
  finished done;
  std::array<char, 8192> chunk{};
  while (out.get() >= 0 || err.get() >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
    if (left.count() <= 0) {
      done.timed_out = true;
      break;
    }
    std::array<pollfd, 2> fds{pollfd{out.get(), POLLIN, 0}, pollfd{err.get(), POLLIN, 0}};
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      done.unreadable = errno;
      break;
    }
    for (std::size_t i = 0; i < fds.size() && ready > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      auto& fd = i == 0 ? out : err;
      auto& text = i == 0 ? done.out : done.err;
      const auto n = ::read(fd.get(), chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fd.reset();
        continue;
      }
      const auto cap = i == 0 ? max_stdout + 1 : max_stderr;  // stdout: one more than allowed, to tell
      text.append(chunk.data(), std::min(static_cast<std::size_t>(n), cap - std::min(text.size(), cap)));
    }
    if (done.out.size() > max_stdout) {
      done.too_long = true;
      break;
    }
  }
  if (done.timed_out || done.too_long || done.unreadable != 0) ::kill(pid, SIGKILL);
  while (::waitpid(pid, &done.status, 0) < 0 && errno == EINTR) {
  }
  return done;
}

std::string quoted_stderr(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  return text.empty() ? std::string{} : ": " + text;
}

std::string string_field(const json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

// The credential in the plugin's answer, or why there is none.
result<exec_credential> parse_answer(const exec_plugin& plugin, const std::string& out, std::string& why) {
  const auto answer = json::parse(out, nullptr, false);
  if (!answer.is_object() || string_field(answer, "kind") != "ExecCredential") {
    why = "did not print an ExecCredential (JSON)";
    return errc::bad_config;
  }
  if (const auto version = string_field(answer, "apiVersion"); version != plugin.api_version) {
    why = "printed apiVersion '" + version + "', the kubeconfig asks for '" + plugin.api_version + "'";
    return errc::bad_config;
  }
  const auto status = answer.find("status");
  if (status == answer.end() || !status->is_object()) {
    why = "printed an ExecCredential without a status";
    return errc::bad_config;
  }
  exec_credential credential{.token = string_field(*status, "token"),
                             .client_cert_pem = string_field(*status, "clientCertificateData"),
                             .client_key_pem = string_field(*status, "clientKeyData")};
  if (credential.client_cert_pem.empty() != credential.client_key_pem.empty() ||
      (credential.token.empty() && credential.client_cert_pem.empty())) {
    why = "gave neither a token nor a client certificate with its key";
    return errc::bad_config;
  }
  if (const auto expires = string_field(*status, "expirationTimestamp"); !expires.empty()) {
    credential.expires = parse_time(expires);
    if (!credential.expires) {
      why = "gave a malformed expirationTimestamp '" + expires + "'";
      return errc::bad_config;
    }
  }
  return credential;
}

}  // namespace

result<exec_credential> run_exec_plugin(const exec_plugin& plugin) {
  const auto fail = [&plugin](errc code, const std::string& why) -> result<exec_credential> {
    FERRY_LOG(error, "kube") << "kubeconfig user '" << plugin.user << "': the exec credential plugin '"
                             << plugin.command << "' " << why;
    return code;
  };
  pipe_ends out;
  pipe_ends err;
  if (!make_pipe(out) || !make_pipe(err))
    return fail(errc::bad_config, std::string("cannot run: ") + std::generic_category().message(errno));
  std::vector<std::string> argv_strings{plugin.command};
  argv_strings.insert(argv_strings.end(), plugin.args.begin(), plugin.args.end());
  auto env_strings = plugin_environment(plugin);
  auto argv = pointers(argv_strings);
  auto envp = pointers(env_strings);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);  // never interactive
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err.write.get(), 2);
  // The plugin starts with no signal blocked and every signal's default action, whatever ours are.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigset_t all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &all);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, plugin.command.c_str(), &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned == ENOENT) {
    return fail(errc::bad_config,
                "was not found" + (plugin.install_hint.empty() ? std::string{} : ". " + plugin.install_hint));
  }
  if (spawned != 0)
    return fail(errc::bad_config, std::string("cannot run: ") + std::generic_category().message(spawned));
  out.write.reset();
  err.write.reset();

  const auto done = collect(pid, out.read, err.read, steady::now() + plugin.timeout);
  if (done.timed_out) {
    return fail(errc::timeout, "gave no answer within " + std::to_string(plugin.timeout.count()) + " ms (killed)" +
                                   quoted_stderr(done.err));
  }
  if (done.too_long) return fail(errc::bad_config, "printed more than 1 MiB (killed)");
  if (done.unreadable != 0) {
    return fail(errc::bad_config,
                std::string("could not be read from (killed): ") + std::generic_category().message(done.unreadable));
  }
  if (WIFSIGNALED(done.status)) {
    return fail(errc::bad_config,
                "was killed by signal " + std::to_string(WTERMSIG(done.status)) + quoted_stderr(done.err));
  }
  if (WEXITSTATUS(done.status) != 0) {
    return fail(errc::bad_config,
                "exited with status " + std::to_string(WEXITSTATUS(done.status)) + quoted_stderr(done.err));
  }
  std::string why;
  auto credential = parse_answer(plugin, done.out, why);
  if (!credential) return fail(errc::bad_config, why);
  return credential;
}

}  // namespace ferry::kube
