#include "kube/leader_election.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "base/guarded.h"
#include "base/log.h"

namespace ferry::kube {
namespace {

namespace asio = boost::asio;
using json = nlohmann::json;
using steady = std::chrono::steady_clock;

// The lease a write answered with (null if unreadable): the next conditional write needs its resourceVersion.
json written_lease(const result<http_response>& answer) {
  auto lease = json::parse(answer.value().body, nullptr, false);
  return lease.is_object() ? lease : json();
}

std::string lease_path(const lease_options& options) {
  return "/apis/coordination.k8s.io/v1/namespaces/" + options.lease_namespace + "/leases/" + options.name;
}

}  // namespace

asio::awaitable<bool> leader_election::try_acquire_or_renew() {
  const std::string collection = "/apis/coordination.k8s.io/v1/namespaces/" + options_.lease_namespace + "/leases";
  const std::string path = lease_path(options_);
  const auto now = format_micro_time(std::chrono::system_clock::now());
  auto current = co_await client_.async_send(api_client::verb::get, path);
  if (!current || stopped_) co_return false;  // no write after release() asked: it would race the release

  json spec = {{"holderIdentity", options_.identity},
               {"leaseDurationSeconds", options_.lease_duration.count()},
               {"renewTime", now}};
  if (current.value().status == 404) {
    spec["acquireTime"] = now;
    spec["leaseTransitions"] = 0;
    const json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                        {"kind", "Lease"},
                        {"metadata", {{"name", options_.name}, {"namespace", options_.lease_namespace}}},
                        {"spec", spec}};
    const auto created = co_await client_.async_send(api_client::verb::post, collection, lease.dump());
    if (!created || created.value().status != 201) co_return false;
    written_ = written_lease(created);
    co_return true;
  }
  if (current.value().status != 200) co_return false;
  auto lease = json::parse(current.value().body, nullptr, false);
  if (lease.is_discarded() || !lease.contains("metadata")) co_return false;
  const json old = lease.value("spec", json::object());
  const auto holder = old.value("holderIdentity", std::string{});
  const auto record = holder + "@" + old.value("renewTime", std::string{});
  if (record != observed_record_) {
    observed_record_ = record;
    observed_at_ = steady::now();
  }
  const auto duration = std::chrono::seconds(old.value("leaseDurationSeconds", options_.lease_duration.count()));
  const bool ours = holder == options_.identity;
  if (!ours && !holder.empty() && steady::now() - observed_at_ < duration) co_return false;

  spec["acquireTime"] = ours ? old.value("acquireTime", now) : now;
  spec["leaseTransitions"] = old.value("leaseTransitions", 0) + (ours ? 0 : 1);
  lease["spec"] = spec;  // the update carries metadata.resourceVersion: a 409 if anyone wrote meanwhile
  const auto updated = co_await client_.async_send(api_client::verb::put, path, lease.dump());
  if (!updated || updated.value().status != 200) co_return false;
  written_ = written_lease(updated);
  observed_record_ = options_.identity + "@" + now;
  observed_at_ = steady::now();
  co_return true;
}

void leader_election::stop_leading() {
  if (stopped_ || !leading_.exchange(false)) return;
  stopped_ = true;
  FERRY_LOG(error, "leader") << "could not renew the lease " << options_.lease_namespace << "/" << options_.name
                             << " within " << options_.renew_deadline.count() << " s: no longer the leader";
  on_stopped_();
}

asio::awaitable<void> leader_election::watchdog() {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!stopped_) {
    timer.expires_after(std::chrono::milliseconds(200));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (leading_.load() && steady::now() - last_renewal_ > options_.renew_deadline) stop_leading();
  }
}

asio::awaitable<void> leader_election::release_lease() {
  leading_.store(false);
  if (written_.is_null()) co_return;  // never held it
  const auto now = format_micro_time(std::chrono::system_clock::now());
  json lease = written_;
  // As client-go's release: no holder, and a duration that has as good as expired for whoever reads it.
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = now;
  lease["spec"]["acquireTime"] = now;
  // Conditional on our last write's resourceVersion: a 409 means someone else has written it since.
  const auto released = co_await client_.async_send(api_client::verb::put, lease_path(options_), lease.dump());
  const auto where = options_.lease_namespace + "/" + options_.name;
  if (released && released.value().status == 200) {
    FERRY_LOG(info, "leader") << "released the lease " << where;
  } else if (released && released.value().status == 409) {
    FERRY_LOG(info, "leader") << "the lease " << where << " changed since our last renewal: not ours to release";
  } else {
    FERRY_LOG(warn, "leader") << "could not release the lease " << where << " ("
                              << (released ? "HTTP " + std::to_string(released.value().status)
                                           : released.error().message())
                              << "): a standby takes over once it expires";
  }
}

void leader_election::release() {
  asio::post(client_.io(), guarded("releasing the lease", [this] {
               releasing_ = true;
               stopped_ = true;
               retry_timer_.cancel();
             }));
  if (ended_.get_future().wait_for(options_.renew_deadline) != std::future_status::ready) {
    FERRY_LOG(warn, "leader") << "the leader election did not end within " << options_.renew_deadline.count()
                              << " s: exiting without releasing the lease " << options_.lease_namespace << "/"
                              << options_.name;
  }
}

asio::awaitable<void> leader_election::run() {
  asio::co_spawn(co_await asio::this_coro::executor, watchdog(), guarded_detached("the leader election's watchdog"));
  while (!stopped_) {
    const bool held = co_await try_acquire_or_renew();
    if (stopped_) break;
    if (held) {
      last_renewal_ = steady::now();
      if (!leading_.exchange(true)) {
        FERRY_LOG(info, "leader") << "became the leader (lease " << options_.lease_namespace << "/" << options_.name
                                  << ", identity " << options_.identity << ")";
        on_started_();
      }
    }
    retry_timer_.expires_after(options_.retry_period);
    co_await retry_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
  }
  if (releasing_) co_await release_lease();
  ended_.set_value();
}

}  // namespace ferry::kube
