#include "certs/ca_keeper.h"

#include <map>

#include "base/log.h"
#include "certs/kept_secret.h"

namespace ferry::certs {
namespace {

constexpr const char* next_since_annotation = "ferry.dev/next-ca-since";

ca_material material_of(const kept_secret& secret) {
  // A CA that cert-manager keeps (a Certificate with isCA, kubernetes.io/tls): its certificate and key are tls.crt
  // and tls.key, and ca.crt is its issuer's, which is trusted beside it.
  if (!secret.value("ca.key") && secret.value("tls.key")) {
    auto issuer = secret.value("ca.crt").value_or("");
    auto certificate = secret.value("tls.crt").value_or("");
    auto previous = issuer == certificate ? std::string{} : std::move(issuer);
    return {std::move(certificate), *secret.value("tls.key"), {}, {}, std::nullopt, std::move(previous)};
  }
  ca_material material{secret.value("ca.crt").value_or(""),
                       secret.value("ca.key").value_or(""),
                       secret.value("next.crt").value_or(""),
                       secret.value("next.key").value_or(""),
                       std::nullopt,
                       secret.value("previous.crt").value_or("")};
  const auto since = secret.annotation(next_since_annotation);
  char* end = nullptr;
  const long long seconds = since.empty() ? 0 : std::strtoll(since.c_str(), &end, 10);
  if (!since.empty() && end != nullptr && *end == '\0')
    material.next_since = std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
  return material;
}

std::map<std::string, std::string> data_of(const ca_material& material) {
  std::map<std::string, std::string> data{{"ca.crt", material.certificate}, {"ca.key", material.key}};
  if (!material.next_certificate.empty()) {
    data["next.crt"] = material.next_certificate;
    data["next.key"] = material.next_key;
  }
  if (!material.previous.empty()) data["previous.crt"] = material.previous;
  return data;
}

std::string since_of(const ca_material& material) {
  if (!material.next_since) return {};
  return std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(material.next_since->time_since_epoch()).count());
}

}  // namespace

ca_keeper::ca_keeper(kube::api_client& api, std::string ns, std::string name, std::string subject, ca_timing timing,
                     bool makes)
    : api_(api),
      ns_(std::move(ns)),
      name_(std::move(name)),
      subject_(std::move(subject)),
      timing_(timing),
      makes_(makes) {}

std::shared_ptr<const ca_keeper::state> ca_keeper::current() const {
  std::lock_guard lock(mutex_);
  return current_;
}

std::optional<std::string> ca_keeper::refresh(std::chrono::system_clock::time_point now) {
  auto read = read_secret(api_, ns_, name_);
  if (const auto* why = std::get_if<std::string>(&read)) return *why;
  const auto& secret = std::get<kept_secret>(read);
  ca_material material;
  bool renews = true;
  if (!secret.exists() && !makes_)
    return where() + " does not exist yet; it is made elsewhere (by you, or cert-manager), not by the operator";
  if (!secret.exists()) {
    auto made = certificate_authority::create(subject_, timing_.validity);
    if (!made) return "cannot make a CA: " + made.error();
    material.certificate = made.value().certificate_pem();
    material.key = made.value().key_pem();
  } else {
    material = material_of(secret);
    if (material.certificate.empty() || material.key.empty())
      return where() + ": needs the keys ca.crt and ca.key (PEM), or cert-manager's tls.crt and tls.key";
    renews = secret.operator_made();
  }
  auto step = advance(material, subject_, timing_, renews, now);
  if (!step) return where() + ": " + step.error();
  // A brought CA's Secret is never written: what changes (an issuer that ended leaving the bundle) stays in memory.
  if (renews && (!secret.exists() || !step.value().changes.empty())) {
    const auto& next = step.value().material;
    auto written = write_secret(api_, secret, data_of(next), {{next_since_annotation, since_of(next)}});
    if (const auto* why = std::get_if<std::string>(&written)) return *why;
    if (!secret.exists()) FERRY_LOG(info, "certs") << "made a new CA (" << subject_ << ") in " << where();
    for (const auto& change : step.value().changes) FERRY_LOG(info, "certs") << where() << ": " << change;
  }
  const auto& kept = step.value().material;
  auto signing = certificate_authority::from_pem(kept.certificate, kept.key);
  if (!signing) return where() + ": " + signing.error();
  if (!renews && !warned_ending_ && signing.value().not_after() - timing_.renew_before <= now) {
    warned_ending_ = true;
    FERRY_LOG(warn, "certs")
        << where() << ": the CA, which the operator did not make and does not renew, ends in "
        << std::chrono::duration_cast<std::chrono::hours>(signing.value().not_after() - now).count()
        << " h: replace it";
  }
  if (auto why = publish(kept, now)) return why;
  auto next = std::make_shared<const state>(state{std::move(signing).value(), trust_bundle(kept, now)});
  std::lock_guard lock(mutex_);
  current_ = std::move(next);
  return std::nullopt;
}

std::optional<std::string> ca_keeper::publish(const ca_material& material, std::chrono::system_clock::time_point now) {
  auto read = read_secret(api_, ns_, name_ + "-cert");
  if (const auto* why = std::get_if<std::string>(&read)) return *why;
  auto written = write_secret(api_, std::get<kept_secret>(read), {{"ca.crt", trust_bundle(material, now)}});
  if (const auto* why = std::get_if<std::string>(&written)) return *why;
  return std::nullopt;
}

}  // namespace ferry::certs
