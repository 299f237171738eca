#include "security/tls_context_source.h"

#include <openssl/evp.h>

#include "base/log.h"

namespace ferry::security {
namespace {

// Contents, not modification times: a Kubernetes Secret update swaps a symlink and may keep the files' mtimes.
std::string fingerprint(const tls_material& material) {
  EVP_MD_CTX* digest = EVP_MD_CTX_new();
  std::string out(EVP_MAX_MD_SIZE, '\0');
  unsigned int length = 0;
  bool ok = digest != nullptr && EVP_DigestInit_ex(digest, EVP_sha256(), nullptr) == 1;
  for (const std::string* part : {&material.key, &material.chain, &material.truststore}) {
    const std::uint64_t size = part->size();  // so that moving text from one part to the next changes the digest
    ok = ok && EVP_DigestUpdate(digest, &size, sizeof size) == 1 &&
         EVP_DigestUpdate(digest, part->data(), part->size()) == 1;
  }
  ok = ok && EVP_DigestFinal_ex(digest, reinterpret_cast<unsigned char*>(out.data()), &length) == 1;
  EVP_MD_CTX_free(digest);
  // Without a digest (out of memory) every check looks like a change: a needless rebuild, never a missed one.
  out.resize(ok ? length : 0);
  return out;
}

}  // namespace

tls_context_source::tls_context_source(config::tls_settings settings, std::string setting_prefix,
                                       std::string fingerprint, std::shared_ptr<boost::asio::ssl::context> context)
    : setting_prefix_(std::move(setting_prefix)),
      settings_(std::move(settings)),
      wanted_(settings_),
      fingerprint_(std::move(fingerprint)),
      context_(std::move(context)) {}

tls_result<std::unique_ptr<tls_context_source>> tls_context_source::create(const config::tls_settings& settings,
                                                                           std::string setting_prefix) {
  FERRY_TRY(auto material, read_tls_material(settings, setting_prefix));
  FERRY_TRY(auto context, make_server_context(settings, material, setting_prefix));
  return std::unique_ptr<tls_context_source>(
      new tls_context_source(settings, std::move(setting_prefix), fingerprint(material), std::move(context)));
}

std::shared_ptr<boost::asio::ssl::context> tls_context_source::current() const {
  const std::lock_guard lock(context_mutex_);
  return context_;
}

config::tls_settings tls_context_source::settings() const {
  const std::lock_guard lock(context_mutex_);
  return settings_;
}

std::optional<std::chrono::system_clock::time_point> tls_context_source::certificate_not_after() const {
  return security::certificate_not_after(*current());
}

bool tls_context_source::check_files() {
  const std::lock_guard lock(renew_mutex_);
  if (wanted_ != settings_) return take_wanted().has_value();  // files replace() named that could not be used yet
  auto material = read_tls_material(settings_, setting_prefix_);
  if (!material) {
    refuse(material.error());
    return false;
  }
  const std::string print = fingerprint(material.value());
  if (print == fingerprint_ || print == refused_) return false;
  if (auto installed = install(settings_, material.value()); !installed) {
    refuse(installed.error());
    refused_ = print;
    return false;
  }
  FERRY_LOG(info, "security") << setting_prefix_ << "ssl: the key, certificates or truststore changed on disk; new "
                              << "connections use them";
  return true;
}

tls_result<void> tls_context_source::replace(const config::tls_settings& settings) {
  const std::lock_guard lock(renew_mutex_);
  if (settings == settings_) {
    wanted_ = settings;
    return boost::outcome_v2::success();
  }
  wanted_ = settings;
  return take_wanted();
}

tls_result<void> tls_context_source::take_wanted() {
  auto material = read_tls_material(wanted_, setting_prefix_);
  auto installed = material ? install(wanted_, material.value()) : tls_result<void>(material.error());
  if (!installed) {
    refuse(installed.error());
    return installed;
  }
  FERRY_LOG(info, "security") << setting_prefix_ << "ssl: new settings in use for new connections";
  return installed;
}

tls_result<void> tls_context_source::install(const config::tls_settings& settings, const tls_material& material) {
  FERRY_TRY(auto context, make_server_context(settings, material, setting_prefix_));
  fingerprint_ = fingerprint(material);
  refused_.clear();
  {
    const std::lock_guard lock(context_mutex_);
    settings_ = settings;
    context_ = std::move(context);
  }
  reloads_.fetch_add(1, std::memory_order_relaxed);
  return boost::outcome_v2::success();
}

void tls_context_source::refuse(const std::string& message) {
  // A broken file stays broken until someone fixes it: one line and one count for each thing refused.
  if (message == refused_) return;
  refused_ = message;
  refused_reloads_.fetch_add(1, std::memory_order_relaxed);
  FERRY_LOG(error, "security") << "TLS files refused, the ones in use stay: " << message;
}

}  // namespace ferry::security
