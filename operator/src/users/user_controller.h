#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "certs/ca_keeper.h"
#include "coord/cluster_observer.h"
#include "kube/api_client.h"
#include "kube/controller.h"
#include "kube/event_recorder.h"
#include "kube/give_up_clock.h"
#include "kube/informer_group.h"
#include "users/user_admin.h"
#include "users/user_secret.h"
#include "users/user_spec.h"

namespace ferry::users {

inline constexpr std::string_view user_finalizer = "ferry.dev/user";
// "true": take over a Kafka user that has a SCRAM credential the User did not store.
inline constexpr std::string_view adopt_annotation = "ferry.dev/adopt";

struct user_controller_options {
  std::string cluster_name;
  client_connection connection;  // written into each User's Secret
  // Kafka users no User may be (the operator's own login).
  std::vector<std::string> reserved_users;
  // Every User is looked at again this often, which puts back what was changed behind the operator's back.
  std::chrono::milliseconds resync{120'000};
  // How long a deleted User waits for an unreachable cluster before its finalizer is removed anyway.
  std::chrono::seconds finalizer_timeout{300};
  // The CA of TLS Users' certificates (--clients-ca-secret); null: TLS Users are refused.
  std::shared_ptr<const certs::ca_keeper> clients_ca;
  // The CA of the brokers' certificates (--cluster-ca-secret), whose trust bundle each Secret carries as ca.crt;
  // null: SCRAM Users' Secrets have none and TLS Users' carry the clients CA's.
  std::shared_ptr<const certs::ca_keeper> cluster_ca;
  std::chrono::seconds certificate_validity{std::chrono::hours(24 * 365)};
  std::chrono::seconds renew_before{std::chrono::hours(24 * 30)};  // a certificate is issued again this long ahead
};

// Reconciles User resources (users.ferry.dev) with the cluster, one way: the user's SCRAM-SHA-512 credential from
// its Secret's password (generated, or the one spec.authentication.password names), the ACLs of its principal
// (exactly the spec's among those the operator made; others reported), and its quotas (exactly the spec's).
// Deleting the User deletes what the operator made (a finalizer) and its Secret (an owner reference). Two Users of
// one name in different namespaces: the older owns the Kafka user. Runs on the controller's worker threads.
class user_controller {
 public:
  using admin_factory = std::function<std::unique_ptr<user_admin>(std::shared_ptr<const coord::cluster_view>)>;

  user_controller(kube::api_client& api, kube::event_recorder& events, coord::cluster_observer& cluster,
                  admin_factory admin, user_controller_options options)
      : api_(api),
        events_(events),
        cluster_(cluster),
        admin_(std::move(admin)),
        options_(std::move(options)),
        give_up_(options_.finalizer_timeout) {}

  void set_informer(kube::informer_group& users) { users_ = &users; }
  kube::reconcile_result reconcile(const std::string& key);
  // The keys of every User named as the one at `key` (in any namespace): when one changes or goes, which of them
  // owns the Kafka user may change.
  [[nodiscard]] std::vector<std::string> keys_of_same_user(const std::string& key) const;

 private:
  // The User's password and the version of the Secret it came from, or why there is none yet (a Ready message).
  struct password_source {
    std::string password;
    std::string version;
  };
  std::variant<password_source, std::string> password_of(const nlohmann::json& resource, const user_spec& spec);
  // The Secret the operator writes for the User (named after it): `wanted(current)` given the one there now (null:
  // none), written when it differs. The Secret as stored, or why not (another's Secret of that name, the API server
  // refused).
  std::variant<nlohmann::json, std::string> write_secret(
      const nlohmann::json& resource,
      const std::function<std::variant<nlohmann::json, std::string>(const nlohmann::json* current)>& wanted);
  // A TLS User's certificate from the clients CA in its Secret, issued again before it expires or when the CA or
  // the name changed; nullopt when done, else why not.
  std::optional<std::string> write_certificate(const nlohmann::json& resource, const user_spec& spec);
  // Another User of the same name, older, which owns the Kafka user; nullopt when this one does.
  std::optional<std::string> owner_other_than(const nlohmann::json& resource, const std::string& key) const;
  // Removes the finalizer of a deleted User whose cluster has not let it go for finalizer_timeout, with a Warning.
  kube::reconcile_result give_up(const nlohmann::json& resource, const std::string& path);
  // Removes what the operator made for a deleted User, then its finalizer.
  kube::reconcile_result finalize(const nlohmann::json& resource, const std::string& key);
  // What the status says the operator made for the principal `status.principal`, deleted.
  result<void> remove_made(user_admin& admin, const nlohmann::json& status, bool credential);
  kube::reconcile_result conclude(const nlohmann::json& resource, nlohmann::json status, bool ready,
                                  std::string_view reason, const std::string& message);

  kube::api_client& api_;
  kube::event_recorder& events_;
  coord::cluster_observer& cluster_;
  const admin_factory admin_;
  const user_controller_options options_;
  kube::give_up_clock give_up_;
  kube::informer_group* users_ = nullptr;
};

}  // namespace ferry::users
