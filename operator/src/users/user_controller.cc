#include "users/user_controller.h"

#include <algorithm>
#include <tuple>

#include "base/log.h"
#include "kube/conditions.h"
#include "kube/resource_meta.h"

namespace ferry::users {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr auto cluster_retry = 5s;
constexpr auto secret_retry = 30s;
constexpr std::string_view collection = "/apis/ferry.dev/v1alpha1";
constexpr std::string_view principal_type = "User:";

std::int64_t generation_of(const json& resource) { return resource["metadata"].value("generation", std::int64_t{0}); }

std::string string_at(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

std::string secret_path(const json& resource, const std::string& name) {
  return "/api/v1/namespaces/" + resource["metadata"].value("namespace", std::string{}) + "/secrets/" + name;
}

// The quota entity and credential name of a principal: its name after "User:".
std::string user_of(const std::string& principal) {
  return principal.starts_with(principal_type) ? principal.substr(principal_type.size()) : principal;
}

std::string describe(const std::error_code& error, const user_admin& admin) {
  return admin.detail().empty() ? error.message() : error.message() + ": " + admin.detail();
}

// The ACLs status.acls says the operator made for status.principal.
std::vector<authz::acl_binding> made_acls(const json& status) {
  std::vector<authz::acl_binding> made;
  const auto principal = string_at(status, "principal");
  const auto acls = status.find("acls");
  if (principal.empty() || acls == status.end() || !acls->is_array()) return made;
  for (const auto& entry : *acls) {
    if (auto acl = acl_from_json(entry, principal)) made.push_back(std::move(*acl));
  }
  return made;
}

json acls_json(const std::vector<authz::acl_binding>& acls) {
  auto list = json::array();
  for (const auto& acl : acls) list.push_back(acl_to_json(acl));
  return list;
}

}  // namespace

std::optional<std::string> user_controller::owner_other_than(const json& resource, const std::string& key) const {
  // The User acting for the Kafka user keeps it; otherwise the oldest (creation times have whole seconds, so the
  // key breaks a tie).
  const auto rank = [](const json& user, const std::string& user_key) {
    const bool acting = !string_at(user.value("status", json::object()), "principal").empty();
    return std::tuple(!acting, user["metadata"].value("creationTimestamp", std::string{}), user_key);
  };
  const auto name = resource["metadata"].value("name", std::string{});
  auto best = rank(resource, key);
  for (const auto& object : users_->list()) {
    const auto& meta = (*object)["metadata"];
    // A User being deleted still owns what it made until its finalizer has removed it.
    const bool deleting_and_done =
        meta.contains("deletionTimestamp") && string_at(object->value("status", json::object()), "principal").empty();
    if (meta.value("name", std::string{}) != name || deleting_and_done) continue;
    best = std::min(best, rank(*object, kube::informer::key_of(*object)));
  }
  if (std::get<2>(best) == key) return std::nullopt;
  return std::get<2>(best);
}

std::vector<std::string> user_controller::keys_of_same_user(const std::string& key) const {
  const auto name = key.substr(key.find('/') + 1);
  std::vector<std::string> keys;
  for (const auto& object : users_->list()) {
    if ((*object)["metadata"].value("name", std::string{}) == name) keys.push_back(kube::informer::key_of(*object));
  }
  return keys;
}

kube::reconcile_result user_controller::conclude(const json& resource, json status, bool ready, std::string_view reason,
                                                 const std::string& message) {
  kube::set_condition(
      status, kube::make_condition(resource.value("status", json::object()).value("conditions", json::array()), "Ready",
                                   ready, reason, message, generation_of(resource)));
  const bool written =
      kube::write_status(api_, kube::resource_path(resource, collection, "users"), resource, status, "users");
  return {.failed = !written, .state = kube::resource_state{.ready = ready, .reason = std::string(reason)}};
}

std::variant<json, std::string> user_controller::write_secret(
    const json& resource, const std::function<std::variant<json, std::string>(const json* current)>& wanted) {
  const auto name = resource["metadata"].value("name", std::string{});
  const auto path = secret_path(resource, name);
  const auto found = api_.send(kube::api_client::verb::get, path);
  if (!found) return "cannot read Secret " + name + ": " + found.error().message();
  const auto failed = [&name](const char* what, const result<kube::http_response>& answer) {
    return std::string("cannot ") + what + " Secret " + name + ": " +
           (answer ? "HTTP " + std::to_string(answer.value().status) : answer.error().message());
  };
  if (found.value().status == 404) {
    auto secret = wanted(nullptr);
    if (const auto* why = std::get_if<std::string>(&secret)) return *why;
    const auto created =
        api_.send(kube::api_client::verb::post, path.substr(0, path.rfind('/')), std::get<json>(secret).dump());
    if (!created || created.value().status != 201) return failed("create", created);
    events_.record(resource, kube::event_recorder::type::normal, "SecretCreated", "Reconcile",
                   "wrote Secret " + name + " with the user's credentials");
    return json::parse(created.value().body, nullptr, false);
  }
  if (found.value().status != 200) return failed("read", found);
  const auto secret = json::parse(found.value().body, nullptr, false);
  if (!secret.is_object() || !owned_by(secret, resource))
    return "Secret " + name + " exists and is not this User's: delete or rename it";
  auto replaced = wanted(&secret);
  if (const auto* why = std::get_if<std::string>(&replaced)) return *why;
  auto& replacement = std::get<json>(replaced);
  if (matches(secret, replacement)) return secret;
  replacement["metadata"]["resourceVersion"] = secret["metadata"].value("resourceVersion", std::string{});
  const auto updated = api_.send(kube::api_client::verb::put, path, replacement.dump());
  if (!updated || updated.value().status != 200) return failed("update", updated);
  return json::parse(updated.value().body, nullptr, false);
}

std::variant<user_controller::password_source, std::string> user_controller::password_of(const json& resource,
                                                                                         const user_spec& spec) {
  std::optional<std::string> kept;  // a password the user keeps in a Secret of their own
  std::string kept_version;
  if (spec.password) {
    const auto& ref = *spec.password;
    const auto found = api_.send(kube::api_client::verb::get, secret_path(resource, ref.name));
    if (!found) return "cannot read Secret " + ref.name + ": " + found.error().message();
    if (found.value().status != 200)
      return "cannot read Secret " + ref.name + " (spec.authentication.password): HTTP " +
             std::to_string(found.value().status);
    const auto secret = json::parse(found.value().body, nullptr, false);
    kept = secret.is_object() ? secret_value(secret, ref.key) : std::nullopt;
    if (!kept || kept->empty()) return "Secret " + ref.name + " has no key " + ref.key;
    kept_version = secret["metadata"].value("resourceVersion", std::string{}) + "/";
  }
  // The password stays what the Secret holds; one that was removed, or no Secret, gets a new one.
  auto written = write_secret(resource, [&](const json* current) -> std::variant<json, std::string> {
    auto password = kept ? kept : current != nullptr ? secret_value(*current, "password") : std::nullopt;
    if (!password || password->empty()) password = generate_password();
    const auto cluster_ca = options_.cluster_ca ? options_.cluster_ca->current() : nullptr;
    return user_secret(resource, options_.cluster_name, *password, options_.connection,
                       cluster_ca ? cluster_ca->trust_bundle : std::string{});
  });
  if (const auto* why = std::get_if<std::string>(&written)) return *why;
  const auto& stored = std::get<json>(written);
  const auto password = stored.is_object() ? secret_value(stored, "password") : std::nullopt;
  if (!password) return std::string("the API server answered without the Secret's password");
  return password_source{*password, kept_version + stored["metadata"].value("resourceVersion", std::string{})};
}

std::optional<std::string> user_controller::write_certificate(const json& resource, const user_spec& spec) {
  const auto clients_ca = options_.clients_ca ? options_.clients_ca->current() : nullptr;
  if (!clients_ca)
    return options_.clients_ca ? "spec.authentication.type tls: the clients CA (" + options_.clients_ca->where() +
                                     ") cannot be used yet; the operator's log says why"
                               : "spec.authentication.type tls: the operator keeps no clients CA to issue "
                                 "certificates from (start it with --clients-ca-secret)";
  const auto& ca = clients_ca->signing;
  const auto cluster_ca = options_.cluster_ca ? options_.cluster_ca->current() : nullptr;
  const auto& trusted = cluster_ca ? cluster_ca->trust_bundle : clients_ca->trust_bundle;
  const auto now = std::chrono::system_clock::now();
  auto written = write_secret(resource, [&](const json* current) -> std::variant<json, std::string> {
    if (current != nullptr) {
      const auto certificate = secret_value(*current, "tls.crt");
      const auto key = secret_value(*current, "tls.key");
      if (certificate && key && ca.current(*certificate, spec.name, options_.renew_before, now))
        return user_tls_secret(resource, options_.cluster_name, *certificate, *key, trusted);
    }
    auto issued = ca.issue("/CN=" + spec.name, options_.certificate_validity);
    if (!issued) return "cannot issue a certificate for " + spec.name + ": " + issued.error();
    events_.record(resource, kube::event_recorder::type::normal, "CertificateIssued", "Reconcile",
                   "issued a certificate for CN=" + spec.name + " from the clients CA");
    return user_tls_secret(resource, options_.cluster_name, issued.value().certificate, issued.value().key, trusted);
  });
  if (const auto* why = std::get_if<std::string>(&written)) return *why;
  return std::nullopt;
}

result<void> user_controller::remove_made(user_admin& admin, const json& status, bool credential) {
  const auto principal = string_at(status, "principal");
  if (principal.empty()) return success();  // it never acted for this User (invalid, or another owned the name)
  FERRY_TRY(admin.delete_acls(made_acls(status)));
  FERRY_TRY(auto quotas, admin.quotas_of(user_of(principal)));
  FERRY_TRY(admin.alter_quotas(user_of(principal), plan_quotas({}, quotas)));
  if (credential && status.contains("passwordVersion")) {
    FERRY_TRY(admin.delete_credential(user_of(principal)));
  }
  return success();
}

kube::reconcile_result user_controller::give_up(const json& resource, const std::string& path) {
  events_.record(resource, kube::event_recorder::type::warning, "UserLeftBehind", "Delete",
                 "the Ferry cluster has not let the operator remove the user for " +
                     std::to_string(options_.finalizer_timeout.count()) +
                     " s; the finalizer is removed and the user's credential, ACLs and quotas may remain");
  return {.failed = !kube::remove_finalizer(api_, path, resource, user_finalizer)};
}

kube::reconcile_result user_controller::finalize(const json& resource, const std::string& key) {
  if (!kube::has_finalizer(resource, user_finalizer)) return {};
  const auto path = kube::resource_path(resource, collection, "users");
  const auto status = resource.value("status", json::object());
  if (!cluster_.connected() || !cluster_.ready()) {
    if (give_up_.unreachable(key, kube::give_up_clock::clock::now())) return give_up(resource, path);
    return {.requeue_after = cluster_retry};
  }
  auto admin = admin_(cluster_.view());
  if (auto removed = remove_made(*admin, status, true); !removed) {
    // Brokers that stay down, or refuse the operator's login, must not keep a namespace in Terminating either.
    if (give_up_.unreachable(key, kube::give_up_clock::clock::now())) return give_up(resource, path);
    FERRY_LOG(warn, "users") << key << " deleted; cannot remove its user yet: " << describe(removed.error(), *admin);
    return {.failed = true};
  }
  give_up_.reached(key);
  FERRY_LOG(info, "users") << key << " deleted; removed the credential, ACLs and quotas of "
                           << string_at(status, "principal");
  return {.failed = !kube::remove_finalizer(api_, path, resource, user_finalizer)};
}

kube::reconcile_result user_controller::reconcile(const std::string& key) {
  const auto object = users_->get(key);
  if (!object) {
    give_up_.reached(key);
    return {.state = kube::resource_state{.gone = true}};
  }
  const json& resource = *object;
  if (resource["metadata"].contains("deletionTimestamp")) return finalize(resource, key);
  json status = resource.value("status", json::object());
  status["observedGeneration"] = generation_of(resource);
  auto read = read_user_spec(resource);
  if (const auto* why = std::get_if<std::string>(&read)) return conclude(resource, status, false, "InvalidSpec", *why);
  const auto& spec = std::get<user_spec>(read);
  if (const auto owner = owner_other_than(resource, key)) {
    // Whatever it made now belongs to the owner: deleting this User must not remove it.
    for (const auto* made : {"principal", "username", "acls", "passwordVersion", "secret", "unmanagedAcls"})
      status.erase(made);
    return conclude(resource, status, false, "ResourceConflict",
                    "Kafka user " + spec.name + " is managed by User " + *owner + ", which was there first");
  }
  if (std::find(options_.reserved_users.begin(), options_.reserved_users.end(), spec.name) !=
      options_.reserved_users.end())
    return conclude(resource, status, false, "ReservedUser",
                    "Kafka user " + spec.name + " is the operator's own login (--kafka-sasl-username)");
  if (!kube::has_finalizer(resource, user_finalizer) &&
      !kube::add_finalizer(api_, kube::resource_path(resource, collection, "users"), resource, user_finalizer))
    return {.failed = true};
  if (!cluster_.connected() || !cluster_.ready()) {
    auto outcome =
        conclude(resource, status, false, "ClusterUnavailable", "cannot reach the Ferry cluster's ZooKeeper");
    outcome.requeue_after = cluster_retry;
    return outcome;
  }
  auto admin = admin_(cluster_.view());
  const auto unavailable = [&](const std::string& what, const std::error_code& error) {
    auto outcome = conclude(resource, status, false, "KafkaUnavailable", what + ": " + describe(error, *admin));
    outcome.failed = true;
    return outcome;
  };
  const auto principal = spec.principal();

  // A Kafka user that exists already (a credential this User did not store: another application's, a super
  // user's) is taken over only when asked, since its password would go into a Secret of this namespace.
  if (string_at(status, "principal").empty() && spec.auth != authentication::tls &&
      kube::annotation(resource, adopt_annotation) != "true") {
    auto has = admin->has_credential(spec.name);
    if (!has) return unavailable("cannot describe the user's SCRAM credential", has.error());
    if (has.value())
      return conclude(resource, status, false, "UserExists",
                      "Kafka user " + spec.name + " already has a SCRAM credential that this User did not store; " +
                          "annotate the User " + std::string(adopt_annotation) + "=true to take it over");
  }

  // The credential, from the Secret's password; stored again when that Secret changed or the credential is gone.
  if (spec.auth == authentication::scram_sha_512) {
    auto source = password_of(resource, spec);
    if (const auto* why = std::get_if<std::string>(&source)) {
      auto outcome = conclude(resource, status, false, "SecretUnavailable", *why);
      outcome.requeue_after = secret_retry;
      return outcome;
    }
    const auto& password = std::get<password_source>(source);
    bool stored = string_at(status, "passwordVersion") == password.version;
    if (stored) {
      auto has = admin->has_credential(spec.name);
      if (!has) return unavailable("cannot describe the user's SCRAM credential", has.error());
      stored = has.value();
    }
    if (!stored) {
      if (auto done = admin->store_credential(spec.name, password.password); !done)
        return unavailable("cannot store the user's SCRAM-SHA-512 credential", done.error());
      events_.record(resource, kube::event_recorder::type::normal, "CredentialStored", "Reconcile",
                     "stored the SCRAM-SHA-512 credential of user " + spec.name + " from Secret " +
                         (spec.password ? spec.password->name : spec.name));
      status["passwordVersion"] = password.version;
    }
    status["secret"] = spec.name;
  } else if (spec.auth == authentication::tls) {
    if (const auto why = write_certificate(resource, spec)) {
      auto outcome = conclude(resource, status, false, "SecretUnavailable", *why);
      outcome.requeue_after = secret_retry;
      return outcome;
    }
    status["secret"] = spec.name;
  }
  if (spec.auth != authentication::scram_sha_512 && status.contains("passwordVersion")) {
    if (auto done = admin->delete_credential(spec.name); !done)
      return unavailable("cannot delete the user's SCRAM credential", done.error());
    status.erase("passwordVersion");
  }
  if (spec.auth == authentication::none) status.erase("secret");

  // Another principal than before (the authentication type changed): what was made for the old one goes.
  if (const auto before = string_at(status, "principal"); !before.empty() && before != principal) {
    if (auto removed = remove_made(*admin, status, false); !removed)
      return unavailable("cannot remove the ACLs and quotas of " + before, removed.error());
    status.erase("acls");
  }
  status["principal"] = principal;
  status["username"] = spec.name;

  auto present = admin->acls_of(principal);
  if (!present) return unavailable("cannot describe the ACLs of " + principal, present.error());
  const auto acls = plan_acls(spec.acls, present.value(), made_acls(status), spec.remove_unmanaged_acls);
  if (auto removed = admin->delete_acls(acls.remove); !removed)
    return unavailable("cannot delete ACLs of " + principal, removed.error());
  if (auto created = admin->create_acls(acls.create); !created) {
    // Some of the batch may exist now: they count as made, so that they go when the spec drops them.
    auto made = made_acls(status);
    std::erase_if(made, [&](const auto& acl) {
      return std::find(acls.remove.begin(), acls.remove.end(), acl) != acls.remove.end();
    });
    made.insert(made.end(), acls.create.begin(), acls.create.end());
    status["acls"] = acls_json(made);
    return unavailable("cannot create ACLs of " + principal, created.error());
  }
  status["acls"] = acls_json(spec.acls);
  status["unmanagedAcls"] = acls.unmanaged.size();
  if (!acls.create.empty() || !acls.remove.empty()) {
    FERRY_LOG(info, "users") << key << ": created " << acls.create.size() << " and deleted " << acls.remove.size()
                             << " ACLs of " << principal;
    events_.record(resource, kube::event_recorder::type::normal, "AclsChanged", "Reconcile",
                   "created " + std::to_string(acls.create.size()) + " and deleted " +
                       std::to_string(acls.remove.size()) + " ACLs of " + principal);
  }

  auto quotas = admin->quotas_of(user_of(principal));
  if (!quotas) return unavailable("cannot describe the quotas of " + principal, quotas.error());
  const auto quota_changes = plan_quotas(spec.quotas, quotas.value());
  if (auto altered = admin->alter_quotas(user_of(principal), quota_changes); !altered)
    return unavailable("cannot set the quotas of " + principal, altered.error());

  std::string message = principal + " has " + std::to_string(spec.acls.size()) + " ACLs and " +
                        std::to_string(spec.quotas.size()) + " quotas";
  if (!acls.unmanaged.empty())
    message += "; " + std::to_string(acls.unmanaged.size()) +
               " more ACLs of it were not made by the operator and stay (removeUnmanagedAcls: true deletes them)";
  auto outcome = conclude(resource, status, true, "UserReady", message);
  outcome.requeue_after = options_.resync;
  return outcome;
}

}  // namespace ferry::users
