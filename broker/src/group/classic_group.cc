#include "group/classic_group.h"

#include <algorithm>
#include <utility>

#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>

#include "group/consumer_protocol.h"
#include "group/errc.h"

namespace ferry::group {
namespace {

// Kafka's member ids: the client id (or group.instance.id) and a random UUID.
std::string new_member_id(const join_request& request) {
  thread_local boost::uuids::random_generator generate;
  return request.group_instance_id.value_or(request.client_id) + "-" + boost::uuids::to_string(generate());
}

constexpr std::string_view consumer_protocol_type = "consumer";

}  // namespace

std::string_view state_name(group_state state) {
  switch (state) {
    case group_state::empty:
      return "Empty";
    case group_state::preparing_rebalance:
      return "PreparingRebalance";
    case group_state::completing_rebalance:
      return "CompletingRebalance";
    case group_state::stable:
      return "Stable";
    case group_state::dead:
      return "Dead";
    case group_state::assigning:
      return "Assigning";
    case group_state::reconciling:
      return "Reconciling";
  }
  return "Unknown";
}

classic_group::classic_group(std::string id, const group_limits& limits, std::int64_t now_ms)
    : id_(std::move(id)), limits_(limits), state_since_ms_(now_ms) {}

classic_group classic_group::loaded(std::string id, const group_metadata_value& value, const group_limits& limits,
                                    std::int64_t now_ms) {
  classic_group g(std::move(id), limits, now_ms);
  g.generation_ = value.generation;
  g.protocol_type_ = value.protocol_type.empty() ? std::nullopt : std::optional(value.protocol_type);
  g.protocol_ = value.protocol;
  g.leader_ = value.leader.value_or("");
  g.state_since_ms_ = value.current_state_timestamp_ms >= 0 ? value.current_state_timestamp_ms : now_ms;
  for (const auto& stored : value.members) {
    member m;
    m.id = stored.member_id;
    m.instance_id = stored.group_instance_id;
    m.client_id = stored.client_id;
    m.client_host = stored.client_host;
    m.session_timeout_ms = stored.session_timeout_ms;
    m.rebalance_timeout_ms = stored.rebalance_timeout_ms;
    m.protocol_type = value.protocol_type;
    if (value.protocol) m.protocols.push_back({*value.protocol, stored.subscription});
    m.assignment = stored.assignment;
    m.session_deadline_ms = now_ms + m.session_timeout_ms;
    if (m.instance_id) g.static_members_[*m.instance_id] = m.id;
    g.members_.emplace(m.id, std::move(m));
  }
  g.state_ = g.members_.empty() ? group_state::empty : group_state::stable;
  return g;
}

std::vector<member_description> classic_group::describe() const {
  std::vector<member_description> out;
  for (const auto& [id, m] : members_) {
    member_description d{m.id, m.instance_id, m.client_id, m.client_host, {}, {}};
    if (state_ == group_state::stable) {
      for (const auto& p : m.protocols)
        if (protocol_ && p.name == *protocol_) d.metadata = p.metadata;
      d.assignment = m.assignment;
    }
    out.push_back(std::move(d));
  }
  return out;
}

group_metadata_value classic_group::snapshot(std::int64_t now_ms) const {
  group_metadata_value v;
  v.protocol_type = protocol_type_.value_or("");
  v.generation = generation_;
  v.protocol = protocol_;
  v.leader = leader_.empty() ? std::nullopt : std::optional(leader_);
  v.current_state_timestamp_ms = now_ms;
  for (const auto& [id, m] : members_) {
    member_metadata stored;
    stored.member_id = m.id;
    stored.group_instance_id = m.instance_id;
    stored.client_id = m.client_id;
    stored.client_host = m.client_host;
    stored.rebalance_timeout_ms = m.rebalance_timeout_ms;
    stored.session_timeout_ms = m.session_timeout_ms;
    for (const auto& p : m.protocols)
      if (protocol_ && p.name == *protocol_) stored.subscription = p.metadata;
    stored.assignment = m.assignment;
    v.members.push_back(std::move(stored));
  }
  return v;
}

std::string classic_group::broken_invariant() const {
  if (state_ == group_state::dead) return {};
  if (members_.empty()) {
    if (!leader_.empty()) return "leader " + leader_ + " in a group without members";
  } else if (!members_.contains(leader_)) {
    return "leader '" + leader_ + "' is not a member";
  }
  if (state_ == group_state::empty && !members_.empty()) return "an Empty group has members";
  for (const auto& id : pending_sync_)
    if (!members_.contains(id)) return "pending sync " + id + " is not a member";
  for (const auto& [instance, id] : static_members_) {
    const auto found = members_.find(id);
    if (found == members_.end())
      return std::string("static member ").append(instance).append(" maps to ").append(id).append(", not a member");
    if (found->second.instance_id != instance)
      return std::string("static member ").append(instance).append(" maps to ").append(id).append(" of another");
  }
  for (const auto& [id, m] : members_) {
    if (m.id != id) return "member " + m.id + " is kept as " + id;
    if (!m.instance_id) continue;
    const auto mapped = static_members_.find(*m.instance_id);
    if (mapped == static_members_.end() || mapped->second != id)
      return "member " + id + " of instance " + *m.instance_id + " is not the one the static members name";
  }
  return {};
}

// ---- JoinGroup ----

std::error_code classic_group::check_join(const join_request& request) const {
  if (request.session_timeout_ms < limits_.min_session_timeout_ms ||
      request.session_timeout_ms > limits_.max_session_timeout_ms)
    return errc::invalid_session_timeout;
  if (request.protocol_type.empty() || request.protocols.empty()) return errc::inconsistent_group_protocol;
  // Every string of a member is stored in __consumer_offsets, whose strings hold at most 32767 bytes; the member
  // id is the client id (or instance id) and a UUID.
  constexpr std::size_t longest = 32767 - 37;
  const auto too_long = [&](std::string_view s) { return s.size() > longest; };
  if (too_long(request.member_id) || too_long(request.group_instance_id.value_or("")) || too_long(request.client_id) ||
      too_long(request.client_host) || too_long(request.protocol_type) ||
      std::ranges::any_of(request.protocols, [&](const protocol_metadata& p) { return too_long(p.name); }))
    return errc::field_too_long;
  // Every member speaks the group's protocol type, and some protocol (assignor) all of them support.
  if (!members_.empty()) {
    if (protocol_type_ && request.protocol_type != *protocol_type_) return errc::inconsistent_group_protocol;
    const bool shared = std::ranges::any_of(request.protocols, [&](const protocol_metadata& offered) {
      return std::ranges::all_of(members_, [&](const auto& entry) {
        if (entry.first == request.member_id) return true;
        return std::ranges::any_of(entry.second.protocols,
                                   [&](const protocol_metadata& p) { return p.name == offered.name; });
      });
    });
    if (!shared) return errc::inconsistent_group_protocol;
  }
  return {};
}

void classic_group::join(const join_request& request, std::int64_t now_ms, join_callback done) {
  if (state_ == group_state::dead) {
    done({.error = errc::coordinator_not_available, .member_id = request.member_id});
    return;
  }
  if (const auto refused = check_join(request)) {
    done({.error = refused, .member_id = request.member_id});
    return;
  }
  if (request.member_id.empty() || pending_members_.contains(request.member_id)) {
    join_new_member(request, now_ms, std::move(done));
  } else {
    join_known_member(request, now_ms, std::move(done));
  }
}

void classic_group::join_new_member(const join_request& request, std::int64_t now_ms, join_callback done) {
  if (request.group_instance_id && static_members_.contains(*request.group_instance_id)) {
    replace_static_member(request, now_ms, std::move(done));
    return;
  }
  if (members_.size() >= static_cast<std::size_t>(limits_.max_size)) {
    done({.error = errc::group_max_size_reached, .member_id = request.member_id});
    return;
  }
  if (const auto pending = pending_members_.find(request.member_id); pending != pending_members_.end()) {
    pending_members_.erase(pending);
    add_member_and_rebalance(request, request.member_id, now_ms, std::move(done));
    return;
  }
  std::string member_id = new_member_id(request);
  if (request.require_known_member_id && !request.group_instance_id) {
    // KIP-394: the id is handed out first, so a client that times out and retries does not leave a
    // member behind for each attempt.
    pending_members_[member_id] = now_ms + request.session_timeout_ms;
    done({.error = errc::member_id_required, .member_id = std::move(member_id)});
    return;
  }
  add_member_and_rebalance(request, std::move(member_id), now_ms, std::move(done));
}

void classic_group::join_known_member(const join_request& request, std::int64_t now_ms, join_callback done) {
  if (fenced(request.member_id, request.group_instance_id)) {
    done({.error = errc::fenced_instance_id, .member_id = request.member_id});
    return;
  }
  const auto found = members_.find(request.member_id);
  if (found == members_.end() || state_ == group_state::empty) {
    done({.error = errc::unknown_member_id, .member_id = request.member_id});
    return;
  }
  member& m = found->second;
  switch (state_) {
    case group_state::preparing_rebalance:
      update_member_and_rebalance(m, request, now_ms, std::move(done));
      return;
    case group_state::completing_rebalance:
      if (same_protocols(m, request)) {
        // The JoinGroup answer was lost: send it again.
        touch(m, now_ms);
        done(join_answer(m, m.id == leader_));
      } else {
        update_member_and_rebalance(m, request, now_ms, std::move(done));
      }
      return;
    case group_state::stable:
      if (m.id == leader_ || !same_protocols(m, request)) {
        // The leader rejoins to have the group reassigned (new topics, for example).
        update_member_and_rebalance(m, request, now_ms, std::move(done));
      } else {
        touch(m, now_ms);
        done(join_answer(m, false));
      }
      return;
    case group_state::empty:
    case group_state::dead:
    case group_state::assigning:  // never a classic group's
    case group_state::reconciling:
      done({.error = errc::unknown_member_id, .member_id = request.member_id});
      return;
  }
}

void classic_group::replace_static_member(const join_request& request, std::int64_t now_ms, join_callback done) {
  const std::string old_id = static_members_.at(*request.group_instance_id);
  auto node = members_.extract(old_id);
  member& m = node.mapped();
  // Whoever still holds the old id is fenced from now on.
  if (m.awaiting_join) std::exchange(m.awaiting_join, {})({.error = errc::fenced_instance_id, .member_id = old_id});
  if (m.awaiting_sync) std::exchange(m.awaiting_sync, {})({.error = errc::fenced_instance_id});
  m.id = new_member_id(request);
  node.key() = m.id;
  static_members_[*request.group_instance_id] = m.id;
  if (leader_ == old_id) leader_ = m.id;
  if (pending_sync_.erase(old_id) > 0) pending_sync_.insert(m.id);
  update_member(m, request);
  touch(m, now_ms);
  auto inserted = members_.insert(std::move(node));
  member& replaced = inserted.position->second;
  switch (state_) {
    case group_state::stable:
      if (protocol_ && select_protocol() == *protocol_) {
        // KIP-345: a restarted static member gets its assignment back without a rebalance, once the new
        // member id is stored; as in Kafka, new metadata alone does not rebalance (a restarted consumer's
        // subscription no longer names the partitions it owned).
        replaced.awaiting_join = std::move(done);
        stores_.push_back({generation_, snapshot(now_ms)});
        return;
      }
      replaced.awaiting_join = std::move(done);
      prepare_rebalance(now_ms);
      return;
    case group_state::completing_rebalance:
      // The leader may be assigning to the old id: rebalance so the new one gets an assignment.
      replaced.awaiting_join = std::move(done);
      prepare_rebalance(now_ms);
      return;
    case group_state::preparing_rebalance:
      replaced.awaiting_join = std::move(done);
      try_complete_join(now_ms);
      return;
    case group_state::empty:
    case group_state::dead:
    case group_state::assigning:  // never a classic group's
    case group_state::reconciling:
      done({.error = errc::unknown_member_id, .member_id = request.member_id});
      return;
  }
}

void classic_group::add_member_and_rebalance(const join_request& request, std::string member_id, std::int64_t now_ms,
                                             join_callback done) {
  member m;
  m.id = std::move(member_id);
  m.instance_id = request.group_instance_id;
  update_member(m, request);
  touch(m, now_ms);
  m.awaiting_join = std::move(done);
  if (members_.empty()) protocol_type_ = request.protocol_type;
  if (leader_.empty()) leader_ = m.id;
  if (m.instance_id) static_members_[*m.instance_id] = m.id;
  members_.emplace(m.id, std::move(m));
  new_member_added_ = true;
  maybe_prepare_rebalance(now_ms);
}

void classic_group::update_member_and_rebalance(member& m, const join_request& request, std::int64_t now_ms,
                                                join_callback done) {
  update_member(m, request);
  touch(m, now_ms);
  if (m.awaiting_join) std::exchange(m.awaiting_join, {})({.error = errc::rebalance_in_progress, .member_id = m.id});
  m.awaiting_join = std::move(done);
  maybe_prepare_rebalance(now_ms);
}

void classic_group::update_member(member& m, const join_request& request) {
  m.client_id = request.client_id;
  m.client_host = request.client_host;
  m.session_timeout_ms = request.session_timeout_ms;
  m.rebalance_timeout_ms = request.rebalance_timeout_ms;
  m.protocol_type = request.protocol_type;
  m.protocols = request.protocols;
  m.supports_skip_assignment = request.supports_skip_assignment;
}

bool classic_group::same_protocols(const member& m, const join_request& request) const {
  if (m.protocols.size() != request.protocols.size()) return false;
  for (std::size_t i = 0; i < m.protocols.size(); ++i)
    if (m.protocols[i].name != request.protocols[i].name || m.protocols[i].metadata != request.protocols[i].metadata)
      return false;
  return true;
}

join_result classic_group::join_answer(const member& m, bool with_members) const {
  join_result r{.generation = generation_,
                .protocol_type = protocol_type_,
                .protocol_name = protocol_,
                .leader = leader_,
                .member_id = m.id};
  if (with_members) {
    for (const auto& [id, other] : members_) {
      join_result::member entry{other.id, other.instance_id, {}};
      for (const auto& p : other.protocols)
        if (protocol_ && p.name == *protocol_) entry.metadata = p.metadata;
      r.members.push_back(std::move(entry));
    }
  }
  return r;
}

// ---- Rebalances ----

void classic_group::maybe_prepare_rebalance(std::int64_t now_ms) {
  if (state_ == group_state::preparing_rebalance) {
    try_complete_join(now_ms);
  } else if (state_ != group_state::dead) {
    prepare_rebalance(now_ms);
  }
}

void classic_group::prepare_rebalance(std::int64_t now_ms) {
  if (state_ == group_state::completing_rebalance) {
    for (auto& [id, m] : members_) m.assignment.clear();
    complete_sync(errc::rebalance_in_progress);
  }
  storing_assignment_.reset();
  pending_sync_.clear();
  const bool from_empty = state_ == group_state::empty;
  enter(group_state::preparing_rebalance, now_ms);
  const std::int64_t timeout = rebalance_timeout_ms();
  if (from_empty && limits_.initial_rebalance_delay_ms > 0) {
    // The first rebalance waits for more members (group.initial.rebalance.delay.ms), so a group that
    // starts many consumers at once does not rebalance once per consumer. Without a delay it completes as
    // soon as everyone joined, like any other, not at the next tick.
    initial_delay_ = true;
    new_member_added_ = false;
    const std::int64_t delay = std::min<std::int64_t>(limits_.initial_rebalance_delay_ms, timeout);
    join_deadline_ms_ = now_ms + delay;
    initial_delay_limit_ms_ = now_ms + timeout;
  } else {
    initial_delay_ = false;
    join_deadline_ms_ = now_ms + timeout;
    try_complete_join(now_ms);
  }
}

bool classic_group::all_members_joined() const {
  return pending_members_.empty() &&
         std::ranges::all_of(members_, [](const auto& entry) { return static_cast<bool>(entry.second.awaiting_join); });
}

void classic_group::try_complete_join(std::int64_t now_ms) {
  if (state_ == group_state::preparing_rebalance && !initial_delay_ && all_members_joined()) complete_join(now_ms);
}

void classic_group::complete_join(std::int64_t now_ms) {
  // Dynamic members that did not rejoin in time are gone; static ones stay until their session ends.
  std::vector<std::string> gone;
  for (const auto& [id, m] : members_)
    if (!m.awaiting_join && !m.instance_id) gone.push_back(id);
  for (const auto& id : gone) remove_member(id);
  if (members_.empty()) {
    ++generation_;
    protocol_.reset();
    leader_.clear();
    enter(group_state::empty, now_ms);
    stores_.push_back({generation_, snapshot(now_ms)});
    return;
  }
  if (!members_.at(leader_).awaiting_join) {
    const auto joined =
        std::ranges::find_if(members_, [](const auto& e) { return static_cast<bool>(e.second.awaiting_join); });
    if (joined == members_.end()) {
      // Only static members that did not rejoin are left: wait another rebalance timeout for them (or for their
      // sessions to end).
      join_deadline_ms_ = now_ms + rebalance_timeout_ms();
      return;
    }
    leader_ = joined->first;
  }
  ++generation_;
  protocol_ = select_protocol();
  enter(group_state::completing_rebalance, now_ms);
  pending_sync_.clear();
  for (auto& [id, m] : members_) {
    pending_sync_.insert(id);
    if (!m.awaiting_join) continue;
    std::exchange(m.awaiting_join, {})(join_answer(m, id == leader_));
    touch(m, now_ms);
  }
  // Members that never send SyncGroup are given up after the rebalance timeout (Kafka's pending sync).
  sync_deadline_ms_ = now_ms + rebalance_timeout_ms();
}

std::string classic_group::select_protocol() const {
  // Each member votes for its most preferred protocol that every member supports; the most votes win, ties
  // going to the protocol the leader prefers.
  std::vector<std::string> candidates;
  const auto& first = members_.begin()->second;
  for (const auto& p : first.protocols) {
    const bool everyone = std::ranges::all_of(members_, [&](const auto& entry) {
      return std::ranges::any_of(entry.second.protocols, [&](const protocol_metadata& q) { return q.name == p.name; });
    });
    if (everyone) candidates.push_back(p.name);
  }
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members_) {
    for (const auto& p : m.protocols) {
      if (std::ranges::find(candidates, p.name) != candidates.end()) {
        ++votes[p.name];
        break;
      }
    }
  }
  std::string best;
  int most = -1;
  const auto leader = members_.find(leader_);
  const auto& order = leader != members_.end() ? leader->second.protocols : first.protocols;
  for (const auto& p : order) {
    const auto v = votes.find(p.name);
    if (v != votes.end() && v->second > most) {
      best = p.name;
      most = v->second;
    }
  }
  return best;
}

std::int32_t classic_group::rebalance_timeout_ms() const {
  std::int32_t longest = 0;
  for (const auto& [id, m] : members_) longest = std::max(longest, m.rebalance_timeout_ms);
  return longest;
}

// ---- SyncGroup ----

void classic_group::sync(const sync_request& request, std::int64_t now_ms, sync_callback done) {
  if (state_ == group_state::dead) {
    done({.error = errc::coordinator_not_available});
    return;
  }
  if (fenced(request.member_id, request.group_instance_id)) {
    done({.error = errc::fenced_instance_id});
    return;
  }
  const auto found = members_.find(request.member_id);
  if (found == members_.end()) {
    done({.error = errc::unknown_member_id});
    return;
  }
  if (request.generation != generation_) {
    done({.error = errc::illegal_generation});
    return;
  }
  if ((request.protocol_type && request.protocol_type != protocol_type_) ||
      (request.protocol_name && request.protocol_name != protocol_)) {
    done({.error = errc::inconsistent_group_protocol});
    return;
  }
  member& m = found->second;
  switch (state_) {
    case group_state::empty:
    case group_state::dead:
    case group_state::assigning:  // never a classic group's
    case group_state::reconciling:
      done({.error = errc::unknown_member_id});
      return;
    case group_state::preparing_rebalance:
      done({.error = errc::rebalance_in_progress});
      return;
    case group_state::completing_rebalance:
      touch(m, now_ms);
      pending_sync_.erase(m.id);
      if (m.awaiting_sync) std::exchange(m.awaiting_sync, {})({.error = errc::rebalance_in_progress});
      m.awaiting_sync = std::move(done);
      if (m.id == leader_ && !storing_assignment_) {
        // Members the leader left out get empty assignments.
        for (auto& [id, other] : members_) other.assignment.clear();
        for (const auto& [id, assignment] : request.assignments) {
          if (auto target = members_.find(id); target != members_.end()) target->second.assignment = assignment;
        }
        storing_assignment_ = generation_;
        stores_.push_back({generation_, snapshot(now_ms)});
      }
      return;
    case group_state::stable:
      touch(m, now_ms);
      pending_sync_.erase(m.id);
      done({.error = {}, .protocol_type = protocol_type_, .protocol_name = protocol_, .assignment = m.assignment});
      return;
  }
}

void classic_group::complete_sync(std::error_code error) {
  for (auto& [id, m] : members_) {
    if (!m.awaiting_sync) continue;
    sync_result r{.error = error};
    if (!error) {
      r.protocol_type = protocol_type_;
      r.protocol_name = protocol_;
      r.assignment = m.assignment;
    }
    std::exchange(m.awaiting_sync, {})(std::move(r));
  }
}

std::vector<classic_group::pending_store> classic_group::take_stores() { return std::exchange(stores_, {}); }

void classic_group::stored(std::int32_t generation, std::error_code outcome, std::int64_t now_ms) {
  if (generation != generation_) return;
  if (storing_assignment_ == generation && state_ == group_state::completing_rebalance) {
    storing_assignment_.reset();
    if (outcome) {
      // Kafka's answer when the group could not be stored: rebalance, and tell those waiting why.
      for (auto& [id, m] : members_) m.assignment.clear();
      complete_sync(outcome);
      prepare_rebalance(now_ms);
    } else {
      enter(group_state::stable, now_ms);
      complete_sync({});
    }
  }
  if (state_ == group_state::stable) {
    // Static members that replaced their old ids: their JoinGroup answers waited for this write.
    for (auto& [id, m] : members_) {
      if (!m.awaiting_join) continue;
      join_result r = outcome ? join_result{.error = outcome, .member_id = id} : join_answer(m, false);
      if (!outcome && id == leader_ && m.supports_skip_assignment) {
        r = join_answer(m, true);
        r.skip_assignment = true;
      }
      std::exchange(m.awaiting_join, {})(std::move(r));
    }
  }
}

// ---- Heartbeat, LeaveGroup, timers ----

std::error_code classic_group::heartbeat(const std::string& member_id,
                                         const std::optional<std::string>& group_instance_id, std::int32_t generation,
                                         std::int64_t now_ms) {
  if (state_ == group_state::dead) return errc::coordinator_not_available;
  if (fenced(member_id, group_instance_id)) return errc::fenced_instance_id;
  const auto found = members_.find(member_id);
  if (found == members_.end() || state_ == group_state::empty) return errc::unknown_member_id;
  if (generation != generation_) return errc::illegal_generation;
  touch(found->second, now_ms);
  if (state_ == group_state::preparing_rebalance) return errc::rebalance_in_progress;
  return {};
}

std::error_code classic_group::leave(const std::string& member_id, const std::optional<std::string>& group_instance_id,
                                     std::int64_t now_ms) {
  if (state_ == group_state::dead) return errc::coordinator_not_available;
  if (group_instance_id) {
    const auto known = static_members_.find(*group_instance_id);
    if (known == static_members_.end()) return errc::unknown_member_id;
    if (!member_id.empty() && member_id != known->second) return errc::fenced_instance_id;
    remove_member(known->second);
  } else if (pending_members_.erase(member_id) > 0) {
    try_complete_join(now_ms);
    return {};
  } else if (members_.contains(member_id)) {
    remove_member(member_id);
  } else {
    return errc::unknown_member_id;
  }
  if (state_ == group_state::stable || state_ == group_state::completing_rebalance) {
    prepare_rebalance(now_ms);
  } else {
    try_complete_join(now_ms);
  }
  return {};
}

void classic_group::remove_member(const std::string& member_id) {
  auto node = members_.extract(member_id);
  if (node.empty()) return;
  // Only the extracted member's own id from here: member_id may be the static-member entry erased below.
  member& m = node.mapped();
  if (m.awaiting_join) m.awaiting_join({.error = errc::unknown_member_id, .member_id = m.id});
  if (m.awaiting_sync) m.awaiting_sync({.error = errc::unknown_member_id});
  if (m.instance_id) static_members_.erase(*m.instance_id);
  pending_sync_.erase(m.id);
  if (leader_ == m.id) leader_ = members_.empty() ? std::string() : members_.begin()->first;
}

void classic_group::tick(std::int64_t now_ms) {
  if (state_ == group_state::dead) return;
  std::erase_if(pending_members_, [&](const auto& entry) { return entry.second <= now_ms; });
  // Sessions: a member waiting for its JoinGroup or SyncGroup answer is alive; the rebalance timers deal with it.
  std::vector<std::string> expired;
  for (const auto& [id, m] : members_)
    if (m.session_deadline_ms <= now_ms && !m.awaiting_join && !m.awaiting_sync) expired.push_back(id);
  for (const auto& id : expired) {
    remove_member(id);
    if (state_ == group_state::stable || state_ == group_state::completing_rebalance) prepare_rebalance(now_ms);
  }
  if (state_ == group_state::preparing_rebalance) {
    if (now_ms >= join_deadline_ms_) {
      if (initial_delay_ && new_member_added_ && now_ms < initial_delay_limit_ms_) {
        new_member_added_ = false;
        join_deadline_ms_ =
            std::min<std::int64_t>(now_ms + limits_.initial_rebalance_delay_ms, initial_delay_limit_ms_);
      } else {
        initial_delay_ = false;
        complete_join(now_ms);
      }
    } else {
      try_complete_join(now_ms);
    }
  }
  if ((state_ == group_state::completing_rebalance || state_ == group_state::stable) && !pending_sync_.empty() &&
      now_ms >= sync_deadline_ms_) {
    const auto laggards = std::exchange(pending_sync_, {});
    for (const auto& id : laggards) remove_member(id);
    prepare_rebalance(now_ms);
  }
}

void classic_group::unload(std::error_code why) {
  for (auto& [id, m] : members_) {
    if (m.awaiting_join) std::exchange(m.awaiting_join, {})({.error = why, .member_id = id});
    if (m.awaiting_sync) std::exchange(m.awaiting_sync, {})({.error = why});
  }
  state_ = group_state::dead;
}

void classic_group::enter(group_state next, std::int64_t now_ms) {
  state_ = next;
  state_since_ms_ = now_ms;
}

void classic_group::touch(member& m, std::int64_t now_ms) const {
  m.session_deadline_ms = now_ms + m.session_timeout_ms;
}

bool classic_group::fenced(const std::string& member_id, const std::optional<std::string>& instance_id) const {
  if (!instance_id) return false;
  const auto known = static_members_.find(*instance_id);
  return known != static_members_.end() && known->second != member_id;
}

// ---- Offsets ----

std::error_code classic_group::validate_commit(const std::string& member_id,
                                               const std::optional<std::string>& group_instance_id,
                                               std::int32_t generation, std::int64_t now_ms) {
  if (state_ == group_state::dead) return errc::coordinator_not_available;
  if (fenced(member_id, group_instance_id)) return errc::fenced_instance_id;
  if (generation < 0 && state_ == group_state::empty) return {};
  const auto found = members_.find(member_id);
  if (found == members_.end()) return errc::unknown_member_id;
  if (generation != generation_) return errc::illegal_generation;
  if (state_ == group_state::completing_rebalance) return errc::rebalance_in_progress;
  touch(found->second, now_ms);
  return {};
}

void classic_group::apply_commit(const topic_partition& tp, const committed_offset& value, std::uint64_t sequence) {
  if (sequence > 0) {
    auto& applied = commit_sequences_[tp];
    if (sequence < applied) return;
    applied = sequence;
  }
  offsets_[tp] = value;
}

void classic_group::remove_offset(const topic_partition& tp) {
  offsets_.erase(tp);
  commit_sequences_.erase(tp);
}

std::vector<topic_partition> classic_group::expired_offsets(std::int64_t now_ms, std::int64_t retention_ms) const {
  // Kafka's rules (KIP-211): an empty group's offsets count from when it became empty; a stable consumer
  // group's offsets of topics it no longer subscribes to, and those of a group outside group management,
  // from their commits. An explicit expire timestamp (OffsetCommit v1) wins.
  std::optional<std::int64_t> base;
  std::set<std::string> subscribed;
  if (protocol_type_ && state_ == group_state::empty) {
    base = state_since_ms_;
  } else if (state_ == group_state::stable && protocol_type_ == consumer_protocol_type) {
    subscribed = subscribed_topics();
  } else if (protocol_type_) {
    return {};
  }
  std::vector<topic_partition> out;
  for (const auto& [tp, value] : offsets_) {
    if (subscribed.contains(tp.topic)) continue;
    const bool expired = value.expire_timestamp_ms ? now_ms >= *value.expire_timestamp_ms
                                                   : now_ms - base.value_or(value.commit_timestamp_ms) >= retention_ms;
    if (expired) out.push_back(tp);
  }
  return out;
}

std::set<std::string> classic_group::subscribed_topics() const {
  std::set<std::string> topics;
  if (protocol_type_ != consumer_protocol_type || !protocol_) return topics;
  for (const auto& [id, m] : members_) {
    for (const auto& p : m.protocols) {
      if (p.name != *protocol_) continue;
      if (const auto subscription = decode_subscription(p.metadata))
        topics.insert(subscription.value().topics.begin(), subscription.value().topics.end());
    }
  }
  return topics;
}

}  // namespace ferry::group
