#include "group/group_coordinator.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <utility>

#include "base/guarded.h"
#include "base/log.h"
#include "group/consumer_protocol.h"
#include "group/errc.h"
#include "group/offsets_records.h"

namespace ferry::group {
namespace {

// The longest string __consumer_offsets records hold (an int16 length).
constexpr std::size_t max_stored_string = 32767;

// A parked request's callback that runs at most once, so that a request whose group failed part way through can
// still be answered, and only once.
template <typename Result>
std::function<void(Result)> at_most_once(std::function<void(Result)> done) {
  auto answered = std::make_shared<std::atomic<bool>>(false);
  return [answered, done = std::move(done)](Result r) {
    if (answered->exchange(true)) return;
    done(std::move(r));
  };
}

}  // namespace

std::string_view type_name(group_type type) { return type == group_type::consumer ? "consumer" : "classic"; }

// One __consumer_offsets partition's groups. Replaced whole when the partition is loaded again, so a write
// that completes after its shard went away finds `gone` set and changes nothing.
struct group_coordinator::shard : std::enable_shared_from_this<shard> {
  std::int32_t partition = 0;
  leader_epoch epoch;
  std::mutex mutex;
  std::mutex commit_order;             // taken before mutex, see commit()
  std::uint64_t commits_appended = 0;  // guarded by mutex
  bool loaded = false;                 // guarded by mutex
  bool gone = false;                   // guarded by mutex
  // Groups whose state machine failed, being read back from the log on their own.
  std::set<std::string> reloading;  // guarded by mutex
  // Every group, with its committed offsets; for a consumer-protocol group an empty classic group holds them.
  std::map<std::string, std::unique_ptr<classic_group>> groups;  // guarded by mutex
  // The groups of the consumer protocol, each also in `groups`.
  std::map<std::string, std::unique_ptr<consumer_group>> consumer_groups;  // guarded by mutex
  // Transactional offsets waiting for their producer's marker, by producer and group.
  std::map<producer_id, std::map<std::string, std::map<topic_partition, committed_offset>>>
      pending_txn;  // guarded by mutex

  // Whether requests for the group are served now (not while the partition or the group is read back).
  [[nodiscard]] bool serves(const std::string& id) const { return loaded && !reloading.contains(id); }
  classic_group* find(const std::string& id) {
    const auto it = groups.find(id);
    return it == groups.end() ? nullptr : it->second.get();
  }
  consumer_group* find_consumer(const std::string& id) {
    const auto it = consumer_groups.find(id);
    return it == consumer_groups.end() ? nullptr : it->second.get();
  }
};

group_coordinator::group_coordinator(const coordinator_config& config, offsets_log& log) : config_(config), log_(log) {}

group_coordinator::~group_coordinator() {
  std::lock_guard lock(shards_mutex_);
  for (auto& [p, s] : shards_) {
    std::lock_guard shard_lock(s->mutex);
    for (auto& [id, g] : s->groups) g->unload(errc::not_coordinator);
    s->gone = true;
  }
}

std::vector<std::int32_t> group_coordinator::lead(const std::map<std::int32_t, leader_epoch>& led) {
  std::vector<std::int32_t> to_load;
  std::vector<std::shared_ptr<shard>> unloaded;
  {
    std::lock_guard lock(shards_mutex_);
    for (auto it = shards_.begin(); it != shards_.end();) {
      const auto now_led = led.find(it->first);
      if (now_led == led.end() || now_led->second != it->second->epoch) {
        unloaded.push_back(it->second);
        it = shards_.erase(it);
      } else {
        ++it;
      }
    }
    for (const auto& [p, epoch] : led) {
      if (shards_.contains(p)) continue;
      auto s = std::make_shared<shard>();
      s->partition = p;
      s->epoch = epoch;
      shards_.emplace(p, s);
      to_load.push_back(p);
    }
  }
  for (const auto& s : unloaded) {
    std::lock_guard lock(s->mutex);
    for (auto& [id, g] : s->groups) g->unload(errc::not_coordinator);
    s->gone = true;
    FERRY_LOG(info, "group") << "no longer coordinating the " << s->groups.size() << " groups of " << offsets_topic
                             << "-" << s->partition;
  }
  return to_load;
}

partition_load_config group_coordinator::load_config() const { return {config_.limits, config_.consumer}; }

result<void> group_coordinator::load(std::int32_t partition, std::int64_t now_ms) {
  std::shared_ptr<shard> s;
  {
    std::lock_guard lock(shards_mutex_);
    const auto it = shards_.find(partition);
    if (it == shards_.end()) return errc::not_coordinator;
    s = it->second;
  }
  auto read = read_partition_groups(log_, partition, load_config(), now_ms);
  if (!read) {
    // A replica dropped or truncated under the replay because leadership moved on is not a failure to report.
    std::lock_guard lock(s->mutex);
    return s->gone ? std::error_code(errc::not_coordinator) : read.error();
  }
  auto& contents = read.value();
  std::lock_guard lock(s->mutex);
  if (s->gone) return errc::not_coordinator;
  s->groups = std::move(contents.groups);
  s->consumer_groups = std::move(contents.consumer_groups);
  s->pending_txn = std::move(contents.pending_txn);
  s->loaded = true;
  FERRY_LOG(info, "group") << "coordinating " << s->groups.size() << " groups of " << offsets_topic << "-" << partition
                           << " (leader epoch " << s->epoch << ")"
                           << (contents.unreadable > 0
                                   ? ", skipped " + std::to_string(contents.unreadable) + " unreadable records"
                                   : "");
  return success();
}

void group_coordinator::fail_group(shard& s, const std::string& group_id, std::string_view what) {
  FERRY_LOG_LIMITED(error, "group", 10000) << "group " << group_id << " of " << offsets_topic << "-" << s.partition
                                           << ": " << what << "; it is unloaded and read back from its log";
  if (const auto it = s.groups.find(group_id); it != s.groups.end()) {
    (void)run_guarded("unloading a failed group", [&] { it->second->unload(errc::coordinator_not_available); });
    s.groups.erase(it);
  }
  s.consumer_groups.erase(group_id);
  for (auto& [producer, groups] : s.pending_txn) groups.erase(group_id);
  s.reloading.insert(group_id);
  std::lock_guard lock(reload_mutex_);
  reloads_.push_back({s.weak_from_this(), group_id});
}

template <typename Work>
bool group_coordinator::guard_group(shard& s, const std::string& group_id, Work&& work) {
  if (run_guarded("a group's state machine", std::forward<Work>(work))) return true;
  fail_group(s, group_id, "its state machine failed");
  return false;
}

void group_coordinator::reload_failed(std::int64_t now_ms) {
  std::vector<group_ref> failed_writes;
  {
    std::lock_guard lock(reload_mutex_);
    failed_writes = std::exchange(failed_writes_, {});
  }
  for (const auto& [weak, group_id] : failed_writes) {
    const auto s = weak.lock();
    if (!s) continue;
    std::lock_guard lock(s->mutex);
    if (!s->gone && !s->reloading.contains(group_id)) fail_group(*s, group_id, "a write of its records failed");
  }
  std::vector<group_ref> wanted;
  {
    std::lock_guard lock(reload_mutex_);
    wanted = std::exchange(reloads_, {});
  }
  for (const auto& [weak, group_id] : wanted) {
    const auto s = weak.lock();
    if (!s) continue;
    auto read = read_partition_groups(log_, s->partition, load_config(), now_ms, group_id);
    std::lock_guard lock(s->mutex);
    if (s->gone) continue;
    if (!read) {
      FERRY_LOG_LIMITED(error, "group", 10000) << "cannot read group " << group_id << " back from " << offsets_topic
                                               << "-" << s->partition << ": " << read.error().message() << "; retrying";
      std::lock_guard reload_lock(reload_mutex_);
      reloads_.push_back({weak, group_id});
      continue;
    }
    auto& contents = read.value();
    for (auto& [id, g] : contents.groups) s->groups[id] = std::move(g);
    for (auto& [id, g] : contents.consumer_groups) s->consumer_groups[id] = std::move(g);
    for (auto& [producer, groups] : contents.pending_txn)
      for (auto& [id, offsets] : groups) s->pending_txn[producer][id] = std::move(offsets);
    s->reloading.erase(group_id);
    FERRY_LOG(info, "group") << "group " << group_id << " of " << offsets_topic << "-" << s->partition
                             << " read back from its log";
  }
}

result<std::shared_ptr<group_coordinator::shard>> group_coordinator::shard_for(const std::string& group_id) const {
  if (group_id.empty() || group_id.size() > max_stored_string) return errc::invalid_group_id;
  std::lock_guard lock(shards_mutex_);
  const auto it = shards_.find(partition_for(group_id));
  if (it == shards_.end()) return errc::not_coordinator;
  return it->second;
}

void group_coordinator::flush_stores(const std::shared_ptr<shard>& s, const std::vector<std::string>& group_ids,
                                     std::int64_t now_ms) {
  struct store {
    std::string group_id;
    classic_group::pending_store pending;
  };
  std::vector<store> stores;
  {
    std::lock_guard lock(s->mutex);
    for (const auto& id : group_ids) {
      if (auto* g = s->find(id))
        for (auto& p : g->take_stores()) stores.push_back({id, std::move(p)});
    }
  }
  for (auto& st : stores) {
    std::vector<offsets_log::record> records;
    records.push_back({encode_key(group_metadata_key{st.group_id}), encode_value(st.pending.value)});
    const auto generation = st.pending.generation;
    log_.append(s->partition, std::move(records), [this, s, id = st.group_id, generation, now_ms](std::error_code ec) {
      {
        std::lock_guard lock(s->mutex);
        if (s->gone) return;
        if (auto* g = s->find(id)) (void)guard_group(*s, id, [&] { g->stored(generation, ec, now_ms); });
      }
      // A failed store rebalances, which may queue another.
      flush_stores(s, {id}, now_ms);
    });
  }
}

void group_coordinator::join(const std::string& group_id, const join_request& request, std::int64_t now_ms,
                             join_callback done) {
  auto s = shard_for(group_id);
  if (!s) {
    done({.error = s.error(), .member_id = request.member_id});
    return;
  }
  {
    std::lock_guard lock(s.value()->mutex);
    if (!s.value()->serves(group_id)) {
      done({.error = errc::coordinator_loading, .member_id = request.member_id});
      return;
    }
    if (auto* consumer = s.value()->find_consumer(group_id)) {
      // Only an empty consumer-protocol group may become a classic one (Kafka would also let a classic member
      // join a non-empty one; Ferry does not mix protocols in one group).
      if (consumer->member_count() > 0) {
        done({.error = errc::inconsistent_group_protocol, .member_id = request.member_id});
        return;
      }
      append_locked(s.value(), group_id, consumer->tombstones(), [](std::error_code) {});
      s.value()->consumer_groups.erase(group_id);
    }
    auto& g = s.value()->groups[group_id];
    if (!g) {
      if (!request.member_id.empty()) {
        done({.error = errc::unknown_member_id, .member_id = request.member_id});
        s.value()->groups.erase(group_id);
        return;
      }
      g = std::make_unique<classic_group>(group_id, config_.limits, now_ms);
    }
    const auto answer = at_most_once(std::move(done));
    if (!guard_group(*s.value(), group_id, [&] { g->join(request, now_ms, answer); }))
      answer({.error = errc::coordinator_not_available, .member_id = request.member_id});
  }
  flush_stores(s.value(), {group_id}, now_ms);
}

void group_coordinator::sync(const std::string& group_id, const sync_request& request, std::int64_t now_ms,
                             sync_callback done) {
  auto s = shard_for(group_id);
  if (!s) {
    done({.error = s.error()});
    return;
  }
  {
    std::lock_guard lock(s.value()->mutex);
    if (!s.value()->serves(group_id)) {
      done({.error = errc::coordinator_loading});
      return;
    }
    auto* g = s.value()->find(group_id);
    if (g == nullptr) {
      done({.error = errc::unknown_member_id});
      return;
    }
    const auto answer = at_most_once(std::move(done));
    if (!guard_group(*s.value(), group_id, [&] { g->sync(request, now_ms, answer); }))
      answer({.error = errc::coordinator_not_available});
  }
  flush_stores(s.value(), {group_id}, now_ms);
}

std::error_code group_coordinator::heartbeat(const std::string& group_id, const std::string& member_id,
                                             const std::optional<std::string>& group_instance_id,
                                             std::int32_t generation, std::int64_t now_ms) {
  auto s = shard_for(group_id);
  if (!s) return s.error();
  std::lock_guard lock(s.value()->mutex);
  if (!s.value()->serves(group_id)) return errc::coordinator_loading;
  auto* g = s.value()->find(group_id);
  if (g == nullptr) return errc::unknown_member_id;
  std::error_code out = errc::coordinator_not_available;
  (void)guard_group(*s.value(), group_id,
                    [&] { out = g->heartbeat(member_id, group_instance_id, generation, now_ms); });
  return out;
}

result<std::vector<std::error_code>> group_coordinator::leave(const std::string& group_id,
                                                              const std::vector<leaving_member>& members,
                                                              std::int64_t now_ms) {
  auto s = shard_for(group_id);
  if (!s) return s.error();
  std::vector<std::error_code> errors;
  {
    std::lock_guard lock(s.value()->mutex);
    if (!s.value()->serves(group_id)) return errc::coordinator_loading;
    auto* g = s.value()->find(group_id);
    for (const auto& m : members) {
      std::error_code left = errc::unknown_member_id;
      if (g != nullptr &&
          !guard_group(*s.value(), group_id, [&] { left = g->leave(m.member_id, m.group_instance_id, now_ms); })) {
        left = errc::coordinator_not_available;
        g = nullptr;  // unloaded: the others get unknown_member_id, as from a group that is gone
      }
      errors.push_back(left);
    }
  }
  flush_stores(s.value(), {group_id}, now_ms);
  return errors;
}

void group_coordinator::commit(const std::string& group_id, commit_request request, std::int64_t now_ms,
                               commit_callback done) {
  const auto all = [&](std::error_code ec) { return std::vector<std::error_code>(request.offsets.size(), ec); };
  auto s = shard_for(group_id);
  if (!s) {
    done(all(s.error()));
    return;
  }
  std::vector<std::error_code> errors(request.offsets.size());
  std::vector<offsets_log::record> records;
  // Commits are numbered and appended in one order, under this lock (not the shard's: a write may complete
  // inline, and its completion takes the shard's lock), so that their numbers follow the log.
  std::unique_lock ordered(s.value()->commit_order);
  std::uint64_t sequence = 0;
  {
    std::lock_guard lock(s.value()->mutex);
    sequence = ++s.value()->commits_appended;
    if (!s.value()->serves(group_id)) {
      done(all(errc::coordinator_loading));
      return;
    }
    auto* g = s.value()->find(group_id);
    if (g == nullptr) {
      // Only a group outside group management may start with a commit.
      if (request.generation >= 0) {
        done(all(errc::illegal_generation));
        return;
      }
      auto created = std::make_unique<classic_group>(group_id, config_.limits, now_ms);
      g = created.get();
      s.value()->groups.emplace(group_id, std::move(created));
    }
    const auto* consumer = s.value()->find_consumer(group_id);
    if (const auto refused = consumer != nullptr ? consumer->validate_commit(request.member_id, request.generation)
                                                 : g->validate_commit(request.member_id, request.group_instance_id,
                                                                      request.generation, now_ms)) {
      done(all(refused));
      return;
    }
    for (std::size_t i = 0; i < request.offsets.size(); ++i) {
      const auto& c = request.offsets[i];
      if (c.value.metadata.size() > static_cast<std::size_t>(config_.offset_metadata_max_bytes)) {
        errors[i] = errc::offset_metadata_too_large;
        continue;
      }
      const offset_commit_value value{c.value.committed, c.value.epoch, c.value.metadata, c.value.commit_timestamp_ms,
                                      c.value.expire_timestamp_ms};
      records.push_back(
          {encode_key(offset_commit_key{group_id, c.partition.topic, c.partition.partition}), encode_value(value)});
    }
  }
  if (records.empty()) {
    done(std::move(errors));
    return;
  }
  const auto transaction = request.transaction;
  auto written = [s = s.value(), group_id, sequence, request = std::move(request), errors = std::move(errors),
                  done = std::move(done)](std::error_code ec) mutable {
    {
      std::lock_guard lock(s->mutex);
      auto* g = s->gone ? nullptr : s->find(group_id);
      for (std::size_t i = 0; i < request.offsets.size(); ++i) {
        if (errors[i]) continue;
        if (ec) {
          errors[i] = ec;
        } else if (g != nullptr && request.transaction) {
          s->pending_txn[request.transaction->id][group_id][request.offsets[i].partition] = request.offsets[i].value;
        } else if (g != nullptr) {
          g->apply_commit(request.offsets[i].partition, request.offsets[i].value, sequence);
          g->count_commit();
        }
      }
    }
    done(std::move(errors));
  };
  if (transaction)
    log_.append_transactional(s.value()->partition, transaction->id, transaction->epoch, std::move(records),
                              std::move(written));
  else
    log_.append(s.value()->partition, std::move(records), std::move(written));
}

void group_coordinator::complete_txn(std::int32_t partition, producer_id producer, bool commit) {
  std::shared_ptr<shard> s;
  {
    std::lock_guard lock(shards_mutex_);
    const auto it = shards_.find(partition);
    if (it == shards_.end()) return;
    s = it->second;
  }
  std::lock_guard lock(s->mutex);
  const auto found = s->pending_txn.find(producer);
  if (found == s->pending_txn.end()) return;
  if (commit) {
    for (auto& [group_id, committed] : found->second) {
      auto* g = s->find(group_id);
      if (g == nullptr) continue;  // deleted meanwhile
      for (auto& [tp, value] : committed) g->apply_commit(tp, value);
      g->count_commit();
    }
  }
  s->pending_txn.erase(found);
}

std::vector<topic_partition> group_coordinator::pending_txn_offsets(const std::string& group_id) {
  std::vector<topic_partition> out;
  auto s = shard_for(group_id);
  if (!s) return out;
  std::lock_guard lock(s.value()->mutex);
  for (const auto& [producer, groups] : s.value()->pending_txn) {
    const auto found = groups.find(group_id);
    if (found == groups.end()) continue;
    for (const auto& [tp, value] : found->second) out.push_back(tp);
  }
  return out;
}

result<group_coordinator::fetched_offsets> group_coordinator::fetch(
    const std::string& group_id, const std::optional<std::vector<topic_partition>>& partitions,
    const std::optional<std::string>& member_id, std::int32_t member_epoch) {
  auto s = shard_for(group_id);
  if (!s) return s.error();
  std::lock_guard lock(s.value()->mutex);
  if (!s.value()->serves(group_id)) return errc::coordinator_loading;
  if (const auto* consumer = s.value()->find_consumer(group_id)) {
    if (const auto refused = consumer->validate_fetch(member_id, member_epoch)) return refused;
  }
  const auto* g = s.value()->find(group_id);
  fetched_offsets out;
  if (!partitions) {
    if (g != nullptr)
      for (const auto& [tp, value] : g->offsets()) out.emplace_back(tp, value);
    return out;
  }
  for (const auto& tp : *partitions) {
    std::optional<committed_offset> found;
    if (g != nullptr) {
      if (const auto it = g->offsets().find(tp); it != g->offsets().end()) found = it->second;
    }
    out.emplace_back(tp, std::move(found));
  }
  return out;
}

result<group_description> group_coordinator::describe(const std::string& group_id) {
  auto s = shard_for(group_id);
  if (!s) return s.error();
  std::lock_guard lock(s.value()->mutex);
  if (!s.value()->serves(group_id)) return errc::coordinator_loading;
  const auto* g = s.value()->find(group_id);
  group_description d{.group_id = group_id};
  if (g == nullptr) return d;
  if (const auto* consumer = s.value()->find_consumer(group_id)) {
    d.type = group_type::consumer;
    d.state = consumer->state();
    d.protocol_type = "consumer";
    d.protocol = consumer->assignor();
    const auto described = consumer->describe();
    for (const auto& m : described.members) {
      assignment a;
      for (const auto& [topic, partitions] : m.assignment) {
        const auto name = described.topic_names.find(topic);
        if (name == described.topic_names.end()) continue;
        auto& out = a.assigned_partitions.emplace_back();
        out.topic = name->second;
        for (const auto p : partitions) out.partitions.emplace_back(p);
      }
      d.members.push_back({m.member_id, m.instance_id, m.client_id, m.client_host, {}, encode_assignment(a)});
    }
    return d;
  }
  d.state = g->state();
  d.protocol_type = g->protocol_type().value_or("");
  if (g->state() == group_state::stable) d.protocol = g->protocol_name().value_or("");
  d.members = g->describe();
  return d;
}

group_coordinator::listing group_coordinator::list() {
  std::vector<std::shared_ptr<shard>> shards;
  {
    std::lock_guard lock(shards_mutex_);
    for (const auto& [p, s] : shards_) shards.push_back(s);
  }
  listing out;
  for (const auto& s : shards) {
    std::lock_guard lock(s->mutex);
    if (!s->loaded) {
      out.loading = true;
      continue;
    }
    for (const auto& [id, g] : s->groups) {
      if (const auto* consumer = s->find_consumer(id))
        out.groups.push_back({id, "consumer", consumer->state(), group_type::consumer});
      else
        out.groups.push_back({id, g->protocol_type().value_or(""), g->state(), group_type::classic});
    }
  }
  return out;
}

std::vector<group_overview> group_coordinator::overview() {
  std::vector<std::shared_ptr<shard>> shards;
  {
    std::lock_guard lock(shards_mutex_);
    for (const auto& [p, s] : shards_) shards.push_back(s);
  }
  std::vector<group_overview> out;
  for (const auto& s : shards) {
    std::lock_guard lock(s->mutex);
    if (!s->loaded) continue;
    for (const auto& [id, g] : s->groups) {
      group_overview& o = out.emplace_back();
      o.group_id = id;
      o.state = g->state();
      o.protocol_type = g->protocol_type().value_or("");
      if (g->state() == group_state::stable) o.protocol = g->protocol_name().value_or("");
      o.members = g->member_count();
      if (const auto* consumer = s->find_consumer(id)) {
        o.type = group_type::consumer;
        o.state = consumer->state();
        o.protocol_type = "consumer";
        o.protocol = consumer->assignor();
        o.members = consumer->member_count();
      }
      o.offsets_partition = s->partition;
      o.offset_commits = g->commits();
      o.committed.reserve(g->offsets().size());
      for (const auto& [tp, value] : g->offsets()) o.committed.emplace_back(tp, value.committed);
    }
  }
  return out;
}

void group_coordinator::delete_group(const std::string& group_id, std::function<void(std::error_code)> done) {
  auto s = shard_for(group_id);
  if (!s) {
    done(s.error());
    return;
  }
  std::vector<offsets_log::record> records;
  {
    std::lock_guard lock(s.value()->mutex);
    if (!s.value()->serves(group_id)) {
      done(errc::coordinator_loading);
      return;
    }
    auto it = s.value()->groups.find(group_id);
    if (it == s.value()->groups.end() || it->second->state() == group_state::dead) {
      done(errc::group_id_not_found);
      return;
    }
    auto* consumer = s.value()->find_consumer(group_id);
    if (it->second->state() != group_state::empty || (consumer != nullptr && consumer->member_count() > 0)) {
      done(errc::non_empty_group);
      return;
    }
    if (consumer != nullptr) {
      records = consumer->tombstones();
      s.value()->consumer_groups.erase(group_id);
    }
    for (const auto& [tp, value] : it->second->offsets())
      records.push_back({encode_key(offset_commit_key{group_id, tp.topic, tp.partition}), std::nullopt});
    records.push_back({encode_key(group_metadata_key{group_id}), std::nullopt});
    it->second->unload(errc::coordinator_not_available);
    s.value()->groups.erase(it);
  }
  log_.append(s.value()->partition, std::move(records), std::move(done));
}

void group_coordinator::delete_offsets(const std::string& group_id, const std::vector<topic_partition>& partitions,
                                       delete_offsets_callback done) {
  auto s = shard_for(group_id);
  if (!s) {
    done(s.error(), {});
    return;
  }
  std::vector<std::error_code> errors(partitions.size());
  std::vector<offsets_log::record> records;
  {
    std::lock_guard lock(s.value()->mutex);
    if (!s.value()->serves(group_id)) {
      done(errc::coordinator_loading, {});
      return;
    }
    auto* g = s.value()->find(group_id);
    if (g == nullptr || g->state() == group_state::dead) {
      done(errc::group_id_not_found, {});
      return;
    }
    const auto* consumer = s.value()->find_consumer(group_id);
    const auto subscribed = consumer != nullptr                ? consumer->subscribed_topics()
                            : g->state() == group_state::empty ? std::set<std::string>{}
                                                               : g->subscribed_topics();
    for (std::size_t i = 0; i < partitions.size(); ++i) {
      const auto& tp = partitions[i];
      if (subscribed.contains(tp.topic)) {
        errors[i] = errc::group_subscribed_to_topic;
      } else if (g->offsets().contains(tp)) {
        g->remove_offset(tp);
        records.push_back({encode_key(offset_commit_key{group_id, tp.topic, tp.partition}), std::nullopt});
      }
    }
  }
  if (records.empty()) {
    done({}, std::move(errors));
    return;
  }
  log_.append(s.value()->partition, std::move(records),
              [errors = std::move(errors), done = std::move(done)](std::error_code ec) mutable {
                done(ec, std::move(errors));
              });
}

void group_coordinator::tick(std::int64_t now_ms) {
  std::vector<std::shared_ptr<shard>> shards;
  {
    std::lock_guard lock(shards_mutex_);
    for (const auto& [p, s] : shards_) shards.push_back(s);
  }
  const bool expire = now_ms >= next_expiry_ms_;
  if (expire) next_expiry_ms_ = now_ms + config_.offsets_retention_check_interval_ms;
  for (const auto& s : shards) {
    std::vector<std::string> ticked;
    {
      std::lock_guard lock(s->mutex);
      if (!s->loaded) continue;
      std::vector<std::string> failed;
      for (auto& [id, g] : s->groups) {
        if (g->member_count() == 0 && g->state() == group_state::empty) continue;
        classic_group& group = *g;
        if (!run_guarded("a classic group's timers", [&] { group.tick(now_ms); })) failed.push_back(id);
        ticked.push_back(id);
      }
      for (auto& [id, g] : s->consumer_groups) {
        std::vector<offsets_log::record> fenced;
        consumer_group& group = *g;
        if (!run_guarded("a consumer group's timers", [&] { group.tick(now_ms, fenced); })) {
          failed.push_back(id);
        } else if (!fenced.empty()) {
          append_locked(s, id, std::move(fenced), [](std::error_code) {});
        }
      }
      for (const auto& id : failed) fail_group(*s, id, "its timers failed");
    }
    flush_stores(s, ticked, now_ms);
    if (expire) expire_offsets(s, now_ms);
  }
}

void group_coordinator::expire_offsets(const std::shared_ptr<shard>& s, std::int64_t now_ms) {
  std::vector<offsets_log::record> records;
  std::size_t removed_groups = 0;
  {
    std::lock_guard lock(s->mutex);
    for (auto it = s->groups.begin(); it != s->groups.end();) {
      auto& g = *it->second;
      auto* consumer = s->find_consumer(it->first);
      if (consumer != nullptr && consumer->member_count() > 0) {
        ++it;
        continue;
      }
      for (const auto& tp : g.expired_offsets(now_ms, config_.offsets_retention_ms)) {
        g.remove_offset(tp);
        records.push_back({encode_key(offset_commit_key{it->first, tp.topic, tp.partition}), std::nullopt});
      }
      if (g.state() == group_state::empty && g.offsets().empty()) {
        // Kafka's answer to an empty group without offsets: it is gone, and a tombstone says so.
        if (consumer != nullptr) {
          for (auto& r : consumer->tombstones()) records.push_back(std::move(r));
          s->consumer_groups.erase(it->first);
        }
        records.push_back({encode_key(group_metadata_key{it->first}), std::nullopt});
        g.unload(errc::coordinator_not_available);
        it = s->groups.erase(it);
        ++removed_groups;
      } else {
        ++it;
      }
    }
  }
  if (records.empty()) return;
  FERRY_LOG(info, "group") << "expired " << records.size() - removed_groups << " offsets and " << removed_groups
                           << " groups of " << offsets_topic << "-" << s->partition;
  log_.append(s->partition, std::move(records), [](std::error_code) {});
}

void group_coordinator::append_locked(const std::shared_ptr<shard>& s, const std::string& group_id,
                                      std::vector<offsets_log::record> records,
                                      std::function<void(std::error_code)> done) {
  // The group changed in memory before its records were written: if they may not have been, the log is the
  // truth, and the group is read back from it (Kafka reverts its in-memory timeline to the last write instead).
  // The callback may run inline, under the shard's lock: it only queues the group for reload_failed.
  log_.append(s->partition, std::move(records),
              [this, weak = std::weak_ptr<shard>(s), group_id, done = std::move(done)](std::error_code ec) {
                if (ec && ec != errc::not_coordinator) {
                  std::lock_guard lock(reload_mutex_);
                  failed_writes_.push_back({weak, group_id});
                }
                done(ec);
              });
}

void group_coordinator::consumer_heartbeat(const std::string& group_id, const consumer_heartbeat_request& request,
                                           const topic_lookup& topics, std::int64_t now_ms,
                                           consumer_heartbeat_callback done, const topic_names& all_topics) {
  const auto refuse = [&](std::error_code error, std::string message = {}) {
    consumer_heartbeat_result out;
    out.error = error;
    out.error_message = std::move(message);
    done(std::move(out));
  };
  std::string message;
  if (const auto invalid = consumer_group::check_request(request, config_.consumer, message)) {
    refuse(invalid, std::move(message));
    return;
  }
  auto s = shard_for(group_id);
  if (!s) {
    refuse(s.error());
    return;
  }
  std::lock_guard lock(s.value()->mutex);
  if (!s.value()->serves(group_id)) {
    refuse(errc::coordinator_loading);
    return;
  }
  auto* g = s.value()->find_consumer(group_id);
  const bool created = g == nullptr;
  if (g == nullptr) {
    if (request.member_epoch != 0) {
      refuse(errc::group_id_not_found, "Consumer group " + group_id + " not found.");
      return;
    }
    auto& holder = s.value()->groups[group_id];
    if (holder && (holder->member_count() > 0 || holder->state() != group_state::empty)) {
      // Ferry does not convert a classic group with members (Kafka's migration policy "disabled").
      refuse(errc::group_id_not_found,
             "Cannot upgrade classic group " + group_id + " to consumer group because online upgrade is disabled.");
      return;
    }
    if (!holder) holder = std::make_unique<classic_group>(group_id, config_.limits, now_ms);
    g = s.value()
            ->consumer_groups.emplace(group_id, std::make_unique<consumer_group>(group_id, config_.consumer))
            .first->second.get();
  }
  std::vector<offsets_log::record> records;
  consumer_heartbeat_result result;
  if (!guard_group(*s.value(), group_id,
                   [&] { result = g->heartbeat(request, topics, now_ms, records, all_topics); })) {
    refuse(errc::coordinator_not_available);
    return;
  }
  if (result.error || records.empty()) {
    if (created) {
      s.value()->consumer_groups.erase(group_id);
      const auto* holder = s.value()->find(group_id);
      if (holder != nullptr && holder->offsets().empty() && !holder->protocol_type()) s.value()->groups.erase(group_id);
    }
    done(std::move(result));
    return;
  }
  append_locked(s.value(), group_id, std::move(records),
                [result = std::move(result), done = std::move(done)](std::error_code ec) mutable {
                  if (ec) result = consumer_heartbeat_result{.error = ec};
                  done(std::move(result));
                });
}

result<consumer_group_description> group_coordinator::describe_consumer_group(const std::string& group_id) {
  auto s = shard_for(group_id);
  if (!s) return s.error();
  std::lock_guard lock(s.value()->mutex);
  if (!s.value()->serves(group_id)) return errc::coordinator_loading;
  const auto* g = s.value()->find_consumer(group_id);
  if (g == nullptr) return errc::group_id_not_found;
  return g->describe();
}

}  // namespace ferry::group
