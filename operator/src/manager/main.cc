// ferry-operator: reconciles Topic resources with a Ferry cluster (docs/operator.md).
#include <algorithm>
#include <condition_variable>
#include <iostream>
#include <thread>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/verb.hpp>

#include "balance/balance_controller.h"
#include "base/log.h"
#include "certs/certificate_controller.h"
#include "coord/cluster_observer.h"
#include "groups/group_controller.h"
#include "groups/kafka_admin.h"
#include "kafka/errc.h"
#include "kafka/own_credential.h"
#include "kube/api_client.h"
#include "kube/controller.h"
#include "kube/event_recorder.h"
#include "kube/informer.h"
#include "kube/informer_group.h"
#include "kube/leader_election.h"
#include "kube/metrics.h"
#include "manager/broker_identity.h"
#include "manager/crd_check.h"
#include "manager/health_server.h"
#include "manager/options.h"
#include "roll/roll_controller.h"
#include "security/password_file.h"
#include "topics/topic_controller.h"
#include "users/kafka_user_admin.h"
#include "users/user_controller.h"

namespace {

namespace asio = boost::asio;
using namespace ferry;

// How often the CAs and the brokers' certificate are looked at: a tenth of the shortest renewal window, so a
// renewal starts within one (at most a minute, at least a second).
std::chrono::milliseconds certificate_check_interval(const manager::options& o) {
  const auto shortest = std::min({o.certificate_renewal, o.ca_timing.renew_before, o.ca_timing.trust_propagation});
  return std::clamp<std::chrono::milliseconds>(shortest / 10, std::chrono::seconds(1), std::chrono::minutes(1));
}

// What the main thread waits for: leadership, or the end.
struct run_state {
  std::mutex mutex;
  std::condition_variable changed;
  bool leading = false;
  bool stopping = false;
  int exit_code = 0;

  void stop(int code) {
    std::lock_guard lock(mutex);
    if (!stopping) exit_code = code;
    stopping = true;
    changed.notify_all();
  }
};

// The brokers' ZooKeeper identity, from --zookeeper-digest-*; nullopt (logged) when its file cannot be read.
std::optional<coord::zk_security> zookeeper_security(const manager::options& o) {
  coord::zk_security security;
  security.set_acl = o.zookeeper_set_acl;
  security.digest_username = o.zookeeper_digest_username;
  if (!o.zookeeper_digest_password_file.empty()) {
    const auto read = security::read_password_file(o.zookeeper_digest_password_file, "--zookeeper-digest-password-file",
                                                   security.digest_password);
    if (!read) {
      FERRY_LOG(error, "manager") << read.error();
      return std::nullopt;
    }
  }
  return security;
}

std::unique_ptr<coord::cluster_observer> connect_cluster(const manager::options& o, coord::zk_security security,
                                                         run_state& state,
                                                         std::atomic<topics::topic_controller*>& topics,
                                                         std::atomic<kube::work_queue*>& balance) {
  coord::observer_options observer;
  observer.connect = o.zookeeper_connect;
  observer.security = std::move(security);
  observer.on_change = [&topics, &balance](const coord::cluster_view& before, const coord::cluster_view& after) {
    if (auto* t = topics.load()) t->cluster_changed(before, after);
    if (auto* q = balance.load()) q->add(std::string(balance::balance_controller::key));
  };
  auto delay = std::chrono::seconds(1);
  for (;;) {
    if (auto started = coord::cluster_observer::start(observer)) return std::move(started).value();
    FERRY_LOG(warn, "manager") << "cannot connect to ZooKeeper at " << o.zookeeper_connect
                               << " (--zookeeper-connect); retrying in " << delay.count() << " s";
    std::unique_lock lock(state.mutex);
    if (state.changed.wait_for(lock, delay, [&] { return state.stopping; })) return nullptr;
    delay = std::min(delay * 2, std::chrono::seconds(30));
  }
}

// The operator's own SCRAM credential, before any reconcile logs in with it; retried while ZooKeeper fails. Files
// that cannot be used are logged, and the reconciles that log in report it.
void make_own_credential(const manager::options& o, kafka::own_credential_keeper& keeper, run_state& state) {
  auto delay = std::chrono::seconds(1);
  for (;;) {
    const auto made = keeper.ensure();
    if (made || made.error() == kafka::errc::unusable_settings) return;
    FERRY_LOG(warn, "manager") << "cannot store the credential of --kafka-sasl-username " << o.kafka.sasl_username
                               << ": " << made.error().message() << "; retrying in " << delay.count() << " s";
    std::unique_lock lock(state.mutex);
    if (state.changed.wait_for(lock, delay, [&] { return state.stopping; })) return;
    delay = std::min(delay * 2, std::chrono::seconds(30));
  }
}

int run(const manager::options& o) {
  const auto zookeeper = zookeeper_security(o);
  if (!zookeeper) return 1;
  auto config = o.kubeconfig.empty() ? kube::in_cluster_config() : kube::load_kubeconfig(o.kubeconfig);
  if (!config) return 1;
  asio::io_context io;
  auto api = kube::api_client::create(io, config.value());
  if (!api) return 1;
  // CRDs older than this operator would silently drop the fields it writes: refuse to run on them.
  if (!manager::check_crds(io, *api.value())) return 1;
  kube::operator_metrics metrics;
  api.value()->on_request([&metrics](kube::api_client::verb method, unsigned status) {
    metrics.api_request(boost::beast::http::to_string(method), status);
  });
  api.value()->limit_writes(o.api_qps, o.api_burst);
  api.value()->on_throttled([&metrics](std::chrono::nanoseconds waited) { metrics.api_throttled(waited); });
  kube::event_recorder events(*api.value(), "ferry.dev/operator", o.identity);
  events.on_recorded([&metrics](bool posted) { metrics.event_recorded(posted); });
  run_state state;

  std::atomic<topics::topic_controller*> topic_hooks{nullptr};
  std::atomic<kube::work_queue*> balance_hook{nullptr};
  std::unique_ptr<coord::cluster_observer> cluster;
  std::unique_ptr<kube::informer_group> topic_informers;
  std::unique_ptr<kube::informer> broker_set_informer;
  std::unique_ptr<kube::informer> broker_pod_informer;
  std::unique_ptr<kube::informer_group> group_informers;
  std::unique_ptr<kube::informer_group> user_informers;
  std::unique_ptr<kube::informer_group> user_secret_informers;
  std::atomic<bool> started{false};
  std::unique_ptr<kube::leader_election> election;
  if (o.leader_election) {
    kube::lease_options lease{o.lease_namespace, o.lease_name, o.identity};
    election = std::make_unique<kube::leader_election>(
        *api.value(), lease,
        [&] {
          metrics.set_leader(true);
          std::lock_guard lock(state.mutex);
          state.leading = true;
          state.changed.notify_all();
        },
        [&] {
          metrics.set_leader(false);
          state.stop(1);
        });
  } else {
    metrics.set_leader(true);  // the only replica acts
  }
  // --metrics-auth kubernetes: /metrics asks the API server who the scraper is and whether it may read it.
  auto metrics_auth = o.metrics_auth
                          ? std::make_shared<manager::metrics_authorizer>(manager::api_server_reviews(*api.value()))
                          : nullptr;
  auto health = manager::health_server::start(
      o.http_address, o.http_port, metrics.shared_registry(),
      [&]() -> std::string {
        if (election && !election->leading()) return {};  // a standby replica is healthy and ready
        if (!started.load()) return "starting";
        if (!topic_informers->synced()) return "listing Topic resources";
        if (!group_informers->synced()) return "listing ConsumerGroup resources";
        if (!user_informers->synced()) return "listing User resources";
        if (!cluster->ready()) return "reading the cluster from ZooKeeper";
        return {};
      },
      metrics_auth);
  if (!health) return 1;
  FERRY_LOG(info, "manager") << "ferry-operator for cluster " << o.cluster_name << ": http on " << o.http_address << ":"
                             << health.value()->port() << ", identity " << o.identity;

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) state.stop(0);
  });
  auto guard = asio::make_work_guard(io);
  std::thread io_thread([&] { io.run(); });
  // A background coroutine that ends by an exception (a bug) stops the operator rather than leaving it running
  // without its watch or its Lease.
  const auto fail_on_exception = [&state](const char* what) {
    return [&state, what](const std::exception_ptr& failure) {
      if (!failure) return;
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        FERRY_LOG(error, "manager") << what << " failed: " << e.what();
      } catch (...) {
        FERRY_LOG(error, "manager") << what << " failed";
      }
      state.stop(1);
    };
  };
  if (election) asio::co_spawn(io, election->run(), fail_on_exception("leader election"));

  {
    std::unique_lock lock(state.mutex);
    state.changed.wait(lock, [&] { return state.leading || state.stopping || !election; });
  }
  kube::controller topic_workers("topics", nullptr, metrics);
  kube::controller balance_worker("balance", nullptr, metrics);
  kube::controller roll_worker("roll", nullptr, metrics);
  std::unique_ptr<roll::roll_controller> roll_ctl;
  kube::controller group_workers("consumergroups", nullptr, metrics);
  std::unique_ptr<groups::group_controller> group_ctl;
  kube::controller user_workers("users", nullptr, metrics);
  kube::controller certificate_worker("certificates", nullptr, metrics);
  std::unique_ptr<certs::certificate_controller> certificate_ctl;
  std::unique_ptr<users::user_controller> user_ctl;
  std::unique_ptr<topics::topic_controller> topic_ctl;
  std::unique_ptr<balance::balance_controller> balance_ctl;
  std::unique_ptr<balance::throttled_moves> moves;
  bool stopping = false;
  {
    std::lock_guard lock(state.mutex);
    stopping = state.stopping;
  }
  // The CAs and the brokers' certificate, first: the brokers wait for theirs, and it needs neither ZooKeeper nor the
  // brokers. Looked at once before the User workers start (a TLS User finds its CA), then on their own worker.
  const auto keeper = [&](const std::string& secret, const char* what,
                          bool makes) -> std::shared_ptr<certs::ca_keeper> {
    if (secret.empty()) return nullptr;
    const auto slash = secret.find('/');
    return std::make_shared<certs::ca_keeper>(*api.value(), secret.substr(0, slash), secret.substr(slash + 1),
                                              "/O=Ferry/CN=" + o.cluster_name + " " + what, o.ca_timing, makes);
  };
  certs::certificate_controller_options certificates{
      .cluster_ca = keeper(o.cluster_ca_secret, "cluster CA", o.make_cluster_ca),
      .clients_ca = keeper(o.clients_ca_secret, "clients CA", o.make_clients_ca),
      .interval = certificate_check_interval(o)};
  if (!o.broker_certificate_secret.empty()) {
    const auto slash = o.broker_certificate_secret.find('/');
    certificates.brokers = certs::broker_certificate_options{.ns = o.broker_certificate_secret.substr(0, slash),
                                                             .name = o.broker_certificate_secret.substr(slash + 1),
                                                             .common_name = o.broker_certificate_common_name,
                                                             .addresses = o.broker_certificate_addresses,
                                                             .validity = o.certificate_validity,
                                                             .renew_before = o.certificate_renewal};
  }
  const auto clients_ca = certificates.clients_ca;
  const auto cluster_ca = certificates.cluster_ca;
  if (!stopping && (clients_ca || cluster_ca)) {
    certificate_ctl = std::make_unique<certs::certificate_controller>(*api.value(), std::move(certificates));
    (void)certificate_ctl->reconcile(std::string(certs::certificate_controller::key));
    certificate_worker.set_reconcile([&](const std::string& key) { return certificate_ctl->reconcile(key); });
    certificate_worker.start(1);
    certificate_worker.queue().add(std::string(certs::certificate_controller::key));
  }
  if (!stopping) cluster = connect_cluster(o, *zookeeper, state, topic_hooks, balance_hook);
  std::unique_ptr<kafka::own_credential_keeper> own_credential;
  if (cluster) {
    own_credential = std::make_unique<kafka::own_credential_keeper>(cluster->configs(), o.kafka);
    make_own_credential(o, *own_credential, state);
    topics::topic_controller_options topic_options;
    topic_options.cluster_name = o.cluster_name;
    topic_options.retain_by_default = o.retain_by_default;
    topic_options.max_moves = o.max_concurrent_moves;
    moves = std::make_unique<balance::throttled_moves>(*cluster, o.replication_throttle);
    topic_options.start_moves = [&](const std::string& topic,
                                    const std::map<partition_id, std::vector<broker_id>>& targets) {
      return moves->start(topic, targets);
    };
    topic_options.finalizer_timeout = o.finalizer_timeout;
    topic_options.leaving_brokers = [&] { return balance_ctl ? balance_ctl->leaving() : std::set<broker_id>{}; };
    topic_ctl = std::make_unique<topics::topic_controller>(*api.value(), events, *cluster, topic_workers.queue(),
                                                           topic_options);
    // Every Topic, not only this cluster's: one whose label was changed or removed still holds our finalizer.
    topic_informers = std::make_unique<kube::informer_group>(
        *api.value(), "/apis/ferry.dev/v1alpha1", "topics", o.watch_namespaces, "",
        [&](const std::string& key, const kube::informer::object& now) { topic_ctl->resource_changed(key, now); },
        [&] { metrics.watch_restarted("topics"); });
    topic_ctl->set_informer(*topic_informers);
    topic_hooks.store(topic_ctl.get());
    topic_workers.set_reconcile([&](const std::string& key) { return topic_ctl->reconcile(key); });
    for (const auto& member : topic_informers->members())
      asio::co_spawn(io, member->run(), fail_on_exception("the Topic watch"));
    asio::co_spawn(
        io,
        [&]() -> asio::awaitable<void> {
          asio::steady_timer timer(io);
          for (;;) {
            timer.expires_after(o.full_reconciliation_interval);
            co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
            topic_ctl->resync_all();
            metrics.set_queue_depth("topics", topic_workers.queue().depth());
          }
        },
        fail_on_exception("the full reconciliation timer"));
    if (o.max_concurrent_moves > 0 || !o.broker_statefulset.empty()) {
      balance_ctl = std::make_unique<balance::balance_controller>(
          *api.value(), events, *cluster, *moves, metrics, [&] { return topic_ctl->managed_topics(); },
          balance::balance_options{
              .max_moves = o.max_concurrent_moves, .spread = o.rebalance, .broker_set = o.broker_statefulset});
      if (!o.broker_statefulset.empty()) {
        const auto slash = o.broker_statefulset.find('/');
        broker_set_informer = std::make_unique<kube::informer>(
            *api.value(),
            kube::resource_kind{"statefulsets",
                                "/apis/apps/v1/namespaces/" + o.broker_statefulset.substr(0, slash) + "/statefulsets",
                                "", "metadata.name=" + o.broker_statefulset.substr(slash + 1)},
            [&](const std::string& /*key*/, const kube::informer::object& /*now*/) {
              balance_worker.queue().add(std::string(balance::balance_controller::key));
              roll_worker.queue().add(std::string(roll::roll_controller::key));
            },
            [&] { metrics.watch_restarted("statefulsets"); });
        balance_ctl->set_broker_sets(*broker_set_informer);
        asio::co_spawn(io, broker_set_informer->run(), fail_on_exception("the brokers' StatefulSet watch"));
        // Rolling restarts of the brokers, one pod at a time when every partition it hosts can spare it.
        broker_pod_informer = std::make_unique<kube::informer>(
            *api.value(),
            kube::resource_kind{"pods", "/api/v1/namespaces/" + o.broker_statefulset.substr(0, slash) + "/pods"},
            [&](const std::string& /*key*/, const kube::informer::object& /*now*/) {
              roll_worker.queue().add(std::string(roll::roll_controller::key));
            },
            [&] { metrics.watch_restarted("pods"); });
        roll_ctl = std::make_unique<roll::roll_controller>(*api.value(), events, *cluster, o.broker_statefulset,
                                                           *broker_set_informer, *broker_pod_informer);
        asio::co_spawn(io, broker_pod_informer->run(), fail_on_exception("the broker pods' watch"));
        roll_worker.set_reconcile([&](const std::string& key) { return roll_ctl->reconcile(key); });
        roll_worker.start(1);
        roll_worker.queue().add(std::string(roll::roll_controller::key));
      }
      balance_worker.set_reconcile([&](const std::string& key) { return balance_ctl->reconcile(key); });
      balance_worker.start(1);
      balance_hook.store(&balance_worker.queue());
      balance_worker.queue().add(std::string(balance::balance_controller::key));
    }
    group_ctl = std::make_unique<groups::group_controller>(
        *api.value(), events, *cluster,
        [&o, &own_credential](std::shared_ptr<const coord::cluster_view> view) -> std::unique_ptr<groups::group_admin> {
          (void)own_credential->ensure();  // a failure shows as a refused login on the resource
          return std::make_unique<groups::kafka_admin>(std::move(view), o.kafka, std::chrono::seconds(5));
        },
        groups::group_controller_options{o.group_status_interval});
    group_informers = std::make_unique<kube::informer_group>(
        *api.value(), "/apis/ferry.dev/v1alpha1", "consumergroups", o.watch_namespaces,
        "ferry.dev/cluster=" + o.cluster_name,
        [&](const std::string& key, const kube::informer::object& /*now*/) { group_workers.queue().add(key); },
        [&] { metrics.watch_restarted("consumergroups"); });
    group_ctl->set_informer(*group_informers);
    group_workers.set_reconcile([&](const std::string& key) { return group_ctl->reconcile(key); });
    for (const auto& member : group_informers->members())
      asio::co_spawn(io, member->run(), fail_on_exception("the ConsumerGroup watch"));
    user_ctl = std::make_unique<users::user_controller>(
        *api.value(), events, *cluster,
        [&o, &own_credential](std::shared_ptr<const coord::cluster_view> view) -> std::unique_ptr<users::user_admin> {
          (void)own_credential->ensure();  // a failure shows as a refused login on the resource
          return std::make_unique<users::kafka_user_admin>(std::move(view), o.kafka, std::chrono::seconds(5));
        },
        users::user_controller_options{.cluster_name = o.cluster_name,
                                       .connection = o.client_connection,
                                       .reserved_users = {o.kafka.sasl_username},
                                       .resync = o.full_reconciliation_interval,
                                       .finalizer_timeout = o.finalizer_timeout,
                                       .clients_ca = clients_ca,
                                       .cluster_ca = cluster_ca,
                                       .certificate_validity = o.certificate_validity,
                                       .renew_before = o.certificate_renewal});
    // A User's change (or its going) may hand its Kafka user to another User of the same name.
    user_informers = std::make_unique<kube::informer_group>(
        *api.value(), "/apis/ferry.dev/v1alpha1", "users", o.watch_namespaces, "ferry.dev/cluster=" + o.cluster_name,
        [&](const std::string& key, const kube::informer::object& /*now*/) {
          user_workers.queue().add(key);
          for (const auto& other : user_ctl->keys_of_same_user(key)) user_workers.queue().add(other);
        },
        [&] { metrics.watch_restarted("users"); });
    user_ctl->set_informer(*user_informers);
    // The Secrets the operator wrote (named after their User): a deleted one is written again with a new password.
    user_secret_informers = std::make_unique<kube::informer_group>(
        *api.value(), "/api/v1", "secrets", o.watch_namespaces,
        "ferry.dev/cluster=" + o.cluster_name + "," + std::string(users::user_label),
        [&](const std::string& key, const kube::informer::object& /*now*/) { user_workers.queue().add(key); },
        [&] { metrics.watch_restarted("secrets"); });
    user_workers.set_reconcile([&](const std::string& key) { return user_ctl->reconcile(key); });
    for (const auto& member : user_informers->members())
      asio::co_spawn(io, member->run(), fail_on_exception("the User watch"));
    for (const auto& member : user_secret_informers->members())
      asio::co_spawn(io, member->run(), fail_on_exception("the Users' Secrets watch"));
    started.store(true);
    // Workers start on a full cache, as client-go's WaitForCacheSync has them: which of two resources owns a
    // topic is only known once both are listed.
    bool synced = false;
    {
      std::unique_lock lock(state.mutex);
      for (;;) {
        synced = topic_informers->synced() && group_informers->synced() && user_informers->synced();
        if (synced || state.stopping) break;
        state.changed.wait_for(lock, std::chrono::milliseconds(50));
      }
      synced = synced && !state.stopping;
    }
    if (synced) {
      group_workers.start(o.workers);
      user_workers.start(o.workers);
      topic_workers.start(o.workers);
    }
  }

  int exit_code = 0;
  {
    std::unique_lock lock(state.mutex);
    state.changed.wait(lock, [&] { return state.stopping; });
    exit_code = state.exit_code;
  }
  FERRY_LOG(info, "manager") << "stopping";
  balance_hook.store(nullptr);
  balance_worker.stop();
  roll_worker.stop();
  group_workers.stop();
  user_workers.stop();
  certificate_worker.stop();
  topic_workers.stop();
  topic_hooks.store(nullptr);
  if (cluster) cluster->shutdown();
  // Nothing acts for this replica any more: a standby may take over now rather than when the lease expires.
  if (election) election->release();
  io.stop();
  io_thread.join();
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args.front() == "broker-identity")
    return ferry::manager::run_broker_identity({args.begin() + 1, args.end()});
  const auto parsed = ferry::manager::parse_options(args);
  if (!parsed.parsed) {
    if (parsed.error.empty()) {
      std::cout << ferry::manager::usage();
      return 0;
    }
    std::cerr << "ferry-operator: error: " << parsed.error << "\n";
    return 2;
  }
  ferry::log::level level{};
  if (!ferry::log::parse_level(parsed.parsed->log_level, level)) {
    std::cerr << "ferry-operator: error: --log-level " << parsed.parsed->log_level
              << ": must be debug, info, warn or error\n";
    return 2;
  }
  ferry::log::set_level(level);
  ferry::log::format format{};
  ferry::log::parse_format(parsed.parsed->log_format, format);  // checked by parse_options
  ferry::log::set_format(format);
  return run(*parsed.parsed);
}
