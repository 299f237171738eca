#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "kafka/kafka_client.h"
#include "users/user_admin.h"

namespace ferry::users {

// user_admin over the Kafka protocol: every request goes to one broker, which writes ZooKeeper for the cluster.
// Blocking, for a controller's worker thread; one instance per reconcile.
class kafka_user_admin final : public user_admin {
 public:
  kafka_user_admin(std::shared_ptr<const coord::cluster_view> view, const kafka::client_settings& settings,
                   std::chrono::milliseconds timeout)
      : client_(std::move(view), settings, timeout) {}

  result<bool> has_credential(const std::string& user) override;
  result<void> store_credential(const std::string& user, std::string_view password) override;
  result<void> delete_credential(const std::string& user) override;
  result<std::vector<authz::acl_binding>> acls_of(const std::string& principal) override;
  result<void> create_acls(const std::vector<authz::acl_binding>& acls) override;
  result<void> delete_acls(const std::vector<authz::acl_binding>& acls) override;
  result<std::map<std::string, double>> quotas_of(const std::string& user) override;
  result<void> alter_quotas(const std::string& user, const quota_plan& plan) override;
  [[nodiscard]] const std::string& detail() const override { return detail_; }

 private:
  template <typename Response, typename Request>
  result<Response> call(const Request& request, std::int16_t version);
  // A Kafka error code as an error, keeping the broker's message in detail().
  std::error_code refused(std::int16_t code, const std::optional<std::string>& message);

  kafka::kafka_client client_;
  std::string detail_;
};

}  // namespace ferry::users
