#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "coord/cluster_view.h"
#include "registry/schema_writer.h"
#include "server/peer_requests.h"

namespace ferry::registry_service {

// The writer's appends to `_schemas`: a Produce with acks=all to the partition's leader (this broker, when it
// writes), so the records take the path and the checks of every produce, and count as acknowledged only once
// the in-sync replicas have them.
class schemas_producer final : public registry::schemas_log {
 public:
  schemas_producer(std::shared_ptr<server::peer_requests> peers,
                   std::function<std::shared_ptr<const coord::cluster_view>()> view, std::string topic,
                   std::chrono::milliseconds timeout)
      : peers_(std::move(peers)), view_(std::move(view)), topic_(std::move(topic)), timeout_(timeout) {}

  boost::asio::awaitable<appended> append(std::vector<registry::topic_record> records) override;

 private:
  std::shared_ptr<server::peer_requests> peers_;
  std::function<std::shared_ptr<const coord::cluster_view>()> view_;
  std::string topic_;
  std::chrono::milliseconds timeout_;
};

}  // namespace ferry::registry_service
