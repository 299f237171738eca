#include "group/server_assignors.h"

#include <algorithm>

namespace ferry::group {

target_assignment assign_uniform(const std::vector<assignor_member>& members, const topic_partition_counts& topics) {
  target_assignment out;
  std::vector<std::size_t> size(members.size(), 0);
  std::map<topic_uuid, std::vector<std::size_t>> subscribers;
  std::set<std::pair<topic_uuid, std::int32_t>> owned;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto& m = members[i];
    auto& target = out[m.member_id];
    for (const auto& id : m.subscribed) {
      if (topics.contains(id)) subscribers[id].push_back(i);
    }
    // What the member had and still may have: its topic is subscribed and the partition still exists.
    for (const auto& [id, partitions] : m.current_target) {
      const auto count = topics.find(id);
      if (count == topics.end() || !m.subscribed.contains(id)) continue;
      for (const auto p : partitions) {
        if (p < count->second && owned.emplace(id, p).second) {
          target[id].insert(p);
          ++size[i];
        }
      }
    }
  }
  const auto least_loaded = [&](const std::vector<std::size_t>& subs) {
    return *std::ranges::min_element(subs, [&](std::size_t a, std::size_t b) { return size[a] < size[b]; });
  };
  // Topics with the most partitions per subscriber first: they are the hardest to spread evenly.
  std::vector<topic_uuid> order;
  order.reserve(subscribers.size());
  for (const auto& [id, subs] : subscribers) order.push_back(id);
  std::ranges::stable_sort(order, [&](const topic_uuid& a, const topic_uuid& b) {
    return topics.at(a) * static_cast<std::int64_t>(subscribers[b].size()) >
           topics.at(b) * static_cast<std::int64_t>(subscribers[a].size());
  });
  for (const auto& id : order) {
    for (std::int32_t p = 0; p < topics.at(id); ++p) {
      if (owned.contains({id, p})) continue;
      const auto to = least_loaded(subscribers[id]);
      out[members[to].member_id][id].insert(p);
      ++size[to];
    }
  }
  // Even out each topic's subscribers: move partitions from the most loaded subscriber that holds one of the
  // topic to the least loaded, while they differ by more than one. Every move lowers the sum of squared sizes,
  // so this ends.
  bool moved = true;
  while (moved) {
    moved = false;
    for (const auto& id : order) {
      const auto& subs = subscribers[id];
      while (true) {
        const auto to = least_loaded(subs);
        std::optional<std::size_t> from;
        for (const auto s : subs) {
          auto& held = out[members[s].member_id][id];
          if (!held.empty() && size[s] > size[to] + 1 && (!from || size[s] > size[*from])) from = s;
        }
        if (!from) break;
        auto& held = out[members[*from].member_id][id];
        const auto p = *held.rbegin();
        held.erase(p);
        out[members[to].member_id][id].insert(p);
        --size[*from];
        ++size[to];
        moved = true;
      }
    }
  }
  for (auto& [member, target] : out) std::erase_if(target, [](const auto& entry) { return entry.second.empty(); });
  return out;
}

target_assignment assign_range(const std::vector<assignor_member>& members, const topic_partition_counts& topics) {
  std::vector<const assignor_member*> ordered;
  target_assignment out;
  for (const auto& m : members) {
    ordered.push_back(&m);
    out[m.member_id];
  }
  std::ranges::stable_sort(ordered, [](const assignor_member* a, const assignor_member* b) {
    if (a->instance_id.has_value() != b->instance_id.has_value()) return a->instance_id.has_value();
    if (a->instance_id && *a->instance_id != *b->instance_id) return *a->instance_id < *b->instance_id;
    return a->member_id < b->member_id;
  });
  for (const auto& [id, count] : topics) {
    std::vector<const assignor_member*> subs;
    for (const auto* m : ordered)
      if (m->subscribed.contains(id)) subs.push_back(m);
    if (subs.empty()) continue;
    const auto n = static_cast<std::int32_t>(subs.size());
    std::int32_t next = 0;
    for (std::int32_t i = 0; i < n; ++i) {
      const std::int32_t take = count / n + (i < count % n ? 1 : 0);
      for (std::int32_t p = next; p < next + take; ++p) out[subs[static_cast<std::size_t>(i)]->member_id][id].insert(p);
      next += take;
    }
  }
  return out;
}

target_assignment assign(std::string_view name, const std::vector<assignor_member>& members,
                         const topic_partition_counts& topics) {
  return name == range_assignor ? assign_range(members, topics) : assign_uniform(members, topics);
}

}  // namespace ferry::group
