#include "app/broker_app.h"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include <boost/asio/post.hpp>

#include "app/session_file.h"
#include "base/guarded.h"
#include "base/log.h"
#include "config/dynamic_broker_config.h"
#include "coord/replica_sync.h"
#include "group/errc.h"
#include "replication/log_cleaning.h"
#include "security/password_file.h"
#include "security/scram_credential.h"
#include "server/client_quota_entities.h"
#include "txn/errc.h"

namespace ferry::app {
namespace asio = boost::asio;
namespace {

// The broker's ZooKeeper identity and the ACLs of the nodes it writes (zookeeper.set.acl, zookeeper.digest.*).
coord::zk_security zookeeper_security(const config::zookeeper_security_settings& settings) {
  coord::zk_security out;
  out.set_acl = settings.set_acl;
  out.digest_username = settings.digest_username;
  if (!settings.digest_password_file.empty()) {
    const auto read = security::read_password_file(settings.digest_password_file, "zookeeper.digest.password.file",
                                                   out.digest_password);
    if (!read) throw std::runtime_error(read.error());
  }
  return out;
}

// Free space and idle index files are looked at this often.
constexpr std::int64_t health_interval_ms = 5000;
// Followers join the ISR within this of catching up; laggards leave it after replica.lag.time.max.ms.
constexpr std::int64_t isr_interval_ms = 250;
// Group timers (sessions, rebalance and initial delays) run at this resolution.
constexpr std::int64_t group_interval_ms = 100;
// How often TLS listeners look for changed key and certificate files (a Secret's update): new connections take a
// rotated certificate within this long.
constexpr std::int64_t tls_reload_interval_ms = 5000;
constexpr std::int64_t schemas_topic_interval_ms = 2000;
// Threads for ZooKeeper round trips: ISR changes and the admin requests' writes wait on ZooKeeper, one at a
// time per thread, up to the session timeout each while it is away.
constexpr std::size_t zookeeper_threads = 2;
// How long the transaction coordinator's writes, markers and requests to other brokers may take: Kafka's
// request.timeout.ms default, which its coordinator uses for the same.
constexpr std::int32_t coordinator_request_timeout_ms = 30000;

// ISR changes go to ZooKeeper through this broker's registry.
class registry_isr_writer final : public replication::isr_writer {
 public:
  explicit registry_isr_writer(coord::cluster_registry& registry) : registry_(registry) {}
  result<void> alter_isr(const topic_partition& tp, const coord::partition_state& expected,
                         std::vector<broker_id> isr) override {
    return registry_.alter_isr(tp, expected, std::move(isr));
  }

 private:
  coord::cluster_registry& registry_;
};

// What the broker registers: the inter-broker listener first (coord::broker_endpoint), then the other advertised
// ones in the order of listeners.
std::vector<coord::layout::endpoint> advertised_endpoints(const config::listeners_config& c) {
  std::vector<coord::layout::endpoint> out;
  const auto add = [&out](const config::listener_config& l) {
    out.push_back({l.name, std::string(config::name_of(l.protocol)), l.advertised->host, l.advertised->port});
  };
  add(c.inter_broker_listener());
  for (const auto& l : c.listeners)
    if (l.advertised && l.name != c.inter_broker) add(l);
  return out;
}

}  // namespace

broker_app::broker_app(config::broker_config config)
    : config_(std::move(config)),
      network_(static_cast<std::size_t>(std::max(1, config_.num_network_threads))),
      blocking_pool_(static_cast<std::size_t>(config_.num_io_threads)),
      zookeeper_pool_(zookeeper_threads),
      background_(blocking_pool_, network_.main()),
      retention_timer_(network_.main()),
      flush_timer_(network_.main()),
      checkpoint_timer_(network_.main()),
      health_timer_(network_.main()),
      producer_expiry_timer_(network_.main()),
      offline_dirs_timer_(network_.main()),
      deletions_timer_(network_.main()),
      isr_timer_(network_.main()),
      group_timer_(network_.main()),
      tls_timer_(network_.main()),
      schemas_topic_timer_(network_.main()) {}

broker_app::~broker_app() {
  zookeeper_pool_.join();
  blocking_pool_.join();
}

void broker_app::start() {
  metrics_.set_broker_info(config_.broker_id, config_.rack, FERRY_VERSION);
  // First: a TLS or SASL setting that cannot be used stops startup before anything else opens.
  security_ = std::make_unique<listener_security>(config_.listeners, config_.socket_request_max_bytes, credentials_,
                                                  clock_, *metrics_.registry());
  std::vector<std::filesystem::path> dirs(config_.log_dirs.begin(), config_.log_dirs.end());
  auto logs = storage::log_manager::open(
      {.fs = io::posix_file_system(), .clock = &clock_, .log_dirs = dirs, .topic_config = {}, .work = &background_});
  if (!logs) throw std::runtime_error("cannot open log.dirs: " + logs.error().message());
  logs_ = std::move(logs.value());
  partitions_ = std::make_unique<replication::partition_manager>(*logs_, config_, metrics_);
  cleaner_ = replication::make_log_cleaner(*logs_, clock_, config_, metrics_);
  cleaner_->start();
  fetchers_ = std::make_unique<follower::fetcher_manager>(
      broker_id{config_.broker_id}, *partitions_, follower_quota_,
      follower::fetch_settings{.max_wait_ms = config_.replica_fetch_wait_max_ms,
                               .min_bytes = config_.replica_fetch_min_bytes,
                               .partition_max_bytes = config_.replica_fetch_max_bytes,
                               .response_max_bytes = config_.replica_fetch_response_max_bytes,
                               .backoff_ms = config_.replica_fetch_backoff_ms,
                               .socket_timeout_ms = config_.replica_socket_timeout_ms,
                               .security = security_->peer()},
      config_.num_replica_fetchers);

  offsets_log_ = std::make_unique<server::replicated_coordinator_log>(
      group::offsets_topic,
      server::replicated_coordinator_log::error_codes{group::errc::not_coordinator,
                                                      group::errc::coordinator_not_available},
      *partitions_, clock_, network_.main(), blocking_pool_, config_.offsets_commit_timeout_ms);
  groups_ = std::make_unique<group::group_coordinator>(
      group::coordinator_config{.offsets_partitions = config_.offsets_topic_num_partitions,
                                .limits = {.min_session_timeout_ms = config_.group_min_session_timeout_ms,
                                           .max_session_timeout_ms = config_.group_max_session_timeout_ms,
                                           .initial_rebalance_delay_ms = config_.group_initial_rebalance_delay_ms,
                                           .max_size = config_.group_max_size},
                                .offset_metadata_max_bytes = config_.offset_metadata_max_bytes,
                                .offsets_retention_ms = config_.offsets_retention_minutes * 60000,
                                .offsets_retention_check_interval_ms = config_.offsets_retention_check_interval_ms,
                                .consumer = {.session_timeout_ms = config_.group_consumer_session_timeout_ms,
                                             .heartbeat_interval_ms = config_.group_consumer_heartbeat_interval_ms,
                                             .max_size = config_.group_consumer_max_size,
                                             .assignors = config_.group_consumer_assignors}},
      *offsets_log_);

  const auto session_file = dirs.front() / session_file_name;
  auto registry = coord::cluster_registry::start(
      {.connect = config_.zookeeper_connect,
       .session_timeout = std::chrono::milliseconds(config_.zookeeper_session_timeout_ms),
       .connect_timeout = std::chrono::milliseconds(config_.zookeeper_connection_timeout_ms),
       .security = zookeeper_security(config_.zookeeper_security),
       .id = broker_id{config_.broker_id},
       .endpoints = advertised_endpoints(config_.listeners),
       .rack = config_.rack.empty() ? std::nullopt : std::optional<std::string>(config_.rack),
       .schema_registry =
           config_.schema_registry.enable ? std::optional(registry_service::advertised_url(config_)) : std::nullopt,
       .unclean_leader_election_default = config_.topic_defaults.unclean_leader_election_enable,
       .delete_topic_enable = config_.delete_topic_enable,
       .auto_leader_rebalance = config_.auto_leader_rebalance_enable,
       .leader_imbalance_check_interval = std::chrono::seconds(config_.leader_imbalance_check_interval_seconds),
       .leader_imbalance_percentage = config_.leader_imbalance_per_broker_percentage,
       .resume = read_session_file(session_file, config_.zookeeper_connect),
       .on_session = [session_file, connect = config_.zookeeper_connect](const coord::zk_session::credentials& c) {
         write_session_file(session_file, connect, c);
       }});
  if (!registry)
    throw std::runtime_error("cannot join the cluster through zookeeper.connect=" + config_.zookeeper_connect + ": " +
                             registry.error().message());
  registry_ = std::move(registry.value());
  for (const auto& dir : logs_->dirs()) {
    dir->on_offline([this] {
      asio::post(zookeeper_pool_, guarded("reporting an offline log dir", [this] { report_offline_dirs(); }));
    });
  }
  report_offline_dirs();  // any that went offline at startup
  if (config_.zookeeper_security.set_acl) {
    asio::post(zookeeper_pool_, guarded("locking ZooKeeper nodes made before zookeeper.set.acl", [this] {
                 auto changed = registry_->lock_down_existing_nodes();
                 if (!changed) {
                   FERRY_LOG(warn, "app") << "cannot lock the ZooKeeper nodes made before zookeeper.set.acl was on: "
                                          << changed.error().message() << "; the next start tries again";
                 } else if (changed.value() > 0) {
                   FERRY_LOG(info, "app")
                       << "locked " << changed.value() << " ZooKeeper nodes made before zookeeper.set.acl was on";
                 }
               }));
  }
  isr_writer_ = std::make_unique<registry_isr_writer>(*registry_);
  cluster_ = std::make_unique<server::zk_cluster>(*registry_);
  producer_ids_ = std::make_unique<server::producer_ids>(*cluster_);
  ensure_inter_broker_credential();
  start_transactions();
  // Every new view of the cluster brings local partitions in line (opens, leads, follows, deletes), and the
  // fetchers with what they follow.
  registry_->add_listener([this](const std::shared_ptr<const coord::cluster_view>& view) {
    partitions_->reconcile(*view);
    acknowledge_deletions(*view);
    const broker_id self{config_.broker_id};
    const auto rate = [&](std::string_view name) {
      const auto setting = view->dynamic_broker_setting(self, name);
      return config::replication_throttle_rate(setting ? std::optional(setting->value) : std::nullopt);
    };
    security_->use_dynamic_tls_files([&](const std::string& name) -> std::optional<std::string> {
      const auto setting = view->dynamic_broker_setting(self, name);
      return setting ? std::optional(setting->value) : std::nullopt;
    });
    leader_quota_.set_limit(rate(config::leader_replication_throttled_rate));
    follower_quota_.set_limit(rate(config::follower_replication_throttled_rate));
    fetchers_->update(*view);
    coordinate(*view);
  });
  // The client quotas' table, from each view whose users' or client ids' entities changed.
  registry_->add_listener([this, fed_users = std::optional<coord::cluster_view::users_map>(),
                           fed_clients = std::optional<coord::cluster_view::client_quotas_map>()](
                              const std::shared_ptr<const coord::cluster_view>& view) mutable {
    if (fed_users == view->users && fed_clients == view->client_quotas) return;
    quotas_.replace_table(std::make_shared<const quota::quota_table>(server::client_quota_entries(*view)));
    fed_users = view->users;
    fed_clients = view->client_quotas;
  });
  // The ACLs in force, as a gauge.
  registry_->add_listener([this](const std::shared_ptr<const coord::cluster_view>& view) {
    metrics_.authorization().acls().Set(static_cast<double>(view->acls->size()));
  });
  // Logins look users up in the credential store; it takes the users' entities from each view that changed them.
  registry_->add_listener([this, fed = std::optional<coord::cluster_view::users_map>()](
                              const std::shared_ptr<const coord::cluster_view>& view) mutable {
    if (fed == view->users) return;
    credentials_.replace_all(view->users);
    fed = view->users;
  });

  // Lag reads other leaders' high watermarks from a poll of them, for the partitions its groups committed.
  watermarks_ = std::make_shared<follower::high_watermark_poller>(
      network_.main(), broker_id{config_.broker_id}, *partitions_, [this] { return registry_->view(); },
      [this] { return lag_->committed_partitions(); },
      follower::high_watermark_poller::settings{.security = security_->peer()});
  lag_ = std::make_unique<lag::consumer_lag>(*groups_, *watermarks_);

  propagation_ = std::make_unique<server::peer_topic_propagation>(*cluster_, *peers_);
  context_ = std::make_unique<server::broker_context>(server::broker_context{
      config_, *cluster_, *cluster_, *partitions_, metrics_, *producer_ids_, blocking_pool_, zookeeper_pool_, clock_,
      leader_quota_, *groups_, *transactions_, *markers_, *peers_, *propagation_});
  context_->credentials = &credentials_;
  context_->users = cluster_.get();
  context_->acls = cluster_.get();
  context_->quotas = &quotas_;
  context_->quota_configs = cluster_.get();
  if (config_.authorizer.enabled) {
    authorizer_ =
        authz::decision_settings{config_.authorizer.super_users, config_.authorizer.allow_everyone_if_no_acl_found};
    // The brokers' own principal passes every check, so replication and markers never depend on ACLs.
    if (const auto& user = security_->inter_broker_user(); !user.empty())
      authorizer_->super_users.push_back("User:" + user);
    context_->authorizer = &*authorizer_;
    if (security_->inter_broker_user().empty())
      FERRY_LOG(warn, "app") << "the brokers' principal on the inter-broker listener is not a SASL user (PLAINTEXT: "
                                "User:ANONYMOUS; SSL: its certificate's mapped name): list it in super.users or grant "
                                "it ClusterAction, or replication and transaction markers are refused";
    FERRY_LOG(info, "app") << "authorizing requests with ACLs; " << authorizer_->super_users.size() << " super user(s)";
  }
  dispatcher_ = std::make_unique<server::dispatcher>(*context_);

  const net::connection_limits limits{.max_request_bytes = config_.socket_request_max_bytes,
                                      .send_buffer_bytes = config_.socket_send_buffer_bytes,
                                      .receive_buffer_bytes = config_.socket_receive_buffer_bytes,
                                      .max_idle_ms = config_.connections_max_idle_ms,
                                      .on_idle_close = [this] { metrics_.idle_connections_closed().Increment(); }};
  for (const auto& l : config_.listeners.listeners) {
    auto& server = kafka_listeners_.emplace_back(
        std::make_unique<net::tcp_server>(network_, *dispatcher_, l.name, limits, security_->for_listener(l),
                                          [this] { metrics_.accept_errors().Increment(); }));
    if (const auto bound = server->listen(l.bind.host, l.bind.port); !bound)
      throw std::runtime_error("cannot listen on listeners=" + l.name + "://" + l.bind.host + ":" +
                               std::to_string(l.bind.port) + ": " + bound.error().message());
  }
  auto admin_access = admin::admin_access::create(
      config_.admin_security, credentials_, security_->password_checks(), *metrics_.registry(),
      std::chrono::milliseconds(config_.listeners.failed_authentication_delay_ms));
  if (!admin_access) throw std::runtime_error("cannot serve the admin API: " + admin_access.error());
  admin_ = std::make_unique<admin::admin_server>(
      network_.main(),
      admin::admin_sources{.broker_id = config_.broker_id,
                           .view = [this] { return registry_->view(); },
                           .partitions = partitions_.get(),
                           .metrics = &metrics_,
                           .groups = groups_.get(),
                           .lag = lag_.get(),
                           .not_ready = [this](bool in_sync) { return not_ready(in_sync); },
                           .refresh_metrics = [this] { refresh_metrics(); },
                           .collectables = {&quota_metrics_}},
      std::move(admin_access).value());
  if (const auto bound = admin_->listen(config_.admin.host, config_.admin.port); !bound)
    throw std::runtime_error("cannot listen on admin.listener=" + config_.admin.host + ":" +
                             std::to_string(config_.admin.port) + ": " + bound.error().message());

  if (config_.schema_registry.enable) start_schema_registry();

  for (auto& server : kafka_listeners_) server->start();
  admin_->start();
  if (schemas_) {
    schemas_->start();
    schedule(schemas_topic_timer_, zookeeper_pool_, schemas_topic_interval_ms, &broker_app::schemas_topic_tick,
             "creating the schemas topic");
  }
  watermarks_->start();
  serving_ = true;
  schedule(retention_timer_, blocking_pool_, config_.log_retention_check_interval_ms, &broker_app::retention_tick,
           "log retention");
  schedule(flush_timer_, blocking_pool_, config_.log_flush_scheduler_interval_ms, &broker_app::flush_tick,
           "time-based log flushes");
  schedule(checkpoint_timer_, blocking_pool_, config_.log_flush_offset_checkpoint_interval_ms,
           &broker_app::checkpoint_tick, "checkpoints");
  logs_->refresh_free_space();
  // A report that failed (ZooKeeper away) is tried again with the health checks.
  schedule(offline_dirs_timer_, zookeeper_pool_, health_interval_ms, &broker_app::report_offline_dirs,
           "reporting offline log dirs");
  schedule(deletions_timer_, zookeeper_pool_, health_interval_ms, &broker_app::deletions_tick,
           "acknowledging topic deletions");
  schedule(health_timer_, blocking_pool_, health_interval_ms, &broker_app::health_tick, "log dir health");
  schedule(producer_expiry_timer_, blocking_pool_, config_.producer_id_expiration_check_interval_ms,
           &broker_app::producer_expiry_tick, "producer expiry");
  schedule(isr_timer_, zookeeper_pool_, isr_interval_ms, &broker_app::isr_tick, "ISR changes");
  schedule(group_timer_, blocking_pool_, group_interval_ms, &broker_app::group_tick, "group and transaction timers");
  schedule(tls_timer_, blocking_pool_, tls_reload_interval_ms, &broker_app::tls_tick, "TLS certificate reloads");
  std::string serving;
  for (std::size_t i = 0; i < kafka_listeners_.size(); ++i) {
    const auto& l = config_.listeners.listeners[i];
    serving += (i == 0 ? "" : ", ") + l.name + " on " + l.bind.host + ":" +
               std::to_string(kafka_listeners_[i]->bound_port()) +
               (l.advertised ? " (advertised " + l.advertised->host + ":" + std::to_string(l.advertised->port) + ")"
                             : " (not advertised)");
  }
  FERRY_LOG(info, "app") << "broker " << config_.broker_id << " serving Kafka: " << serving << "; admin on "
                         << config_.admin.host << ":" << admin_->bound_port()
                         << (config_.admin_security.https ? " (https)" : "");
}

void broker_app::schedule(asio::steady_timer& timer, asio::thread_pool& pool, std::int64_t interval_ms,
                          void (broker_app::*work)(), std::string_view name) {
  timer.expires_after(std::chrono::milliseconds(interval_ms));
  timer.async_wait(guarded(
      "a periodic job's timer", [this, &timer, &pool, interval_ms, work, name](const boost::system::error_code& ec) {
        if (ec) return;
        // Upkeep waits on disks or ZooKeeper: off the network threads. The timer is armed again from the main loop,
        // which owns it, once the run is over.
        asio::post(pool, guarded("a periodic job", [this, &timer, &pool, interval_ms, work, name] {
                     (void)run_guarded(name, [this, work] { (this->*work)(); });
                     asio::post(network_.main(),
                                guarded("a periodic job's timer", [this, &timer, &pool, interval_ms, work, name] {
                                  if (serving_.load()) schedule(timer, pool, interval_ms, work, name);
                                }));
                   }));
      }));
}

void broker_app::retention_tick() { partitions_->apply_retention(); }
void broker_app::tls_tick() {
  security_->reload_changed_files();
  admin_->reload_changed_files();
  if (schemas_) schemas_->reload_changed_files();
}

void broker_app::ensure_inter_broker_credential() {
  const auto& user = security_->inter_broker_user();
  if (user.empty()) return;
  // PLAIN checks passwords against the SCRAM-SHA-512 credential, so that is the one it needs.
  const auto mechanism =
      security::scram_mechanism_named(security_->inter_broker_mechanism()).value_or(security::scram_mechanism::sha512);
  const auto name = std::string(security::name_of(mechanism));
  auto stored = cluster_->read_user_config(user);
  if (!stored)
    throw std::runtime_error("cannot read the credential of inter.broker.sasl.username " + user + ": " +
                             stored.error().message());
  auto config = std::move(stored.value());
  switch (security::find_own_credential(mechanism, config, security_->inter_broker_password())) {
    case security::own_credential::matches:
      return;
    case security::own_credential::differs:
      FERRY_LOG(error, "app") << "the stored " << name << " credential of inter.broker.sasl.username " << user
                              << " does not match the inter-broker password: other brokers will refuse this one";
      return;
    case security::own_credential::missing:
      break;
  }
  // The first broker to start with a SASL inter-broker listener makes the brokers' user, as an operator would with
  // kafka-configs.sh before starting Kafka.
  config[name] = security::new_credential_text(mechanism, security_->inter_broker_password());
  if (auto written = cluster_->set_user_config(user, config); !written)
    throw std::runtime_error("cannot store the credential of inter.broker.sasl.username " + user + ": " +
                             written.error().message());
  FERRY_LOG(info, "app") << "created the " << name << " credential of inter-broker user " << user;
}
void broker_app::start_schema_registry() {
  const auto& settings = config_.schema_registry;
  auto access =
      admin::admin_access::create(settings.security, credentials_, security_->password_checks(), *metrics_.registry(),
                                  std::chrono::milliseconds(config_.listeners.failed_authentication_delay_ms),
                                  {.setting_prefix = "schema.registry.",
                                   .metric = "ferry_schema_registry_authentications_total",
                                   .listener = "schema registry"});
  if (!access) throw std::runtime_error("cannot serve the schema registry: " + access.error());
  const auto* peer = security_->peer();
  schemas_ = std::make_unique<registry_service::registry_service>(registry_service::registry_service::dependencies{
      .settings = settings,
      .self = broker_id{config_.broker_id},
      .io = network_.main(),
      .view = [this] { return registry_->view(); },
      .peers = peers_,
      .peer_security = peer,
      .access = std::move(access).value(),
      .forwarding = {.tls = peer->tls,
                     .verify_host = peer->verify_host,
                     .basic_user = security_->inter_broker_user(),
                     .basic_password = security_->inter_broker_password(),
                     .timeout = std::chrono::milliseconds(settings.timeout_ms)},
      .metrics = *metrics_.registry()});
  if (const auto bound = schemas_->listen(); !bound)
    throw std::runtime_error("cannot listen on schema.registry.listener=" + settings.listener.host + ":" +
                             std::to_string(settings.listener.port) + ": " + bound.error().message());
  FERRY_LOG(info, "app") << "schema registry on " << settings.listener.host << ":" << schemas_->bound_port() << " ("
                         << registry_service::advertised_url(config_) << ")";
}

void broker_app::schemas_topic_tick() { registry_service::ensure_schemas_topic(*context_, config_.schema_registry); }

void broker_app::flush_tick() { partitions_->flush_by_time(); }
void broker_app::producer_expiry_tick() { partitions_->expire_producers(); }
void broker_app::checkpoint_tick() { partitions_->checkpoint(); }

// The same monotonic time as the fetch handler's (system_clock::steady_now), read without a virtual call: the
// tick runs four times a second, also while descriptors run out, when UBSan's vptr check cannot read vtables.
void broker_app::acknowledge_deletions(const coord::cluster_view& view) {
  for (const auto& topic : partitions_->deletions_done(view)) {
    if (const auto acknowledged = registry_->acknowledge_deletion(topic); !acknowledged)
      FERRY_LOG(warn, "app") << "cannot tell the controller that the logs of topic " << topic
                             << " are deleted: " << acknowledged.error().message() << "; will retry";
  }
}

void broker_app::deletions_tick() { acknowledge_deletions(*registry_->view()); }
void broker_app::isr_tick() { partitions_->update_isrs(*isr_writer_, steady_ms(std::chrono::steady_clock::now())); }

void broker_app::start_transactions() {
  txn_log_ = std::make_unique<server::replicated_coordinator_log>(
      txn::transaction_state_topic,
      server::replicated_coordinator_log::error_codes{txn::errc::not_coordinator, txn::errc::coordinator_not_available},
      *partitions_, clock_, network_.main(), blocking_pool_, coordinator_request_timeout_ms);
  peers_ = std::make_shared<server::peer_requests>(network_.main(), "ferry-broker-" + std::to_string(config_.broker_id),
                                                   std::chrono::milliseconds(coordinator_request_timeout_ms),
                                                   security_->peer());
  markers_ = std::make_unique<server::marker_appender>(*partitions_, network_.main(), blocking_pool_,
                                                       coordinator_request_timeout_ms);
  // A marker on __consumer_offsets settles the transactional offsets of its producer there.
  markers_->on_offsets_marker([this](std::int32_t partition, producer_id producer, model::marker_type type) {
    groups_->complete_txn(partition, producer, type == model::marker_type::commit);
  });
  marker_sender_ = std::make_shared<server::txn_marker_sender>(
      network_.main(), broker_id{config_.broker_id}, [this] { return registry_->view(); }, *markers_, peers_);
  transactions_ = std::make_unique<txn::txn_coordinator>(
      txn::coordinator_config{
          .log_partitions = config_.transaction_state_log_num_partitions,
          .max_timeout_ms = config_.transaction_max_timeout_ms,
          .id_expiration_ms = config_.transactional_id_expiration_ms,
          .abort_timed_out_interval_ms = config_.transaction_abort_timed_out_transaction_cleanup_interval_ms,
          .remove_expired_interval_ms = config_.transaction_remove_expired_transaction_cleanup_interval_ms},
      *txn_log_, *producer_ids_, *marker_sender_);
}

void broker_app::group_tick() {
  const auto now = system_clock::wall_ms();
  groups_->tick(now);
  groups_->reload_failed(now);
  transactions_->tick(now);
}

// The partitions of an internal topic this broker leads, with their leader epochs.
std::map<std::int32_t, leader_epoch> broker_app::led_partitions(const coord::cluster_view& view,
                                                                std::string_view name) const {
  std::map<std::int32_t, leader_epoch> led;
  if (const auto* topic = view.find_topic(name); topic != nullptr && !topic->marked_for_deletion) {
    for (const auto& [p, info] : topic->partitions) {
      const auto replica = partitions_->leader_for({std::string(name), p});
      if (replica) led.emplace(p.value(), replica.value()->epoch());
    }
  }
  return led;
}

void broker_app::coordinate(const coord::cluster_view& view) {
  for (const auto p : transactions_->lead(led_partitions(view, txn::transaction_state_topic))) {
    asio::post(blocking_pool_, guarded("loading transactions", [this, p] {
                 const auto loaded = transactions_->load(p, system_clock::wall_ms());
                 if (loaded) return;
                 if (loaded.error() == txn::errc::not_coordinator)
                   FERRY_LOG(info, "txn") << "stopped loading the transactions of " << txn::transaction_state_topic
                                          << "-" << p << ": this broker no longer leads it";
                 else
                   FERRY_LOG(error, "txn")
                       << "cannot load the transactions of " << txn::transaction_state_topic << "-" << p << ": "
                       << loaded.error().message() << " (they stay unavailable until leadership moves)";
               }));
  }
  for (const auto p : groups_->lead(led_partitions(view, group::offsets_topic))) {
    // Reading a partition's groups back reads its log: off the listener thread.
    asio::post(blocking_pool_, guarded("loading groups", [this, p] {
                 const auto loaded = groups_->load(p, system_clock::wall_ms());
                 if (loaded) return;
                 if (loaded.error() == group::errc::not_coordinator)
                   FERRY_LOG(info, "group") << "stopped loading the groups of " << group::offsets_topic << "-" << p
                                            << ": this broker no longer leads it";
                 else
                   FERRY_LOG(error, "group")
                       << "cannot load the groups of " << group::offsets_topic << "-" << p << ": "
                       << loaded.error().message() << " (they stay unavailable until leadership moves)";
               }));
  }
}

void broker_app::health_tick() {
  logs_->refresh_free_space();
  logs_->release_idle_indexes();
}

void broker_app::report_offline_dirs() {
  std::lock_guard lock(offline_dirs_mutex_);
  const auto& dirs = logs_->dirs();
  if (std::all_of(dirs.begin(), dirs.end(), [](const auto& d) { return d->offline(); })) {
    FERRY_LOG(error, "app") << "every log dir is offline: leaving the cluster and exiting (a restart recovers the "
                               "logs from what reached the disks)";
    // Closing the session removes this broker's registration at once, so the controller elects other leaders
    // now rather than after the session timeout.
    registry_->shutdown();
    std::_Exit(1);
  }
  const auto placements = logs_->placements();
  for (std::size_t dir = 0; dir < dirs.size(); ++dir) {
    if (!dirs[dir]->offline() || reported_offline_dirs_.contains(dir)) continue;
    std::vector<topic_partition> partitions;
    for (const auto& [tp, where] : placements)
      if (where == dir) partitions.push_back(tp);
    if (const auto reported = registry_->report_offline_replicas(dir, partitions); !reported) {
      FERRY_LOG_LIMITED(error, "app", 10000)
          << "cannot report log dir " << dirs[dir]->path().string()
          << " offline to the controller: " << reported.error().message() << "; retrying";
      continue;
    }
    reported_offline_dirs_.insert(dir);
    FERRY_LOG(warn, "app") << "reported log dir " << dirs[dir]->path().string() << " offline: the controller moves "
                           << partitions.size() << " partitions' leaderships and in-sync replicas elsewhere";
  }
}

std::vector<std::string> broker_app::not_ready(bool in_sync) const {
  std::vector<std::string> reasons;
  if (!serving_.load()) reasons.emplace_back("the broker is not serving (starting or stopping)");
  if (registry_ && !registry_->view()->is_live(broker_id{config_.broker_id}))
    reasons.emplace_back("broker " + std::to_string(config_.broker_id) + " is not registered in ZooKeeper");
  else if (partitions_ && !partitions_->in_line_with_a_live_view())
    reasons.emplace_back("local partitions are not yet in line with the cluster view");
  else if (in_sync && registry_ && !caught_up_.load()) {
    // Once per process: after a restart, ready means back in sync on everything it hosts, so that a rolling
    // restart takes the next broker only when this one's partitions are fully replicated again.
    const auto behind = coord::replicas_catching_up(*registry_->view(), broker_id{config_.broker_id});
    if (behind.empty()) {
      caught_up_ = true;
    } else {
      std::ostringstream why;
      why << behind.size() << " hosted partition(s) not yet back in sync, e.g. " << behind.front();
      reasons.push_back(why.str());
    }
  }
  if (logs_) {
    for (const auto& dir : logs_->dirs()) {
      if (dir->offline())
        reasons.push_back("log dir " + dir->path().string() + " is offline: " + dir->offline_reason());
      if (dir->full())
        reasons.push_back("log dir " + dir->path().string() + " is full (" + std::to_string(dir->free_bytes()) +
                          " bytes free)");
    }
  }
  return reasons;
}

void broker_app::run() {
  network_.run();

  FERRY_LOG(info, "app") << "shutting down: leaving ZooKeeper and closing logs";
  // Calls blocked on ZooKeeper return and view waits end before the pool that runs them is drained, and the
  // registry outlives every call into it.
  registry_->shutdown();
  fetchers_->stop();  // no follower write after this, so the logs close with what they have
  cleaner_->stop();   // no segment swap after this either
  zookeeper_pool_.join();
  blocking_pool_.join();
  registry_.reset();
  if (const auto closed = partitions_->close_all(); !closed)
    FERRY_LOG(error, "app") << "some logs did not close cleanly (recovery runs at next start): "
                            << closed.error().message();
  FERRY_LOG(info, "app") << "broker " << config_.broker_id << " stopped";
}

void broker_app::stop() {
  if (config_.controlled_shutdown_enable && registry_) {
    // Clients keep being served meanwhile; they move to the new leaders with retriable errors.
    FERRY_LOG(info, "app") << "controlled shutdown: asking the controller to move this broker's leaderships";
    const auto moved =
        registry_->controlled_shutdown(config_.controlled_shutdown_max_retries,
                                       std::chrono::milliseconds(config_.controlled_shutdown_retry_backoff_ms));
    if (moved) {
      FERRY_LOG(info, "app") << "controlled shutdown: no partition left that another in-sync replica could lead";
    } else {
      FERRY_LOG(warn, "app") << "controlled shutdown did not complete (" << moved.error().message()
                             << "); stopping anyway";
    }
  }
  asio::post(network_.main(), guarded("stopping the broker", [this] {
               serving_ = false;
               for (auto& server : kafka_listeners_) server->stop();
               admin_->stop();
               if (schemas_) schemas_->stop();
               watermarks_->stop();
               peers_->close();
               retention_timer_.cancel();
               flush_timer_.cancel();
               checkpoint_timer_.cancel();
               health_timer_.cancel();
               producer_expiry_timer_.cancel();
               offline_dirs_timer_.cancel();
               deletions_timer_.cancel();
               isr_timer_.cancel();
               group_timer_.cancel();
               tls_timer_.cancel();
               schemas_topic_timer_.cancel();
               network_.stop();
             }));
}

void broker_app::refresh_metrics() {
  partitions_->refresh_metrics();
  if (schemas_) schemas_->refresh_metrics();
  std::int64_t open = 0;
  for (std::size_t i = 0; i < kafka_listeners_.size(); ++i) {
    const auto& l = config_.listeners.listeners[i];
    const auto connections = kafka_listeners_[i]->open_connections();
    metrics_.listener_connections(l.name, std::string(config::name_of(l.protocol)))
        .Set(static_cast<double>(connections));
    open += connections;
  }
  metrics_.open_connections().Set(static_cast<double>(open));
  auto& replication = metrics_.replication();
  const bool controller = registry_->is_controller();
  replication.controller_active().Set(controller ? 1 : 0);
  std::size_t offline = 0;
  if (controller) {
    const auto view = registry_->view();
    for (const auto& [name, topic] : view->topics)
      for (const auto& [p, info] : topic.partitions)
        if (!info.state || !view->is_live(info.state->leader)) ++offline;
  }
  replication.offline_partitions().Set(static_cast<double>(offline));
  std::lock_guard lock(scrape_mutex_);
  const auto elections = registry_->elections();
  replication.leader_elections().Increment(static_cast<double>(elections.elections - counted_elections_.elections));
  replication.unclean_leader_elections().Increment(static_cast<double>(elections.unclean - counted_elections_.unclean));
  counted_elections_ = elections;
  const auto failures = confined_failures();
  metrics_.confined_failures().Increment(static_cast<double>(failures - counted_failures_));
  counted_failures_ = failures;
}

}  // namespace ferry::app
