#include "coord/cluster_observer.h"

#include "base/log.h"
#include "coord/errc.h"
#include "coord/worker_errors.h"

namespace ferry::coord {
namespace {

constexpr auto retry_backoff = std::chrono::milliseconds(500);

}  // namespace

result<std::unique_ptr<cluster_observer>> cluster_observer::start(observer_options options) {
  std::unique_ptr<cluster_observer> self(new cluster_observer(std::move(options)));
  zk_session_options session_options;
  session_options.connect = self->options_.connect;
  session_options.session_timeout = self->options_.session_timeout;
  session_options.connect_timeout = self->options_.session_timeout;
  session_options.operation_timeout = self->options_.operation_timeout;
  session_options.security = self->options_.security;
  session_options.on_new_session = [o = self.get()] { o->enqueue(task{task_kind::new_session}, {}); };
  FERRY_TRY(self->session_, zk_session::connect(std::move(session_options)));
  auto sink = [o = self.get()](task t, std::string fired) { o->enqueue(std::move(t), std::move(fired)); };
  self->table_ = std::make_unique<metadata_table>(*self->session_, sink);
  self->configs_ = std::make_unique<config_store>(*self->session_);
  self->topics_ = std::make_unique<topic_store>(*self->session_, *self->configs_);
  self->pending_ = {task{task_kind::resync}};
  self->worker_ = std::thread([o = self.get()] { o->worker_loop(); });
  return self;
}

cluster_observer::~cluster_observer() { shutdown(); }

void cluster_observer::shutdown() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_changed_.notify_all();
  if (session_) session_->close();
  if (worker_.joinable()) worker_.join();
}

std::shared_ptr<const cluster_view> cluster_observer::view() const {
  std::lock_guard lock(view_mutex_);
  return view_;
}

bool cluster_observer::ready() const {
  std::lock_guard lock(view_mutex_);
  return ready_;
}

void cluster_observer::enqueue(task t, std::string fired_watch) {
  {
    std::lock_guard lock(queue_mutex_);
    pending_.insert(std::move(t));
    if (!fired_watch.empty()) fired_.push_back(std::move(fired_watch));
  }
  queue_changed_.notify_one();
}

result<void> cluster_observer::handle(const task& t) {
  switch (t.kind) {
    case task_kind::new_session:
      table_->forget_all_watches();
      [[fallthrough]];
    case task_kind::resync: {
      FERRY_TRY(table_->refresh_brokers(no_broker, {}));
      return table_->resync();
    }
    case task_kind::brokers:
      return table_->refresh_brokers(no_broker, {});
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
    case task_kind::state_changes: {
      FERRY_TRY(table_->refresh_state_changes(false));
      return success();
    }
    case task_kind::config_changes: {
      FERRY_TRY(table_->refresh_config_changes(false));
      return success();
    }
    case task_kind::acl_changes:  // the operator does not follow ACLs
    case task_kind::extended_acl_changes:
    case task_kind::controller:
    case task_kind::reconcile:
    case task_kind::leader_balance:
      return success();  // a broker's duties
  }
  return success();
}

void cluster_observer::worker_loop() {
  std::set<task> retry;
  for (;;) {
    std::set<task> batch;
    std::vector<std::string> fired;
    {
      std::unique_lock lock(queue_mutex_);
      if (!retry.empty()) {
        queue_changed_.wait_for(lock, retry_backoff, [&] { return stopping_; });
      } else {
        queue_changed_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      }
      if (stopping_) return;
      batch.swap(pending_);
      fired.swap(fired_);
    }
    batch.merge(retry);
    retry.clear();
    table_->forget_fired(fired);
    bool disconnected = false;
    for (const auto& t : batch) {
      if (disconnected) {
        retry.insert(t);
        continue;
      }
      auto done = run_worker_step([&] { return handle(t); }, describe(t));
      if (done) continue;
      if (done.error() == errc::closed) return;
      retry.insert(t);
      disconnected = is_disconnection(done.error());
      FERRY_LOG_LIMITED(warn, "coord", 10'000)
          << "reading " << describe(t) << " failed (" << done.error().message() << "); will retry";
    }
    auto after = std::make_shared<const cluster_view>(table_->model());
    std::shared_ptr<const cluster_view> before;
    {
      std::lock_guard lock(view_mutex_);
      before = std::exchange(view_, after);
      if (retry.empty()) ready_ = true;
    }
    if (options_.on_change && !(*before == *after)) options_.on_change(*before, *after);
  }
}

}  // namespace ferry::coord
