#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "coord/cluster_view.h"
#include "coord/config_store.h"
#include "coord/metadata_table.h"
#include "coord/topic_store.h"
#include "coord/zk_session.h"

namespace ferry::coord {

struct observer_options {
  std::string connect;  // zookeeper.connect, chroot included
  std::chrono::milliseconds session_timeout{18'000};
  // How long a write waits out a lost connection before failing (short: the caller retries).
  std::chrono::milliseconds operation_timeout{10'000};
  // The identity to log in as and the ACLs of the nodes written (the brokers' zookeeper.set.acl).
  zk_security security;
  // Called on the observer's thread after every change of the view, with the views before and after.
  std::function<void(const cluster_view& before, const cluster_view& after)> on_change;
};

// The cluster as ZooKeeper describes it, for a process that is not a broker (the operator): the same
// metadata_table the brokers keep, on one worker thread that follows its watches, publishing an immutable view
// after every change. It never registers anything; writes go through topics() and configs(). A failed read is
// retried after a pause (ZooKeeper down, parents not created yet because no broker has started).
class cluster_observer {
 public:
  // Connects (waiting up to the session timeout) and starts following; the first view may still be empty.
  static result<std::unique_ptr<cluster_observer>> start(observer_options options);
  ~cluster_observer();
  cluster_observer(const cluster_observer&) = delete;
  cluster_observer& operator=(const cluster_observer&) = delete;

  // The latest view; it has been read completely once ready() is true.
  [[nodiscard]] std::shared_ptr<const cluster_view> view() const;
  [[nodiscard]] bool ready() const;
  // Whether the ZooKeeper connection is up now.
  [[nodiscard]] bool connected() const { return session_->connected(); }
  [[nodiscard]] topic_store& topics() { return *topics_; }
  [[nodiscard]] config_store& configs() { return *configs_; }
  void shutdown();

 private:
  explicit cluster_observer(observer_options options) : options_(std::move(options)) {}
  void enqueue(task t, std::string fired_watch);
  void worker_loop();
  result<void> handle(const task& t);

  observer_options options_;
  std::unique_ptr<zk_session> session_;
  std::unique_ptr<metadata_table> table_;
  std::unique_ptr<config_store> configs_;
  std::unique_ptr<topic_store> topics_;

  std::mutex queue_mutex_;
  std::condition_variable queue_changed_;
  std::set<task> pending_;
  std::vector<std::string> fired_;
  bool stopping_ = false;

  mutable std::mutex view_mutex_;
  std::shared_ptr<const cluster_view> view_ = std::make_shared<const cluster_view>();
  bool ready_ = false;
  std::thread worker_;
};

}  // namespace ferry::coord
