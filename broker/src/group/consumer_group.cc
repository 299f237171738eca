#include "group/consumer_group.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "group/errc.h"
#include "group/topic_regex.h"

namespace ferry::group {
namespace {

// Member epochs with a meaning of their own in ConsumerGroupHeartbeat.
constexpr std::int32_t join_epoch = 0;
constexpr std::int32_t leave_epoch = -1;
constexpr std::int32_t static_leave_epoch = -2;

bool contains(const topic_id_partitions& set, const topic_uuid& topic, std::int32_t p) {
  const auto it = set.find(topic);
  return it != set.end() && it->second.contains(p);
}

bool owns_any(const std::optional<topic_id_partitions>& owned, const topic_id_partitions& set) {
  if (!owned) return true;  // not reported: it may still own them all
  for (const auto& [topic, partitions] : *owned)
    for (const auto p : partitions)
      if (contains(set, topic, p)) return true;
  return false;
}

bool subset(const topic_id_partitions& small, const topic_id_partitions& big) {
  for (const auto& [topic, partitions] : small)
    for (const auto p : partitions)
      if (!contains(big, topic, p)) return false;
  return true;
}

consumer_heartbeat_result refused(std::error_code error, std::string message = {}) {
  consumer_heartbeat_result out;
  out.error = error;
  out.error_message = std::move(message);
  return out;
}

}  // namespace

consumer_group::consumer_group(std::string id, const consumer_group_config& config)
    : id_(std::move(id)), config_(config) {}

std::error_code consumer_group::check_request(const consumer_heartbeat_request& request,
                                              const consumer_group_config& config, std::string& message) {
  const auto invalid = [&](std::string why) {
    message = std::move(why);
    return std::error_code(errc::invalid_request);
  };
  if (request.member_id.empty()) return invalid("MemberId can't be empty.");
  if (request.instance_id && request.instance_id->empty()) return invalid("InstanceId can't be empty.");
  if (request.rack_id && request.rack_id->empty()) return invalid("RackId can't be empty.");
  if (request.subscribed_topic_regex && !request.subscribed_topic_regex->empty()) {
    if (const auto why = invalid_topic_regex(*request.subscribed_topic_regex)) {
      message = "SubscribedTopicRegex `" + *request.subscribed_topic_regex +
                "` is not a valid regular expression: " + *why + ".";
      return errc::invalid_regular_expression;
    }
  }
  if (request.member_epoch == join_epoch) {
    if (request.rebalance_timeout_ms == -1) return invalid("RebalanceTimeoutMs must be provided in first request.");
    if (!request.owned || !request.owned->empty()) return invalid("TopicPartitions must be empty when (re-)joining.");
    if (!request.subscribed_topic_names && !request.subscribed_topic_regex)
      return invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.");
  } else if (request.member_epoch == static_leave_epoch) {
    if (!request.instance_id) return invalid("InstanceId can't be null.");
  } else if (request.member_epoch < static_leave_epoch) {
    return invalid("MemberEpoch is invalid.");
  }
  if (request.server_assignor &&
      std::ranges::find(config.assignors, *request.server_assignor) == config.assignors.end()) {
    message = "ServerAssignor " + *request.server_assignor + " is not supported. Supported assignors:";
    for (const auto& name : config.assignors) message += " " + name;
    message += ".";
    return errc::unsupported_assignor;
  }
  return {};
}

group_state consumer_group::state() const {
  if (members_.empty()) return group_state::empty;
  if (epoch_ > assignment_epoch_) return group_state::assigning;
  const bool reconciled = std::ranges::all_of(members_, [&](const auto& entry) {
    return entry.second.state == member_state::stable && entry.second.epoch == assignment_epoch_;
  });
  return reconciled ? group_state::stable : group_state::reconciling;
}

std::string consumer_group::assignor() const {
  // The one most members ask for; the configured default when none does.
  std::map<std::string, std::size_t> votes;
  for (const auto& [id, m] : members_)
    if (m.server_assignor) ++votes[*m.server_assignor];
  const auto best = std::ranges::max_element(votes, {}, [](const auto& entry) { return entry.second; });
  return best == votes.end() ? config_.assignors.front() : best->first;
}

std::set<std::string> consumer_group::subscribed_topics() const {
  std::set<std::string> out;
  for (const auto& [id, m] : members_) out.merge(topics_of(m));
  return out;
}

std::set<std::string> consumer_group::topics_of(const member& m) const {
  std::set<std::string> out(m.subscribed_topic_names.begin(), m.subscribed_topic_names.end());
  if (m.subscribed_topic_regex)
    for (const auto& [name, topic] : subscription_)
      if (topic_matches(*m.subscribed_topic_regex, name)) out.insert(name);
  return out;
}

std::string consumer_group::broken_invariant() const {
  if (assignment_epoch_ > epoch_) return "the target's epoch is ahead of the group's";
  for (const auto& [instance, id] : static_members_) {
    const auto found = members_.find(id);
    if (found == members_.end())
      return std::string("static member ").append(instance).append(" maps to ").append(id).append(", not a member");
    if (found->second.instance_id != instance)
      return std::string("static member ").append(instance).append(" maps to ").append(id).append(" of another");
  }
  for (const auto& [id, t] : target_)
    if (!members_.contains(id)) return "a target for " + id + ", not a member";
  std::map<std::pair<topic_uuid, std::int32_t>, std::string> held;
  for (const auto& [id, m] : members_) {
    if (m.id != id) return "member " + m.id + " is kept as " + id;
    if (m.instance_id) {
      const auto mapped = static_members_.find(*m.instance_id);
      if (mapped == static_members_.end() || mapped->second != id)
        return "member " + id + " of instance " + *m.instance_id + " is not the one the static members name";
    }
    if (m.epoch > assignment_epoch_) return "member " + id + " is ahead of the target's epoch";
    for (const auto* set : {&m.assigned, &m.pending_revocation})
      for (const auto& [topic, partitions] : *set)
        for (const auto p : partitions)
          if (!held.emplace(std::pair(topic, p), id).second)
            return "partition " + std::to_string(p) + " held by " + id + " and " + held.at({topic, p});
  }
  if (held != owners_) return "the owner table disagrees with the members' assignments";
  return {};
}

consumer_group_description consumer_group::describe() const {
  consumer_group_description d{state(), epoch_, assignment_epoch_, assignor(), {}, {}};
  for (const auto& [id, m] : members_) {
    const auto target = target_.find(id);
    d.members.push_back({id, m.instance_id, m.rack_id, m.epoch, m.client_id, m.client_host, m.subscribed_topic_names,
                         m.subscribed_topic_regex, m.assigned,
                         target == target_.end() ? topic_id_partitions{} : target->second});
  }
  for (const auto& [name, topic] : subscription_) d.topic_names[topic.id] = name;
  return d;
}

consumer_heartbeat_result consumer_group::heartbeat(const consumer_heartbeat_request& request,
                                                    const topic_lookup& topics, std::int64_t now_ms,
                                                    std::vector<stored_record>& records,
                                                    const topic_names& all_topics) {
  if (request.member_epoch == leave_epoch || request.member_epoch == static_leave_epoch) return leave(request, records);
  if (!members_.contains(request.member_id) && members_.size() >= static_cast<std::size_t>(config_.max_size))
    return refused(errc::group_max_size_reached, "The consumer group has reached its maximum capacity of " +
                                                     std::to_string(config_.max_size) + " members.");
  member before;
  bool replacing = false;
  std::string message;
  if (const auto error = find_member(request, before, replacing, message)) return refused(error, std::move(message));
  if (replacing) {
    // A static member back under a new member id takes over its earlier self, partitions and all.
    const auto old_id = static_members_.at(*request.instance_id);
    const auto old_target = target_.contains(old_id) ? target_.at(old_id) : topic_id_partitions{};
    records.push_back(tombstone(consumer_record_type::current_assignment, old_id));
    records.push_back(tombstone(consumer_record_type::target_assignment_member, old_id));
    records.push_back(tombstone(consumer_record_type::member_metadata, old_id));
    members_.erase(old_id);
    target_.erase(old_id);
    std::erase_if(owners_, [&](const auto& entry) { return entry.second == old_id; });
    target_[before.id] = old_target;
    put_member(before);
    records.push_back(member_record(before));
    records.push_back(target_record(before.id));
    records.push_back(current_record(before));
  }

  member m = before;
  if (request.instance_id) m.instance_id = request.instance_id;
  if (request.rack_id) m.rack_id = request.rack_id;
  if (request.rebalance_timeout_ms != -1) m.rebalance_timeout_ms = request.rebalance_timeout_ms;
  if (request.server_assignor) m.server_assignor = request.server_assignor;
  if (request.subscribed_topic_names) {
    auto names = *request.subscribed_topic_names;
    std::ranges::sort(names);
    names.erase(std::unique(names.begin(), names.end()), names.end());
    m.subscribed_topic_names = std::move(names);
  }
  if (request.subscribed_topic_regex) {
    if (request.subscribed_topic_regex->empty())
      m.subscribed_topic_regex.reset();
    else
      m.subscribed_topic_regex = request.subscribed_topic_regex;
  }
  m.client_id = request.client_id;
  m.client_host = request.client_host;
  const bool new_member = !members_.contains(m.id);
  const auto metadata_of = [](const member& x) {
    return std::tie(x.instance_id, x.rack_id, x.client_id, x.client_host, x.subscribed_topic_names,
                    x.subscribed_topic_regex, x.rebalance_timeout_ms, x.server_assignor);
  };
  if (new_member || metadata_of(m) != metadata_of(before)) records.push_back(member_record(m));
  bool bump = epoch_ == 0 || m.subscribed_topic_names != before.subscribed_topic_names ||
              m.subscribed_topic_regex != before.subscribed_topic_regex;
  auto subscription = subscription_metadata(m, topics, all_topics);
  if (subscription != subscription_) {
    subscription_ = std::move(subscription);
    bump = true;
  }
  put_member(m);
  if (bump) bump_epoch(records);
  if (epoch_ > assignment_epoch_) compute_target(records);

  const member& current = members_.at(m.id);
  member next = current;
  if (!(current.state == member_state::stable && current.epoch == assignment_epoch_))
    next = reconcile(current, request.owned);
  if (next.state == member_state::unrevoked_partitions) {
    if (next.epoch != current.epoch || current.state != member_state::unrevoked_partitions ||
        !current.revocation_deadline_ms)
      next.revocation_deadline_ms = now_ms + std::max(next.rebalance_timeout_ms, 0);
  } else {
    next.revocation_deadline_ms.reset();
  }
  next.session_deadline_ms = now_ms + config_.session_timeout_ms;
  const bool moved = next.epoch != current.epoch || next.previous_epoch != current.previous_epoch ||
                     next.state != current.state || next.assigned != current.assigned ||
                     next.pending_revocation != current.pending_revocation;
  if (moved || new_member) records.push_back(current_record(next));
  put_member(next);

  consumer_heartbeat_result out;
  out.member_id = next.id;
  out.member_epoch = next.epoch;
  out.heartbeat_interval_ms = config_.heartbeat_interval_ms;
  // The whole assignment on a join, on a full request (the client sends one after an error, having forgotten
  // what it was told) and whenever it changed.
  const bool full = request.rebalance_timeout_ms != -1 && request.subscribed_topic_names && request.owned;
  if (request.member_epoch == join_epoch || full || next.assigned != before.assigned) out.assignment = next.assigned;
  return out;
}

std::error_code consumer_group::find_member(const consumer_heartbeat_request& request, member& out, bool& replacing,
                                            std::string& message) const {
  const auto known = members_.find(request.member_id);
  if (request.instance_id) {
    const auto owner = static_members_.find(*request.instance_id);
    if (request.member_epoch == join_epoch) {
      if (known != members_.end() && known->second.instance_id != request.instance_id) {
        message = "Member " + request.member_id + " cannot change its instance id.";
        return errc::invalid_request;
      }
      if (owner == static_members_.end() || owner->second == request.member_id) {
        // New, or the same member rejoining (after being fenced, or a lost answer): it goes on where it was.
        out = known != members_.end() ? known->second : member{.id = request.member_id};
        return {};
      }
      const auto& previous = members_.at(owner->second);
      if (previous.epoch != static_leave_epoch) {
        message = "Static member " + *request.instance_id + " has not left the group yet.";
        return errc::unreleased_instance_id;
      }
      out = previous;
      out.id = request.member_id;
      out.epoch = 0;
      out.previous_epoch = 0;
      out.revocation_deadline_ms.reset();
      replacing = true;
      return {};
    }
    if (owner == static_members_.end()) {
      message = "Instance id " + *request.instance_id + " is unknown.";
      return errc::unknown_member_id;
    }
    if (owner->second != request.member_id) {
      message = "Instance id " + *request.instance_id + " belongs to another member.";
      return errc::fenced_instance_id;
    }
    out = members_.at(owner->second);
    return check_epoch(out, request);
  }
  if (known == members_.end()) {
    if (request.member_epoch != join_epoch) {
      message = "Member " + request.member_id + " is not a member of group " + id_ + ".";
      return errc::unknown_member_id;
    }
    out = member{.id = request.member_id};
    return {};
  }
  out = known->second;
  return check_epoch(out, request);
}

std::error_code consumer_group::check_epoch(const member& m, const consumer_heartbeat_request& request) const {
  // Epoch 0 from a known member is a rejoin after it was fenced, or after its join's answer was lost: it gets
  // its current state back (KAFKA-19233).
  if (request.member_epoch == join_epoch) return {};
  if (request.member_epoch > m.epoch) return errc::fenced_member_epoch;
  if (request.member_epoch < m.epoch) {
    // The answer that moved it to the new epoch may have been lost: the previous epoch still counts while the
    // member owns no more than it is now assigned.
    if (request.member_epoch != m.previous_epoch || !request.owned || !subset(*request.owned, m.assigned))
      return errc::fenced_member_epoch;
  }
  return {};
}

std::map<std::string, topic_metadata> consumer_group::subscription_metadata(const member& m, const topic_lookup& topics,
                                                                            const topic_names& names) const {
  std::set<std::string> wanted(m.subscribed_topic_names.begin(), m.subscribed_topic_names.end());
  std::set<std::string> regexes;
  if (m.subscribed_topic_regex) regexes.insert(*m.subscribed_topic_regex);
  for (const auto& [id, other] : members_) {
    if (id == m.id) continue;
    wanted.insert(other.subscribed_topic_names.begin(), other.subscribed_topic_names.end());
    if (other.subscribed_topic_regex) regexes.insert(*other.subscribed_topic_regex);
  }
  // Resolved at every heartbeat against the topics there are now, so a topic created later joins the group's
  // subscription at the next one (Kafka refreshes its resolved expressions on a timer instead).
  if (!regexes.empty() && names) {
    const auto all = names();
    for (const auto& regex : regexes)
      for (auto& name : topics_matching(regex, all)) wanted.insert(std::move(name));
  }
  std::map<std::string, topic_metadata> out;
  for (const auto& name : wanted)
    if (auto topic = topics(name)) out.emplace(name, *topic);
  return out;
}

void consumer_group::compute_target(std::vector<stored_record>& records) {
  std::vector<assignor_member> input;
  topic_partition_counts counts;
  for (const auto& [name, topic] : subscription_) counts[topic.id] = topic.partitions;
  for (const auto& [id, m] : members_) {
    assignor_member a{id, m.instance_id, {}, {}};
    for (const auto& name : topics_of(m))
      if (const auto it = subscription_.find(name); it != subscription_.end()) a.subscribed.insert(it->second.id);
    if (const auto t = target_.find(id); t != target_.end()) a.current_target = t->second;
    input.push_back(std::move(a));
  }
  auto targets = assign(assignor(), input, counts);
  for (auto& [id, target] : targets) {
    const auto old = target_.find(id);
    if (old != target_.end() && old->second == target) continue;
    target_[id] = std::move(target);
    records.push_back(target_record(id));
  }
  assignment_epoch_ = epoch_;
  records.push_back({encode_key(consumer_group_key{consumer_record_type::target_assignment_metadata, id_, {}}),
                     encode_value(consumer_group_value{target_assignment_epoch_value{assignment_epoch_}})});
}

consumer_group::member consumer_group::reconcile(const member& m,
                                                 const std::optional<topic_id_partitions>& owned) const {
  switch (m.state) {
    case member_state::stable:
      return m.epoch == assignment_epoch_ ? m : next_step(m, m.epoch, owned);
    case member_state::unrevoked_partitions:
      if (owns_any(owned, m.pending_revocation)) return m;  // not revoked yet
      return next_step(m, m.epoch + 1, owned);
    case member_state::unreleased_partitions:
      return next_step(m, m.epoch, owned);
  }
  return m;
}

consumer_group::member consumer_group::next_step(const member& m, std::int32_t epoch_if_revoking,
                                                 const std::optional<topic_id_partitions>& owned) const {
  const auto target_it = target_.find(m.id);
  const topic_id_partitions target = target_it == target_.end() ? topic_id_partitions{} : target_it->second;
  topic_id_partitions keep;
  topic_id_partitions revoke;
  for (const auto& [topic, partitions] : m.assigned)
    for (const auto p : partitions) (contains(target, topic, p) ? keep : revoke)[topic].insert(p);
  member next = m;
  if (!revoke.empty() && owns_any(owned, revoke)) {
    next.state = member_state::unrevoked_partitions;
    next.epoch = epoch_if_revoking;
    next.assigned = std::move(keep);
    next.pending_revocation = std::move(revoke);
  } else {
    bool blocked = false;
    next.assigned = keep;
    for (const auto& [topic, partitions] : target)
      for (const auto p : partitions) {
        if (contains(keep, topic, p)) continue;
        if (owned_elsewhere(m.id, topic, p)) {
          blocked = true;
        } else {
          next.assigned[topic].insert(p);
        }
      }
    next.state = blocked ? member_state::unreleased_partitions : member_state::stable;
    next.epoch = assignment_epoch_;
    next.pending_revocation.clear();
  }
  if (next.epoch != m.epoch) next.previous_epoch = m.epoch;
  return next;
}

bool consumer_group::owned_elsewhere(const std::string& member_id, const topic_uuid& topic, std::int32_t p) const {
  const auto it = owners_.find({topic, p});
  return it != owners_.end() && it->second != member_id;
}

void consumer_group::put_member(member m) {
  std::erase_if(owners_, [&](const auto& entry) { return entry.second == m.id; });
  for (const auto* set : {&m.assigned, &m.pending_revocation})
    for (const auto& [topic, partitions] : *set)
      for (const auto p : partitions) owners_[{topic, p}] = m.id;
  if (m.instance_id) static_members_[*m.instance_id] = m.id;
  auto id = m.id;
  members_.insert_or_assign(std::move(id), std::move(m));
}

consumer_heartbeat_result consumer_group::leave(const consumer_heartbeat_request& request,
                                                std::vector<stored_record>& records) {
  std::string member_id = request.member_id;
  if (request.instance_id) {
    const auto owner = static_members_.find(*request.instance_id);
    if (owner == static_members_.end())
      return refused(errc::unknown_member_id, "Instance id " + *request.instance_id + " is unknown.");
    if (owner->second != request.member_id)
      return refused(errc::fenced_instance_id, "Instance id " + *request.instance_id + " belongs to another member.");
  } else if (!members_.contains(member_id)) {
    return refused(errc::unknown_member_id, "Member " + member_id + " is not a member of group " + id_ + ".");
  }
  consumer_heartbeat_result out;
  out.member_id = member_id;
  out.member_epoch = request.member_epoch;
  if (request.member_epoch == static_leave_epoch) {
    // It comes back under its instance id within its session: its partitions wait for it.
    member m = members_.at(member_id);
    m.previous_epoch = m.epoch;
    m.epoch = static_leave_epoch;
    m.pending_revocation.clear();
    m.revocation_deadline_ms.reset();
    put_member(m);
    records.push_back(current_record(m));
    return out;
  }
  fence(member_id, records);
  return out;
}

void consumer_group::tick(std::int64_t now_ms, std::vector<stored_record>& records) {
  std::vector<std::string> expired;
  for (const auto& [id, m] : members_) {
    if (now_ms >= m.session_deadline_ms || (m.revocation_deadline_ms && now_ms >= *m.revocation_deadline_ms))
      expired.push_back(id);
  }
  for (const auto& id : expired) fence(id, records);
}

void consumer_group::fence(const std::string& member_id, std::vector<stored_record>& records) {
  records.push_back(tombstone(consumer_record_type::current_assignment, member_id));
  records.push_back(tombstone(consumer_record_type::target_assignment_member, member_id));
  records.push_back(tombstone(consumer_record_type::member_metadata, member_id));
  if (const auto it = members_.find(member_id); it != members_.end() && it->second.instance_id)
    static_members_.erase(*it->second.instance_id);
  members_.erase(member_id);
  target_.erase(member_id);
  std::erase_if(owners_, [&](const auto& entry) { return entry.second == member_id; });
  // The others' targets are computed again at the next heartbeat.
  bump_epoch(records);
}

void consumer_group::bump_epoch(std::vector<stored_record>& records) {
  ++epoch_;
  records.push_back({encode_key(consumer_group_key{consumer_record_type::group_metadata, id_, {}}),
                     encode_value(consumer_group_value{consumer_group_epoch_value{epoch_}})});
}

std::error_code consumer_group::validate_commit(const std::string& member_id, std::int32_t member_epoch) const {
  if (member_epoch < 0 && members_.empty()) return {};
  const auto it = members_.find(member_id);
  if (it == members_.end()) return errc::unknown_member_id;
  if (member_epoch != it->second.epoch) return errc::stale_member_epoch;
  return {};
}

std::error_code consumer_group::validate_fetch(const std::optional<std::string>& member_id,
                                               std::int32_t member_epoch) const {
  if (!member_id && member_epoch < 0) return {};
  const auto it = members_.find(member_id.value_or(""));
  if (it == members_.end()) return errc::unknown_member_id;
  if (member_epoch != it->second.epoch) return errc::stale_member_epoch;
  return {};
}

void consumer_group::replay(const consumer_group_record& record) {
  const auto& key = record.key;
  const auto& value = record.value;
  switch (key.type) {
    case consumer_record_type::group_metadata:
      epoch_ = value ? std::get<consumer_group_epoch_value>(*value).epoch : 0;
      break;
    case consumer_record_type::target_assignment_metadata:
      assignment_epoch_ = value ? std::get<target_assignment_epoch_value>(*value).assignment_epoch : 0;
      break;
    case consumer_record_type::target_assignment_member:
      if (value)
        target_[key.member_id] = std::get<target_assignment_value>(*value).partitions;
      else
        target_.erase(key.member_id);
      break;
    case consumer_record_type::member_metadata:
      if (value) {
        const auto& v = std::get<consumer_member_value>(*value);
        auto& m = members_[key.member_id];
        m.id = key.member_id;
        m.instance_id = v.instance_id;
        m.rack_id = v.rack_id;
        m.client_id = v.client_id;
        m.client_host = v.client_host;
        m.subscribed_topic_names = v.subscribed_topic_names;
        m.subscribed_topic_regex = v.subscribed_topic_regex;
        m.rebalance_timeout_ms = v.rebalance_timeout_ms;
        m.server_assignor = v.server_assignor;
      } else {
        members_.erase(key.member_id);
      }
      break;
    case consumer_record_type::current_assignment:
      if (value) {
        const auto& v = std::get<current_assignment_value>(*value);
        auto& m = members_[key.member_id];
        m.id = key.member_id;
        m.epoch = v.member_epoch;
        m.previous_epoch = v.previous_member_epoch;
        m.state = static_cast<member_state>(v.state);
        m.assigned = v.assigned;
        m.pending_revocation = v.pending_revocation;
      } else if (const auto it = members_.find(key.member_id); it != members_.end()) {
        it->second.epoch = leave_epoch;
        it->second.assigned.clear();
        it->second.pending_revocation.clear();
      }
      break;
  }
}

void consumer_group::loaded(std::int64_t now_ms) {
  std::erase_if(members_, [](const auto& entry) { return entry.second.epoch == leave_epoch; });
  owners_.clear();
  static_members_.clear();
  auto members = std::move(members_);
  members_.clear();
  for (auto& [id, m] : members) {
    // Sessions start again now, as do the revocations under way.
    m.session_deadline_ms = now_ms + config_.session_timeout_ms;
    if (m.state == member_state::unrevoked_partitions)
      m.revocation_deadline_ms = now_ms + std::max(m.rebalance_timeout_ms, 0);
    if (m.state > member_state::unreleased_partitions) m.state = member_state::unreleased_partitions;
    put_member(std::move(m));
  }
  std::erase_if(target_, [&](const auto& entry) { return !members_.contains(entry.first); });
}

std::vector<stored_record> consumer_group::tombstones() const {
  std::vector<stored_record> out;
  for (const auto& [id, m] : members_) out.push_back(tombstone(consumer_record_type::current_assignment, id));
  for (const auto& [id, t] : target_) out.push_back(tombstone(consumer_record_type::target_assignment_member, id));
  out.push_back(tombstone(consumer_record_type::target_assignment_metadata));
  for (const auto& [id, m] : members_) out.push_back(tombstone(consumer_record_type::member_metadata, id));
  out.push_back(tombstone(consumer_record_type::group_metadata));
  return out;
}

stored_record consumer_group::member_record(const member& m) const {
  const consumer_member_value v{m.instance_id,
                                m.rack_id,
                                m.client_id,
                                m.client_host,
                                m.subscribed_topic_names,
                                m.subscribed_topic_regex,
                                m.rebalance_timeout_ms,
                                m.server_assignor};
  return {encode_key(consumer_group_key{consumer_record_type::member_metadata, id_, m.id}),
          encode_value(consumer_group_value{v})};
}

stored_record consumer_group::current_record(const member& m) const {
  const current_assignment_value v{m.epoch, m.previous_epoch, static_cast<std::int8_t>(m.state), m.assigned,
                                   m.pending_revocation};
  return {encode_key(consumer_group_key{consumer_record_type::current_assignment, id_, m.id}),
          encode_value(consumer_group_value{v})};
}

stored_record consumer_group::target_record(const std::string& member_id) const {
  const auto it = target_.find(member_id);
  const target_assignment_value v{it == target_.end() ? topic_id_partitions{} : it->second};
  return {encode_key(consumer_group_key{consumer_record_type::target_assignment_member, id_, member_id}),
          encode_value(consumer_group_value{v})};
}

stored_record consumer_group::tombstone(consumer_record_type type, const std::string& member_id) const {
  return {encode_key(consumer_group_key{type, id_, member_id}), std::nullopt};
}

}  // namespace ferry::group
