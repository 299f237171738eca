#include "app/listener_security.h"

#include <cstdlib>
#include <stdexcept>

#include "base/log.h"
#include "config/dynamic_broker_config.h"
#include "config/listener_security.h"
#include "security/password_file.h"
#include "security/sasl_client.h"
#include "security/sasl_session.h"
#include "security/tls_context.h"

namespace ferry::app {
namespace {

// Password checks (PLAIN's PBKDF2) get a thread of their own and a short queue: a storm of logins is refused
// quickly rather than queued, and never takes a network thread.
constexpr std::size_t password_check_threads = 1;
constexpr std::size_t password_checks_waiting = 64;

// The inter-broker password: the file named by inter.broker.sasl.password.file, else the environment.
std::string read_password(const config::inter_broker_sasl& login) {
  if (!login.password_file.empty()) {
    std::string password;
    const auto read = security::read_password_file(login.password_file, "inter.broker.sasl.password.file", password);
    if (!read) throw std::runtime_error(read.error());
    return password;
  }
  // NOLINTNEXTLINE(concurrency-mt-unsafe): read at startup; nothing changes the environment
  if (const char* env = std::getenv("FERRY_INTER_BROKER_SASL_PASSWORD"); env != nullptr && *env != '\0') return env;
  throw std::runtime_error(
      "the inter-broker listener uses SASL: set 'inter.broker.sasl.password.file' to a file holding the password of "
      "inter.broker.sasl.username, or FERRY_INTER_BROKER_SASL_PASSWORD");
}

}  // namespace

listener_security::listener_security(const config::listeners_config& listeners, std::int32_t max_request_bytes,
                                     const security::credential_source& users, const clock& clock,
                                     prometheus::Registry& registry)
    : users_(users),
      clock_(clock),
      password_checks_(password_check_threads, password_checks_waiting),
      auth_metrics_(registry),
      handshake_failures_(prometheus::BuildCounter()
                              .Name("ferry_tls_handshake_failures_total")
                              .Help("TLS handshakes that failed (an untrusted certificate, a plaintext client, no "
                                    "common protocol), by listener")
                              .Register(registry)),
      certificate_not_after_(prometheus::BuildGauge()
                                 .Name("ferry_tls_certificate_expiry_timestamp_seconds")
                                 .Help("When the certificate a TLS listener serves expires (Unix seconds)")
                                 .Register(registry)),
      reloads_(prometheus::BuildCounter()
                   .Name("ferry_tls_certificate_reloads_total")
                   .Help("Changed key and certificate files taken for new connections (result=success) or refused "
                         "(result=refused: the old ones stay in use), by listener")
                   .Register(registry)) {
  for (const auto& l : listeners.listeners) {
    if (config::uses_tls(l.protocol)) {
      const auto prefix = config::listener_setting_prefix(l.name);
      auto contexts = security::tls_context_source::create(l.tls, prefix);
      if (!contexts) throw std::runtime_error(contexts.error());
      auto principals = security::principal_mapper::parse(l.tls.principal_mapping_rules, prefix);
      if (!principals) throw std::runtime_error(principals.error());
      tls_listener t{std::move(contexts.value()), std::move(principals.value())};
      t.handshake_failures = &handshake_failures_.Add({{"listener", l.name}});
      t.not_after = &certificate_not_after_.Add({{"listener", l.name}});
      t.reloads = &reloads_.Add({{"listener", l.name}, {"result", "success"}});
      t.refused_reloads = &reloads_.Add({{"listener", l.name}, {"result", "refused"}});
      t.listener = l;
      tls_.emplace(l.name, std::move(t));
    }
    if (config::uses_sasl(l.protocol)) {
      auto settings = security::sasl_settings_of(
          l, listeners, max_request_bytes,
          [this](std::string_view mechanism) -> std::unique_ptr<security::sasl_server_exchange> {
            if (mechanism == "PLAIN") return security::make_plain_exchange(users_, password_checks_);
            if (const auto m = security::scram_mechanism_named(mechanism))
              return security::make_scram_exchange(*m, users_);
            return nullptr;
          });
      sessions_.emplace(l.name, security::make_sasl_session_factory(std::move(settings), clock_, auth_metrics_));
    }
  }
  reload_changed_files();  // the expiry gauges
  read_inter_broker_login(listeners);
}

void listener_security::read_inter_broker_login(const config::listeners_config& listeners) {
  const auto& inter = listeners.inter_broker_listener();
  if (config::uses_tls(inter.protocol)) {
    auto client = security::make_client_context(inter.tls, config::listener_setting_prefix(inter.name));
    if (!client) throw std::runtime_error(client.error());
    peer_tls_ = std::move(client.value());
    inter_broker_tls_ = &tls_.at(inter.name);
    peer_tls_reloads_ = inter_broker_tls_->contexts->reloads();
    peer_.tls = [this] {
      const std::lock_guard lock(peer_tls_mutex_);
      return peer_tls_;
    };
    peer_.verify_host = inter.tls.verify_peer_host;
  }
  if (!config::uses_sasl(inter.protocol)) return;
  inter_broker_user_ = listeners.inter_broker_login.username;
  inter_broker_mechanism_ = listeners.inter_broker_login.mechanism;
  inter_broker_password_ = read_password(listeners.inter_broker_login);
  auto factory =
      security::make_sasl_client_factory(inter_broker_mechanism_, inter_broker_user_, inter_broker_password_);
  if (!factory) throw std::runtime_error("sasl.mechanism.inter.broker.protocol: " + factory.error().message());
  peer_.sasl_mechanism = inter_broker_mechanism_;
  peer_.sasl_exchange = std::move(factory.value());
}

net::connection_security listener_security::for_listener(const config::listener_config& l) {
  net::connection_security out;
  if (const auto t = tls_.find(l.name); t != tls_.end()) {
    auto* listener = &t->second;
    out.tls_context = [listener] { return listener->contexts->current(); };
    out.tls_principal = [listener](SSL* handshake) { return security::tls_principal(listener->principals, handshake); };
    out.on_tls_failure = [listener](const std::string& /*reason*/) { listener->handshake_failures->Increment(); };
  }
  if (const auto s = sessions_.find(l.name); s != sessions_.end()) out.sessions = s->second;
  return out;
}

void listener_security::reload_changed_files() {
  for (auto& [name, t] : tls_) {
    t.contexts->check_files();
    if (&t == inter_broker_tls_) follow_inter_broker_files();
    const auto reloads = t.contexts->reloads();
    const auto refused = t.contexts->refused_reloads();
    t.reloads->Increment(static_cast<double>(reloads - t.counted_reloads));
    t.refused_reloads->Increment(static_cast<double>(refused - t.counted_refused));
    t.counted_reloads = reloads;
    t.counted_refused = refused;
    if (const auto not_after = t.contexts->certificate_not_after())
      t.not_after->Set(
          static_cast<double>(std::chrono::duration_cast<std::chrono::seconds>(not_after->time_since_epoch()).count()));
  }
}

void listener_security::follow_inter_broker_files() {
  const std::lock_guard lock(peer_tls_mutex_);
  if (inter_broker_tls_ == nullptr) return;
  const auto reloads = inter_broker_tls_->contexts->reloads();
  if (reloads == peer_tls_reloads_) return;
  // The listener took other files (AlterConfigs, or changed on disk): the broker's own connections to other
  // brokers present that key and trust those CAs too, from their next connection on.
  const auto& name = inter_broker_tls_->listener.name;
  auto client =
      security::make_client_context(inter_broker_tls_->contexts->settings(), config::listener_setting_prefix(name));
  if (!client) {
    FERRY_LOG(error, "security") << "the connections to other brokers keep their TLS files: " << client.error();
  } else {
    peer_tls_ = std::move(client.value());
    FERRY_LOG(info, "security") << "connections to other brokers use listener " << name << "'s new TLS files";
  }
  peer_tls_reloads_ = reloads;
}

void listener_security::use_dynamic_tls_files(
    const std::function<std::optional<std::string>(const std::string&)>& dynamic) {
  // A refusal is logged and counted by the source, which tries again with the periodic file checks.
  for (auto& [name, t] : tls_) (void)t.contexts->replace(config::with_dynamic_tls_files(t.listener, dynamic));
  follow_inter_broker_files();
}

}  // namespace ferry::app
