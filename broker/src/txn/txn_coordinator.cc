#include "txn/txn_coordinator.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "base/log.h"
#include "txn/errc.h"

namespace ferry::txn {
namespace {

constexpr std::int16_t max_epoch = std::numeric_limits<std::int16_t>::max();
// Kafka's transaction version 2 (KIP-890 part 2), as __transaction_state records name a transaction's producer.
constexpr std::int16_t epoch_bumping_txn_version = 2;
// The longest string __transaction_state records hold (an int16 length).
constexpr std::size_t max_stored_string = 32767;

bool is_prepare(txn_state state) { return state == txn_state::prepare_commit || state == txn_state::prepare_abort; }
bool is_idle(txn_state state) {
  return state == txn_state::empty || state == txn_state::complete_commit || state == txn_state::complete_abort;
}
// Kafka's isEpochExhausted: the last two epochs are kept for the fencing bump of an open transaction.
bool epoch_exhausted(producer_epoch epoch) { return epoch.value() >= max_epoch - 1; }

}  // namespace

// One transactional id: the last record written for it, and what is in flight.
struct txn_coordinator::transaction {
  txn_log_value stored;
  std::optional<txn_log_value> pending;  // the record being written; `stored` once it is replicated
  std::set<topic_partition> unmarked;    // a prepared transaction's partitions still without the marker
  bool markers_in_flight = false;
  // The epoch before the last bump an InitProducerId asked for with its current epoch, and the producer id
  // before a rotation, so that a retry of that request gets the same answer (KIP-360). Not in the log.
  producer_epoch last_epoch{-1};
  producer_id last_pid = no_producer_id;
};

// One __transaction_state partition's transactions. Replaced whole when the partition is led again, so a
// write that completes after its shard went away finds `gone` set and changes nothing.
struct txn_coordinator::shard {
  std::int32_t partition = 0;
  leader_epoch epoch;
  std::mutex mutex;
  bool loaded = false;                                           // guarded by mutex
  bool gone = false;                                             // guarded by mutex
  std::map<std::string, transaction, std::less<>> transactions;  // guarded by mutex

  transaction* find(std::string_view id) {
    const auto it = transactions.find(id);
    return it == transactions.end() ? nullptr : &it->second;
  }
  // The transaction of a request naming its producer: the shard's unavailability, no such id or another
  // producer id (invalid_producer_id_mapping), or an older epoch (producer_fenced).
  result<transaction*> owned_by(std::string_view id, const producer_identity& producer) {
    if (const auto why = unavailable()) return why;
    auto* t = find(id);
    if (t == nullptr || t->stored.pid != producer.id) return errc::invalid_producer_id_mapping;
    if (t->stored.epoch != producer.epoch) return errc::producer_fenced;
    return t;
  }
  // Why requests cannot be served now, if they cannot.
  [[nodiscard]] std::error_code unavailable() const {
    if (gone) return errc::not_coordinator;
    if (!loaded) return errc::coordinator_loading;
    return {};
  }
};

struct txn_coordinator::pending_write {
  std::shared_ptr<shard> s;
  std::string id;
  txn_log_value value;
  bool tombstone = false;
  std::function<void(std::error_code)> after;
};

txn_coordinator::txn_coordinator(const coordinator_config& config, model::coordinator_log& log, producer_id_source& ids,
                                 marker_writer& markers)
    : config_(config), log_(log), ids_(ids), markers_(markers) {}

txn_coordinator::~txn_coordinator() = default;

void txn_coordinator::note_time(std::int64_t now_ms) {
  auto seen = now_ms_.load();
  while (seen < now_ms && !now_ms_.compare_exchange_weak(seen, now_ms)) {
  }
}

std::vector<std::shared_ptr<txn_coordinator::shard>> txn_coordinator::shards() const {
  std::lock_guard lock(shards_mutex_);
  std::vector<std::shared_ptr<shard>> out;
  out.reserve(shards_.size());
  for (const auto& [p, s] : shards_) out.push_back(s);
  return out;
}

result<std::shared_ptr<txn_coordinator::shard>> txn_coordinator::shard_for(const std::string& transactional_id) const {
  std::lock_guard lock(shards_mutex_);
  const auto it = shards_.find(partition_for(transactional_id));
  if (it == shards_.end()) return errc::not_coordinator;
  return it->second;
}

std::vector<std::int32_t> txn_coordinator::lead(const std::map<std::int32_t, leader_epoch>& led) {
  std::vector<std::int32_t> to_load;
  std::vector<std::shared_ptr<shard>> dropped;
  {
    std::lock_guard lock(shards_mutex_);
    for (auto it = shards_.begin(); it != shards_.end();) {
      const auto l = led.find(it->first);
      if (l == led.end() || l->second != it->second->epoch) {
        dropped.push_back(it->second);
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
      shards_.emplace(p, std::move(s));
      to_load.push_back(p);
    }
  }
  for (const auto& s : dropped) {
    std::lock_guard lock(s->mutex);
    s->gone = true;
    s->transactions.clear();
  }
  return to_load;
}

result<void> txn_coordinator::load(std::int32_t partition, std::int64_t now_ms) {
  note_time(now_ms);
  std::shared_ptr<shard> s;
  {
    std::lock_guard lock(shards_mutex_);
    const auto it = shards_.find(partition);
    if (it == shards_.end()) return errc::not_coordinator;
    s = it->second;
  }
  std::map<std::string, txn_log_value> latest;
  std::size_t unreadable = 0;
  FERRY_TRY(log_.replay(partition, {.record = [&](const model::coordinator_log::replayed_record& r) {
                          auto id = decode_txn_key(r.key);
                          if (!id) {
                            ++unreadable;
                            return;
                          }
                          if (!r.value) {
                            latest.erase(id.value());
                            return;
                          }
                          auto decoded = decode_txn_value(*r.value);
                          if (!decoded) {
                            ++unreadable;
                            return;
                          }
                          latest[std::move(id.value())] = std::move(decoded.value());
                        }}));
  if (unreadable != 0)
    FERRY_LOG(warn, "txn") << transaction_state_topic << "-" << partition << ": skipped " << unreadable
                           << " records that are not transaction records";
  std::vector<std::string> prepared;
  {
    std::lock_guard lock(s->mutex);
    if (s->gone) return errc::not_coordinator;
    for (auto& [id, value] : latest) {
      if (value.state == txn_state::dead) continue;
      auto& t = s->transactions[id];
      t.stored = std::move(value);
      if (is_prepare(t.stored.state)) {
        t.unmarked.insert(t.stored.partitions.begin(), t.stored.partitions.end());
        prepared.push_back(id);
      }
    }
    s->loaded = true;
  }
  // Most partitions hold no transactional id: only those that do say so at info.
  if (latest.empty())
    FERRY_LOG(debug, "txn") << "coordinating " << transaction_state_topic << "-" << partition << " (coordinator epoch "
                            << s->epoch << "): no transactional ids";
  else
    FERRY_LOG(info, "txn") << "coordinating " << latest.size() << " transactional ids of " << transaction_state_topic
                           << "-" << partition << " (coordinator epoch " << s->epoch << "), " << prepared.size()
                           << " to complete";
  for (const auto& id : prepared) complete(s, id);
  return success();
}

txn_coordinator::pending_write txn_coordinator::prepare_write(const std::shared_ptr<shard>& s, const std::string& id,
                                                              transaction& t, txn_log_value next,
                                                              std::function<void(std::error_code)> after) {
  t.pending = next;
  const bool tombstone = next.state == txn_state::dead;
  return {.s = s, .id = id, .value = std::move(next), .tombstone = tombstone, .after = std::move(after)};
}

void txn_coordinator::issue(pending_write write) {
  std::vector<model::stored_record> records;
  records.push_back(
      {encode_txn_key(write.id),
       write.tombstone ? std::nullopt : std::optional<std::vector<std::byte>>(encode_txn_value(write.value))});
  const auto partition = write.s->partition;
  log_.append(partition, std::move(records), [write = std::move(write)](std::error_code ec) {
    {
      std::lock_guard lock(write.s->mutex);
      auto* t = write.s->gone ? nullptr : write.s->find(write.id);
      if (write.s->gone && !ec) ec = errc::not_coordinator;
      if (t != nullptr && t->pending) {
        if (ec) {
          t->pending.reset();
          // An id created by this write that never reached the log.
          if (t->stored.epoch == producer_epoch{-1}) write.s->transactions.erase(write.id);
        } else if (write.tombstone) {
          write.s->transactions.erase(write.id);
        } else {
          t->stored = std::move(*t->pending);
          t->pending.reset();
          if (is_prepare(t->stored.state)) {
            t->unmarked.clear();
            t->unmarked.insert(t->stored.partitions.begin(), t->stored.partitions.end());
          }
        }
      }
    }
    write.after(ec);
  });
}

txn_coordinator::pending_write txn_coordinator::fence_and_abort(const std::shared_ptr<shard>& s, const std::string& id,
                                                                transaction& t) {
  auto next = t.stored;
  // Kafka's prepareFenceProducerEpoch: at the last epoch there is nothing to bump to; the abort still runs.
  const int bumps = next.client_txn_version >= epoch_bumping_txn_version ? 2 : 1;
  next.epoch = producer_epoch{static_cast<std::int16_t>(std::min(next.epoch.value() + bumps, int{max_epoch}))};
  next.state = txn_state::prepare_abort;
  next.last_update_ms = now_ms_.load();
  return prepare_write(s, id, t, std::move(next), [this, s, id](std::error_code ec) {
    if (!ec) complete(s, id);
  });
}

void txn_coordinator::init_producer_id(const std::string& transactional_id, std::int32_t timeout_ms,
                                       const std::optional<producer_identity>& expected, std::int64_t now_ms,
                                       const init_callback& done) {
  note_time(now_ms);
  if (transactional_id.size() > max_stored_string) return done(errc::field_too_long);
  if (timeout_ms <= 0 || timeout_ms > config_.max_timeout_ms) return done(errc::invalid_transaction_timeout);
  auto found = shard_for(transactional_id);
  if (!found) return done(found.error());
  const auto& s = found.value();
  std::optional<pending_write> write;
  std::optional<result<producer_identity>> answer;
  {
    std::lock_guard lock(s->mutex);
    if (const auto why = s->unavailable()) return done(why);
    auto [it, created] = s->transactions.try_emplace(transactional_id);
    transaction& t = it->second;
    // A producer id reserved under the shard's lock: ZooKeeper is asked once per block of ids.
    const auto reserve = [&]() -> std::optional<producer_id> {
      auto id = ids_.next();
      if (id) return id.value();
      FERRY_LOG_LIMITED(warn, "txn", 100) << "cannot reserve a producer id: " << id.error().message();
      return std::nullopt;
    };
    if (created) {
      const auto id = reserve();
      if (!id) {
        s->transactions.erase(it);
        return done(errc::coordinator_not_available);
      }
      t.stored = {.pid = *id, .timeout_ms = timeout_ms, .last_update_ms = now_ms};
    }
    const auto& stored = t.stored;
    // Kafka's isValidProducerId: a producer that names its id must hold the current one, or the one before a
    // rotation at an exhausted epoch (a retry of the request that rotated it).
    const bool valid_expected = !expected || stored.epoch == producer_epoch{-1} || expected->id == stored.pid ||
                                (expected->id == t.last_pid && epoch_exhausted(expected->epoch));
    // A write in flight, or the markers of the last transaction still out: the producer retries.
    const bool busy = t.pending || (valid_expected && !is_idle(stored.state) && stored.state != txn_state::ongoing);
    if (busy) {
      answer = errc::concurrent_transactions;
    } else if (!valid_expected) {
      answer = errc::producer_fenced;
    } else if (stored.state == txn_state::ongoing) {
      // Abort the open transaction under a bumped epoch; the producer retries and gets the epoch after it.
      FERRY_LOG(info, "txn") << "aborting the open transaction of " << transactional_id << " (producer " << stored.pid
                             << " epoch " << stored.epoch << "): a new producer initialised it";
      write = fence_and_abort(s, transactional_id, t);
      answer = errc::concurrent_transactions;
    } else {
      auto next = stored;
      next.state = txn_state::empty;
      next.partitions.clear();
      next.timeout_ms = timeout_ms;
      next.start_ms = -1;
      next.last_update_ms = now_ms;
      producer_epoch last_epoch{-1};
      producer_id last_pid = t.last_pid;
      std::optional<result<producer_identity>> settled;
      if (epoch_exhausted(stored.epoch)) {
        const auto id = reserve();
        if (!id) return done(errc::coordinator_not_available);
        last_pid = stored.pid;
        if (expected) last_epoch = stored.epoch;
        next.pid = *id;
        next.epoch = producer_epoch{0};
      } else if (!expected || stored.epoch == producer_epoch{-1} || expected->epoch == stored.epoch) {
        if (expected) last_epoch = stored.epoch;
        next.epoch = producer_epoch{static_cast<std::int16_t>(stored.epoch.value() + 1)};
      } else if (expected->epoch == t.last_epoch) {
        settled = producer_identity{stored.pid, stored.epoch};  // a retry of the bump that made this epoch
      } else {
        settled = errc::producer_fenced;
      }
      if (settled) {
        answer = settled;
      } else {
        const producer_identity granted{next.pid, next.epoch};
        write = prepare_write(s, transactional_id, t, std::move(next),
                              [s, transactional_id, last_epoch, last_pid, granted, done](std::error_code ec) {
                                if (ec) return done(ec);
                                {
                                  std::lock_guard relock(s->mutex);
                                  if (auto* written = s->find(transactional_id)) {
                                    written->last_epoch = last_epoch;
                                    written->last_pid = last_pid;
                                  }
                                }
                                done(granted);
                              });
      }
    }
  }
  if (write) issue(std::move(*write));
  if (answer) done(*answer);
}

void txn_coordinator::add_partitions(const std::string& transactional_id, producer_identity producer,
                                     const std::vector<topic_partition>& partitions, bool by_broker,
                                     std::int64_t now_ms, done_callback done) {
  note_time(now_ms);
  auto found = shard_for(transactional_id);
  if (!found) return done(found.error());
  const auto& s = found.value();
  std::optional<pending_write> write;
  {
    std::lock_guard lock(s->mutex);
    auto owned = s->owned_by(transactional_id, producer);
    if (!owned) return done(owned.error());
    auto* t = owned.value();
    if (t->pending || !(t->stored.state == txn_state::ongoing || is_idle(t->stored.state)))
      return done(errc::concurrent_transactions);
    const auto& held = t->stored.partitions;
    const bool all_held = t->stored.state == txn_state::ongoing &&
                          std::all_of(partitions.begin(), partitions.end(), [&](const topic_partition& tp) {
                            return std::binary_search(held.begin(), held.end(), tp);
                          });
    if (all_held) return done({});
    auto next = t->stored;
    if (next.state != txn_state::ongoing) {
      next.partitions.clear();
      next.start_ms = now_ms;
    }
    next.state = txn_state::ongoing;
    if (by_broker) next.client_txn_version = epoch_bumping_txn_version;
    next.partitions.insert(next.partitions.end(), partitions.begin(), partitions.end());
    std::sort(next.partitions.begin(), next.partitions.end());
    next.partitions.erase(std::unique(next.partitions.begin(), next.partitions.end()), next.partitions.end());
    next.last_update_ms = now_ms;
    write = prepare_write(s, transactional_id, *t, std::move(next), std::move(done));
  }
  issue(std::move(*write));
}

std::error_code txn_coordinator::verify_partition(const std::string& transactional_id, producer_identity producer,
                                                  const topic_partition& partition) {
  auto found = shard_for(transactional_id);
  if (!found) return found.error();
  const auto& s = found.value();
  std::lock_guard lock(s->mutex);
  auto owned = s->owned_by(transactional_id, producer);
  if (!owned) return owned.error();
  const auto* t = owned.value();
  const auto& held = t->stored.partitions;
  if (t->stored.state != txn_state::ongoing || !std::binary_search(held.begin(), held.end(), partition))
    return errc::invalid_txn_state;
  return {};
}

std::optional<result<producer_identity>> txn_coordinator::end_classic(const transaction& t, producer_identity producer,
                                                                      bool commit) {
  const auto& stored = t.stored;
  if (stored.pid != producer.id) return errc::invalid_producer_id_mapping;
  if (stored.epoch != producer.epoch) return errc::producer_fenced;
  if (t.pending) return errc::concurrent_transactions;
  const producer_identity current{stored.pid, stored.epoch};
  // The outcome asked for is already there (a retry), on its way, or the other one.
  const bool same = stored.state == (commit ? txn_state::complete_commit : txn_state::complete_abort) ||
                    stored.state == (commit ? txn_state::prepare_commit : txn_state::prepare_abort);
  switch (stored.state) {
    case txn_state::ongoing:
      return std::nullopt;
    case txn_state::complete_commit:
    case txn_state::complete_abort:
      if (same) return current;
      return errc::invalid_txn_state;
    case txn_state::prepare_commit:
    case txn_state::prepare_abort:
      if (same) return errc::concurrent_transactions;
      return errc::invalid_txn_state;
    default:
      return errc::invalid_txn_state;
  }
}

// Kafka's transaction version 2 rules: a retry names the epoch before the bump (or, after a rotation, the old
// producer id at the last epoch); an abort with no transaction open still bumps the epoch; a commit without
// one is refused.
std::optional<result<producer_identity>> txn_coordinator::end_bumping(const transaction& t, producer_identity producer,
                                                                      bool commit) {
  const auto& stored = t.stored;
  const bool retry_after_rotation = stored.previous_pid == producer.id && producer.epoch.value() == max_epoch - 1 &&
                                    stored.epoch == producer_epoch{0};
  const bool retry_after_bump = stored.epoch.value() == producer.epoch.value() + 1;
  if (stored.pid != producer.id && !retry_after_rotation) return errc::invalid_producer_id_mapping;
  const bool current_epoch = stored.epoch == producer.epoch;
  bool valid_epoch = current_epoch;
  if (is_prepare(stored.state)) valid_epoch = retry_after_bump;
  if (stored.state == txn_state::complete_commit || stored.state == txn_state::complete_abort)
    valid_epoch = current_epoch || retry_after_bump || retry_after_rotation;
  if (!valid_epoch) return errc::producer_fenced;
  if (t.pending) return errc::concurrent_transactions;
  const bool retry = retry_after_bump || retry_after_rotation;
  const producer_identity current{stored.pid, stored.epoch};
  switch (stored.state) {
    case txn_state::ongoing:
      return std::nullopt;
    case txn_state::empty:
      if (commit) return errc::invalid_txn_state;
      return std::nullopt;
    case txn_state::complete_commit:
      if (commit && retry) return current;
      if (commit || retry) return errc::invalid_txn_state;
      return std::nullopt;
    case txn_state::complete_abort:
      if (commit) return errc::invalid_txn_state;
      if (retry) return current;
      return std::nullopt;
    case txn_state::prepare_commit:
      return commit ? errc::concurrent_transactions : errc::invalid_txn_state;
    case txn_state::prepare_abort:
      return commit ? errc::invalid_txn_state : errc::concurrent_transactions;
    default:
      return errc::invalid_txn_state;
  }
}

void txn_coordinator::end_txn(const std::string& transactional_id, producer_identity producer, bool commit,
                              bool bump_epoch, std::int64_t now_ms, const end_callback& done) {
  note_time(now_ms);
  auto found = shard_for(transactional_id);
  if (!found) return done(found.error());
  const auto& s = found.value();
  std::optional<pending_write> write;
  {
    std::lock_guard lock(s->mutex);
    if (const auto why = s->unavailable()) return done(why);
    auto* t = s->find(transactional_id);
    if (t == nullptr) return done(errc::invalid_producer_id_mapping);
    if (auto answer = bump_epoch ? end_bumping(*t, producer, commit) : end_classic(*t, producer, commit))
      return done(*answer);
    auto next = t->stored;
    if (next.state != txn_state::ongoing) {  // an abort with nothing open: only the epoch moves on
      next.partitions.clear();
      next.start_ms = now_ms;
    }
    next.state = commit ? txn_state::prepare_commit : txn_state::prepare_abort;
    next.last_update_ms = now_ms;
    if (bump_epoch) {
      next.client_txn_version = epoch_bumping_txn_version;
      if (epoch_exhausted(next.epoch)) {
        auto id = ids_.next();
        if (!id) {
          FERRY_LOG_LIMITED(warn, "txn", 100) << "cannot reserve a producer id: " << id.error().message();
          return done(errc::coordinator_not_available);
        }
        next.next_pid = id.value();
      }
      // The markers carry the bumped epoch; after a rotation the producer goes on with the new id at epoch 0.
      if (next.epoch.value() < max_epoch)
        next.epoch = producer_epoch{static_cast<std::int16_t>(next.epoch.value() + 1)};
    }
    const producer_identity granted = next.next_pid != no_producer_id
                                          ? producer_identity{next.next_pid, producer_epoch{0}}
                                          : producer_identity{next.pid, next.epoch};
    write = prepare_write(s, transactional_id, *t, std::move(next),
                          [this, s, transactional_id, done, granted](std::error_code ec) {
                            if (ec) {
                              done(ec);
                              return;
                            }
                            done(granted);
                            complete(s, transactional_id);
                          });
  }
  issue(std::move(*write));
}

void txn_coordinator::complete(const std::shared_ptr<shard>& s, const std::string& transactional_id) {
  std::optional<pending_write> write;
  marker_request request;
  {
    std::lock_guard lock(s->mutex);
    auto* t = s->gone ? nullptr : s->find(transactional_id);
    if (t == nullptr || t->pending || t->markers_in_flight || !is_prepare(t->stored.state)) return;
    const bool commit = t->stored.state == txn_state::prepare_commit;
    if (t->unmarked.empty()) {
      auto next = t->stored;
      next.state = commit ? txn_state::complete_commit : txn_state::complete_abort;
      next.partitions.clear();
      if (next.next_pid != no_producer_id) {  // KIP-890 part 2: the epoch was exhausted
        next.previous_pid = next.pid;
        next.pid = next.next_pid;
        next.next_pid = no_producer_id;
        next.epoch = producer_epoch{0};
      }
      next.last_update_ms = now_ms_.load();
      write = prepare_write(s, transactional_id, *t, std::move(next), [transactional_id](std::error_code ec) {
        // Written again from tick() while the transaction stays prepared.
        if (ec)
          FERRY_LOG_LIMITED(warn, "txn", 100)
              << "cannot record the end of the transaction of " << transactional_id << ": " << ec.message();
      });
    } else {
      t->markers_in_flight = true;
      request = {.producer = {t->stored.pid, t->stored.epoch},
                 .type = commit ? model::marker_type::commit : model::marker_type::abort,
                 .coordinator_epoch = s->epoch.value(),
                 .partitions = {t->unmarked.begin(), t->unmarked.end()}};
    }
  }
  if (write) return issue(std::move(*write));
  const auto producer = request.producer;
  markers_.write(std::move(request), [this, s, transactional_id, producer](std::vector<topic_partition> retry) {
    bool marked = false;
    {
      std::lock_guard lock(s->mutex);
      auto* t = s->gone ? nullptr : s->find(transactional_id);
      if (t == nullptr || t->stored.pid != producer.id || t->stored.epoch != producer.epoch) return;
      t->markers_in_flight = false;
      std::sort(retry.begin(), retry.end());
      std::erase_if(t->unmarked,
                    [&](const topic_partition& tp) { return !std::binary_search(retry.begin(), retry.end(), tp); });
      marked = t->unmarked.empty();
    }
    if (marked) complete(s, transactional_id);
  });
}

result<txn_description> txn_coordinator::describe(const std::string& transactional_id) {
  FERRY_TRY(const auto s, shard_for(transactional_id));
  std::lock_guard lock(s->mutex);
  if (const auto why = s->unavailable()) return why;
  const auto* t = s->find(transactional_id);
  if (t == nullptr) return errc::transactional_id_not_found;
  return txn_description{.transactional_id = transactional_id,
                         .state = t->stored.state,
                         .timeout_ms = t->stored.timeout_ms,
                         .start_ms = t->stored.start_ms,
                         .producer = {t->stored.pid, t->stored.epoch},
                         .partitions = t->stored.partitions};
}

txn_coordinator::listing txn_coordinator::list() {
  listing out;
  for (const auto& s : shards()) {
    std::lock_guard lock(s->mutex);
    if (s->gone) continue;
    if (!s->loaded) {
      out.loading = true;
      continue;
    }
    for (const auto& [id, t] : s->transactions)
      out.transactions.push_back({.transactional_id = id,
                                  .pid = t.stored.pid,
                                  .state = t.stored.state,
                                  .start_ms = t.stored.state == txn_state::ongoing ? t.stored.start_ms : -1});
  }
  return out;
}

void txn_coordinator::tick(std::int64_t now_ms) {
  note_time(now_ms);
  const bool check_timeouts = now_ms >= next_timeout_check_ms_;
  if (check_timeouts) next_timeout_check_ms_ = now_ms + config_.abort_timed_out_interval_ms;
  const bool check_expiry = now_ms >= next_expiry_check_ms_;
  if (check_expiry) next_expiry_check_ms_ = now_ms + config_.remove_expired_interval_ms;
  for (const auto& s : shards()) {
    std::vector<pending_write> writes;
    std::vector<std::string> unfinished;
    {
      std::lock_guard lock(s->mutex);
      if (s->unavailable()) continue;
      for (auto& [id, t] : s->transactions) {
        if (t.pending || t.markers_in_flight) continue;
        const auto& stored = t.stored;
        if (is_prepare(stored.state)) {
          unfinished.push_back(id);
        } else if (check_timeouts && stored.state == txn_state::ongoing &&
                   stored.start_ms + stored.timeout_ms < now_ms) {
          FERRY_LOG(info, "txn") << "aborting the transaction of " << id << " (producer " << stored.pid << " epoch "
                                 << stored.epoch << "): open longer than its timeout of " << stored.timeout_ms << " ms";
          writes.push_back(fence_and_abort(s, id, t));
        } else if (check_expiry && is_idle(stored.state) &&
                   stored.last_update_ms + config_.id_expiration_ms <= now_ms) {
          auto next = stored;
          next.state = txn_state::dead;
          writes.push_back(prepare_write(s, id, t, std::move(next), [](std::error_code) {}));
        }
      }
    }
    for (auto& w : writes) issue(std::move(w));
    for (const auto& id : unfinished) complete(s, id);
  }
}

}  // namespace ferry::txn
