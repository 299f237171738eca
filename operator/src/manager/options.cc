#include "manager/options.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>

namespace ferry::manager {
namespace {

template <typename Int>
bool parse_int(const std::string& text, Int& out, Int min, Int max) {
  Int value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < min || value > max) return false;
  out = value;
  return true;
}

std::string default_namespace() {
  std::ifstream in("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::string ns;
  if (in && std::getline(in, ns) && !ns.empty()) return ns;
  return "default";
}

// A DNS label (RFC 1123), as Kubernetes requires of namespace names.
bool is_namespace_name(const std::string& name) {
  if (name.empty() || name.size() > 63 || name.front() == '-' || name.back() == '-') return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

std::string default_identity() {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): flags are parsed before any other thread runs
  if (const char* pod = std::getenv("POD_NAME"); pod != nullptr && *pod != '\0') return pod;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return std::string(host) + "_" + std::to_string(getpid());
}

bool is_namespaced_name(const std::string& value) {
  const auto slash = value.find('/');
  return slash != std::string::npos && slash != 0 && slash + 1 != value.size() &&
         value.find('/', slash + 1) == std::string::npos;
}

}  // namespace

std::optional<std::chrono::seconds> parse_duration(const std::string& text) {
  if (text.size() < 2) return std::nullopt;
  std::int64_t count = 0;
  if (!parse_int<std::int64_t>(text.substr(0, text.size() - 1), count, 1, 3650LL * 24 * 3600)) return std::nullopt;
  switch (text.back()) {
    case 's':
      return std::chrono::seconds(count);
    case 'm':
      return std::chrono::minutes(count);
    case 'h':
      return std::chrono::hours(count);
    case 'd':
      return std::chrono::hours(24 * count);
    default:
      return std::nullopt;
  }
}

std::string usage() {
  return R"(Usage: ferry-operator --cluster-name NAME --zookeeper-connect HOST:PORT[/chroot] [flags]

Reconciles Topic, ConsumerGroup and User resources (ferry.dev) labelled ferry.dev/cluster=NAME with the Ferry
cluster whose ZooKeeper is at --zookeeper-connect.

  --kubeconfig PATH                       kubeconfig to reach the API server (default: $KUBECONFIG, else the
                                          pod's service account)
  --cluster-name NAME                     the ferry.dev/cluster label value of the resources to manage (required)
  --watch-namespaces NS[,NS...]           the namespaces whose resources are managed (default: every namespace)
  --zookeeper-connect CONNECT             the Ferry cluster's zookeeper.connect (required)
  --zookeeper-digest-username NAME        the brokers' ZooKeeper identity (zookeeper.digest.username), to
                                          change nodes locked by zookeeper.set.acl (default: anonymous)
  --zookeeper-digest-password-file PATH   a file whose first line is its password
  --zookeeper-set-acl true|false          lock the nodes the operator creates as the brokers' zookeeper.set.acl
                                          does; needs the identity above (default false)
  --http-address ADDRESS                  address of /metrics, /healthz and /readyz (default 0.0.0.0)
  --http-port PORT                        their port (default 8080; 0 picks a free one)
  --metrics-auth kubernetes|none          kubernetes: /metrics answers only a bearer token that a TokenReview
                                          accepts and whose user a SubjectAccessReview allows to get the
                                          non-resource URL /metrics (the chart's setting); none: open, for local
                                          runs (default none). /healthz and /readyz are always open
  --workers N                             reconciles running at once (default 4)
  --api-qps QPS                           writes (POST, PUT, PATCH, DELETE) to the API server a second, beyond
                                          --api-burst; reads, watches and the Lease are not limited (default 20;
                                          0: no limit)
  --api-burst N                           writes at once before --api-qps applies (default 50)
  --full-reconciliation-interval-ms MS    every resource is reconciled at least this often (default 120000)
  --finalizer-timeout-seconds S           a deleted resource whose cluster stays unreachable this long loses its
                                          finalizer anyway, counted from the first attempt that found ZooKeeper
                                          unreachable (default 300)
  --default-deletion-policy delete|retain what deleting a Topic does to its topic when the resource has no
                                          ferry.dev/deletion-policy annotation (default delete)
  --group-status-interval-seconds S       a ConsumerGroup's status (state, members, lag) is refreshed at most
                                          this often (default 30)
  --max-concurrent-moves N                reassignments in flight at once across the cluster, for spreading
                                          managed topics over added brokers, draining leaving ones and
                                          replication factor changes (default 10; 0 turns them off: leaving
                                          brokers then keep their replicas and are not removed)
  --replication-throttle-bytes N          bytes per second that replicas moved by the operator copy at, through
                                          Kafka's replication throttles, removed when the moves are done
                                          (default 52428800; 0: unthrottled)
  --rebalance true|false                  spread managed topics evenly over the brokers (default true; false:
                                          replicas move only to drain leaving brokers or change a replication
                                          factor)
  --broker-statefulset NAMESPACE/NAME     the brokers' StatefulSet (broker i in pod i): its ferry.dev/brokers
                                          annotation asks for a broker count; leaving brokers are drained, then
                                          it is scaled down (default: none)
  --kafka-listener NAME                   the brokers' listener the operator's Kafka requests go to (ConsumerGroup
                                          offsets, User credentials and ACLs) (default: each broker's first
                                          listener of --kafka-security-protocol)
  --kafka-security-protocol PROTOCOL      that listener's: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
                                          (default PLAINTEXT)
  --kafka-sasl-mechanism MECHANISM        SCRAM-SHA-512, SCRAM-SHA-256 or PLAIN (default SCRAM-SHA-512)
  --kafka-sasl-username NAME              the operator's user, one of the brokers' super.users; the operator
                                          makes its SCRAM credential in ZooKeeper from the password file
  --kafka-sasl-password-file PATH         a file whose first line is that user's password (a Secret's key)
  --kafka-ssl-ca-file PATH                PEM CA certificates the brokers' certificates are checked against
                                          (default: the system's)
  --kafka-ssl-certificate-file PATH       a PEM client certificate chain, for listeners that ask for one
  --kafka-ssl-key-file PATH               its PEM private key
  --kafka-ssl-verify-hostname true|false  check the brokers' certificates against the addresses they
                                          registered (default true)
  --client-bootstrap-servers HOST:PORT,...  the brokers' address for applications, written into each User's
                                          Secret as bootstrap.servers (default: not written)
  --client-security-protocol PROTOCOL     written beside it as security.protocol (default: not written)
  --clients-ca-secret NAMESPACE/NAME      the Secret of the CA that TLS Users' certificates come from (ca.crt,
                                          ca.key); made there, and renewed, when it does not exist (default:
                                          none, and Users with authentication type tls are refused)
  --cluster-ca-secret NAMESPACE/NAME      the Secret of the CA of the brokers' certificates, made and renewed
                                          likewise; its trust bundle goes to <NAME>-cert and each User's Secret
  --make-clients-ca true|false, --make-cluster-ca true|false
                                          false: that CA's Secret is made elsewhere (by you, or cert-manager);
                                          wait for it rather than make a CA there (default true)
  --broker-certificate-secret NAMESPACE/NAME  the brokers' certificate, issued by the cluster CA, kept there
  --broker-certificate-addresses A,B,...  its DNS names (wildcards too) and IP addresses
  --broker-certificate-common-name CN     its subject (default <cluster name>-broker)
  --ca-validity DURATION                  how long a CA the operator makes is valid (default 1825d)
  --ca-renewal DURATION                   it gets a successor this long before its end (default 30d)
  --ca-trust-propagation DURATION         the successor is trusted this long before it signs (default 7d)
  --certificate-validity DURATION         the brokers' and TLS Users' certificates' validity (default 365d)
  --certificate-renewal DURATION          they are issued again this long before their end (default 30d)
                                          (DURATION: a whole number and s, m, h or d)
  --leader-election true|false            hold a Lease so one replica acts (default true)
  --lease-namespace NS                    (default: the pod's namespace, else default)
  --lease-name NAME                       (default ferry-operator-<cluster name>)
  --identity ID                           this replica's name in the Lease (default $POD_NAME, else host_pid)
  --log-level debug|info|warn|error       (default info)
  --log-format text|json                  one readable line, or one JSON object, per event (default text)
)";
}

parse_outcome parse_options(const std::vector<std::string>& args) {
  options o;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): flags are parsed before any other thread runs
  if (const char* env = std::getenv("KUBECONFIG"); env != nullptr) o.kubeconfig = env;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& flag = args[i];
    if (flag == "-h" || flag == "--help") return {};
    if (i + 1 >= args.size()) return {std::nullopt, "flag " + flag + " needs a value (see --help)"};
    const auto& value = args[++i];
    const auto bad = [&](const std::string& why) {
      std::string message = flag;
      message.append(" ").append(value).append(": ").append(why);
      return parse_outcome{std::nullopt, std::move(message)};
    };
    if (flag == "--kubeconfig") {
      o.kubeconfig = value;
    } else if (flag == "--cluster-name") {
      o.cluster_name = value;
    } else if (flag == "--zookeeper-connect") {
      o.zookeeper_connect = value;
    } else if (flag == "--zookeeper-digest-username") {
      if (value.find(':') != std::string::npos) return bad("must not contain ':'");
      o.zookeeper_digest_username = value;
    } else if (flag == "--zookeeper-digest-password-file") {
      o.zookeeper_digest_password_file = value;
    } else if (flag == "--zookeeper-set-acl") {
      if (value != "true" && value != "false") return bad("must be true or false");
      o.zookeeper_set_acl = value == "true";
    } else if (flag == "--watch-namespaces") {
      o.watch_namespaces.clear();
      for (std::size_t start = 0; start <= value.size();) {
        const auto comma = std::min(value.find(',', start), value.size());
        const auto ns = value.substr(start, comma - start);
        if (!is_namespace_name(ns)) return bad("must be a comma-separated list of namespace names");
        o.watch_namespaces.push_back(ns);
        start = comma + 1;
      }
    } else if (flag == "--default-deletion-policy") {
      if (value != "delete" && value != "retain") return bad("must be delete or retain");
      o.retain_by_default = value == "retain";
    } else if (flag == "--http-address") {
      o.http_address = value;
    } else if (flag == "--http-port") {
      if (!parse_int<std::uint16_t>(value, o.http_port, 0, 65535)) return bad("must be a port number");
    } else if (flag == "--metrics-auth") {
      if (value != "kubernetes" && value != "none") return bad("must be kubernetes or none");
      o.metrics_auth = value == "kubernetes";
    } else if (flag == "--workers") {
      if (!parse_int<std::size_t>(value, o.workers, 1, 64)) return bad("must be 1-64");
    } else if (flag == "--api-qps") {
      std::int64_t qps = 0;
      if (!parse_int<std::int64_t>(value, qps, 0, 100'000)) return bad("must be 0-100000");
      o.api_qps = static_cast<double>(qps);
    } else if (flag == "--api-burst") {
      if (!parse_int<std::size_t>(value, o.api_burst, 1, 100'000)) return bad("must be 1-100000");
    } else if (flag == "--full-reconciliation-interval-ms") {
      std::int64_t ms = 0;
      if (!parse_int<std::int64_t>(value, ms, 1000, 30LL * 86'400'000)) return bad("must be 1000 ms to 30 days");
      o.full_reconciliation_interval = std::chrono::milliseconds(ms);
    } else if (flag == "--finalizer-timeout-seconds") {
      std::int64_t s = 0;
      if (!parse_int<std::int64_t>(value, s, 0, 365LL * 86400)) return bad("must be 0 or more");
      o.finalizer_timeout = std::chrono::seconds(s);
    } else if (flag == "--group-status-interval-seconds") {
      std::int64_t s = 0;
      if (!parse_int<std::int64_t>(value, s, 5, 86400)) return bad("must be 5-86400");
      o.group_status_interval = std::chrono::seconds(s);
    } else if (flag == "--max-concurrent-moves") {
      if (!parse_int<std::size_t>(value, o.max_concurrent_moves, 0, 10'000)) return bad("must be 0-10000");
    } else if (flag == "--replication-throttle-bytes") {
      if (!parse_int<std::uint64_t>(value, o.replication_throttle, 0, 1ULL << 40U)) return bad("must be 0 to 2^40");
    } else if (flag == "--rebalance") {
      if (value != "true" && value != "false") return bad("must be true or false");
      o.rebalance = value == "true";
    } else if (flag == "--broker-statefulset") {
      if (!is_namespaced_name(value)) return bad("must be namespace/name");
      o.broker_statefulset = value;
    } else if (flag == "--kafka-listener") {
      o.kafka.listener = value;
    } else if (flag == "--kafka-security-protocol") {
      o.kafka.security_protocol = value;
    } else if (flag == "--kafka-sasl-mechanism") {
      o.kafka.sasl_mechanism = value;
    } else if (flag == "--kafka-sasl-username") {
      o.kafka.sasl_username = value;
    } else if (flag == "--kafka-sasl-password-file") {
      o.kafka.sasl_password_file = value;
    } else if (flag == "--kafka-ssl-ca-file") {
      o.kafka.ssl_ca_file = value;
    } else if (flag == "--kafka-ssl-certificate-file") {
      o.kafka.ssl_certificate_file = value;
    } else if (flag == "--kafka-ssl-key-file") {
      o.kafka.ssl_key_file = value;
    } else if (flag == "--kafka-ssl-verify-hostname") {
      if (value != "true" && value != "false") return bad("must be true or false");
      o.kafka.ssl_verify_hostname = value == "true";
    } else if (flag == "--client-bootstrap-servers") {
      o.client_connection.bootstrap_servers = value;
    } else if (flag == "--client-security-protocol") {
      if (value != "PLAINTEXT" && value != "SSL" && value != "SASL_PLAINTEXT" && value != "SASL_SSL")
        return bad("must be PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL");
      o.client_connection.security_protocol = value;
    } else if (flag == "--clients-ca-secret" || flag == "--cluster-ca-secret" ||
               flag == "--broker-certificate-secret") {
      if (!is_namespaced_name(value)) return bad("must be namespace/name");
      (flag == "--clients-ca-secret"   ? o.clients_ca_secret
       : flag == "--cluster-ca-secret" ? o.cluster_ca_secret
                                       : o.broker_certificate_secret) = value;
    } else if (flag == "--make-clients-ca" || flag == "--make-cluster-ca") {
      if (value != "true" && value != "false") return bad("must be true or false");
      (flag == "--make-clients-ca" ? o.make_clients_ca : o.make_cluster_ca) = value == "true";
    } else if (flag == "--broker-certificate-addresses") {
      o.broker_certificate_addresses.clear();
      for (std::size_t start = 0; start <= value.size();) {
        const auto comma = std::min(value.find(',', start), value.size());
        if (comma > start) o.broker_certificate_addresses.push_back(value.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (flag == "--broker-certificate-common-name") {
      o.broker_certificate_common_name = value;
    } else if (flag == "--ca-validity" || flag == "--ca-renewal" || flag == "--ca-trust-propagation" ||
               flag == "--certificate-validity" || flag == "--certificate-renewal") {
      const auto duration = parse_duration(value);
      if (!duration) return bad("must be a whole number and s, m, h or d, e.g. 30d");
      (flag == "--ca-validity"            ? o.ca_timing.validity
       : flag == "--ca-renewal"           ? o.ca_timing.renew_before
       : flag == "--ca-trust-propagation" ? o.ca_timing.trust_propagation
       : flag == "--certificate-validity" ? o.certificate_validity
                                          : o.certificate_renewal) = *duration;
    } else if (flag == "--leader-election") {
      if (value != "true" && value != "false") return bad("must be true or false");
      o.leader_election = value == "true";
    } else if (flag == "--lease-namespace") {
      o.lease_namespace = value;
    } else if (flag == "--lease-name") {
      o.lease_name = value;
    } else if (flag == "--identity") {
      o.identity = value;
    } else if (flag == "--log-level") {
      o.log_level = value;
    } else if (flag == "--log-format") {
      if (value != "text" && value != "json") return bad("must be text or json");
      o.log_format = value;
    } else {
      return {std::nullopt, "unknown flag " + flag + " (see --help)"};
    }
  }
  if (o.cluster_name.empty()) return {std::nullopt, "--cluster-name is required"};
  if (o.zookeeper_connect.empty()) return {std::nullopt, "--zookeeper-connect is required"};
  if (o.zookeeper_digest_username.empty() != o.zookeeper_digest_password_file.empty())
    return {std::nullopt, "--zookeeper-digest-username and --zookeeper-digest-password-file go together"};
  if (o.zookeeper_set_acl && o.zookeeper_digest_username.empty())
    return {std::nullopt,
            "--zookeeper-set-acl true needs --zookeeper-digest-username: the nodes would be locked to "
            "no identity"};
  if (auto mismatch = kafka::check_settings(o.kafka); !mismatch.empty()) return {std::nullopt, std::move(mismatch)};
  if (o.certificate_renewal >= o.certificate_validity)
    return {std::nullopt, "--certificate-renewal must be less than --certificate-validity"};
  if (o.ca_timing.renew_before >= o.ca_timing.validity)
    return {std::nullopt, "--ca-renewal must be less than --ca-validity"};
  if (o.ca_timing.trust_propagation >= o.ca_timing.renew_before)
    return {std::nullopt,
            "--ca-trust-propagation must be less than --ca-renewal: the successor must sign before "
            "the CA ends"};
  if (!o.broker_certificate_secret.empty() && o.cluster_ca_secret.empty())
    return {std::nullopt, "--broker-certificate-secret needs --cluster-ca-secret, the CA that issues it"};
  if (!o.broker_certificate_secret.empty() && o.broker_certificate_addresses.empty())
    return {std::nullopt, "--broker-certificate-secret needs --broker-certificate-addresses"};
  if (o.broker_certificate_common_name.empty()) o.broker_certificate_common_name = o.cluster_name + "-broker";
  if (o.lease_namespace.empty()) o.lease_namespace = default_namespace();
  if (o.lease_name.empty()) o.lease_name = "ferry-operator-" + o.cluster_name;
  if (o.identity.empty()) o.identity = default_identity();
  return {o, {}};
}

}  // namespace ferry::manager
