#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "coord/cluster_view.h"
#include "server/marker_appender.h"
#include "server/peer_requests.h"
#include "txn/txn_coordinator.h"

namespace ferry::server {

// The transaction coordinator's markers on their way to the partitions' leaders: written in place where this
// broker leads, sent as one WriteTxnMarkers request per other leader. A partition with no live leader, whose
// leader failed to write it or did not answer, is handed back to the coordinator to try again. One whose topic is
// gone, or whose leader already has a newer producer epoch or coordinator epoch, needs no marker any more.
class txn_marker_sender final : public txn::marker_writer, public std::enable_shared_from_this<txn_marker_sender> {
 public:
  using view_source = std::function<std::shared_ptr<const coord::cluster_view>()>;
  txn_marker_sender(boost::asio::io_context& io, broker_id self, view_source view, marker_appender& local,
                    std::shared_ptr<peer_requests> peers)
      : io_(io), self_(self), view_(std::move(view)), local_(local), peers_(std::move(peers)) {}

  void write(txn::marker_request request, std::function<void(std::vector<topic_partition>)> done) override;

 private:
  struct gather;
  boost::asio::awaitable<void> send(coord::broker_info leader, txn::marker_request request,
                                    std::shared_ptr<gather> results);

  boost::asio::io_context& io_;
  broker_id self_;
  view_source view_;
  marker_appender& local_;
  std::shared_ptr<peer_requests> peers_;
};

}  // namespace ferry::server
