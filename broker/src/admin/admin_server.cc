#include "admin/admin_server.h"

#include <memory>

namespace ferry::admin {
namespace {

boost::asio::awaitable<http_reply> answer(std::shared_ptr<const admin_sources> sources, http_request request) {
  co_return route(*sources, request.method, request.target);
}

http_handler routes_of(admin_sources sources) {
  return [shared = std::make_shared<const admin_sources>(std::move(sources))](http_request request) {
    return answer(shared, std::move(request));
  };
}

}  // namespace

admin_server::admin_server(boost::asio::io_context& io, admin_sources sources, admin_access access)
    : http_server(io, routes_of(std::move(sources)), std::move(access)) {}

}  // namespace ferry::admin
