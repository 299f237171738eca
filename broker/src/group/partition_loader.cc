#include "group/partition_loader.h"

#include <utility>

#include "group/offsets_records.h"

namespace ferry::group {

result<partition_groups> read_partition_groups(model::coordinator_log& log, std::int32_t partition,
                                               const partition_load_config& config, std::int64_t now_ms,
                                               const std::optional<std::string>& only) {
  using offsets_log = model::coordinator_log;
  partition_groups out;
  std::map<std::string, std::optional<group_metadata_value>> metadata;
  std::map<std::string, std::map<topic_partition, std::optional<committed_offset>>> offsets;
  std::map<std::string, std::unique_ptr<consumer_group>> consumer_groups;
  auto& pending_txn = out.pending_txn;
  const auto wanted = [&only](const std::string& group) { return !only || *only == group; };
  FERRY_TRY(log.replay(partition,
                       {.record =
                            [&](const offsets_log::replayed_record& r) {
                              auto record = decode_record(r.key, r.value);
                              if (!record) {
                                ++out.unreadable;
                                return;
                              }
                              if (auto* commit = std::get_if<offset_commit_record>(&record.value())) {
                                if (!wanted(commit->key.group)) return;
                                const topic_partition tp{commit->key.topic, commit->key.partition};
                                std::optional<committed_offset> value;
                                if (const auto& v = commit->value)
                                  value = committed_offset{v->committed_offset, v->committed_leader_epoch, v->metadata,
                                                           v->commit_timestamp_ms, v->expire_timestamp_ms};
                                if (r.transactional_producer != no_producer_id) {
                                  if (value) pending_txn[r.transactional_producer][commit->key.group][tp] = *value;
                                } else {
                                  offsets[commit->key.group][tp] = std::move(value);
                                }
                              } else if (auto* group = std::get_if<group_metadata_record>(&record.value())) {
                                if (!wanted(group->key.group)) return;
                                // A group's tombstone removes its offsets too (DeleteGroups writes theirs first).
                                if (!group->value) offsets.erase(group->key.group);
                                metadata[group->key.group] = std::move(group->value);
                              } else if (auto* consumer = std::get_if<consumer_group_record>(&record.value())) {
                                if (!wanted(consumer->key.group)) return;
                                auto& g = consumer_groups[consumer->key.group];
                                if (consumer->key.type == consumer_record_type::group_metadata && !consumer->value) {
                                  g.reset();
                                } else {
                                  if (!g) g = std::make_unique<consumer_group>(consumer->key.group, config.consumer);
                                  g->replay(*consumer);
                                }
                              }
                            },
                        .marker =
                            [&](const offsets_log::replayed_marker& m) {
                              const auto found = pending_txn.find(m.producer);
                              if (found == pending_txn.end()) return;
                              if (m.type == model::marker_type::commit)
                                for (auto& [group_id, committed] : found->second)
                                  for (auto& [tp, value] : committed) offsets[group_id][tp] = std::move(value);
                              pending_txn.erase(found);
                            }}));

  auto& groups = out.groups;
  for (auto& [id, value] : metadata) {
    if (value) groups[id] = std::make_unique<classic_group>(classic_group::loaded(id, *value, config.limits, now_ms));
  }
  for (auto& [id, committed] : offsets) {
    auto& g = groups[id];
    if (!g) g = std::make_unique<classic_group>(id, config.limits, now_ms);
    for (auto& [tp, value] : committed)
      if (value) g->apply_commit(tp, *value);
  }
  std::erase_if(consumer_groups, [](const auto& entry) { return !entry.second; });
  for (auto& [id, g] : consumer_groups) {
    g->loaded(now_ms);
    // A consumer group outranks a classic group's metadata left from before the group changed protocol: only
    // an empty group changes, and the classic one is not written again.
    auto& holder = groups[id];
    auto fresh = std::make_unique<classic_group>(id, config.limits, now_ms);
    if (holder)
      for (const auto& [tp, value] : holder->offsets()) fresh->apply_commit(tp, value);
    holder = std::move(fresh);
  }
  std::erase_if(groups, [&](const auto& entry) {
    return entry.second->state() == group_state::empty && entry.second->offsets().empty() &&
           !entry.second->protocol_type() && !consumer_groups.contains(entry.first);
  });
  out.consumer_groups = std::move(consumer_groups);
  return out;
}

}  // namespace ferry::group
