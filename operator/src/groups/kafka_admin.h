#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <boost/asio/io_context.hpp>

#include "coord/cluster_observer.h"
#include "groups/group_admin.h"
#include "net/peer_client.h"

namespace ferry::groups {

// group_admin over the Kafka protocol, with the broker's own codecs: the brokers and partition leaders come from
// the cluster view (ZooKeeper), the coordinator from FindCoordinator. Blocking, for a controller's worker
// thread; one instance per reconcile (it keeps a connection per broker for its lifetime, then closes them).
class kafka_admin final : public group_admin {
 public:
  kafka_admin(std::shared_ptr<const coord::cluster_view> view, std::chrono::milliseconds timeout)
      : view_(std::move(view)), timeout_(timeout) {}

  result<group_description> describe(const std::string& group) override;
  result<std::map<topic_partition, committed_offset>> committed(const std::string& group) override;
  result<std::map<topic_partition, std::int64_t>> list_offsets(
      const std::map<topic_partition, std::int64_t>& timestamps) override;
  result<void> commit(const std::string& group, const std::map<topic_partition, std::int64_t>& offsets,
                      const std::string& metadata) override;

 private:
  struct address {
    std::string host;
    std::int32_t port = 0;
    auto operator<=>(const address&) const = default;
  };
  // One request and its response, awaited.
  template <typename Response, typename Request>
  result<Response> call(const address& to, const Request& request, std::int16_t version);
  result<address> any_broker() const;
  result<address> coordinator(const std::string& group);

  const std::shared_ptr<const coord::cluster_view> view_;
  const std::chrono::milliseconds timeout_;
  boost::asio::io_context io_;
  std::map<address, std::unique_ptr<net::peer_client>> peers_;
  std::map<std::string, address> coordinators_;
  std::int32_t correlation_id_ = 0;
};

}  // namespace ferry::groups
