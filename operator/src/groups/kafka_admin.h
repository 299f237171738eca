#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "coord/cluster_view.h"
#include "groups/group_admin.h"
#include "kafka/kafka_client.h"

namespace ferry::groups {

// group_admin over the Kafka protocol, with the broker's own codecs: the brokers and partition leaders come from
// the cluster view (ZooKeeper), the coordinator from FindCoordinator. Blocking, for a controller's worker
// thread; one instance per reconcile (it keeps a connection per broker for its lifetime, then closes them).
class kafka_admin final : public group_admin {
 public:
  kafka_admin(std::shared_ptr<const coord::cluster_view> view, const kafka::client_settings& settings,
              std::chrono::milliseconds timeout)
      : client_(std::move(view), settings, timeout) {}

  result<group_description> describe(const std::string& group) override;
  result<std::map<topic_partition, committed_offset>> committed(const std::string& group) override;
  result<std::map<topic_partition, std::int64_t>> list_offsets(
      const std::map<topic_partition, std::int64_t>& timestamps) override;
  result<void> commit(const std::string& group, const std::map<topic_partition, std::int64_t>& offsets,
                      const std::string& metadata) override;

 private:
  using address = kafka::kafka_client::address;
  result<address> coordinator(const std::string& group);

  kafka::kafka_client client_;
  std::map<std::string, address> coordinators_;
};

}  // namespace ferry::groups
