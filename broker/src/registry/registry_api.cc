#include "registry/registry_api.h"

#include "registry/read_routes.h"
#include "registry/write_planner.h"

namespace ferry::registry {
namespace {

// Whether some method serves the path (for 405 against 404).
bool known_path(const request_target& t) {
  const auto& s = t.segments;
  if (s.empty()) return true;
  if (s[0] == "subjects") return s.size() <= 5;
  if (s[0] == "schemas") return s.size() <= 4;
  if (s[0] == "config" || s[0] == "mode") return s.size() <= 2;
  if (s[0] == "compatibility") return s.size() >= 4 && s.size() <= 5;
  return s[0] == "contexts" && s.size() == 1;
}

}  // namespace

boost::asio::awaitable<registry_reply> registry_api::handle(registry_request request) {
  const auto target = parse_target(request.target);
  if (!target) co_return error_reply(404, "malformed percent-encoding in " + request.target);
  if (!state_.loaded())
    co_return error_reply(error_codes::store_error, "the registry is still reading the schemas topic; try again");
  if (is_write(request.method, *target)) {
    auto written = co_await writes_.write(std::move(request), *target);
    co_return written;
  }
  auto reply = state_.read([&](const schema_store& store) { return read_route(store, request, *target, limits_); });
  if (reply) co_return *reply;
  if (known_path(*target)) co_return error_reply(405, "HTTP 405 Method Not Allowed");
  co_return error_reply(404, "HTTP 404 Not Found");
}

}  // namespace ferry::registry
