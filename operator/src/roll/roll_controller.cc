#include "roll/roll_controller.h"

#include <charconv>

#include "base/log.h"

namespace ferry::roll {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::string string_at(const json& object, const json::json_pointer& at) {
  return object.contains(at) && object.at(at).is_string() ? object.at(at).get<std::string>() : std::string();
}

bool controlled_by(const json& pod, const std::string& statefulset) {
  const auto owners = pod["metadata"].find("ownerReferences");
  if (owners == pod["metadata"].end() || !owners->is_array()) return false;
  for (const auto& owner : *owners) {
    if (owner.is_object() && owner.value("controller", false) && owner.value("kind", "") == "StatefulSet" &&
        owner.value("name", "") == statefulset)
      return true;
  }
  return false;
}

}  // namespace

std::vector<broker_pod> broker_pods(const json& statefulset, const std::vector<kube::informer::object>& pods) {
  const auto name = string_at(statefulset, "/metadata/name"_json_pointer);
  std::vector<broker_pod> out;
  for (const auto& object : pods) {
    if (!object || !object->is_object() || !object->contains("metadata")) continue;
    const auto& pod = *object;
    if (!controlled_by(pod, name)) continue;
    broker_pod b;
    b.name = string_at(pod, "/metadata/name"_json_pointer);
    if (b.name.size() <= name.size() + 1 || b.name.compare(0, name.size() + 1, name + "-") != 0) continue;
    const auto* first = b.name.data() + name.size() + 1;
    const auto* last = b.name.data() + b.name.size();
    const auto [at, ec] = std::from_chars(first, last, b.ordinal);
    if (ec != std::errc{} || at != last || b.ordinal < 0) continue;
    b.revision = string_at(pod, "/metadata/labels/controller-revision-hash"_json_pointer);
    b.terminating = pod["metadata"].contains("deletionTimestamp") && !pod["metadata"]["deletionTimestamp"].is_null();
    const auto status = pod.find("status");
    if (status != pod.end() && status->is_object()) {
      for (const auto& c : status->value("conditions", json::array())) {
        if (c.is_object() && c.value("type", "") == "Ready") b.ready = c.value("status", "") == "True";
      }
      // The broker's container: the first one, or the one named "broker".
      const auto containers = status->value("containerStatuses", json::array());
      const json* broker = nullptr;
      for (const auto& c : containers) {
        if (c.is_object() && (broker == nullptr || c.value("name", "") == "broker")) broker = &c;
      }
      if (broker != nullptr) {
        const bool running =
            broker->contains("state") && (*broker)["state"].is_object() && (*broker)["state"].contains("running");
        b.starting = running && !broker->value("started", false);
      }
    }
    out.push_back(std::move(b));
  }
  return out;
}

kube::reconcile_result roll_controller::reconcile(const std::string& /*key*/) {
  if (!statefulsets_.synced() || !pods_.synced()) return {.requeue_after = 1s};
  const auto object = statefulsets_.get(broker_set_);
  if (!object) return {};
  json statefulset = *object;  // objects from a list carry no kind; Events need it
  statefulset["kind"] = "StatefulSet";
  statefulset["apiVersion"] = "apps/v1";
  if (string_at(statefulset, "/spec/updateStrategy/type"_json_pointer) != "OnDelete") return {};
  const auto generation = statefulset["metadata"].value("generation", 0L);
  const auto observed = statefulset.contains("status") ? statefulset["status"].value("observedGeneration", 0L) : 0L;
  if (observed < generation) return {.requeue_after = 1s};  // the new revision is not computed yet
  if (!cluster_.connected() || !cluster_.ready()) return {.requeue_after = 2s};

  roll_input input;
  input.update_revision = string_at(statefulset, "/status/updateRevision"_json_pointer);
  if (input.update_revision.empty()) return {.requeue_after = 2s};
  input.replicas = statefulset["spec"].value("replicas", 1);
  input.pods = broker_pods(statefulset, pods_.list());
  const auto plan = plan_roll(input, *cluster_.view());
  const auto total = std::to_string(plan.updated + plan.outdated);
  const auto short_revision = input.update_revision.substr(input.update_revision.rfind('-') + 1);
  if (plan.done()) {
    report(statefulset, "done: " + total + " of " + total + " brokers at revision " + short_revision);
    last_wait_.clear();
    return {};
  }
  const auto progress = std::to_string(plan.updated) + " of " + total + " brokers at revision " + short_revision;
  if (plan.delete_pod) {
    const auto outcome = evict_pod(statefulset, *plan.delete_pod, plan.why);
    switch (outcome.what) {
      case eviction_outcome::kind::failed:
        return {.failed = true};
      case eviction_outcome::kind::refused:
        // The budget changes with other pods' readiness, which no watch of ours reports: look again soon.
        wait_for(statefulset, progress,
                 "a PodDisruptionBudget does not allow evicting " + *plan.delete_pod + " now: " + outcome.message);
        return {.requeue_after = 5s};
      case eviction_outcome::kind::evicted:
      case eviction_outcome::kind::gone:
        break;
    }
    last_wait_.clear();
    report(statefulset, progress + "; restarting " + *plan.delete_pod);
    return {.requeue_after = 2s};
  }
  wait_for(statefulset, progress, plan.why);
  return {.requeue_after = 2s};
}

json eviction(const std::string& namespace_, const std::string& name, const std::string& uid) {
  json body = {
      {"apiVersion", "policy/v1"}, {"kind", "Eviction"}, {"metadata", {{"name", name}, {"namespace", namespace_}}}};
  if (!uid.empty()) body["deleteOptions"] = {{"preconditions", {{"uid", uid}}}};
  return body;
}

eviction_outcome read_eviction_answer(unsigned status, const std::string& body) {
  using kind = eviction_outcome::kind;
  if (status == 200 || status == 201) return {kind::evicted, {}};
  if (status == 404 || status == 409) return {kind::gone, {}};  // 409: the uid precondition failed
  const auto answer = json::parse(body, nullptr, false);
  std::string message;
  bool budget = false;  // a 429 may also be the API server's own throttling: only a budget's is a wait
  if (answer.is_object()) {
    message = answer.value("message", "");
    // The budget's own words ("needs 2 healthy pods and has 2 currently") are in the cause.
    if (answer.contains("details") && answer["details"].is_object()) {
      for (const auto& cause : answer["details"].value("causes", json::array())) {
        if (cause.is_object() && cause.value("reason", "") == "DisruptionBudget") {
          message = cause.value("message", message);
          budget = true;
        }
      }
    }
  }
  if (message.empty()) message = body.substr(0, 300);
  return {status == 429 && budget ? kind::refused : kind::failed, message};
}

eviction_outcome roll_controller::evict_pod(const json& statefulset, const std::string& name, const std::string& why) {
  const auto namespace_ = string_at(statefulset, "/metadata/namespace"_json_pointer);
  std::string uid;
  if (const auto pod = pods_.get(namespace_ + "/" + name)) uid = string_at(*pod, "/metadata/uid"_json_pointer);
  const auto answer =
      api_.send(kube::api_client::verb::post, "/api/v1/namespaces/" + namespace_ + "/pods/" + name + "/eviction",
                eviction(namespace_, name, uid).dump());
  if (!answer) {
    FERRY_LOG(warn, "roll") << "evicting pod " << name << ": " << answer.error().message();
    return {};
  }
  auto outcome = read_eviction_answer(answer.value().status, answer.value().body);
  if (outcome.what == eviction_outcome::kind::failed) {
    FERRY_LOG(warn, "roll") << "evicting pod " << name << ": HTTP " << answer.value().status << " " << outcome.message;
  } else if (outcome.what == eviction_outcome::kind::evicted) {
    FERRY_LOG(info, "roll") << "restarting " << name << " for the new revision: " << why;
    events_.record(statefulset, kube::event_recorder::type::normal, "RollingBroker", "Roll",
                   "evicting pod " + name + " for the StatefulSet's update revision: " + why);
  }
  return outcome;
}

void roll_controller::wait_for(const json& statefulset, const std::string& progress, const std::string& why) {
  if (why != last_wait_) {
    last_wait_ = why;
    FERRY_LOG(info, "roll") << broker_set_ << ": " << progress << "; waiting: " << why;
    events_.record(statefulset, kube::event_recorder::type::normal, "RollWaiting", "Roll",
                   progress + "; the next restart waits: " + why);
  }
  report(statefulset, progress + "; waiting: " + why);
}

void roll_controller::report(const json& statefulset, const std::string& progress) {
  const auto annotation_at = json::json_pointer("/metadata/annotations/" + std::string(roll_annotation));
  if (string_at(statefulset, annotation_at) == progress) return;
  const auto& metadata = statefulset["metadata"];
  const auto path =
      "/apis/apps/v1/namespaces/" + metadata.value("namespace", "") + "/statefulsets/" + metadata.value("name", "");
  const json patch = {{"metadata", {{"annotations", {{std::string(roll_annotation), progress}}}}}};
  const auto answer = api_.send(kube::api_client::verb::patch, path, patch.dump(), kube::merge_patch);
  if (!answer || answer.value().status != 200) {
    FERRY_LOG(warn, "roll") << "annotating " << broker_set_ << ": "
                            << (answer ? "HTTP " + std::to_string(answer.value().status) : answer.error().message());
  }
}

}  // namespace ferry::roll
