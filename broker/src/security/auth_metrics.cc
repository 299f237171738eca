#include "security/auth_metrics.h"

#include <string>

#include "base/log.h"

namespace ferry::security {
namespace {

prometheus::Family<prometheus::Counter>& counter_family(prometheus::Registry& registry, const std::string& name,
                                                        const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

prometheus::Counter& child(prometheus::Family<prometheus::Counter>& family, const auth_attempt& attempt) {
  return family.Add({{"listener", std::string(attempt.listener)}, {"mechanism", std::string(attempt.mechanism)}});
}

}  // namespace

auth_metrics::auth_metrics(prometheus::Registry& registry)
    : successes_(counter_family(registry, "ferry_sasl_authentication_successes_total",
                                "SASL authentications that succeeded, per listener and mechanism")),
      failures_(counter_family(registry, "ferry_sasl_authentication_failures_total",
                               "SASL authentications that failed and closed the connection, per listener and "
                               "mechanism (\"none\" before the client chose an enabled one)")),
      reauthentication_successes_(counter_family(registry, "ferry_sasl_reauthentication_successes_total",
                                                 "SASL re-authentications (KIP-368) that succeeded")),
      reauthentication_failures_(counter_family(registry, "ferry_sasl_reauthentication_failures_total",
                                                "SASL re-authentications (KIP-368) that failed and closed the "
                                                "connection")) {}

void auth_metrics::succeeded(const auth_attempt& attempt) {
  child(attempt.reauthentication ? reauthentication_successes_ : successes_, attempt).Increment();
  FERRY_LOG(debug, "security") << (attempt.reauthentication ? "re-authenticated " : "authenticated ")
                               << log::client_text(attempt.user) << " from " << attempt.client << " on "
                               << attempt.listener << " with " << attempt.mechanism;
}

void auth_metrics::failed(const auth_attempt& attempt, std::string_view reason) {
  child(attempt.reauthentication ? reauthentication_failures_ : failures_, attempt).Increment();
  FERRY_LOG_LIMITED(warn, "security", 1000)
      << (attempt.reauthentication ? "failed re-authentication" : "failed authentication") << " on listener "
      << attempt.listener << ", mechanism " << attempt.mechanism << ", user '" << log::client_text(attempt.user)
      << "', client " << attempt.client << ": " << reason;
}

}  // namespace ferry::security
