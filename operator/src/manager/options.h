#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "certs/ca_rotation.h"
#include "kafka/client_settings.h"
#include "users/user_secret.h"

namespace ferry::manager {

// ferry-operator's command line (docs/operator.md lists every flag).
struct options {
  std::string kubeconfig;  // empty: in-cluster service account
  std::string cluster_name;
  std::string zookeeper_connect;
  // The brokers' ZooKeeper identity (zookeeper.digest.username, zookeeper.digest.password.file) and
  // zookeeper.set.acl: the operator writes topics and users as the brokers do.
  std::string zookeeper_digest_username;
  std::string zookeeper_digest_password_file;
  std::string http_address = "0.0.0.0";
  std::uint16_t http_port = 8080;
  bool metrics_auth = false;       // --metrics-auth kubernetes: /metrics needs a token allowed to get it
  bool zookeeper_set_acl = false;  // --zookeeper-set-acl, with the identity above
  std::size_t workers = 4;
  double api_qps = 20;         // writes to the API server a second (0: no limit)
  std::size_t api_burst = 50;  // writes at once before api_qps applies
  std::chrono::milliseconds full_reconciliation_interval{120'000};
  std::chrono::seconds finalizer_timeout{300};
  std::chrono::seconds group_status_interval{30};
  std::vector<std::string> watch_namespaces;          // empty: every namespace
  bool retain_by_default = false;                     // --default-deletion-policy retain
  std::size_t max_concurrent_moves = 10;              // 0: no replica moves
  bool rebalance = true;                              // false: brokers are only drained, never evened out
  std::uint64_t replication_throttle = 50ULL << 20U;  // bytes per second of the operator's moves; 0: none
  std::string broker_statefulset;                     // "namespace/name"; empty: none
  bool leader_election = true;
  std::string lease_namespace;                 // default: the pod's namespace, else "default"
  std::string lease_name;                      // default: ferry-operator-<cluster name>
  std::string identity;                        // default: $POD_NAME, else host name and pid
  kafka::client_settings kafka;                // how the operator connects and logs in to the brokers (--kafka-*)
  users::client_connection client_connection;  // written into each User's Secret (--client-*)
  std::string clients_ca_secret;               // "namespace/name"; empty: TLS Users are refused
  std::string cluster_ca_secret;               // "namespace/name" of the brokers' CA; empty: none kept
  bool make_clients_ca = true;                 // false: the Secret is made elsewhere; wait for it
  bool make_cluster_ca = true;
  std::string broker_certificate_secret;  // "namespace/name"; empty: none kept (needs cluster_ca_secret)
  std::vector<std::string> broker_certificate_addresses;
  std::string broker_certificate_common_name;  // default: <cluster name>-broker
  certs::ca_timing ca_timing;
  std::chrono::seconds certificate_validity{std::chrono::hours(24 * 365)};  // the brokers' and TLS Users'
  std::chrono::seconds certificate_renewal{std::chrono::hours(24 * 30)};
  std::string log_level = "info";
  std::string log_format = "text";
};

// Parses argv; an unknown flag or a bad value is an error whose message names it. nullopt with an empty
// message for --help.
struct parse_outcome {
  std::optional<options> parsed;
  std::string error;  // empty for --help
};
parse_outcome parse_options(const std::vector<std::string>& args);

// A duration flag's value: a whole number with a unit, s, m, h or d ("90d", "30m"); nullopt otherwise.
std::optional<std::chrono::seconds> parse_duration(const std::string& text);

std::string usage();

}  // namespace ferry::manager
