#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <set>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>

#include "admin/admin_server.h"
#include "app/listener_security.h"
#include "app/pool_background.h"
#include "authz/acl_snapshot.h"
#include "config/broker_config.h"
#include "coord/cluster_registry.h"
#include "follower/fetcher_manager.h"
#include "follower/high_watermark_poller.h"
#include "group/group_coordinator.h"
#include "lag/consumer_lag.h"
#include "metrics/broker_metrics.h"
#include "net/io_context_pool.h"
#include "net/tcp_server.h"
#include "quota/client_quotas.h"
#include "quota/quota_metrics.h"
#include "registry_service/registry_service.h"
#include "replication/partition_manager.h"
#include "security/credential_store.h"
#include "server/coordinator_log.h"
#include "server/dispatcher.h"
#include "server/marker_appender.h"
#include "server/peer_requests.h"
#include "server/producer_ids.h"
#include "server/topic_propagation.h"
#include "server/txn_marker_sender.h"
#include "storage/log_cleaner.h"
#include "storage/log_manager.h"
#include "txn/txn_coordinator.h"

namespace ferry::app {

// The whole broker, wired: logs, the ZooKeeper registry, partitions, the Kafka listener, the admin API and
// background upkeep. start() throws with a message naming the failing setting or resource; run() serves
// until stop() (SIGTERM), then shuts down in this order: the listeners and timers stop, the registry stops
// (blocked ZooKeeper calls return, view waits end), the replica fetchers stop, the blocking pool drains, the registry
// is destroyed (the session closes, our registration disappears), and the logs are flushed and closed, with checkpoints
// and the clean-shutdown markers written.
class broker_app {
 public:
  explicit broker_app(config::broker_config config);
  ~broker_app();

  void start();
  void run();
  // Controlled shutdown first (controlled.shutdown.enable: it waits for the controller, so call this from a
  // thread that may block, such as the signal thread), then ends run().
  void stop();

 private:
  // Runs `work` on `pool` every `interval_ms`, measured from the end of the run before: a run never overlaps
  // the next one, so a slow run (ZooKeeper away, a slow disk) delays its job and holds one pool thread, never
  // more. A run that throws is logged and counted, and the job goes on.
  void schedule(boost::asio::steady_timer& timer, boost::asio::thread_pool& pool, std::int64_t interval_ms,
                void (broker_app::*work)(), std::string_view name);
  void retention_tick();
  void producer_expiry_tick();
  void flush_tick();
  void checkpoint_tick();
  void health_tick();
  // Tells the controller about log dirs that went offline (their partitions' replicas here are dead), or
  // leaves the cluster and exits when every dir is offline, as Kafka halts then (review finding 4).
  void report_offline_dirs();
  // Tells the controller which topics marked for deletion this broker holds no logs of any more; run with every
  // view, and again every few seconds in case a write failed.
  void acknowledge_deletions(const coord::cluster_view& view);
  void deletions_tick();
  void isr_tick();
  void group_tick();
  void tls_tick();
  // The schema registry (schema.registry.enable): its listener, reader and writer, and its topic, made once
  // enough brokers are live.
  void start_schema_registry();
  void schemas_topic_tick();
  // Makes the inter-broker login's SCRAM credential in ZooKeeper when it does not exist yet.
  void ensure_inter_broker_credential();
  // Brings the group coordinator in line with the __consumer_offsets partitions this broker leads in `view`.
  // The transaction coordinator and what it sends markers and requests through.
  void start_transactions();
  // Loads and drops the coordinators' partitions as this broker's leaderships of them change.
  void coordinate(const coord::cluster_view& view);
  [[nodiscard]] std::map<std::int32_t, leader_epoch> led_partitions(const coord::cluster_view& view,
                                                                    std::string_view name) const;
  // Why /v1/ready says no (admin_sources::not_ready).
  [[nodiscard]] std::vector<std::string> not_ready(bool in_sync) const;
  // What /metrics reads on each scrape (admin_sources::refresh_metrics).
  void refresh_metrics();

  config::broker_config config_;
  system_clock clock_;
  metrics::broker_metrics metrics_;
  // The users' SCRAM credentials, fed from the registry's views: declared before the registry and the listeners'
  // security, which look users up in it, so it outlives them.
  security::credential_store credentials_;
  // The authorizer's settings when authorizer.class.name is set (server/authorization.h).
  std::optional<authz::decision_settings> authorizer_;
  // The client quotas' sensors; their table follows the view.
  quota::client_quotas quotas_;
  quota::quota_metrics quota_metrics_{quotas_};
  // TLS and SASL of the listeners and of this broker's connections to others (created first in start()).
  std::unique_ptr<listener_security> security_;
  net::io_context_pool network_;
  boost::asio::thread_pool blocking_pool_;
  // ZooKeeper round trips (ISR changes, the admin requests' writes): apart from the disk work of blocking_pool_,
  // which a ZooKeeper outage must not hold up (server::broker_context::zookeeper_pool).
  boost::asio::thread_pool zookeeper_pool_;
  pool_background background_;
  // The replication throttles: leader.replication.throttled.rate and follower.replication.throttled.rate.
  replication::replication_quota leader_quota_{clock_, metrics_.replication().leader_throttle()};
  replication::replication_quota follower_quota_{clock_, metrics_.replication().follower_throttle()};
  std::unique_ptr<storage::log_manager> logs_;
  std::unique_ptr<replication::partition_manager> partitions_;
  std::unique_ptr<storage::log_cleaner> cleaner_;
  std::unique_ptr<follower::fetcher_manager> fetchers_;
  std::unique_ptr<server::replicated_coordinator_log> offsets_log_;
  std::unique_ptr<group::group_coordinator> groups_;
  std::unique_ptr<server::replicated_coordinator_log> txn_log_;
  std::shared_ptr<server::peer_requests> peers_;
  std::unique_ptr<server::topic_propagation> propagation_;
  std::unique_ptr<server::marker_appender> markers_;
  std::shared_ptr<server::txn_marker_sender> marker_sender_;
  std::unique_ptr<txn::txn_coordinator> transactions_;
  std::shared_ptr<follower::high_watermark_poller> watermarks_;
  std::unique_ptr<lag::consumer_lag> lag_;
  std::unique_ptr<coord::cluster_registry> registry_;
  std::unique_ptr<server::zk_cluster> cluster_;
  std::unique_ptr<server::producer_ids> producer_ids_;
  std::unique_ptr<server::broker_context> context_;
  std::unique_ptr<server::dispatcher> dispatcher_;
  std::vector<std::unique_ptr<net::tcp_server>> kafka_listeners_;  // one per listener, in listeners' order
  std::unique_ptr<admin::admin_server> admin_;
  std::unique_ptr<registry_service::registry_service> schemas_;
  boost::asio::steady_timer retention_timer_;
  boost::asio::steady_timer flush_timer_;
  boost::asio::steady_timer checkpoint_timer_;
  boost::asio::steady_timer health_timer_;
  boost::asio::steady_timer producer_expiry_timer_;
  boost::asio::steady_timer offline_dirs_timer_;
  boost::asio::steady_timer deletions_timer_;
  boost::asio::steady_timer isr_timer_;
  boost::asio::steady_timer group_timer_;
  boost::asio::steady_timer tls_timer_;
  boost::asio::steady_timer schemas_topic_timer_;
  std::unique_ptr<replication::isr_writer> isr_writer_;
  std::atomic<bool> serving_{false};
  // Latched by not_ready() once every hosted partition is in sync after the start.
  mutable std::atomic<bool> caught_up_{false};
  std::mutex offline_dirs_mutex_;
  std::set<std::size_t> reported_offline_dirs_;  // guarded by offline_dirs_mutex_
  std::mutex scrape_mutex_;
  coord::election_counts counted_elections_;  // guarded by scrape_mutex_: what the counters have so far
  std::uint64_t counted_failures_ = 0;        // guarded by scrape_mutex_: ferry_confined_failures_total so far
};

}  // namespace ferry::app
