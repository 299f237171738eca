#include "server/handlers/acl_wire.h"

#include <algorithm>

#include "base/log.h"

namespace ferry::server::handlers {

boost::asio::awaitable<void> await_acls_in_view(request_context& ctx, const std::vector<authz::acl_binding>& bindings,
                                                bool present) {
  if (bindings.empty()) co_return;
  auto* acls = ctx.broker.acls;
  const bool shown = co_await run_on_zookeeper(ctx.broker, [acls, &bindings, present] {
    return acls->wait_for_acls(
        [&bindings, present](const authz::acl_snapshot& view) {
          return std::all_of(bindings.begin(), bindings.end(), [&view, present](const authz::acl_binding& b) {
            return view.select(exactly(b)).empty() != present;
          });
        },
        acl_view_wait);
  });
  if (!shown)
    FERRY_LOG(warn, "authz") << (present ? "created " : "removed ") << bindings.size()
                             << " ACL(s), which this broker's view "
                             << (present ? "did not show within " : "still showed after ") << acl_view_wait.count()
                             << " s";
}

}  // namespace ferry::server::handlers
