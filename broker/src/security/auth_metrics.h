#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

#include "security/sasl_session.h"

namespace ferry::security {

// Counts the SASL sessions' authentications and re-authentications (KIP-368) per listener and mechanism, as
// Kafka's successful-authentication-total and failed-authentication-total do, and logs each failed login
// (rate-limited) with the listener, the mechanism, the user name the client presented and its address. The
// user is never a label: clients choose it, so its values are unbounded. Thread-safe.
class auth_metrics final : public auth_observer {
 public:
  explicit auth_metrics(prometheus::Registry& registry);

  void succeeded(const auth_attempt& attempt) override;
  void failed(const auth_attempt& attempt, std::string_view reason) override;

 private:
  prometheus::Family<prometheus::Counter>& successes_;
  prometheus::Family<prometheus::Counter>& failures_;
  prometheus::Family<prometheus::Counter>& reauthentication_successes_;
  prometheus::Family<prometheus::Counter>& reauthentication_failures_;
};

}  // namespace ferry::security
