// ferry-broker: a Kafka-compatible broker. See README.md for configuration.
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "app/broker_app.h"
#include "base/log.h"

namespace {

constexpr const char* usage =
    "usage: ferry-broker --config FILE [--config FILE]... [--override key=value]...\n"
    "\n"
    "FILE is YAML, a mapping of Kafka broker settings (broker.id, listeners, log.dirs, zookeeper.connect, ...);\n"
    "a later file wins over an earlier one. Environment variables FERRY_CONFIG_<KEY> win over the files\n"
    "(FERRY_CONFIG_BROKER_ID=2 sets broker.id: '_' stands for '.', '__' for '-', '___' for '_'), and each\n"
    "--override wins over both.\n";

// Every segment holds a descriptor and every client connection one: the soft limit (often 1024) is raised to
// the hard one, as Kafka's start scripts expect operators to do by hand.
void raise_open_file_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t before = limit.rlim_cur;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) limit.rlim_cur = before;
  }
  FERRY_LOG(info, "app") << "open-file limit " << limit.rlim_cur
                         << (limit.rlim_cur != before ? " (raised from " + std::to_string(before) + ")"
                                                      : std::string());
}

}  // namespace

int main(int argc, char** argv) {
  ferry::config::config_sources sources;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << usage;
      return 0;
    }
    if ((arg == "--config" || arg == "--override") && i + 1 < argc) {
      (arg == "--config" ? sources.files : sources.overrides).emplace_back(argv[++i]);
      continue;
    }
    std::cerr << "ferry-broker: unexpected argument '" << arg << "'\n" << usage;
    return 2;
  }

  ferry::config::broker_config config;
  try {
    for (char** entry = environ; *entry != nullptr; ++entry) sources.environment.emplace_back(*entry);
    config = ferry::config::load_broker_config(sources);
  } catch (const ferry::config::config_exception& e) {
    std::cerr << "ferry-broker: bad configuration: " << e.what() << "\n";
    return 2;
  }
  ferry::log::level level{};
  ferry::log::parse_level(config.log_level, level);
  ferry::log::set_level(level);
  ferry::log::format format{};
  ferry::log::parse_format(config.log_format, format);  // checked when the configuration was loaded
  ferry::log::set_format(format);

  // Signals are taken by a dedicated thread, so shutdown runs as ordinary code, not in a handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  raise_open_file_limit();
  ferry::app::broker_app broker(std::move(config));
  try {
    broker.start();
  } catch (const std::exception& e) {
    FERRY_LOG(error, "app") << "startup failed: " << e.what();
    return 1;
  }
  std::thread signal_thread([&broker, signals] {
    int received = 0;
    sigwait(&signals, &received);
    FERRY_LOG(info, "app") << "received " << (received == SIGTERM ? "SIGTERM" : "SIGINT") << ", stopping";
    broker.stop();
  });
  signal_thread.detach();
  broker.run();
  return 0;
}
