#include "balance/throttled_moves.h"

#include <algorithm>

#include "base/log.h"
#include "coord/reassignment.h"

namespace ferry::balance {
namespace {

constexpr std::string_view leader_list = "leader.replication.throttled.replicas";
constexpr std::string_view follower_list = "follower.replication.throttled.replicas";
constexpr std::string_view leader_rate = "leader.replication.throttled.rate";
constexpr std::string_view follower_rate = "follower.replication.throttled.rate";
constexpr auto view_lag = std::chrono::seconds(5);

// "p:b,p:b" with `pairs` added to `existing` (Kafka's format; order kept, no duplicates).
std::string with_pairs(const std::string& existing, const std::vector<std::string>& pairs) {
  std::string out = existing;
  for (const auto& pair : pairs) {
    const auto present = ("," + out + ",").find("," + pair + ",") != std::string::npos;
    if (!present) out += (out.empty() ? "" : ",") + pair;
  }
  return out;
}

bool reassigning_anywhere(const coord::cluster_view& view) {
  return std::any_of(view.topics.begin(), view.topics.end(), [](const auto& topic) {
    return std::any_of(topic.second.partitions.begin(), topic.second.partitions.end(),
                       [](const auto& partition) { return partition.second.reassigning(); });
  });
}

}  // namespace

result<void> throttled_moves::throttle_topic(const std::string& topic, const coord::topic_info& live,
                                             const std::map<partition_id, std::vector<broker_id>>& targets) {
  std::vector<std::string> leaders;
  std::vector<std::string> followers;
  for (const auto& [p, target] : targets) {
    const auto current = live.partitions.find(p);
    if (current == live.partitions.end()) continue;
    const auto& replicas = current->second.replicas;
    for (const auto b : replicas) leaders.push_back(std::to_string(p.value()) + ":" + std::to_string(b.value()));
    for (const auto b : target) {
      if (std::find(replicas.begin(), replicas.end(), b) == replicas.end())
        followers.push_back(std::to_string(p.value()) + ":" + std::to_string(b.value()));
    }
  }
  auto& store = cluster_.configs();
  FERRY_TRY(auto config, store.read("topics", topic));
  auto& ours = written_lists_[topic];
  bool changed = false;
  for (const auto& [key, pairs] : {std::pair{leader_list, &leaders}, std::pair{follower_list, &followers}}) {
    const std::string name(key);
    const auto current = config.find(name);
    const auto mine = ours.find(name);
    // A list set by someone else (an admin's reassignment) is theirs: it is left as it is.
    if (current != config.end() && (mine == ours.end() || mine->second != current->second)) continue;
    const auto value = with_pairs(current == config.end() ? std::string{} : current->second, *pairs);
    if (value.empty() || (current != config.end() && current->second == value)) continue;
    config[name] = value;
    ours[name] = value;
    changed = true;
  }
  if (changed) {
    FERRY_TRY(store.write("topics", topic, config));
  }
  return success();
}

result<void> throttled_moves::throttle_brokers(const coord::cluster_view& view) {
  auto& store = cluster_.configs();
  const auto rate = std::to_string(rate_);
  for (const auto& [id, broker] : view.brokers) {
    if (rated_brokers_.contains(id)) continue;
    FERRY_TRY(auto config, store.read("brokers", std::to_string(id.value())));
    // A rate someone else set governs; both absent: this process throttles the broker.
    if (config.contains(std::string(leader_rate)) || config.contains(std::string(follower_rate))) continue;
    config[std::string(leader_rate)] = rate;
    config[std::string(follower_rate)] = rate;
    FERRY_TRY(store.write("brokers", std::to_string(id.value()), config));
    rated_brokers_.insert(id);
  }
  return success();
}

result<void> throttled_moves::start(const std::string& topic,
                                    const std::map<partition_id, std::vector<broker_id>>& targets) {
  std::lock_guard lock(mutex_);
  if (rate_ > 0) {
    const auto view = cluster_.view();
    if (const auto live = view->topics.find(topic); live != view->topics.end()) {
      FERRY_TRY(throttle_topic(topic, live->second, targets));
    }
    FERRY_TRY(throttle_brokers(*view));
  }
  last_start_ = std::chrono::steady_clock::now();
  return cluster_.topics().alter_assignment(topic, [&](coord::layout::topic_assignment& t) -> result<bool> {
    for (const auto& [p, target] : targets) {
      coord::set_assignment(t, p, coord::reassign_to(coord::assignment_of(t, p), target));
    }
    return true;
  });
}

bool throttled_moves::release_when_idle() {
  std::lock_guard lock(mutex_);
  if (written_lists_.empty() && rated_brokers_.empty()) return false;
  if (std::chrono::steady_clock::now() - last_start_ < view_lag || !cluster_.ready() ||
      reassigning_anywhere(*cluster_.view())) {
    return true;
  }
  auto& store = cluster_.configs();
  for (auto it = written_lists_.begin(); it != written_lists_.end();) {
    auto config = store.read("topics", it->first);
    if (!config) return true;  // retried later
    bool changed = false;
    for (const auto& [key, value] : it->second) {
      if (const auto current = config.value().find(key); current != config.value().end() && current->second == value) {
        config.value().erase(current);
        changed = true;
      }
    }
    if (changed && !store.write("topics", it->first, config.value())) return true;
    FERRY_LOG(info, "balance") << "moves done: removed the replication throttles on topic " << it->first;
    it = written_lists_.erase(it);
  }
  const auto rate = std::to_string(rate_);
  for (auto it = rated_brokers_.begin(); it != rated_brokers_.end();) {
    const auto name = std::to_string(it->value());
    auto config = store.read("brokers", name);
    if (!config) return true;
    bool changed = false;
    for (const auto key : {leader_rate, follower_rate}) {
      const auto current = config.value().find(std::string(key));
      if (current != config.value().end() && current->second == rate) {
        config.value().erase(current);
        changed = true;
      }
    }
    if (changed && !store.write("brokers", name, config.value())) return true;
    it = rated_brokers_.erase(it);
  }
  FERRY_LOG(info, "balance") << "moves done: removed the replication throttle rates";
  return false;
}

}  // namespace ferry::balance
