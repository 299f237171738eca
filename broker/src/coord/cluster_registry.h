#pragma once

#include <atomic>
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
#include "coord/cluster_view.h"
#include "coord/layout.h"
#include "coord/uuid.h"
#include "coord/zk_session.h"
#include "model/ids.h"

namespace ferry::coord {

struct registry_options {
  std::string connect;                                // zookeeper.connect, may end in a chroot
  std::chrono::milliseconds session_timeout{18'000};  // zookeeper.session.timeout.ms
  std::chrono::milliseconds connect_timeout{18'000};  // zookeeper.connection.timeout.ms
  broker_id id;
  std::string host;  // advertised PLAINTEXT listener
  std::int32_t port = 9092;
  std::optional<std::string> rack;
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
  // and, if held, the controller role disappear at once.
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
  [[nodiscard]] bool is_controller() const { return is_controller_.load(); }
  // The ZooKeeper session's id and password; tests use them to expire the session.
  [[nodiscard]] zk_session::credentials session_credentials() const { return session_->current_credentials(); }

  // Writes /brokers/topics/<name> (with a new random topic id) and /config/topics/<name> in one multi-op and
  // returns the topic id. `assignment` must number partitions 0..n-1, each with distinct replicas.
  // errc::node_exists if the topic exists (including while it is being deleted); errc::invalid_argument for a
  // bad name or assignment. The controller then creates the partition states.
  result<uuid> create_topic(std::string_view name, const layout::replica_assignment& assignment,
                            const layout::config_map& config);
  // Marks the topic for deletion (/admin/delete_topics/<name>); the controller deletes it. errc::no_node if
  // the topic does not exist; success if it is already marked.
  result<void> delete_topic(std::string_view name);
  // Replaces the topic's config overrides and announces the change under /config/changes.
  result<void> set_topic_config(std::string_view name, const layout::config_map& config);
  // The overrides as ZooKeeper holds them now (the view may lag behind a change made through another
  // broker); for read-modify-write changes such as IncrementalAlterConfigs.
  result<layout::config_map> read_topic_config(std::string_view name);
  // `assignment` is the new full assignment: the existing partitions unchanged plus new ones numbered on.
  // Conditional on the topic znode's version: errc::bad_version if it changed meanwhile.
  result<void> add_partitions(std::string_view name, const layout::replica_assignment& assignment);
  // Claims the next block of 1000 producer ids through a conditional update of /latest_producer_id_block.
  result<layout::producer_id_block> allocate_producer_id_block();
  // For the partition leader (this broker) to shrink or expand the ISR, as Kafka leaders did before
  // AlterPartition: conditional on the state znode; errc::fenced unless this broker is the leader at
  // `epoch`; errc::invalid_argument unless `isr` contains this broker.
  result<partition_state> alter_isr(const topic_partition& tp, leader_epoch epoch, const std::vector<broker_id>& isr);

 private:
  enum class task_kind {
    new_session,  // after a session expiry: re-register, forget watches, resync
    resync,       // re-read everything
    brokers,
    deletions,  // children of /admin/delete_topics
    topics,     // children of /brokers/topics
    topic,
    partition_state,
    config_changes,
    controller,
    reconcile,  // nothing to read: only makes the worker run (controller duties, new listeners)
  };
  struct task {
    explicit task(task_kind k, std::string t = {}, std::int32_t p = -1) : kind(k), topic(std::move(t)), partition(p) {}
    task_kind kind;
    std::string topic;
    std::int32_t partition;
    auto operator<=>(const task&) const = default;
  };

  explicit cluster_registry(registry_options options);

  // Startup steps, on the caller's thread.
  result<void> ensure_base_paths();
  result<void> load_cluster_id();
  // With a deadline, waits that long for a foreign registration of our id to vanish.
  result<void> register_broker(std::optional<std::chrono::steady_clock::time_point> deadline);

  static std::string describe(const task& t);
  void enqueue(task t, std::string fired_watch = {});
  watcher watch_for(task t, std::string key);
  void worker_loop();
  result<void> handle(const task& t);
  void publish();

  // Readers: all on the worker thread, updating model_ and setting watches once (armed_).
  result<std::optional<node_data>> read_watched(const std::string& path, const task& t, bool watch_creation);
  result<void> resync();
  result<void> refresh_brokers();
  result<void> refresh_deletions();
  result<void> refresh_topics(bool full);
  result<void> refresh_topic(const std::string& name, bool full);
  result<void> refresh_partition_state(const std::string& name, partition_id p);
  result<std::optional<partition_state>> read_partition_state(const std::string& name, partition_id p,
                                                              bool watch_creation);
  result<layout::config_map> read_config(const std::string& name);
  result<void> refresh_config_changes(bool skip_existing);
  result<void> refresh_controller();
  void drop_topic(const std::string& name);
  // Drops the watch on a partition state that left the model.
  void forget_partition(const std::string& name, partition_id p);

  // Controller: election and duties, on the worker thread.
  result<void> try_elect();
  void become_controller(std::int32_t epoch, std::int32_t epoch_version);
  void resign();
  // Runs ops in one multi-op behind a check of /controller_epoch, so a deposed controller cannot write.
  result<void> controller_write(std::vector<zk_op> ops);
  result<void> reconcile();
  result<void> assign_topic_id(const std::string& name);
  result<void> delete_topic_nodes(const std::string& name);
  result<void> create_partition_states(const std::string& name, const std::vector<partition_id>& missing);
  // Elects a leader where the current one is dead (or there is none) and drops dead brokers from the ISR.
  result<void> elect_leader(const std::string& name, partition_id p);
  result<void> purge_config_changes(const std::vector<std::string>& children);

  const registry_options options_;
  std::unique_ptr<zk_session> session_;
  std::string cluster_id_;

  // Worker-thread state.
  cluster_view model_;
  std::map<std::string, std::int32_t, std::less<>> topic_versions_;  // topic znode data versions
  std::set<std::string, std::less<>> deletion_markers_;
  std::set<std::string, std::less<>> armed_;  // watch keys ("c:" children, "d:" data + path) currently set
  std::int64_t last_config_change_ = -1;
  std::int32_t controller_epoch_ = 0;
  std::int32_t controller_epoch_version_ = 0;
  std::atomic<bool> is_controller_{false};

  // Work queue.
  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::set<task> pending_;
  std::vector<std::string> fired_;  // keys of watches that fired: they must be set again
  bool stopping_ = false;

  // Published view.
  mutable std::mutex view_mutex_;
  mutable std::condition_variable view_changed_;
  std::atomic<std::shared_ptr<const cluster_view>> view_;
  bool ready_ = false;  // the first full read succeeded

  std::mutex listeners_mutex_;
  std::vector<listener> listeners_;
  std::vector<listener> new_listeners_;  // still owed the current view

  std::thread worker_;
};

}  // namespace ferry::coord
