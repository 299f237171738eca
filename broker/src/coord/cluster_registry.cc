#include "coord/cluster_registry.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "base/log.h"
#include "coord/errc.h"

namespace ferry::coord {
namespace {

using std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto retry_backoff = 250ms;
// Kafka purges config change notifications older than this (changeExpirationMs).
constexpr std::int64_t config_change_expiry_ms = std::int64_t{15} * 60 * 1000;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool is_disconnection(std::error_code e) {
  return e == errc::connection_loss || e == errc::session_expired || e == errc::timeout;
}

// Errors that go away by themselves (reconnects, lost races): the work is repeated after a pause.
bool is_transient(std::error_code e) {
  return is_disconnection(e) || e == errc::bad_version || e == errc::node_exists || e == errc::no_node;
}

std::string child_path(std::string_view parent, std::string_view child) {
  std::string path(parent);
  path += '/';
  path += child;
  return path;
}

std::string children_key(std::string_view path) { return "c:" + std::string(path); }
std::string data_key(std::string_view path) { return "d:" + std::string(path); }

bool contains(const std::vector<broker_id>& ids, broker_id id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

result<void> validate_assignment(const layout::replica_assignment& assignment) {
  std::int32_t expected = 0;
  for (const auto& [p, replicas] : assignment) {
    if (p.value() != expected++ || replicas.empty()) return errc::invalid_argument;
    auto sorted = replicas;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return errc::invalid_argument;
    if (sorted.front().value() < 0) return errc::invalid_argument;
  }
  if (assignment.empty()) return errc::invalid_argument;
  return success();
}

}  // namespace

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
  session_options.on_new_session = [r = self.get()] { r->enqueue(task{task_kind::new_session}); };
  FERRY_TRY(self->session_, zk_session::connect(std::move(session_options)));

  FERRY_TRY(self->ensure_base_paths());
  FERRY_TRY(self->load_cluster_id());
  // A previous run of this broker may have left its registration behind; ZooKeeper removes it when that
  // session expires, within its timeout (plus tick rounding, hence the half).
  FERRY_TRY(self->register_broker(steady_clock::now() + self->options_.session_timeout * 3 / 2));
  self->model_.cluster_id = self->cluster_id_;

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

cluster_registry::~cluster_registry() {
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

// ---------------------------------------------------------------------------------------------------------
// Startup

result<void> cluster_registry::ensure_base_paths() {
  for (const auto path : {layout::brokers_ids_path, layout::brokers_topics_path, layout::config_topics_path,
                          layout::config_changes_path, layout::delete_topics_path, layout::producer_id_block_path}) {
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

result<void> cluster_registry::register_broker(std::optional<steady_clock::time_point> deadline) {
  const std::string path = layout::broker_path(options_.id);
  layout::broker_registration registration;
  registration.host = options_.host;
  registration.port = options_.port;
  registration.rack = options_.rack;
  registration.endpoints = {layout::endpoint{"PLAINTEXT", "PLAINTEXT", options_.host, options_.port}};
  registration.timestamp_ms = now_ms();
  const std::string data = layout::encode_broker(registration);

  struct vanished {
    std::mutex mutex;
    std::condition_variable changed;
    bool fired = false;
  };
  bool waiting_logged = false;
  for (;;) {
    auto created = session_->create(path, data, create_mode::ephemeral);
    if (created) return success();
    if (created.error() != errc::node_exists) return created.error();

    auto signal = std::make_shared<vanished>();
    FERRY_TRY(const auto stat, session_->exists(path, [signal](watch_event, const std::string&) {
      std::lock_guard lock(signal->mutex);
      signal->fired = true;
      signal->changed.notify_all();
    }));
    if (!stat) continue;  // gone meanwhile: create again
    // A retried create that had in fact succeeded: the node is already ours.
    if (stat->ephemeral_owner == session_->session_id()) return success();
    if (!deadline || steady_clock::now() >= *deadline) {
      FERRY_LOG(error, "coord") << "broker id " << options_.id << " is registered by another live broker (session 0x"
                                << std::hex << stat->ephemeral_owner << std::dec
                                << "); check broker.id, it must be unique in the cluster";
      return errc::node_exists;
    }
    if (!waiting_logged) {
      FERRY_LOG(info, "coord") << path << " exists from an earlier session; waiting for it to expire";
      waiting_logged = true;
    }
    std::unique_lock lock(signal->mutex);
    signal->changed.wait_until(lock, *deadline, [&] { return signal->fired; });
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

watcher cluster_registry::watch_for(task t, std::string key) {
  return [this, t = std::move(t), key = std::move(key)](watch_event, const std::string&) { enqueue(t, key); };
}

std::string cluster_registry::describe(const task& t) {
  switch (t.kind) {
    case task_kind::new_session:
      return "the cluster on a new session";
    case task_kind::resync:
      return "the cluster";
    case task_kind::brokers:
      return std::string(layout::brokers_ids_path);
    case task_kind::deletions:
      return std::string(layout::delete_topics_path);
    case task_kind::topics:
      return std::string(layout::brokers_topics_path);
    case task_kind::topic:
      return layout::topic_path(t.topic);
    case task_kind::partition_state:
      return layout::partition_state_path(t.topic, partition_id{t.partition});
    case task_kind::config_changes:
      return std::string(layout::config_changes_path);
    case task_kind::controller:
      return std::string(layout::controller_path);
    case task_kind::reconcile:
      return "controller duties";
  }
  return "?";
}

void cluster_registry::worker_loop() {
  std::set<task> retry;
  for (;;) {
    std::set<task> batch;
    std::vector<std::string> fired;
    {
      std::unique_lock lock(queue_mutex_);
      if (retry.empty()) {
        queue_changed_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      } else {
        // Pause before retrying; whatever arrives meanwhile joins that batch.
        queue_changed_.wait_for(lock, retry_backoff, [&] { return stopping_; });
      }
      if (stopping_) return;
      batch.swap(pending_);
      fired.swap(fired_);
    }
    batch.merge(retry);
    retry.clear();
    for (const auto& key : fired) armed_.erase(key);

    bool disconnected = false;
    for (const auto& t : batch) {
      // Without ZooKeeper every task would wait out the operation timeout in turn: keep them for later.
      if (disconnected) {
        retry.insert(t);
        continue;
      }
      auto done = handle(t);
      if (done) continue;
      if (done.error() == errc::closed) return;
      if (is_transient(done.error())) retry.insert(t);
      disconnected = is_disconnection(done.error());
      FERRY_LOG(warn, "coord") << "reading " << describe(t) << " failed (" << done.error().message() << ")"
                               << (is_transient(done.error()) ? "; will retry" : "");
    }
    if (is_controller_ && !disconnected) {
      auto done = reconcile();
      if (!done && done.error() == errc::closed) return;
      if (!done && done.error() != errc::not_controller) {
        FERRY_LOG(warn, "coord") << "controller duties failed (" << done.error().message() << "); will retry";
        retry.insert(task{task_kind::reconcile});
      }
    } else if (is_controller_) {
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
      armed_.clear();
      if (is_controller_) resign();
      FERRY_TRY(register_broker(std::nullopt));
      FERRY_TRY(resync());
      return refresh_controller();
    }
    case task_kind::resync:
      return resync();
    case task_kind::brokers:
      return refresh_brokers();
    case task_kind::deletions:
      return refresh_deletions();
    case task_kind::topics:
      return refresh_topics(false);
    case task_kind::topic:
      return refresh_topic(t.topic, false);
    case task_kind::partition_state:
      return refresh_partition_state(t.topic, partition_id{t.partition});
    case task_kind::config_changes:
      return refresh_config_changes(false);
    case task_kind::controller:
      return refresh_controller();
    case task_kind::reconcile:
      return success();
  }
  return success();
}

void cluster_registry::publish() {
  bool changed = false;
  {
    std::lock_guard lock(view_mutex_);
    if (*view_.load() != model_) {
      view_.store(std::make_shared<const cluster_view>(model_));
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
  for (const auto& l : all) l(current);
  for (const auto& l : fresh) l(current);
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
  const bool met = view_changed_.wait_for(lock, timeout, [&] {
    current = view_.load();
    return condition(*current);
  });
  if (!met) return errc::timeout;
  return current;
}

// ---------------------------------------------------------------------------------------------------------
// Reading the cluster

result<std::optional<node_data>> cluster_registry::read_watched(const std::string& path, const task& t,
                                                                bool watch_creation) {
  const std::string key = data_key(path);
  const bool arm = !armed_.contains(key);
  auto got = session_->get(path, arm ? watch_for(t, key) : watcher{});
  if (got) {
    if (arm) armed_.insert(key);
    return std::optional<node_data>(std::move(got).value());
  }
  if (got.error() != errc::no_node) return got.error();
  if (!watch_creation || !arm) return std::optional<node_data>{};
  // A failed get sets no watch; exists does, and fires when the node is created.
  FERRY_TRY(const auto stat, session_->exists(path, watch_for(t, key)));
  armed_.insert(key);
  if (!stat) return std::optional<node_data>{};
  auto again = session_->get(path);
  if (!again) {
    if (again.error() == errc::no_node) return std::optional<node_data>{};
    return again.error();
  }
  return std::optional<node_data>(std::move(again).value());
}

result<void> cluster_registry::resync() {
  FERRY_TRY(refresh_brokers());
  FERRY_TRY(refresh_deletions());
  // Notifications first: every config read after this point is at least as new as they are.
  FERRY_TRY(refresh_config_changes(true));
  return refresh_topics(true);
}

result<void> cluster_registry::refresh_brokers() {
  const std::string parent(layout::brokers_ids_path);
  const std::string key = children_key(parent);
  const bool arm = !armed_.contains(key);
  FERRY_TRY(const auto children,
            session_->get_children(parent, arm ? watch_for(task{task_kind::brokers}, key) : watcher{}));
  if (arm) armed_.insert(key);

  std::map<broker_id, broker_info> brokers;
  for (const auto& child : children) {
    std::int32_t id = 0;
    const auto [end, ec] = std::from_chars(child.data(), child.data() + child.size(), id);
    if (ec != std::errc{} || end != child.data() + child.size()) continue;
    auto got = session_->get(child_path(parent, child));
    if (!got) {
      if (got.error() == errc::no_node) continue;  // left meanwhile
      return got.error();
    }
    auto registration = layout::decode_broker(got.value().data);
    if (!registration) {
      FERRY_LOG(warn, "coord") << "ignoring broker " << child << ": malformed registration " << got.value().data;
      continue;
    }
    auto& r = registration.value();
    brokers.emplace(broker_id{id}, broker_info{broker_id{id}, std::move(r.host), r.port, std::move(r.rack),
                                               std::move(r.endpoints), got.value().stat.czxid});
  }
  model_.brokers = std::move(brokers);
  // Someone deleted our registration while our session lives on: put it back.
  if (!model_.brokers.contains(options_.id)) {
    FERRY_LOG(warn, "coord") << "registration of broker " << options_.id << " disappeared; registering again";
    FERRY_TRY(register_broker(std::nullopt));
    return refresh_brokers();
  }
  return success();
}

result<void> cluster_registry::refresh_deletions() {
  const std::string parent(layout::delete_topics_path);
  const std::string key = children_key(parent);
  const bool arm = !armed_.contains(key);
  FERRY_TRY(auto children,
            session_->get_children(parent, arm ? watch_for(task{task_kind::deletions}, key) : watcher{}));
  if (arm) armed_.insert(key);
  deletion_markers_ = std::set<std::string, std::less<>>(children.begin(), children.end());
  for (auto& [name, topic] : model_.topics) topic.marked_for_deletion = deletion_markers_.contains(name);
  return success();
}

result<void> cluster_registry::refresh_topics(bool full) {
  const std::string parent(layout::brokers_topics_path);
  const std::string key = children_key(parent);
  const bool arm = !armed_.contains(key);
  FERRY_TRY(const auto children,
            session_->get_children(parent, arm ? watch_for(task{task_kind::topics}, key) : watcher{}));
  if (arm) armed_.insert(key);

  const std::set<std::string, std::less<>> names(children.begin(), children.end());
  std::vector<std::string> gone;
  for (const auto& [name, topic] : model_.topics) {
    if (!names.contains(name)) gone.push_back(name);
  }
  for (const auto& name : gone) drop_topic(name);
  for (const auto& name : names) {
    if (full || !model_.topics.contains(name)) {
      FERRY_TRY(refresh_topic(name, full));
    }
  }
  return success();
}

result<void> cluster_registry::refresh_topic(const std::string& name, bool full) {
  FERRY_TRY(auto got, read_watched(layout::topic_path(name), task{task_kind::topic, name}, false));
  if (!got) {
    drop_topic(name);
    return success();
  }
  auto assignment = layout::decode_topic(got->data);
  if (!assignment) {
    FERRY_LOG(warn, "coord") << "ignoring topic " << name << ": malformed " << layout::topic_path(name) << ": "
                             << got->data;
    drop_topic(name);
    return success();
  }
  // Built aside and committed whole, so a failed read leaves the model as it was for the retry.
  const auto existing = model_.topics.find(name);
  const bool is_new = existing == model_.topics.end();
  topic_info updated = is_new ? topic_info{} : existing->second;
  updated.topic_id = assignment.value().topic_id;
  updated.marked_for_deletion = deletion_markers_.contains(name);

  std::vector<partition_id> removed;
  for (const auto& [p, info] : updated.partitions) {
    if (!assignment.value().partitions.contains(p)) removed.push_back(p);
  }
  for (const auto p : removed) updated.partitions.erase(p);
  for (auto& [p, replicas] : assignment.value().partitions) {
    const bool known = updated.partitions.contains(p);
    auto& partition = updated.partitions[p];
    partition.replicas = std::move(replicas);
    if (!known || full) {
      FERRY_TRY(partition.state, read_partition_state(name, p, !updated.marked_for_deletion));
    }
  }
  if (is_new || full) {
    FERRY_TRY(updated.config, read_config(name));
  }
  model_.topics[name] = std::move(updated);
  topic_versions_[name] = got->stat.version;
  for (const auto p : removed) forget_partition(name, p);
  return success();
}

result<std::optional<partition_state>> cluster_registry::read_partition_state(const std::string& name, partition_id p,
                                                                              bool watch_creation) {
  const auto path = layout::partition_state_path(name, p);
  FERRY_TRY(auto got, read_watched(path, task{task_kind::partition_state, name, p.value()}, watch_creation));
  if (!got) return std::optional<partition_state>{};
  auto state = layout::decode_partition_state(got->data);
  if (!state) {
    FERRY_LOG(warn, "coord") << "ignoring malformed " << path << ": " << got->data;
    return std::optional<partition_state>{};
  }
  auto& s = state.value();
  return std::optional<partition_state>(
      partition_state{s.leader, s.epoch, std::move(s.isr), s.controller_epoch, got->stat.version});
}

result<void> cluster_registry::refresh_partition_state(const std::string& name, partition_id p) {
  const auto topic = model_.topics.find(name);
  if (topic == model_.topics.end() || !topic->second.partitions.contains(p)) return success();
  // States of a topic being deleted are not coming back; a creation watch on them would only linger.
  FERRY_TRY(auto state, read_partition_state(name, p, !topic->second.marked_for_deletion));
  topic->second.partitions[p].state = std::move(state);
  return success();
}

result<layout::config_map> cluster_registry::read_config(const std::string& name) {
  auto got = session_->get(layout::topic_config_path(name));
  if (!got) {
    if (got.error() != errc::no_node) return got.error();
    return layout::config_map{};
  }
  auto config = layout::decode_topic_config(got.value().data);
  if (!config) {
    FERRY_LOG(warn, "coord") << "ignoring malformed " << layout::topic_config_path(name) << ": " << got.value().data;
    return layout::config_map{};
  }
  return config;
}

result<void> cluster_registry::refresh_config_changes(bool skip_existing) {
  const std::string parent(layout::config_changes_path);
  const std::string key = children_key(parent);
  const bool arm = !armed_.contains(key);
  FERRY_TRY(auto children,
            session_->get_children(parent, arm ? watch_for(task{task_kind::config_changes}, key) : watcher{}));
  if (arm) armed_.insert(key);

  std::vector<std::pair<std::int64_t, std::string>> changes;
  for (auto& child : children) {
    if (const auto seq = layout::config_change_sequence(child)) changes.emplace_back(*seq, std::move(child));
  }
  std::sort(changes.begin(), changes.end());
  for (const auto& [seq, child] : changes) {
    if (seq <= last_config_change_) continue;
    if (!skip_existing) {
      auto got = session_->get(child_path(parent, child));
      if (!got && got.error() != errc::no_node) return got.error();
      if (got) {
        auto change = layout::decode_config_change(got.value().data);
        if (!change) {
          FERRY_LOG(warn, "coord") << "ignoring malformed config change " << child << ": " << got.value().data;
        } else if (change.value().entity_type == "topics") {
          const auto topic = model_.topics.find(change.value().entity_name);
          // A topic not in the model yet gets its config when it is read.
          if (topic != model_.topics.end()) {
            FERRY_TRY(topic->second.config, read_config(topic->first));
          }
        }
      }
    }
    last_config_change_ = seq;
  }
  if (is_controller_) {
    std::vector<std::string> names;
    names.reserve(changes.size());
    for (const auto& [seq, child] : changes) names.push_back(child);
    FERRY_TRY(purge_config_changes(names));
  }
  return success();
}

result<void> cluster_registry::refresh_controller() {
  FERRY_TRY(auto got, read_watched(std::string(layout::controller_path), task{task_kind::controller}, true));
  if (!got) {
    model_.controller = no_broker;
    if (is_controller_) resign();
    return try_elect();
  }
  auto registration = layout::decode_controller(got->data);
  if (!registration) {
    FERRY_LOG(warn, "coord") << "malformed " << layout::controller_path << ": " << got->data;
    model_.controller = no_broker;
    if (is_controller_) resign();
    return success();
  }
  model_.controller = registration.value().id;
  const bool ours = registration.value().id == options_.id && got->stat.ephemeral_owner == session_->session_id();
  if (ours && !is_controller_) {
    // An election whose reply was lost: it did succeed.
    FERRY_TRY(const auto epoch_node, session_->get(std::string(layout::controller_epoch_path)));
    FERRY_TRY(const auto epoch, layout::decode_controller_epoch(epoch_node.data));
    become_controller(epoch, epoch_node.stat.version);
  } else if (!ours && is_controller_) {
    resign();
  }
  return success();
}

void cluster_registry::drop_topic(const std::string& name) {
  const auto topic = model_.topics.find(name);
  if (topic == model_.topics.end()) return;
  std::vector<partition_id> partitions;
  for (const auto& [p, info] : topic->second.partitions) partitions.push_back(p);
  model_.topics.erase(topic);
  topic_versions_.erase(name);
  for (const auto p : partitions) forget_partition(name, p);
}

void cluster_registry::forget_partition(const std::string& name, partition_id p) {
  const auto path = layout::partition_state_path(name, p);
  if (armed_.erase(data_key(path)) > 0) session_->remove_watches(path);
}

// ---------------------------------------------------------------------------------------------------------
// Controller

result<void> cluster_registry::try_elect() {
  const std::string epoch_path(layout::controller_epoch_path);
  auto epoch_node = session_->get(epoch_path);
  if (!epoch_node && epoch_node.error() == errc::no_node) {
    auto created = session_->create(epoch_path, layout::encode_controller_epoch(0), create_mode::persistent);
    if (!created && created.error() != errc::node_exists) return created.error();
    epoch_node = session_->get(epoch_path);
  }
  if (!epoch_node) return epoch_node.error();
  FERRY_TRY(const auto epoch, layout::decode_controller_epoch(epoch_node.value().data));
  const std::int32_t version = epoch_node.value().stat.version;

  // Kafka's registerControllerAndIncrementControllerEpoch: both or neither.
  const std::vector<zk_op> ops = {
      zk_op::create(std::string(layout::controller_path), layout::encode_controller({options_.id, now_ms()}),
                    create_mode::ephemeral),
      zk_op::set(epoch_path, layout::encode_controller_epoch(epoch + 1), version)};
  auto elected = session_->multi(ops);
  if (elected) {
    become_controller(epoch + 1, version + 1);
    return success();
  }
  // Another broker won (its /controller triggers our creation watch), or the reply was lost and
  // refresh_controller() will find out whether we won.
  if (elected.error() == errc::node_exists || elected.error() == errc::bad_version) return success();
  return elected.error();
}

void cluster_registry::become_controller(std::int32_t epoch, std::int32_t epoch_version) {
  controller_epoch_ = epoch;
  controller_epoch_version_ = epoch_version;
  is_controller_ = true;
  model_.controller = options_.id;
  FERRY_LOG(info, "coord") << "broker " << options_.id << " is the controller, epoch " << epoch;
}

void cluster_registry::resign() {
  is_controller_ = false;
  FERRY_LOG(info, "coord") << "broker " << options_.id << " is no longer the controller";
}

result<void> cluster_registry::controller_write(std::vector<zk_op> ops) {
  ops.insert(ops.begin(), zk_op::check(std::string(layout::controller_epoch_path), controller_epoch_version_));
  std::size_t failed = ops.size();
  auto written = session_->multi(ops, &failed);
  if (written) return success();
  if (failed == 0) {
    // /controller_epoch moved on: another broker was elected.
    resign();
    enqueue(task{task_kind::controller});
    return errc::not_controller;
  }
  return written.error();
}

result<void> cluster_registry::reconcile() {
  std::vector<std::string> without_id;
  for (const auto& [name, topic] : model_.topics) {
    if (topic.topic_id.is_zero() && !topic.marked_for_deletion) without_id.push_back(name);
  }
  for (const auto& name : without_id) {
    FERRY_TRY(assign_topic_id(name));
  }

  for (const auto& name : std::vector<std::string>(deletion_markers_.begin(), deletion_markers_.end())) {
    FERRY_TRY(delete_topic_nodes(name));
    deletion_markers_.erase(name);
  }

  std::vector<std::string> names;
  for (const auto& [name, topic] : model_.topics) {
    if (!topic.marked_for_deletion) names.push_back(name);
  }
  std::error_code failure;  // the first error that is not a lost race; the whole pass is retried
  for (const auto& name : names) {
    std::vector<partition_id> missing;
    for (const auto& [p, info] : model_.topics.at(name).partitions) {
      if (!info.state) {
        missing.push_back(p);
        continue;
      }
      auto done = elect_leader(name, p);
      if (done) continue;
      if (done.error() == errc::not_controller || done.error() == errc::closed) return done.error();
      // A lost race: the state changed meanwhile. Its watch re-reads it and the next pass looks again.
      if (done.error() != errc::bad_version && done.error() != errc::no_node && !failure) failure = done.error();
    }
    if (missing.empty()) continue;
    auto done = create_partition_states(name, missing);
    if (done) continue;
    if (done.error() == errc::not_controller || done.error() == errc::closed) return done.error();
    if (done.error() == errc::node_exists || done.error() == errc::no_node) {
      // Created (or the topic deleted) by someone else meanwhile: read those states again.
      for (const auto p : missing) enqueue(task{task_kind::partition_state, name, p.value()});
    } else if (!failure) {
      failure = done.error();
    }
  }
  if (failure) return failure;
  return success();
}

result<void> cluster_registry::assign_topic_id(const std::string& name) {
  const auto& topic = model_.topics.at(name);
  layout::topic_assignment assignment;
  assignment.topic_id = uuid::random();
  for (const auto& [p, info] : topic.partitions) assignment.partitions.emplace(p, info.replicas);
  auto written = controller_write(
      {zk_op::set(layout::topic_path(name), layout::encode_topic(assignment), topic_versions_.at(name))});
  if (!written && written.error() == errc::bad_version) {
    enqueue(task{task_kind::topic, name});
    return success();
  }
  FERRY_TRY(written);
  FERRY_LOG(info, "coord") << "assigned topic id " << assignment.topic_id << " to topic " << name;
  return success();
}

result<void> cluster_registry::delete_topic_nodes(const std::string& name) {
  // Post-order: children before their parent. A topic that is already gone leaves only the marker.
  std::vector<std::string> doomed;
  std::function<result<void>(const std::string&)> collect = [&](const std::string& path) -> result<void> {
    auto children = session_->get_children(path);
    if (!children) return children.error() == errc::no_node ? success() : result<void>(children.error());
    for (const auto& child : children.value()) {
      FERRY_TRY(collect(child_path(path, child)));
    }
    doomed.push_back(path);
    return success();
  };
  FERRY_TRY(collect(layout::topic_path(name)));
  FERRY_TRY(const auto config, session_->exists(layout::topic_config_path(name)));
  if (config) doomed.push_back(layout::topic_config_path(name));
  doomed.push_back(layout::delete_topic_path(name));

  // Multi-ops are bounded by the server's request size: delete big topics in slices, the topic node last.
  constexpr std::size_t slice = 500;
  for (std::size_t begin = 0; begin < doomed.size(); begin += slice) {
    std::vector<zk_op> ops;
    for (std::size_t i = begin; i < std::min(doomed.size(), begin + slice); ++i)
      ops.push_back(zk_op::remove(doomed[i]));
    FERRY_TRY(controller_write(std::move(ops)));
  }
  FERRY_LOG(info, "coord") << "deleted topic " << name;
  return success();
}

result<void> cluster_registry::create_partition_states(const std::string& name,
                                                       const std::vector<partition_id>& missing) {
  const std::string partitions_path = layout::topic_partitions_path(name);
  auto children = session_->get_children(partitions_path);
  if (!children && children.error() != errc::no_node) return children.error();
  const std::set<std::string> existing =
      children ? std::set<std::string>(children.value().begin(), children.value().end()) : std::set<std::string>{};
  std::vector<zk_op> ops;
  if (!children) ops.push_back(zk_op::create(partitions_path, ""));
  std::vector<std::pair<partition_id, layout::leader_and_isr>> created;
  for (const auto p : missing) {
    std::vector<broker_id> live_replicas;
    for (const auto r : model_.topics.at(name).partitions.at(p).replicas) {
      if (model_.is_live(r)) live_replicas.push_back(r);
    }
    // Kafka's NewPartition -> OnlinePartition: the first live replica leads. Kafka also counts every live
    // follower in sync from the start; Ferry starts the ISR with the leader alone, and followers join through
    // alter_isr once they have caught up, so a leader failover never elects a replica that holds no data.
    // Without any live replica the partition stays offline until one registers.
    if (live_replicas.empty()) continue;
    if (!existing.contains(std::to_string(p.value())))
      ops.push_back(zk_op::create(layout::partition_path(name, p), ""));
    layout::leader_and_isr state{live_replicas.front(), leader_epoch{0}, {live_replicas.front()}, controller_epoch_};
    ops.push_back(zk_op::create(layout::partition_state_path(name, p), layout::encode_partition_state(state)));
    created.emplace_back(p, std::move(state));
  }
  if (created.empty()) return success();
  // Multi-ops are bounded by the server's request size; slices keep their order, parents first.
  constexpr std::size_t slice = 600;
  for (std::size_t begin = 0; begin < ops.size(); begin += slice) {
    std::vector<zk_op> part(ops.begin() + static_cast<std::ptrdiff_t>(begin),
                            ops.begin() + static_cast<std::ptrdiff_t>(std::min(ops.size(), begin + slice)));
    FERRY_TRY(controller_write(std::move(part)));
  }
  auto& partitions = model_.topics.at(name).partitions;
  for (auto& [p, s] : created) {
    partitions.at(p).state = partition_state{s.leader, s.epoch, std::move(s.isr), s.controller_epoch, 0};
  }
  FERRY_LOG(info, "coord") << "created " << created.size() << " partition states of topic " << name;
  return success();
}

result<void> cluster_registry::elect_leader(const std::string& name, partition_id p) {
  const auto& info = model_.topics.at(name).partitions.at(p);
  const auto& current = *info.state;
  layout::leader_and_isr next{current.leader, current.epoch, current.isr, controller_epoch_};
  std::vector<broker_id> live_isr;
  for (const auto r : current.isr) {
    if (model_.is_live(r)) live_isr.push_back(r);
  }
  if (current.leader == no_broker || !model_.is_live(current.leader)) {
    // Clean election only: the first replica in assignment order that is alive and in the ISR.
    const auto candidate = std::find_if(info.replicas.begin(), info.replicas.end(),
                                        [&](broker_id r) { return model_.is_live(r) && contains(current.isr, r); });
    if (candidate != info.replicas.end()) {
      next.leader = *candidate;
      next.epoch = leader_epoch{current.epoch.value() + 1};
      next.isr = live_isr;
    } else if (current.leader != no_broker) {
      // Nobody in sync is alive: no leader, and the ISR is kept so one of its members can take over later.
      next.leader = no_broker;
      next.epoch = leader_epoch{current.epoch.value() + 1};
    }
  } else if (live_isr != current.isr) {
    // A follower died: drop it from the ISR (the leader adds it back through alter_isr once caught up). The
    // leader is unchanged, so is its epoch; the state znode's version still moves.
    next.isr = live_isr;
  }
  if (next.leader == current.leader && next.epoch == current.epoch && next.isr == current.isr) return success();

  FERRY_TRY(controller_write(
      {zk_op::set(layout::partition_state_path(name, p), layout::encode_partition_state(next), current.zk_version)}));
  FERRY_LOG(info, "coord") << "partition " << name << "/" << p << ": leader " << next.leader << ", epoch " << next.epoch
                           << ", " << next.isr.size() << " in sync";
  model_.topics.at(name).partitions.at(p).state =
      partition_state{next.leader, next.epoch, std::move(next.isr), next.controller_epoch, current.zk_version + 1};
  return success();
}

result<void> cluster_registry::purge_config_changes(const std::vector<std::string>& children) {
  const std::string parent(layout::config_changes_path);
  const std::int64_t cutoff = now_ms() - config_change_expiry_ms;
  for (const auto& child : children) {
    const std::string path = child_path(parent, child);
    FERRY_TRY(const auto stat, session_->exists(path));
    if (!stat || stat->ctime_ms >= cutoff) continue;
    auto removed = session_->remove(path);
    if (!removed && removed.error() != errc::no_node) return removed.error();
  }
  return success();
}

// ---------------------------------------------------------------------------------------------------------
// Operations for request handlers

result<uuid> cluster_registry::create_topic(std::string_view name, const layout::replica_assignment& assignment,
                                            const layout::config_map& config) {
  if (!layout::is_valid_topic_name(name)) return errc::invalid_argument;
  FERRY_TRY(validate_assignment(assignment));
  const layout::topic_assignment topic{assignment, uuid::random()};
  const std::string topic_path = layout::topic_path(name);
  const std::string config_path = layout::topic_config_path(name);
  // The config znode may be left over from an earlier topic of that name: then it is overwritten.
  for (int attempt = 0;; ++attempt) {
    FERRY_TRY(const auto existing_config, session_->exists(config_path));
    const std::vector<zk_op> ops = {zk_op::create(topic_path, layout::encode_topic(topic)),
                                    existing_config ? zk_op::set(config_path, layout::encode_topic_config(config))
                                                    : zk_op::create(config_path, layout::encode_topic_config(config))};
    std::size_t failed = ops.size();
    auto written = session_->multi(ops, &failed);
    if (written) return topic.topic_id;
    if (failed == 0 && written.error() == errc::node_exists) {
      // Either the topic exists, or this was our own write retried after a lost reply.
      auto got = session_->get(topic_path);
      if (got) {
        auto current = layout::decode_topic(got.value().data);
        if (current && current.value().topic_id == topic.topic_id) return topic.topic_id;
      }
      return errc::node_exists;
    }
    // The config znode appeared or vanished between exists and multi.
    if (failed == 1 && attempt < 3) continue;
    return written.error();
  }
}

result<void> cluster_registry::delete_topic(std::string_view name) {
  if (!layout::is_valid_topic_name(name)) return errc::invalid_argument;
  FERRY_TRY(const auto topic, session_->exists(layout::topic_path(name)));
  if (!topic) return errc::no_node;
  auto marked = session_->create(layout::delete_topic_path(name), "", create_mode::persistent);
  if (!marked && marked.error() != errc::node_exists) return marked.error();
  return success();
}

result<void> cluster_registry::set_topic_config(std::string_view name, const layout::config_map& config) {
  if (!layout::is_valid_topic_name(name)) return errc::invalid_argument;
  FERRY_TRY(const auto topic, session_->exists(layout::topic_path(name)));
  if (!topic) return errc::no_node;
  const std::string path = layout::topic_config_path(name);
  const std::string data = layout::encode_topic_config(config);
  auto written = session_->set(path, data);
  if (!written) {
    if (written.error() != errc::no_node) return written.error();
    auto created = session_->create(path, data, create_mode::persistent);
    if (!created) {
      if (created.error() != errc::node_exists) return created.error();
      FERRY_TRY(session_->set(path, data));
    }
  }
  FERRY_TRY(session_->create(std::string(layout::config_changes_path) + "/" + std::string(layout::config_change_prefix),
                             layout::encode_config_change({"topics", std::string(name)}),
                             create_mode::persistent_sequential));
  return success();
}

result<layout::config_map> cluster_registry::read_topic_config(std::string_view name) {
  if (!layout::is_valid_topic_name(name)) return errc::invalid_argument;
  FERRY_TRY(const auto topic, session_->exists(layout::topic_path(name)));
  if (!topic) return errc::no_node;
  auto got = session_->get(layout::topic_config_path(name));
  if (!got) {
    if (got.error() == errc::no_node) return layout::config_map{};
    return got.error();
  }
  return layout::decode_topic_config(got.value().data);
}

result<void> cluster_registry::add_partitions(std::string_view name, const layout::replica_assignment& assignment) {
  if (!layout::is_valid_topic_name(name)) return errc::invalid_argument;
  FERRY_TRY(validate_assignment(assignment));
  const std::string path = layout::topic_path(name);
  FERRY_TRY(const auto got, session_->get(path));
  FERRY_TRY(const auto current, layout::decode_topic(got.data));
  if (assignment.size() <= current.partitions.size()) return errc::invalid_argument;
  for (const auto& [p, replicas] : current.partitions) {
    const auto it = assignment.find(p);
    if (it == assignment.end() || it->second != replicas) return errc::invalid_argument;
  }
  const layout::topic_assignment updated{assignment, current.topic_id};
  FERRY_TRY(session_->set(path, layout::encode_topic(updated), got.stat.version));
  return success();
}

result<layout::producer_id_block> cluster_registry::allocate_producer_id_block() {
  const std::string path(layout::producer_id_block_path);
  for (;;) {
    std::int64_t first = 0;
    std::optional<std::int32_t> version;
    auto got = session_->get(path);
    if (got) {
      version = got.value().stat.version;
      if (!got.value().data.empty()) {
        FERRY_TRY(const auto last_block, layout::decode_producer_id_block(got.value().data));
        if (last_block.last > std::numeric_limits<std::int64_t>::max() - layout::producer_id_block_size) {
          FERRY_LOG(error, "coord") << "producer ids are exhausted";
          return errc::invalid_data;
        }
        first = last_block.last + 1;
      }
    } else if (got.error() != errc::no_node) {
      return got.error();
    }
    const layout::producer_id_block block{options_.id, first, first + layout::producer_id_block_size - 1};
    const std::string data = layout::encode_producer_id_block(block);
    // A lost race (bad_version, node_exists) means another broker took this block: read again.
    if (version) {
      auto written = session_->set(path, data, *version);
      if (written) return block;
      if (written.error() != errc::bad_version) return written.error();
    } else {
      auto created = session_->create(path, data, create_mode::persistent);
      if (created) return block;
      if (created.error() != errc::node_exists) return created.error();
    }
  }
}

result<partition_state> cluster_registry::alter_isr(const topic_partition& tp, leader_epoch epoch,
                                                    const std::vector<broker_id>& isr) {
  if (!contains(isr, options_.id)) return errc::invalid_argument;
  const std::string path = layout::partition_state_path(tp.topic, tp.partition);
  for (;;) {
    FERRY_TRY(const auto got, session_->get(path));
    FERRY_TRY(auto state, layout::decode_partition_state(got.data));
    if (state.leader != options_.id || state.epoch != epoch) return errc::fenced;
    if (state.isr == isr) {
      return partition_state{state.leader, state.epoch, std::move(state.isr), state.controller_epoch, got.stat.version};
    }
    state.isr = isr;
    auto written = session_->set(path, layout::encode_partition_state(state), got.stat.version);
    if (written) {
      return partition_state{state.leader, state.epoch, std::move(state.isr), state.controller_epoch,
                             written.value().version};
    }
    // The controller changed the state meanwhile: re-check leadership and try again.
    if (written.error() != errc::bad_version) return written.error();
  }
}

}  // namespace ferry::coord
