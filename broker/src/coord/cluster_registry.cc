#include "coord/cluster_registry.h"

#include "base/log.h"
#include "coord/acl_layout.h"
#include "coord/errc.h"
#include "coord/worker_errors.h"
#include "coord/zk_lockdown.h"

namespace ferry::coord {
namespace {

using std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto retry_backoff = 250ms;

}  // namespace

std::string describe(const task& t) {
  switch (t.kind) {
    case task_kind::new_session:
      return "the cluster on a new session";
    case task_kind::resync:
      return "the cluster";
    case task_kind::brokers:
      return std::string(layout::brokers_ids_path);
    case task_kind::deletions:
      return std::string(layout::delete_topics_path);
    case task_kind::shutting_down:
      return std::string(layout::controlled_shutdown_path);
    case task_kind::offline_replicas:
      return std::string(layout::offline_replicas_path);
    case task_kind::topics:
      return std::string(layout::brokers_topics_path);
    case task_kind::topic:
      return layout::topic_path(t.topic);
    case task_kind::partition_state:
      return layout::partition_state_path(t.topic, partition_id{t.partition});
    case task_kind::state_changes:
      return std::string(layout::partition_state_changes_path);
    case task_kind::config_changes:
      return std::string(layout::config_changes_path);
    case task_kind::acl_changes:
      return std::string(layout::literal_acl_changes_path);
    case task_kind::extended_acl_changes:
      return std::string(layout::extended_acl_changes_path);
    case task_kind::controller:
      return std::string(layout::controller_path);
    case task_kind::reconcile:
      return "controller duties";
    case task_kind::leader_balance:
      return "the leader balance";
  }
  return "?";
}

cluster_registry::cluster_registry(registry_options options) : options_(std::move(options)) {
  view_.store(std::make_shared<const cluster_view>());
}

result<std::unique_ptr<cluster_registry>> cluster_registry::start(registry_options options) {
  std::unique_ptr<cluster_registry> self(new cluster_registry(std::move(options)));
  zk_session_options session_options;
  session_options.connect = self->options_.connect;
  session_options.session_timeout = self->options_.session_timeout;
  session_options.connect_timeout = self->options_.connect_timeout;
  session_options.operation_timeout = self->options_.session_timeout;
  session_options.on_new_session = [r = self.get()] {
    if (r->options_.on_session) r->options_.on_session(r->session_->current_credentials());
    r->enqueue(task{task_kind::new_session});
  };
  session_options.resume = self->options_.resume;
  session_options.security = self->options_.security;
  FERRY_TRY(self->session_, zk_session::connect(std::move(session_options)));
  if (self->options_.on_session) self->options_.on_session(self->session_->current_credentials());
  auto sink = [r = self.get()](task t, std::string fired) { r->enqueue(std::move(t), std::move(fired)); };
  self->table_ = std::make_unique<metadata_table>(*self->session_, sink, self->options_.delete_topic_enable);
  self->controller_ = std::make_unique<controller>(*self->session_, *self->table_, self->options_.id,
                                                   self->options_.unclean_leader_election_default,
                                                   self->options_.delete_topic_enable, sink);
  self->configs_ = std::make_unique<config_store>(*self->session_);
  self->acls_ = std::make_unique<acl_store>(*self->session_);
  self->topics_ = std::make_unique<topic_store>(*self->session_, *self->configs_);

  FERRY_TRY(self->ensure_base_paths());
  FERRY_TRY(self->forget_offline_replicas());
  FERRY_TRY(self->load_cluster_id());
  // A previous run of this broker may have left its registration behind; ZooKeeper removes it when that
  // session expires, within its timeout (plus tick rounding, hence the half).
  FERRY_TRY(
      register_broker(*self->session_, self->endpoint(), steady_clock::now() + self->options_.session_timeout * 3 / 2));
  self->table_->model().cluster_id = self->cluster_id_;

  self->pending_ = {task{task_kind::resync}, task{task_kind::controller}};
  self->worker_ = std::thread([r = self.get()] { r->worker_loop(); });
  {
    std::unique_lock lock(self->view_mutex_);
    if (!self->view_changed_.wait_for(lock, self->options_.connect_timeout, [&] { return self->ready_; })) {
      lock.unlock();
      FERRY_LOG(error, "coord") << "could not read the cluster state from ZooKeeper (zookeeper.connect='"
                                << self->options_.connect << "')";
      return errc::timeout;
    }
  }
  FERRY_LOG(info, "coord") << "broker " << self->options_.id << " registered in cluster " << self->cluster_id_;
  return self;
}

cluster_registry::~cluster_registry() { shutdown(); }

void cluster_registry::shutdown() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_changed_.notify_all();
  {
    std::lock_guard lock(view_mutex_);
    view_changed_.notify_all();
  }
  // Closing first makes a worker blocked on ZooKeeper return at once.
  if (session_) session_->close();
  if (worker_.joinable()) worker_.join();
}

result<std::size_t> cluster_registry::lock_down_existing_nodes() { return coord::lock_down_existing_nodes(*session_); }

broker_endpoint cluster_registry::endpoint() const {
  return {options_.id, options_.endpoints, options_.rack, options_.schema_registry};
}

// ---------------------------------------------------------------------------------------------------------
// Startup

result<void> cluster_registry::ensure_base_paths() {
  for (const auto path :
       {layout::brokers_ids_path, layout::brokers_topics_path, layout::config_topics_path, layout::config_brokers_path,
        layout::config_changes_path, layout::delete_topics_path, layout::producer_id_block_path,
        layout::partition_state_changes_path, layout::controlled_shutdown_path, layout::offline_replicas_path,
        layout::literal_acls_path, layout::prefixed_acls_path, layout::literal_acl_changes_path,
        layout::extended_acl_changes_path}) {
    auto created = session_->create(std::string(path), "", create_mode::persistent, true);
    if (!created && created.error() != errc::node_exists) {
      FERRY_LOG(error, "coord") << "cannot create " << path << ": " << created.error().message();
      return created.error();
    }
  }
  return success();
}

result<void> cluster_registry::load_cluster_id() {
  const std::string path(layout::cluster_id_path);
  for (;;) {
    auto got = session_->get(path);
    if (got) {
      auto id = layout::decode_cluster_id(got.value().data);
      if (!id) {
        FERRY_LOG(error, "coord") << path << " holds malformed data: " << got.value().data;
        return id.error();
      }
      cluster_id_ = std::move(id).value();
      return success();
    }
    if (got.error() != errc::no_node) return got.error();
    // The first broker of a new cluster names it.
    auto created =
        session_->create(path, layout::encode_cluster_id(uuid::random().to_string()), create_mode::persistent, true);
    if (!created && created.error() != errc::node_exists) return created.error();
  }
}

// ---------------------------------------------------------------------------------------------------------
// Worker

void cluster_registry::enqueue(task t, std::string fired_watch) {
  {
    std::lock_guard lock(queue_mutex_);
    pending_.insert(std::move(t));
    if (!fired_watch.empty()) fired_.push_back(std::move(fired_watch));
  }
  queue_changed_.notify_one();
}

void cluster_registry::submit(std::function<void()> job) {
  {
    std::lock_guard lock(queue_mutex_);
    jobs_.push_back(std::move(job));
  }
  queue_changed_.notify_one();
}

void cluster_registry::worker_loop() {
  std::set<task> retry;
  bool was_controller = false;
  auto next_balance_check = std::chrono::steady_clock::now();
  for (;;) {
    std::set<task> batch;
    std::vector<std::string> fired;
    std::vector<std::function<void()>> jobs;
    const bool balancing = options_.auto_leader_rebalance && controller_->is_active();
    if (balancing && !was_controller)
      next_balance_check = std::chrono::steady_clock::now() + options_.leader_imbalance_check_interval;
    was_controller = controller_->is_active();
    {
      std::unique_lock lock(queue_mutex_);
      const auto has_work = [&] { return stopping_ || !pending_.empty() || !jobs_.empty(); };
      if (!retry.empty()) {
        // Pause before retrying; whatever arrives meanwhile joins that batch.
        queue_changed_.wait_for(lock, retry_backoff, [&] { return stopping_; });
      } else if (balancing) {
        queue_changed_.wait_until(lock, next_balance_check, has_work);
      } else {
        queue_changed_.wait(lock, has_work);
      }
      if (stopping_) return;
      batch.swap(pending_);
      fired.swap(fired_);
      jobs.swap(jobs_);
    }
    if (balancing && std::chrono::steady_clock::now() >= next_balance_check) {
      batch.insert(task{task_kind::leader_balance});
      next_balance_check = std::chrono::steady_clock::now() + options_.leader_imbalance_check_interval;
    }
    batch.merge(retry);
    retry.clear();
    table_->forget_fired(fired);

    bool disconnected = false;
    for (const auto& t : batch) {
      // Without ZooKeeper every task would wait out the operation timeout in turn: keep them for later.
      if (disconnected) {
        retry.insert(t);
        continue;
      }
      auto done = run_worker_step([&] { return handle(t); }, describe(t));
      if (done) continue;
      if (done.error() == errc::closed) return;
      if (is_transient(done.error())) retry.insert(t);
      disconnected = is_disconnection(done.error());
      FERRY_LOG(warn, "coord") << "reading " << describe(t) << " failed (" << done.error().message() << ")"
                               << (is_transient(done.error()) ? "; will retry" : "");
    }
    for (const auto& job : jobs) {
      (void)run_worker_step(
          [&]() -> result<void> {
            job();
            return success();
          },
          "a request to the registry");
    }
    if (controller_->is_active() && !disconnected) {
      auto done = run_worker_step([&] { return controller_->reconcile(); }, "controller duties");
      if (!done && done.error() == errc::closed) return;
      if (!done && done.error() != errc::not_controller) {
        FERRY_LOG(warn, "coord") << "controller duties failed (" << done.error().message() << "); will retry";
        retry.insert(task{task_kind::reconcile});
      }
    } else if (controller_->is_active()) {
      retry.insert(task{task_kind::reconcile});
    }
    publish();
    if (retry.empty() && !ready_) {
      std::lock_guard lock(view_mutex_);
      ready_ = true;
      view_changed_.notify_all();
    }
  }
}

result<void> cluster_registry::handle(const task& t) {
  switch (t.kind) {
    case task_kind::new_session: {
      // The old session's watches and ephemeral nodes (ours, and /controller if we held it) are gone.
      table_->forget_all_watches();
      if (controller_->is_active()) controller_->resign();
      FERRY_TRY(register_broker(*session_, endpoint(), std::nullopt));
      FERRY_TRY(resync());
      return controller_->refresh();
    }
    case task_kind::resync:
      return resync();
    case task_kind::brokers:
      return table_->refresh_brokers(options_.id,
                                     [this] { return register_broker(*session_, endpoint(), std::nullopt); });
    case task_kind::deletions:
      return table_->refresh_deletions();
    case task_kind::shutting_down:
      return table_->refresh_shutting_down();
    case task_kind::offline_replicas:
      return table_->refresh_offline_replicas();
    case task_kind::topics:
      return table_->refresh_topics(false);
    case task_kind::topic:
      return table_->refresh_topic(t.topic, false);
    case task_kind::partition_state:
      return table_->refresh_partition_state(t.topic, partition_id{t.partition});
    case task_kind::state_changes:
      return refresh_state_changes();
    case task_kind::config_changes:
      return refresh_config_changes(false);
    case task_kind::acl_changes:
      return refresh_acl_changes(authz::pattern_type::literal);
    case task_kind::extended_acl_changes:
      return refresh_acl_changes(authz::pattern_type::prefixed);
    case task_kind::controller:
      return controller_->refresh();
    case task_kind::reconcile:
      return success();
    case task_kind::leader_balance:
      if (!controller_->is_active()) return success();
      return controller_->balance_leaders(options_.leader_imbalance_percentage);
  }
  return success();
}

void cluster_registry::publish() {
  bool changed = false;
  {
    std::lock_guard lock(view_mutex_);
    table_->model().index_topic_ids();
    if (*view_.load() != table_->model()) {
      view_.store(std::make_shared<const cluster_view>(table_->model()));
      changed = true;
      view_changed_.notify_all();
    }
  }
  std::vector<listener> all;
  std::vector<listener> fresh;
  {
    std::lock_guard lock(listeners_mutex_);
    fresh.swap(new_listeners_);
    if (changed) all = listeners_;
    listeners_.insert(listeners_.end(), fresh.begin(), fresh.end());
  }
  if (all.empty() && fresh.empty()) return;
  const auto current = view_.load();
  for (const auto* group : {&all, &fresh}) {
    for (const auto& l : *group) {
      (void)run_worker_step(
          [&]() -> result<void> {
            l(current);
            return success();
          },
          "a listener of the cluster view");
    }
  }
}

void cluster_registry::add_listener(listener l) {
  {
    std::lock_guard lock(listeners_mutex_);
    new_listeners_.push_back(std::move(l));
  }
  enqueue(task{task_kind::reconcile});
}

result<std::shared_ptr<const cluster_view>> cluster_registry::wait_for(
    const std::function<bool(const cluster_view&)>& condition, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(view_mutex_);
  auto current = view_.load();
  bool stopped = false;
  const bool met = view_changed_.wait_for(lock, timeout, [&] {
    current = view_.load();
    stopped = stopping();
    return stopped || condition(*current);
  });
  if (stopped) return errc::closed;
  if (!met) return errc::timeout;
  return current;
}

result<void> cluster_registry::resync() {
  FERRY_TRY(
      table_->refresh_brokers(options_.id, [this] { return register_broker(*session_, endpoint(), std::nullopt); }));
  FERRY_TRY(table_->resync());
  return table_->refresh_acls();
}

result<void> cluster_registry::refresh_config_changes(bool skip_existing) {
  FERRY_TRY(const auto names, table_->refresh_config_changes(skip_existing));
  if (controller_->is_active()) return controller_->purge_expired(layout::config_changes_path, names);
  return success();
}

result<void> cluster_registry::refresh_acl_changes(authz::pattern_type pattern) {
  FERRY_TRY(const auto names, table_->refresh_acl_changes(pattern));
  if (controller_->is_active()) return controller_->purge_expired(layout::acl_changes_path(pattern), names);
  return success();
}

result<void> cluster_registry::refresh_state_changes() {
  FERRY_TRY(const auto names, table_->refresh_state_changes(false));
  if (controller_->is_active()) return controller_->purge_expired(layout::partition_state_changes_path, names);
  return success();
}

bool cluster_registry::stopping() const {
  std::lock_guard lock(queue_mutex_);
  return stopping_;
}

result<layout::producer_id_block> cluster_registry::allocate_producer_id_block() {
  return coord::allocate_producer_id_block(*session_, options_.id);
}

result<void> cluster_registry::alter_isr(const topic_partition& tp, const partition_state& expected,
                                         std::vector<broker_id> isr) {
  const auto current = view();  // held: the topic below lives in it
  const auto* topic = current->find_topic(tp.topic);
  if (topic == nullptr) return errc::no_node;
  const layout::leader_and_isr next{expected.leader, expected.epoch, std::move(isr), expected.controller_epoch};
  const layout::partition_state_change change{tp.topic, topic->topic_id, tp.partition, expected.zk_version + 1, next};
  const std::vector<zk_op> ops = {
      zk_op::set(layout::partition_state_path(tp.topic, tp.partition), layout::encode_partition_state(next),
                 expected.zk_version),
      zk_op::create(layout::child_path(layout::partition_state_changes_path, layout::partition_state_change_prefix),
                    layout::encode_partition_state_changes({change}), create_mode::persistent_sequential)};
  return session_->multi(ops);
}

namespace {

// Partitions this broker leads that another live in-sync replica, not shutting down, could lead.
std::size_t movable_leaderships(const cluster_view& view, broker_id self) {
  std::size_t count = 0;
  for (const auto& [name, topic] : view.topics) {
    for (const auto& [p, info] : topic.partitions) {
      if (!info.state || info.state->leader != self) continue;
      const auto& isr = info.state->isr;
      if (std::any_of(isr.begin(), isr.end(), [&](broker_id r) { return r != self && view.can_lead(r); })) ++count;
    }
  }
  return count;
}

}  // namespace

result<void> cluster_registry::forget_offline_replicas() {
  // A restart that took over its earlier session would keep what that run reported; its dirs are online again.
  const std::string parent(layout::offline_replicas_path);
  FERRY_TRY(const auto children, session_->get_children(parent));
  for (const auto& child : children) {
    if (layout::offline_replicas_broker(child) != options_.id) continue;
    if (auto removed = session_->remove(layout::child_path(parent, child));
        !removed && removed.error() != errc::no_node)
      return removed.error();
  }
  return success();
}

result<void> cluster_registry::report_offline_replicas(std::size_t dir,
                                                       const std::vector<topic_partition>& partitions) {
  auto created = session_->create(
      layout::child_path(layout::offline_replicas_path, layout::offline_replicas_child(options_.id, dir)),
      layout::encode_offline_replicas(partitions), create_mode::ephemeral);
  if (!created && created.error() != errc::node_exists) return created.error();
  return success();
}

result<void> cluster_registry::acknowledge_deletion(const std::string& topic) {
  auto created =
      session_->create(layout::deletion_acknowledgement_path(topic, options_.id), "", create_mode::persistent);
  if (!created && created.error() != errc::node_exists && created.error() != errc::no_node) return created.error();
  return success();
}

result<void> cluster_registry::controlled_shutdown(std::int32_t attempts, std::chrono::milliseconds backoff) {
  if (!session_->connected()) return errc::connection_loss;
  const broker_id self = options_.id;
  auto marked = session_->create(layout::child_path(layout::controlled_shutdown_path, std::to_string(self.value())), "",
                                 create_mode::ephemeral);
  if (!marked && marked.error() != errc::node_exists) return marked.error();
  const auto moved = [self](const cluster_view& v) {
    return v.shutting_down.contains(self) && movable_leaderships(v, self) == 0;
  };
  for (std::int32_t attempt = 1; attempt <= attempts; ++attempt) {
    auto done = wait_for(moved, backoff);
    if (done) return success();
    if (done.error() == errc::closed) return done.error();
    FERRY_LOG(warn, "coord") << "controlled shutdown, attempt " << attempt << " of " << attempts << ": broker " << self
                             << " still leads " << movable_leaderships(*view(), self)
                             << " partitions another in-sync replica could lead";
  }
  return errc::timeout;
}

result<std::vector<election_result>> cluster_registry::elect_leaders(
    election_type type, std::optional<std::vector<topic_partition>> partitions, std::chrono::milliseconds timeout) {
  using outcome = result<std::vector<election_result>>;
  struct slot {
    std::mutex mutex;
    std::condition_variable done;
    std::optional<outcome> value;
  };
  auto answer = std::make_shared<slot>();
  submit([this, answer, type, partitions = std::move(partitions)] {
    outcome elected = controller_->is_active() ? controller_->elect_leaders(type, partitions) : errc::not_controller;
    std::lock_guard lock(answer->mutex);
    answer->value = std::move(elected);
    answer->done.notify_all();
  });
  std::unique_lock lock(answer->mutex);
  if (!answer->done.wait_for(lock, timeout, [&] { return answer->value.has_value(); })) return errc::timeout;
  return std::move(*answer->value);
}

}  // namespace ferry::coord
