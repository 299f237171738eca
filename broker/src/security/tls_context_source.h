#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/ssl/context.hpp>

#include "config/listeners.h"
#include "security/tls_context.h"

namespace ferry::security {

// One TLS listener's server context for new connections, renewed without a restart when its key, chain or
// truststore change on disk (a Kubernetes Secret's mounted files, swapped through a symlink) or when
// AlterConfigs changes the listener's ssl.* settings. A connection keeps the context it started with (it holds
// the shared_ptr), so a renewal affects only connections accepted after it. A renewal that cannot be used (a
// broken or half-written file, a key that does not match, an expired certificate) is refused and the context in
// use stays.
//
// Thread-safe: network threads call current() for each accepted connection; the app's timer calls check_files()
// every few seconds; AlterConfigs calls replace().
class tls_context_source {
 public:
  // The first context; the refusal's message (naming the setting) when the settings cannot be used.
  static tls_result<std::unique_ptr<tls_context_source>> create(const config::tls_settings& settings,
                                                                std::string setting_prefix);

  [[nodiscard]] std::shared_ptr<boost::asio::ssl::context> current() const;
  // Re-reads the files the settings name; when their contents changed since the context in use was built, builds
  // a new one and swaps it in, or logs why not (once per distinct content). Returns whether it swapped.
  bool check_files();
  // Builds a context from new settings and swaps it in; the message when refused (the old context stays, and
  // check_files() tries the new settings again until they can be used, logging and counting a refusal once).
  tls_result<void> replace(const config::tls_settings& settings);

  [[nodiscard]] config::tls_settings settings() const;
  // The end of the validity of the certificate in use.
  [[nodiscard]] std::optional<std::chrono::system_clock::time_point> certificate_not_after() const;
  [[nodiscard]] std::uint64_t reloads() const { return reloads_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t refused_reloads() const { return refused_reloads_.load(std::memory_order_relaxed); }

 private:
  tls_context_source(config::tls_settings settings, std::string setting_prefix, std::string fingerprint,
                     std::shared_ptr<boost::asio::ssl::context> context);
  // Swaps in a context built from `settings` and `material`, or returns why not.
  tls_result<void> install(const config::tls_settings& settings, const tls_material& material);
  void refuse(const std::string& message);
  // Builds from wanted_ and swaps it in, or refuses; under renew_mutex_.
  tls_result<void> take_wanted();

  const std::string setting_prefix_;
  // Held while reading files and building, so check_files() and replace() do not interleave.
  std::mutex renew_mutex_;
  config::tls_settings settings_;  // under renew_mutex_ (and context_mutex_ to write)
  config::tls_settings wanted_;    // what replace() asked for last (settings_ once in use); under renew_mutex_
  std::string fingerprint_;        // SHA-256 of the material in use; under renew_mutex_
  std::string refused_;            // what was last refused (a fingerprint or a message); under renew_mutex_

  mutable std::mutex context_mutex_;
  std::shared_ptr<boost::asio::ssl::context> context_;  // under context_mutex_

  std::atomic<std::uint64_t> reloads_{0};
  std::atomic<std::uint64_t> refused_reloads_{0};
};

}  // namespace ferry::security
