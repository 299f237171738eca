#include "coord/controller.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <set>

#include "base/log.h"
#include "coord/errc.h"
#include "coord/reassignment.h"

namespace ferry::coord {
namespace {

// Kafka purges config change notifications older than this (changeExpirationMs); Ferry's partition state
// change log too: a broker that misses changes for that long has lost its session and reads every state anew.
constexpr std::int64_t change_expiry_ms = std::int64_t{15} * 60 * 1000;
// Multi-ops are bounded by the server's request size (jute.maxbuffer, 1 MiB): big topics are written and
// deleted in slices.
constexpr std::size_t deletions_per_multi = 500;
constexpr std::size_t states_per_multi = 200;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool contains(const std::vector<broker_id>& ids, broker_id id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Topics whose partitions the controller elects leaders for: readable, not being deleted, and with their id.
bool has_elections(const topic_info& topic) {
  return !topic.marked_for_deletion && topic.valid() && !topic.topic_id.is_zero();
}

// The node that logs the states one multi-op writes, for every broker's metadata_table.
zk_op log_state_changes(const std::vector<layout::partition_state_change>& changes) {
  return zk_op::create(layout::child_path(layout::partition_state_changes_path, layout::partition_state_change_prefix),
                       layout::encode_partition_state_changes(changes), create_mode::persistent_sequential);
}

// The topic znode as the model has it (any reassignment in progress included), for the controller's rewrites.
layout::topic_assignment znode_of(const topic_info& topic) {
  layout::topic_assignment assignment;
  assignment.topic_id = topic.topic_id;
  for (const auto& [p, info] : topic.partitions)
    set_assignment(assignment, p, {info.replicas, info.adding, info.removing});
  return assignment;
}

}  // namespace

result<void> controller::refresh() {
  auto& model = table_.model();
  FERRY_TRY(auto got, table_.read_watched(std::string(layout::controller_path), task{task_kind::controller}, true));
  if (!got) {
    model.controller = no_broker;
    if (active_) resign();
    return try_elect();
  }
  auto registration = layout::decode_controller(got->data);
  if (!registration) {
    FERRY_LOG(warn, "coord") << "malformed " << layout::controller_path << ": " << got->data;
    model.controller = no_broker;
    if (active_) resign();
    return success();
  }
  model.controller = registration.value().id;
  const bool ours = registration.value().id == self_ && got->stat.ephemeral_owner == session_.session_id();
  if (ours && !active_) {
    // An election whose reply was lost: it did succeed.
    FERRY_TRY(const auto epoch_node, session_.get(std::string(layout::controller_epoch_path)));
    FERRY_TRY(const auto epoch, layout::decode_controller_epoch(epoch_node.data));
    become_controller(epoch, epoch_node.stat.version);
  } else if (!ours && active_) {
    resign();
  }
  return success();
}

result<void> controller::try_elect() {
  const std::string epoch_path(layout::controller_epoch_path);
  auto epoch_node = session_.get(epoch_path);
  if (!epoch_node && epoch_node.error() == errc::no_node) {
    auto created = session_.create(epoch_path, layout::encode_controller_epoch(0), create_mode::persistent);
    if (!created && created.error() != errc::node_exists) return created.error();
    epoch_node = session_.get(epoch_path);
  }
  if (!epoch_node) return epoch_node.error();
  FERRY_TRY(const auto epoch, layout::decode_controller_epoch(epoch_node.value().data));
  const std::int32_t version = epoch_node.value().stat.version;

  // Kafka's registerControllerAndIncrementControllerEpoch: both or neither.
  const std::vector<zk_op> ops = {zk_op::create(std::string(layout::controller_path),
                                                layout::encode_controller({self_, now_ms()}), create_mode::ephemeral),
                                  zk_op::set(epoch_path, layout::encode_controller_epoch(epoch + 1), version)};
  auto elected = session_.multi(ops);
  if (elected) {
    become_controller(epoch + 1, version + 1);
    return success();
  }
  // Another broker won (its /controller triggers our creation watch), or the reply was lost and refresh()
  // will find out whether we won.
  if (elected.error() == errc::node_exists || elected.error() == errc::bad_version) return success();
  return elected.error();
}

void controller::become_controller(std::int32_t epoch, std::int32_t epoch_version) {
  epoch_ = epoch;
  epoch_version_ = epoch_version;
  active_ = true;
  table_.model().controller = self_;
  FERRY_LOG(info, "coord") << "broker " << self_ << " is the controller, epoch " << epoch;
}

void controller::resign() {
  active_ = false;
  FERRY_LOG(info, "coord") << "broker " << self_ << " is no longer the controller";
}

result<void> controller::controller_write(std::vector<zk_op> ops, std::size_t* failed_op) {
  ops.insert(ops.begin(), zk_op::check(std::string(layout::controller_epoch_path), epoch_version_));
  std::size_t failed = ops.size();
  auto written = session_.multi(ops, &failed);
  if (written) return success();
  if (failed == 0) {
    // /controller_epoch moved on: another broker was elected.
    resign();
    enqueue_(task{task_kind::controller}, {});
    return errc::not_controller;
  }
  if (failed_op != nullptr) *failed_op = failed - 1;
  return written.error();
}

result<void> controller::reconcile() {
  auto& model = table_.model();
  std::vector<std::string> without_id;
  for (const auto& [name, topic] : model.topics) {
    if (topic.invalid.empty() && topic.topic_id.is_zero() && !topic.marked_for_deletion) without_id.push_back(name);
  }
  for (const auto& name : without_id) {
    FERRY_TRY(assign_topic_id(name));
  }

  const std::vector<std::string> doomed(table_.deletion_markers().begin(), table_.deletion_markers().end());
  for (const auto& name : doomed) {
    if (delete_topic_enable_) {
      FERRY_TRY(const bool deleted_everywhere, live_replicas_deleted_their_logs(name));
      if (!deleted_everywhere) continue;  // the watch on the marker's children brings another pass
      FERRY_TRY(delete_topic_nodes(name));
    } else {
      FERRY_TRY(refuse_deletion(name));
    }
    table_.forget_deletion_marker(name);
  }

  std::vector<std::string> names;
  for (const auto& [name, topic] : model.topics) {
    if (has_elections(topic)) names.push_back(name);
  }
  std::error_code failure;  // the first error that is not a lost race; the whole pass is retried
  std::vector<state_update> updates;
  for (const auto& name : names) {
    std::vector<partition_id> missing;
    for (const auto& [p, info] : model.topics.at(name).partitions) {
      if (!info.state) {
        missing.push_back(p);
      } else if (auto update = next_state(name, p, unclean_election_allowed(model.topics.at(name)))) {
        updates.push_back(std::move(*update));
      }
    }
    if (missing.empty()) continue;
    auto done = create_partition_states(name, missing);
    if (done) continue;
    if (done.error() == errc::not_controller || done.error() == errc::closed) return done.error();
    if (done.error() == errc::node_exists || done.error() == errc::no_node) {
      // Created (or the topic deleted) by someone else meanwhile: read those states again.
      for (const auto p : missing) enqueue_(task{task_kind::partition_state, name, p.value()}, {});
    } else if (!failure) {
      failure = done.error();
    }
  }
  FERRY_TRY(write_states(updates));
  for (const auto& name : names) {
    FERRY_TRY(complete_reassignments(name));
  }
  if (failure) return failure;
  return success();
}

result<void> controller::complete_reassignments(const std::string& name) {
  auto& model = table_.model();
  auto& topic = model.topics.at(name);
  std::vector<std::pair<partition_id, layout::leader_and_isr>> done;
  for (const auto& [p, info] : topic.partitions) {
    if (auto next = completed_state(model, info, epoch_)) done.emplace_back(p, std::move(*next));
    if (done.size() == states_per_multi) break;  // the rest in the next pass, against the new topic version
  }
  if (done.empty()) return success();

  auto assignment = znode_of(topic);
  std::vector<zk_op> ops;
  std::vector<layout::partition_state_change> changes;
  for (const auto& [p, next] : done) {
    const auto& info = topic.partitions.at(p);
    set_assignment(assignment, p, {info.target_replicas(), {}, {}});
    ops.push_back(zk_op::set(layout::partition_state_path(name, p), layout::encode_partition_state(next),
                             info.state->zk_version));
    changes.push_back({name, topic.topic_id, p, info.state->zk_version + 1, next});
  }
  ops.push_back(log_state_changes(changes));
  const std::int32_t topic_version = table_.topic_version(name);
  ops.push_back(zk_op::set(layout::topic_path(name), layout::encode_topic(assignment), topic_version));
  auto written = controller_write(std::move(ops));
  if (!written) {
    if (written.error() != errc::bad_version && written.error() != errc::no_node) return written.error();
    // A leader changed an ISR or someone rewrote the topic meanwhile: read both again and decide anew.
    enqueue_(task{task_kind::topic, name}, {});
    for (const auto& [p, next] : done) enqueue_(task{task_kind::partition_state, name, p.value()}, {});
    return success();
  }
  table_.set_topic_version(name, topic_version + 1);
  for (auto& [p, next] : done) {
    auto& info = topic.partitions.at(p);
    if (next.leader != info.state->leader) ++elections_;
    info.replicas = info.target_replicas();
    info.adding.clear();
    info.removing.clear();
    FERRY_LOG(info, "coord") << "partition " << name << "/" << p << ": reassignment complete, " << info.replicas.size()
                             << " replicas, leader " << next.leader << ", epoch " << next.epoch;
    const std::int32_t version = info.state->zk_version + 1;
    info.state = partition_state{next.leader,           next.epoch, std::move(next.isr),
                                 next.controller_epoch, version,    newest_registration()};
  }
  return success();
}

result<void> controller::assign_topic_id(const std::string& name) {
  const auto& topic = table_.model().topics.at(name);
  auto assignment = znode_of(topic);
  assignment.topic_id = uuid::random();
  auto written = controller_write(
      {zk_op::set(layout::topic_path(name), layout::encode_topic(assignment), table_.topic_version(name))});
  if (!written && written.error() == errc::bad_version) {
    enqueue_(task{task_kind::topic, name}, {});
    return success();
  }
  FERRY_TRY(written);
  FERRY_LOG(info, "coord") << "assigned topic id " << assignment.topic_id << " to topic " << name;
  return success();
}

result<bool> controller::live_replicas_deleted_their_logs(const std::string& name) {
  auto acknowledged = table_.deletion_acknowledgements(name);
  // The marker went meanwhile (removed by hand): the refresh of the markers that its watch brings settles it.
  if (!acknowledged && acknowledged.error() == errc::no_node) return false;
  FERRY_TRY(const auto brokers, std::move(acknowledged));
  const auto& model = table_.model();
  const auto topic = model.topics.find(name);
  if (topic == model.topics.end()) return true;
  for (const auto& [p, info] : topic->second.partitions) {
    for (const auto r : info.replicas)
      if (model.is_live(r) && !brokers.contains(r)) return false;
  }
  return true;
}

result<void> controller::delete_topic_nodes(const std::string& name) {
  // Post-order: children before their parent. A topic that is already gone leaves only the marker.
  std::vector<std::string> doomed;
  std::function<result<void>(const std::string&)> collect = [&](const std::string& path) -> result<void> {
    auto children = session_.get_children(path);
    if (!children) return children.error() == errc::no_node ? success() : result<void>(children.error());
    for (const auto& child : children.value()) {
      FERRY_TRY(collect(layout::child_path(path, child)));
    }
    doomed.push_back(path);
    return success();
  };
  FERRY_TRY(collect(layout::topic_path(name)));
  FERRY_TRY(const auto config, session_.exists(layout::topic_config_path(name)));
  if (config) doomed.push_back(layout::topic_config_path(name));
  FERRY_TRY(collect(layout::delete_topic_path(name)));  // the replicas' acknowledgements, then the marker

  for (std::size_t begin = 0; begin < doomed.size(); begin += deletions_per_multi) {
    std::vector<zk_op> ops;
    for (std::size_t i = begin; i < std::min(doomed.size(), begin + deletions_per_multi); ++i)
      ops.push_back(zk_op::remove(doomed[i]));
    FERRY_TRY(controller_write(std::move(ops)));
  }
  FERRY_LOG(info, "coord") << "deleted topic " << name;
  return success();
}

result<void> controller::refuse_deletion(const std::string& name) {
  auto removed = controller_write({zk_op::remove(layout::delete_topic_path(name))});
  if (!removed && removed.error() != errc::no_node) return removed.error();
  // What refresh_deletions would read next: the topic is served and elected for again from this pass on.
  if (auto topic = table_.model().topics.find(name); topic != table_.model().topics.end())
    topic->second.marked_for_deletion = false;
  FERRY_LOG(warn, "coord") << "not deleting topic " << name << " since delete.topic.enable is false: removed "
                           << layout::delete_topic_path(name);
  return success();
}

result<void> controller::create_partition_states(const std::string& name, const std::vector<partition_id>& missing) {
  auto& model = table_.model();
  const auto& topic = model.topics.at(name);
  const std::string partitions_path = layout::topic_partitions_path(name);
  auto children = session_.get_children(partitions_path);
  if (!children && children.error() != errc::no_node) return children.error();
  const std::set<std::string> existing =
      children ? std::set<std::string>(children.value().begin(), children.value().end()) : std::set<std::string>{};
  std::vector<zk_op> ops;
  if (!children) ops.push_back(zk_op::create(partitions_path, ""));
  std::vector<layout::partition_state_change> created;
  std::size_t count = 0;
  // One multi-op per slice of partitions, parents first, each with its change log node.
  const auto write_slice = [&]() -> result<void> {
    if (created.empty()) return success();
    ops.push_back(log_state_changes(created));
    FERRY_TRY(controller_write(std::move(ops)));
    auto& partitions = model.topics.at(name).partitions;
    for (auto& c : created) {
      auto& s = c.state;
      partitions.at(c.partition).state =
          partition_state{s.leader, s.epoch, std::move(s.isr), s.controller_epoch, 0, newest_registration()};
    }
    count += created.size();
    ops.clear();
    created.clear();
    return success();
  };
  for (const auto p : missing) {
    const auto& replicas = topic.partitions.at(p).replicas;
    // Kafka's NewPartition -> OnlinePartition: the first live replica leads (one not shutting down, if any),
    // and every live replica not shutting down starts in the ISR, as all of them hold the same empty log.
    // Starting with the leader alone would refuse acks=all produces with NOT_ENOUGH_REPLICAS until followers
    // joined, and a producer's retried first batch would then land behind its later ones. The high
    // watermark waits for each member's first fetch, so nothing acknowledged is missing from a replica in
    // the ISR. Without any live replica the partition stays offline until one registers.
    const topic_partition tp{name, p};
    const auto can_lead = [&](broker_id r) { return model.can_lead(r) && model.hosts(r, tp); };
    auto leader = std::find_if(replicas.begin(), replicas.end(), can_lead);
    if (leader == replicas.end())
      leader = std::find_if(replicas.begin(), replicas.end(), [&](broker_id r) { return model.hosts(r, tp); });
    if (leader == replicas.end()) continue;
    if (!existing.contains(std::to_string(p.value())))
      ops.push_back(zk_op::create(layout::partition_path(name, p), ""));
    std::vector<broker_id> isr;
    for (const broker_id r : replicas) {
      if (r == *leader || can_lead(r)) isr.push_back(r);
    }
    layout::leader_and_isr state{*leader, leader_epoch{0}, std::move(isr), epoch_};
    ops.push_back(zk_op::create(layout::partition_state_path(name, p), layout::encode_partition_state(state)));
    created.push_back({name, topic.topic_id, p, 0, std::move(state)});
    if (created.size() == states_per_multi) {
      FERRY_TRY(write_slice());
    }
  }
  FERRY_TRY(write_slice());
  if (count > 0) FERRY_LOG(info, "coord") << "created " << count << " partition states of topic " << name;
  return success();
}

std::int64_t controller::newest_registration() const {
  std::int64_t newest = 0;
  for (const auto& [id, b] : table_.model().brokers) newest = std::max(newest, b.epoch);
  return newest;
}

bool controller::unclean_election_allowed(const topic_info& topic) const {
  const auto it = topic.config.find("unclean.leader.election.enable");
  return it == topic.config.end() ? unclean_election_default_ : it->second == "true";
}

std::optional<controller::state_update> controller::next_state(const std::string& name, partition_id p,
                                                               bool allow_unclean) const {
  const auto& model = table_.model();
  const auto& info = model.topics.at(name).partitions.at(p);
  const auto& current = *info.state;
  state_update update{name, p, {current.leader, current.epoch, current.isr, epoch_}, current.zk_version};
  auto& next = update.next;
  // A replica on a log dir that went offline counts as dead for this partition (review finding 4).
  const topic_partition tp{name, p};
  const auto live = [&](broker_id r) { return model.hosts(r, tp); };
  const auto can_lead = [&](broker_id r) { return model.can_lead(r) && model.hosts(r, tp); };
  // A replica registered again since the state was written (restarted, or a new ZooKeeper session) is out of
  // the ISR and cannot stay leader: its log may be older than what the state says it holds (an empty disk, a
  // tail lost in a crash), and only the leader can tell once it fetches again. Kafka's controller treats such
  // bounced brokers as failed and started.
  // A broker no longer assigned (a reassignment cancelled or replaced after it joined) is out as well.
  const auto returned = [&](broker_id r) { return model.registered_since(r, current) || !contains(info.replicas, r); };
  // The ISR without dead or returned brokers, and without the ones shutting down unless one of them leads.
  std::vector<broker_id> live_isr;
  std::vector<broker_id> staying_isr;
  for (const auto r : current.isr) {
    if (returned(r)) continue;
    if (live(r)) live_isr.push_back(r);
    if (can_lead(r)) staying_isr.push_back(r);
  }
  const auto first_replica = [&](const auto& eligible) {
    return std::find_if(info.replicas.begin(), info.replicas.end(), eligible);
  };
  const auto in_isr = [&](broker_id r) { return contains(current.isr, r) && !returned(r); };
  const auto elect = [&](broker_id leader, std::vector<broker_id> isr) {
    next.leader = leader;
    next.epoch = leader_epoch{current.epoch.value() + 1};
    next.isr = std::move(isr);
  };
  if (current.leader == no_broker || !live(current.leader) || returned(current.leader)) {
    // Clean election: the first replica in assignment order that is in the ISR and alive, preferably one
    // that is not shutting down.
    auto candidate = first_replica([&](broker_id r) { return can_lead(r) && in_isr(r); });
    if (candidate == info.replicas.end()) candidate = first_replica([&](broker_id r) { return live(r) && in_isr(r); });
    // Every in-sync replica that is alive returned: the first of them leads, alone in the ISR, as the only
    // candidates hold whatever the partition still has (a single-replica partition after its broker restarts).
    if (candidate == info.replicas.end()) {
      candidate = first_replica([&](broker_id r) { return live(r) && contains(current.isr, r); });
      if (candidate != info.replicas.end()) {
        elect(*candidate, {*candidate});
        return update;
      }
    }
    if (candidate == info.replicas.end() && allow_unclean) {
      // Nobody in sync is alive, and the topic prefers availability to what the ISR held: any live replica.
      candidate = first_replica([&](broker_id r) { return live(r); });
      update.unclean = candidate != info.replicas.end();
    }
    if (candidate != info.replicas.end()) {
      if (update.unclean) {
        elect(*candidate, {*candidate});
      } else {
        elect(*candidate, can_lead(*candidate) ? staying_isr : live_isr);
      }
    } else if (current.leader != no_broker) {
      // Nobody in sync is alive: no leader, and the ISR is kept so one of its members can take over later.
      next.leader = no_broker;
      next.epoch = leader_epoch{current.epoch.value() + 1};
    }
  } else if (!can_lead(current.leader)) {
    // Controlled shutdown of the leader: the next in-sync replica that stays takes over, as Kafka's
    // ControlledShutdownLeaderElectionStrategy does; without one, the leader keeps leading until it goes.
    const auto candidate = first_replica([&](broker_id r) { return can_lead(r) && in_isr(r); });
    if (candidate != info.replicas.end()) {
      elect(*candidate, staying_isr);
    } else {
      next.isr = live_isr;
    }
  } else {
    // Followers that died or are shutting down leave the ISR (the leader adds them back through alter_isr
    // once caught up). The leader is unchanged, so is its epoch; the state znode's version still moves.
    next.isr = staying_isr;
  }
  if (next.leader == current.leader && next.epoch == current.epoch && next.isr == current.isr) return std::nullopt;
  return update;
}

result<controller::state_update> controller::preferred_election(const std::string& name, partition_id p) const {
  const auto& model = table_.model();
  const auto& info = model.topics.at(name).partitions.at(p);
  const auto& current = *info.state;
  const broker_id preferred = info.replicas.front();
  if (current.leader == preferred) return errc::election_not_needed;
  if (!model.can_lead(preferred) || !model.hosts(preferred, {name, p}) || !contains(current.isr, preferred) ||
      model.registered_since(preferred, current))
    return errc::preferred_leader_not_available;
  return state_update{
      name, p, {preferred, leader_epoch{current.epoch.value() + 1}, current.isr, epoch_}, current.zk_version, false};
}

result<std::vector<election_result>> controller::elect_leaders(
    election_type type, const std::optional<std::vector<topic_partition>>& partitions) {
  const auto& model = table_.model();
  std::vector<topic_partition> wanted;
  if (partitions) {
    wanted = *partitions;
  } else {
    for (const auto& [name, topic] : model.topics) {
      if (!has_elections(topic)) continue;
      for (const auto& [p, info] : topic.partitions) wanted.push_back({name, p});
    }
  }
  std::vector<election_result> results;
  std::vector<state_update> updates;
  std::vector<std::size_t> updated;  // index in results of each update
  for (auto& tp : wanted) {
    const auto* topic = model.find_topic(tp.topic);
    const auto* info = model.find_partition(tp);
    result<state_update> decided = errc::no_node;
    if (topic != nullptr && has_elections(*topic) && info != nullptr && info->state) {
      if (type == election_type::preferred) {
        decided = preferred_election(tp.topic, tp.partition);
      } else if (info->state->leader != no_broker && model.is_live(info->state->leader)) {
        decided = errc::election_not_needed;
      } else if (auto update = next_state(tp.topic, tp.partition, true); update && update->next.leader != no_broker) {
        decided = std::move(*update);
      } else {
        decided = errc::eligible_leaders_not_available;
      }
    }
    const std::error_code error = decided ? std::error_code{} : decided.error();
    if (!error) {
      updated.push_back(results.size());
      updates.push_back(std::move(decided).value());
    }
    results.push_back({std::move(tp), error});
  }
  FERRY_TRY(write_states(updates));
  // write_states leaves the model as it wrote it; a state it could not write lost a race.
  for (std::size_t i = 0; i < updates.size(); ++i) {
    const auto* info = model.find_partition(results[updated[i]].partition);
    if (info == nullptr || !info->state || info->state->zk_version != updates[i].expected_version + 1)
      results[updated[i]].error = errc::bad_version;
  }
  return results;
}

result<void> controller::balance_leaders(std::int32_t percentage) {
  const auto& model = table_.model();
  struct preferred_share {
    std::size_t total = 0;
    std::vector<topic_partition> led_elsewhere;
  };
  std::map<broker_id, preferred_share> shares;
  for (const auto& [name, topic] : model.topics) {
    if (!has_elections(topic)) continue;
    for (const auto& [p, info] : topic.partitions) {
      if (!info.state) continue;
      auto& share = shares[info.replicas.front()];
      ++share.total;
      if (info.state->leader != info.replicas.front()) share.led_elsewhere.push_back({name, p});
    }
  }
  std::vector<state_update> updates;
  for (const auto& [broker, share] : shares) {
    if (!model.can_lead(broker) || share.led_elsewhere.empty()) continue;
    // Kafka's imbalance ratio: the share of a broker's preferred partitions that another broker leads.
    if (share.led_elsewhere.size() * 100 <= share.total * static_cast<std::size_t>(percentage)) continue;
    for (const auto& tp : share.led_elsewhere) {
      if (auto update = preferred_election(tp.topic, tp.partition)) updates.push_back(std::move(update).value());
    }
  }
  if (updates.empty()) return success();
  FERRY_LOG(info, "coord") << "leader imbalance: moving " << updates.size()
                           << " partitions back to their preferred leaders";
  return write_states(updates);
}

result<void> controller::write_states(const std::vector<state_update>& updates) {
  auto& model = table_.model();
  for (std::size_t begin = 0; begin < updates.size(); begin += states_per_multi) {
    const std::size_t end = std::min(updates.size(), begin + states_per_multi);
    std::vector<zk_op> ops;
    std::vector<layout::partition_state_change> changes;
    for (std::size_t i = begin; i < end; ++i) {
      const auto& u = updates[i];
      ops.push_back(zk_op::set(layout::partition_state_path(u.topic, u.partition),
                               layout::encode_partition_state(u.next), u.expected_version));
      changes.push_back({u.topic, model.topics.at(u.topic).topic_id, u.partition, u.expected_version + 1, u.next});
    }
    ops.push_back(log_state_changes(changes));
    std::size_t failed = ops.size();
    auto written = controller_write(std::move(ops), &failed);
    if (!written) {
      if (written.error() != errc::bad_version && written.error() != errc::no_node) return written.error();
      // A lost race (a leader changed its ISR, the topic was deleted): that state is read again, and the pass
      // that follows decides the whole slice again.
      if (failed < end - begin) {
        const auto& u = updates[begin + failed];
        enqueue_(task{task_kind::partition_state, u.topic, u.partition.value()}, {});
      }
      continue;
    }
    for (std::size_t i = begin; i < end; ++i) {
      const auto& u = updates[i];
      const auto& before = *model.topics.at(u.topic).partitions.at(u.partition).state;
      if (u.next.leader != no_broker && u.next.epoch != before.epoch) ++elections_;
      if (u.unclean) ++unclean_elections_;
      if (u.unclean) {
        FERRY_LOG(warn, "coord") << "partition " << u.topic << "/" << u.partition
                                 << ": unclean leader election: broker " << u.next.leader
                                 << " was not in sync; records only the old in-sync replicas had are lost";
      }
      FERRY_LOG(info, "coord") << "partition " << u.topic << "/" << u.partition << ": leader " << u.next.leader
                               << ", epoch " << u.next.epoch << ", " << u.next.isr.size() << " in sync";
      model.topics.at(u.topic).partitions.at(u.partition).state =
          partition_state{u.next.leader,           u.next.epoch,           u.next.isr,
                          u.next.controller_epoch, u.expected_version + 1, newest_registration()};
    }
  }
  return success();
}

result<void> controller::purge_expired(std::string_view parent, const std::vector<std::string>& oldest_first) {
  const std::int64_t cutoff = now_ms() - change_expiry_ms;
  for (const auto& child : oldest_first) {
    const std::string path = layout::child_path(parent, child);
    FERRY_TRY(const auto stat, session_.exists(path));
    if (!stat) continue;
    if (stat->ctime_ms >= cutoff) break;  // the rest are newer
    auto removed = session_.remove(path);
    if (!removed && removed.error() != errc::no_node) return removed.error();
  }
  return success();
}

}  // namespace ferry::coord
