#include "coord/topic_store.h"

#include <algorithm>
#include <limits>

#include "base/log.h"
#include "coord/errc.h"

namespace ferry::coord {
namespace {

result<void> validate_assignment(const layout::replica_assignment& assignment) {
  std::int32_t expected = 0;
  for (const auto& [p, replicas] : assignment) {
    if (p.value() != expected++ || replicas.empty()) return errc::invalid_argument;
    auto sorted = replicas;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) return errc::invalid_argument;
    if (sorted.front().value() < 0) return errc::invalid_argument;
  }
  if (assignment.empty()) return errc::invalid_argument;
  return success();
}

}  // namespace

result<uuid> topic_store::create_topic(std::string_view name, const layout::replica_assignment& assignment,
                                       const layout::config_map& config, uuid topic_id) {
  if (!layout::is_valid_topic_name(name) || topic_id.is_zero()) return errc::invalid_argument;
  FERRY_TRY(validate_assignment(assignment));
  const layout::topic_assignment topic{assignment, topic_id};
  const std::string topic_path = layout::topic_path(name);
  const std::string config_path = layout::topic_config_path(name);
  // The config znode may be left over from an earlier topic of that name: then it is overwritten.
  for (int attempt = 0;; ++attempt) {
    FERRY_TRY(const auto existing_config, session_.exists(config_path));
    const std::vector<zk_op> ops = {zk_op::create(topic_path, layout::encode_topic(topic)),
                                    existing_config ? zk_op::set(config_path, layout::encode_entity_config(config))
                                                    : zk_op::create(config_path, layout::encode_entity_config(config))};
    std::size_t failed = ops.size();
    auto written = session_.multi(ops, &failed);
    if (written) return topic.topic_id;
    if (failed == 0 && written.error() == errc::node_exists) {
      // Either the topic exists, or this was our own write retried after a lost reply.
      auto got = session_.get(topic_path);
      if (got) {
        auto current = layout::decode_topic(got.value().data);
        if (current && current.value().topic_id == topic.topic_id) return topic.topic_id;
      }
      return errc::node_exists;
    }
    // The config znode appeared or vanished between exists and multi.
    if (failed == 1 && attempt < 3) continue;
    return written.error();
  }
}

result<void> topic_store::delete_topic(std::string_view name) {
  if (!layout::is_valid_topic_name(name)) return errc::invalid_argument;
  FERRY_TRY(const auto topic, session_.exists(layout::topic_path(name)));
  if (!topic) return errc::no_node;
  auto marked = session_.create(layout::delete_topic_path(name), "", create_mode::persistent);
  if (!marked && marked.error() != errc::node_exists) return marked.error();
  return success();
}

result<void> topic_store::set_topic_config(std::string_view name, const layout::config_map& config) {
  if (!layout::is_valid_topic_name(name)) return errc::invalid_argument;
  FERRY_TRY(const auto topic, session_.exists(layout::topic_path(name)));
  if (!topic) return errc::no_node;
  return configs_.write("topics", name, config);
}

result<layout::config_map> topic_store::read_topic_config(std::string_view name) {
  if (!layout::is_valid_topic_name(name)) return errc::invalid_argument;
  FERRY_TRY(const auto topic, session_.exists(layout::topic_path(name)));
  if (!topic) return errc::no_node;
  return configs_.read("topics", name);
}

result<void> topic_store::add_partitions(std::string_view name, const layout::replica_assignment& assignment) {
  if (!layout::is_valid_topic_name(name)) return errc::invalid_argument;
  FERRY_TRY(validate_assignment(assignment));
  const std::string path = layout::topic_path(name);
  FERRY_TRY(const auto got, session_.get(path));
  FERRY_TRY(const auto current, layout::decode_topic(got.data));
  if (assignment.size() <= current.partitions.size()) return errc::invalid_argument;
  for (const auto& [p, replicas] : current.partitions) {
    const auto it = assignment.find(p);
    if (it == assignment.end() || it->second != replicas) return errc::invalid_argument;
  }
  auto updated = current;  // with any reassignment in progress
  updated.partitions = assignment;
  FERRY_TRY(session_.set(path, layout::encode_topic(updated), got.stat.version));
  return success();
}

result<void> topic_store::alter_assignment(std::string_view name,
                                           const std::function<result<bool>(layout::topic_assignment&)>& change) {
  const std::string path = layout::topic_path(name);
  // Conditional on the version read: a concurrent writer makes us read and change again.
  for (int attempt = 0;; ++attempt) {
    FERRY_TRY(const auto got, session_.get(path));
    FERRY_TRY(auto assignment, layout::decode_topic(got.data));
    FERRY_TRY(const bool changed, change(assignment));
    if (!changed) return success();
    auto written = session_.set(path, layout::encode_topic(assignment), got.stat.version);
    if (written) return success();
    if (written.error() != errc::bad_version || attempt == 4) return written.error();
  }
}

result<layout::producer_id_block> allocate_producer_id_block(zk_session& session, broker_id self) {
  const std::string path(layout::producer_id_block_path);
  for (;;) {
    std::int64_t first = 0;
    std::optional<std::int32_t> version;
    auto got = session.get(path);
    if (got) {
      version = got.value().stat.version;
      if (!got.value().data.empty()) {
        FERRY_TRY(const auto last_block, layout::decode_producer_id_block(got.value().data));
        if (last_block.last > std::numeric_limits<std::int64_t>::max() - layout::producer_id_block_size) {
          FERRY_LOG(error, "coord") << "producer ids are exhausted";
          return errc::invalid_data;
        }
        first = last_block.last + 1;
      }
    } else if (got.error() != errc::no_node) {
      return got.error();
    }
    const layout::producer_id_block block{self, first, first + layout::producer_id_block_size - 1};
    const std::string data = layout::encode_producer_id_block(block);
    // A lost race (bad_version, node_exists) means another broker took this block: read again.
    if (version) {
      auto written = session.set(path, data, *version);
      if (written) return block;
      if (written.error() != errc::bad_version) return written.error();
    } else {
      auto created = session.create(path, data, create_mode::persistent);
      if (created) return block;
      if (created.error() != errc::node_exists) return created.error();
    }
  }
}

}  // namespace ferry::coord
