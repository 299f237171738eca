#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/result.h"
#include "coord/acl_store.h"
#include "coord/broker_registration.h"
#include "coord/cluster_view.h"
#include "coord/config_store.h"
#include "coord/controller.h"
#include "coord/layout.h"
#include "coord/metadata_table.h"
#include "coord/registry_task.h"
#include "coord/topic_store.h"
#include "coord/uuid.h"
#include "coord/zk_session.h"
#include "model/ids.h"

namespace ferry::coord {

struct registry_options {
  std::string connect;                                // zookeeper.connect, may end in a chroot
  std::chrono::milliseconds session_timeout{18'000};  // zookeeper.session.timeout.ms
  std::chrono::milliseconds connect_timeout{18'000};  // zookeeper.connection.timeout.ms
  // zookeeper.set.acl and the digest identity (zookeeper.digest.username, zookeeper.digest.password.file).
  zk_security security;
  broker_id id;
  std::vector<layout::endpoint> endpoints;  // advertised listeners, the inter-broker one first (broker_endpoint)
  std::optional<std::string> rack;
  std::optional<std::string> schema_registry;    // the registry's URL, registered with the broker
  bool unclean_leader_election_default = false;  // unclean.leader.election.enable, for the controller
  // delete.topic.enable, for the controller: when false it removes deletion markers and keeps their topics.
  bool delete_topic_enable = true;
  // While this broker is the controller: auto.leader.rebalance.enable, leader.imbalance.check.interval.seconds
  // and leader.imbalance.per.broker.percentage (controller::balance_leaders).
  bool auto_leader_rebalance = true;
  std::chrono::milliseconds leader_imbalance_check_interval{300'000};
  std::int32_t leader_imbalance_percentage = 10;
  // The session of this broker's previous run, to take over when it is still alive (zk_session_options).
  std::optional<zk_session::credentials> resume;
  // Called with every session's credentials (the first, and each after an expiry), for the next run.
  std::function<void(const zk_session::credentials&)> on_session;
};

// This broker's membership in a ZooKeeper-mode cluster, in Kafka's znode layout (docs/zookeeper-layout.md).
//
// start() connects, creates the base paths and /cluster/id, registers the ephemeral /brokers/ids/<id> and
// reads the cluster. From then on one internal worker thread keeps a cluster_view current through watches
// (ZooKeeper callbacks only enqueue work for it), runs for controller, does the controller's work while it
// holds the role, and calls the listeners after every change. After a session expiry it re-registers and
// re-reads everything on the new session; the broker keeps running.
//
// The operations below are synchronous and thread-safe; they block on ZooKeeper, so call them from a
// blocking pool, not an event loop.
class cluster_registry {
 public:
  // Called on the worker thread with each new view. Listeners must not block for long and must not call
  // wait_for() (it would wait on the thread that is calling them).
  using listener = std::function<void(const std::shared_ptr<const cluster_view>&)>;

  // Fails with errc::timeout when ZooKeeper cannot be reached within connect_timeout, and with
  // errc::node_exists when another live broker holds this broker id (after waiting up to 1.5 session
  // timeouts for a registration left by a previous run of this broker to expire).
  static result<std::unique_ptr<cluster_registry>> start(registry_options options);

  cluster_registry(const cluster_registry&) = delete;
  cluster_registry& operator=(const cluster_registry&) = delete;
  // Stops the worker (no listener runs after this returns) and closes the session: the broker registration
  // and, if held, the controller role disappear at once. Calls still running or made later fail with
  // errc::closed, and wait_for() returns it at once, so a shutdown can drain the threads that use the registry
  // before destroying it. Idempotent; the destructor calls it.
  void shutdown();
  ~cluster_registry();

  [[nodiscard]] std::shared_ptr<const cluster_view> view() const { return view_.load(); }
  // Waits until `condition` holds for the current view and returns that view; errc::timeout otherwise.
  result<std::shared_ptr<const cluster_view>> wait_for(const std::function<bool(const cluster_view&)>& condition,
                                                       std::chrono::milliseconds timeout) const;
  // The listener is first called, on the worker thread, with the current view, then after every change.
  // It stays registered for the registry's lifetime.
  void add_listener(listener l);

  [[nodiscard]] broker_id id() const { return options_.id; }
  [[nodiscard]] const std::string& cluster_id() const { return cluster_id_; }
  [[nodiscard]] bool is_controller() const { return controller_->is_active(); }
  [[nodiscard]] election_counts elections() const { return controller_->elections(); }
  // The ZooKeeper session's id and password; tests use them to expire the session.
  [[nodiscard]] zk_session::credentials session_credentials() const { return session_->current_credentials(); }

  // Topic writes (topic_store.h) and producer id blocks (allocate_producer_id_block), on this session.
  [[nodiscard]] topic_store& topics() { return *topics_; }
  // Dynamic config writes (config_store.h), on this session.
  [[nodiscard]] config_store& configs() { return *configs_; }
  // The cluster's ACLs, which CreateAcls and DeleteAcls change; the views follow them (cluster_view::acls).
  [[nodiscard]] acl_store& acls() { return *acls_; }
  result<layout::producer_id_block> allocate_producer_id_block();
  // With zookeeper.set.acl: locks the nodes made before it was on (lock_down_existing_nodes); how many it changed.
  // Blocking (a walk of the cluster's nodes).
  result<std::size_t> lock_down_existing_nodes();
  // A leader's change of its partition's ISR (Kafka's direct write, before AlterPartition): the state znode
  // is set only while it still has `expected`'s data version, so a leader whose state moved on (a new
  // leader, epoch or ISR written by the controller) writes nothing and gets errc::bad_version. The same
  // multi-op logs the change in /ferry/partition_state_changes, from which every broker's view learns it.
  result<void> alter_isr(const topic_partition& tp, const partition_state& expected, std::vector<broker_id> isr);
  // Controlled shutdown, Kafka's ControlledShutdown through ZooKeeper: marks this broker in
  // /ferry/controlled_shutdown and waits until the controller has moved away every leadership that another
  // in-sync replica can take (and taken this broker out of the ISRs), for up to `attempts` waits of
  // `backoff` each. errc::timeout if leaderships remain then; errc::connection_loss at once without a
  // ZooKeeper connection, since no controller could hear of it.
  result<void> controlled_shutdown(std::int32_t attempts, std::chrono::milliseconds backoff);
  // Log dir `dir` (its place in log.dirs) went offline with these partitions: the controller moves their
  // leaderships elsewhere and takes this broker's replicas of them out of their ISRs
  // (/ferry/offline_replicas). Blocking (a ZooKeeper write).
  result<void> report_offline_replicas(std::size_t dir, const std::vector<topic_partition>& partitions);
  // This broker has deleted its logs of `topic`, which is marked for deletion: the controller deletes the topic
  // once every live replica has said so. Blocking (a ZooKeeper write); a marker already gone is fine.
  result<void> acknowledge_deletion(const std::string& topic);
  // ElectLeaders, run by the controller's worker (controller::elect_leaders): errc::not_controller unless
  // this broker is the controller, errc::timeout if the worker did not get to it in time.
  result<std::vector<election_result>> elect_leaders(election_type type,
                                                     std::optional<std::vector<topic_partition>> partitions,
                                                     std::chrono::milliseconds timeout);

 private:
  explicit cluster_registry(registry_options options);

  // Startup steps, on the caller's thread.
  result<void> ensure_base_paths();
  // Removes what an earlier run of this broker reported in /ferry/offline_replicas (a session it took over).
  result<void> forget_offline_replicas();
  result<void> load_cluster_id();
  [[nodiscard]] broker_endpoint endpoint() const;

  void enqueue(task t, std::string fired_watch = {});
  [[nodiscard]] bool stopping() const;
  void worker_loop();
  // Runs `job` on the worker thread, after the tasks it is reading.
  void submit(std::function<void()> job);
  result<void> handle(const task& t);
  result<void> resync();
  result<void> refresh_config_changes(bool skip_existing);
  result<void> refresh_acl_changes(authz::pattern_type pattern);
  result<void> refresh_state_changes();
  void publish();

  const registry_options options_;
  std::unique_ptr<zk_session> session_;
  std::string cluster_id_;
  std::unique_ptr<topic_store> topics_;
  std::unique_ptr<config_store> configs_;
  std::unique_ptr<acl_store> acls_;

  // Worker-thread state.
  std::unique_ptr<metadata_table> table_;
  std::unique_ptr<controller> controller_;

  // Work queue.
  mutable std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::set<task> pending_;
  std::vector<std::function<void()>> jobs_;  // calls made on the worker's behalf of other threads
  std::vector<std::string> fired_;           // keys of watches that fired: they must be set again
  bool stopping_ = false;

  // Published view.
  mutable std::mutex view_mutex_;
  mutable std::condition_variable view_changed_;
  // The view's pointer behind a mutex of its own, held only to copy it. libstdc++ 12's
  // std::atomic<std::shared_ptr> releases its internal lock with relaxed order after a load, which
  // ThreadSanitizer reports as a race with the next store.
  class view_slot {
   public:
    [[nodiscard]] std::shared_ptr<const cluster_view> load() const {
      std::lock_guard lock(mutex_);
      return view_;
    }
    void store(std::shared_ptr<const cluster_view> view) {  // the old view is released after the lock
      std::lock_guard lock(mutex_);
      view_.swap(view);
    }

   private:
    mutable std::mutex mutex_;
    std::shared_ptr<const cluster_view> view_;
  };
  view_slot view_;
  bool ready_ = false;  // the first full read succeeded

  std::mutex listeners_mutex_;
  std::vector<listener> listeners_;
  std::vector<listener> new_listeners_;  // still owed the current view

  std::thread worker_;
};

}  // namespace ferry::coord
