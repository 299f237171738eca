#include "manager/crd_check.h"

#include <charconv>
#include <exception>
#include <optional>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <nlohmann/json.hpp>

#include "base/log.h"

namespace ferry::manager {
namespace {

namespace asio = boost::asio;

// Helm installs crds/ but never upgrades them: they are applied by hand. Server-side apply takes the fields over
// from Helm, which created them, hence --force-conflicts.
constexpr std::string_view upgrade =
    "upgrade the CRDs with `kubectl apply --server-side --force-conflicts -f charts/ferry/crds/` (from the chart "
    "of this operator's version), then restart the operator";

std::string crd(std::string_view name) { return "CustomResourceDefinition " + std::string(name); }

std::optional<int> parse_revision(const std::string& text) {
  int revision = 0;
  const char* end = text.data() + text.size();
  const auto parsed = std::from_chars(text.data(), end, revision);
  if (parsed.ec != std::errc{} || parsed.ptr != end || revision < 1) return std::nullopt;
  return revision;
}

// The annotation's text; nullopt when the CRD has none.
std::optional<std::string> stamped_revision(const nlohmann::json& object) {
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return std::nullopt;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return std::nullopt;
  const auto stamp = annotations->find(crd_revision_annotation);
  if (stamp == annotations->end() || !stamp->is_string()) return std::nullopt;
  return stamp->get<std::string>();
}

}  // namespace

crd_verdict judge_crd(std::string_view name, const kube::http_response& answer, int needed) {
  const auto need = std::to_string(needed);
  const std::string annotation(crd_revision_annotation);
  if (answer.status == 404) {
    return {false, crd(name) + " is not installed, and this operator needs it at revision " + need + " (" + annotation +
                       "): " + std::string(upgrade)};
  }
  if (answer.status == 403) {
    return {false, "cannot read " + crd(name) + ": forbidden; the operator needs get on customresourcedefinitions " +
                       std::string(name) + " (operator/deploy/rbac.yaml; the chart grants it)"};
  }
  if (answer.status != 200) {
    return {false,
            "cannot read " + crd(name) + ": HTTP " + std::to_string(answer.status) + ": " + answer.body.substr(0, 300)};
  }
  const auto object = nlohmann::json::parse(answer.body, nullptr, false);
  if (!object.is_object())
    return {false, "cannot read " + crd(name) + ": the API server's answer is not a JSON object"};
  const auto stamp = stamped_revision(object);
  if (!stamp) {
    return {false, crd(name) + " has no " + annotation + " annotation: it predates revision " + need +
                       ", which this operator needs (a stale CRD silently drops the fields it does not know); " +
                       std::string(upgrade)};
  }
  const auto revision = parse_revision(*stamp);
  if (!revision) {
    return {false, crd(name) + " has " + annotation + " '" + *stamp + "', not a revision number; this operator needs " +
                       "revision " + need + ": " + std::string(upgrade)};
  }
  const auto installed = std::to_string(*revision);
  if (*revision < needed) {
    return {false, crd(name) + " is at revision " + installed + " (" + annotation +
                       ") and this operator needs revision " + need +
                       " (a stale CRD silently drops the fields it does not know): " + std::string(upgrade)};
  }
  if (*revision > needed) {
    return {true, crd(name) + " is at revision " + installed + ", newer than this operator's " + need +
                      ": starting, as newer revisions keep the fields of older ones"};
  }
  return {true, {}};
}

bool check_crds(asio::io_context& io, kube::api_client& api) {
  bool usable = true;
  asio::co_spawn(
      io,
      [&]() -> asio::awaitable<void> {
        for (const auto name : served_crds) {
          const auto answer =
              co_await api.async_send(kube::api_client::verb::get,
                                      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/" + std::string(name));
          if (!answer) {
            FERRY_LOG(error, "manager") << "cannot read " << crd(name) << ": " << answer.error().message();
            usable = false;
            continue;
          }
          const auto verdict = judge_crd(name, answer.value());
          if (!verdict.usable) {
            FERRY_LOG(error, "manager") << verdict.message;
            usable = false;
          } else if (!verdict.message.empty()) {
            FERRY_LOG(warn, "manager") << verdict.message;
          }
        }
      },
      [&usable](const std::exception_ptr& failure) {
        if (!failure) return;
        usable = false;
        try {
          std::rethrow_exception(failure);
        } catch (const std::exception& e) {
          FERRY_LOG(error, "manager") << "the CRD check failed: " << e.what();
        } catch (...) {
          FERRY_LOG(error, "manager") << "the CRD check failed";
        }
      });
  io.restart();
  io.run();
  io.restart();
  return usable;
}

}  // namespace ferry::manager
