"""The operator's rolling restarts against a real kube-apiserver and kube-controller-manager (no scheduler, no
kubelet: the StatefulSet controller creates the broker pods, the test marks them running and ready, and the
disruption controller computes the PodDisruptionBudget from that). The brokers are local processes, broker i
for pod i. The roll evicts pods, so a budget that allows no disruption holds it, and it says so."""
import datetime
import json

import pytest

from conftest import started_cluster, wait_until
from kube_env import Operator

STATEFULSET = "ferry-broker"


@pytest.fixture(scope="module")
def ferry():
    with started_cluster(3) as c:
        yield c


@pytest.fixture(scope="module")
def operator(kube, ferry):
    op = Operator(kube, kube.user("ferry-operator"), ferry.zk_port,
                  args=("--max-concurrent-moves", "0", "--broker-statefulset", f"default/{STATEFULSET}"))
    op.start()
    yield op
    op.stop()
    assert not op.sanitizer_reports(), op.sanitizer_reports()


def broker_statefulset(template_annotations):
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": STATEFULSET, "namespace": "default"},
            "spec": {"replicas": 3, "serviceName": STATEFULSET, "podManagementPolicy": "Parallel",
                     "updateStrategy": {"type": "OnDelete"},
                     "selector": {"matchLabels": {"app": STATEFULSET}},
                     "template": {"metadata": {"labels": {"app": STATEFULSET}, "annotations": template_annotations},
                                  "spec": {"containers": [{"name": "broker", "image": "ferry:unused"}]}}}}


def budget(max_unavailable):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": STATEFULSET, "namespace": "default"},
            "spec": {"maxUnavailable": max_unavailable, "selector": {"matchLabels": {"app": STATEFULSET}}}}


def pods(kube):
    out = kube.kubectl("get", "pods", "-n", "default", "-l", f"app={STATEFULSET}", "-o", "json").stdout
    return {p["metadata"]["name"]: p for p in json.loads(out)["items"]}


def mark_running_and_ready(kube, name):
    """What a kubelet would report for a started, ready broker container."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    status = {"status": {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now}],
        "containerStatuses": [{"name": "broker", "ready": True, "started": True, "restartCount": 0,
                               "image": "ferry:unused", "imageID": "", "state": {"running": {"startedAt": now}}}]}}
    kube.kubectl("patch", "pod", name, "-n", "default", "--subresource=status", "--type=merge",
                 "-p", json.dumps(status))


def roll_annotation(kube):
    sts = kube.get("statefulset", STATEFULSET, "default")
    return (sts["metadata"].get("annotations") or {}).get("ferry.dev/roll", "")


def test_a_disruption_budget_holds_the_roll_and_the_roll_says_so(kube, ferry, operator):
    kube.apply(broker_statefulset({"ferry.dev/config": "1"}))
    wait_until(lambda: len(pods(kube)) == 3, timeout=60, what="the StatefulSet controller to create three pods")
    for name in pods(kube):
        mark_running_and_ready(kube, name)
    kube.apply(budget(0))

    def budget_computed():
        status = (kube.get("poddisruptionbudget", STATEFULSET, "default") or {}).get("status", {})
        return status.get("observedGeneration") == 1 and status.get("currentHealthy") == 3
    wait_until(budget_computed, timeout=60, what="the disruption controller to count three healthy pods")

    before = {name: p["metadata"]["uid"] for name, p in pods(kube).items()}
    kube.apply(broker_statefulset({"ferry.dev/config": "2"}))  # every pod is now outdated
    waiting = wait_until(lambda: "PodDisruptionBudget" in roll_annotation(kube) and roll_annotation(kube),
                         timeout=60, what="the roll to report the budget holding it")
    assert "waiting: a PodDisruptionBudget does not allow evicting ferry-broker-2 now" in waiting, waiting
    assert f"The disruption budget {STATEFULSET} needs 3 healthy pods and has 3 currently" in waiting, waiting
    notes = [e.get("note", "") for e in kube.events("default", STATEFULSET) if e.get("reason") == "RollWaiting"]
    assert any("PodDisruptionBudget" in n for n in notes), notes
    # The pod is still there, not deleted behind the budget's back.
    now = pods(kube)
    assert {name: p["metadata"]["uid"] for name, p in now.items()} == before
    assert not any(p["metadata"].get("deletionTimestamp") for p in now.values())

    # A budget that allows one disruption lets the roll evict the next broker.
    kube.apply(budget(1))
    wait_until(lambda: pods(kube).get("ferry-broker-2", {}).get("metadata", {}).get("uid") != before["ferry-broker-2"],
               timeout=60, what="the roll to evict ferry-broker-2")
    assert {name: p["metadata"]["uid"] for name, p in pods(kube).items() if name != "ferry-broker-2"} == \
        {name: uid for name, uid in before.items() if name != "ferry-broker-2"}
    rolling = [e.get("note", "") for e in kube.events("default", STATEFULSET) if e.get("reason") == "RollingBroker"]
    assert any("evicting pod ferry-broker-2" in n for n in rolling), rolling
