"""The operator when things go wrong around it: killed in the middle of reconciling, the API server restarted
(its watches come back with 410 Gone and it lists again), and two replicas of which only the Lease holder acts
and the standby takes over when the leader dies, or at once when the leader shuts down. And the operator out of
the cluster with a kubeconfig whose credentials come from an exec plugin, as on EKS, GKE and AKS."""
import json
import os
import re
import signal
import subprocess
import threading
import uuid

import pytest

from conftest import started_cluster, wait_until
from kube_env import Operator, grant_operator, topic, wait_ready, zk_partitions


LEASE = "ferry-operator-it"
LEASE_DURATION = 15  # the operator's (client-go's default)


class LeaseWatch:
    """The Lease's holderIdentity in each version the API server's watch shows, in order (kubectl get --watch)."""

    def __init__(self, kube):
        self.holders = []
        self._lock = threading.Lock()
        self._process = subprocess.Popen(
            [os.path.join(kube.bin, "kubectl"), "--kubeconfig", kube.kubeconfig, "get", "lease", LEASE, "-n",
             "default", "--watch", "-o", "json"], stdout=subprocess.PIPE, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        decoder, pending = json.JSONDecoder(), ""
        for line in self._process.stdout:
            pending += line
            try:
                lease, end = decoder.raw_decode(pending.lstrip())
            except json.JSONDecodeError:
                continue  # the object is not complete yet
            pending = pending.lstrip()[end:]
            with self._lock:
                self.holders.append(lease["spec"].get("holderIdentity", ""))

    def seen(self):
        with self._lock:
            return list(self.holders)

    def stop(self):
        self._process.kill()
        self._process.wait()
        self._reader.join()


@pytest.fixture(scope="module")
def ferry():
    with started_cluster(3) as c:
        yield c


@pytest.fixture
def ns(kube):
    name = "r-" + uuid.uuid4().hex[:8]
    kube.kubectl("create", "namespace", name)
    return name


@pytest.fixture
def operators(kube, ferry):
    """Operators started by a test; stopped and checked for sanitizer reports afterwards."""
    started = []

    def start(identity, wait_ready=True, args=(), kubeconfig=None):
        op = Operator(kube, kubeconfig or kube.user("ferry-operator"), ferry.zk_port, identity=identity, args=args)
        started.append(op)
        op.start(wait_ready=wait_ready)
        return op

    yield start
    for op in started:
        op.stop()
    reports = [r for op in started for r in op.sanitizer_reports()]
    assert not reports, f"sanitizer reports in the operators' logs: {reports}"


def test_a_restart_in_the_middle_of_reconciling_finishes_the_work(kube, ferry, ns, operators):
    first = operators("operator-0")
    names = [f"burst-{i}" for i in range(20)]
    kube.apply(*(topic(n, ns, 3, 2) for n in names))
    # Kill it as soon as it has started on them, then let a new process finish.
    wait_until(lambda: any(zk_partitions(ferry, n) for n in names), timeout=60, interval=0.05,
               what="the first topic to be created")
    first.stop(signal.SIGKILL)
    operators("operator-1")
    for n in names:
        wait_ready(kube, n, ns, timeout=90)
        assert len(zk_partitions(ferry, n)) == 3


def test_watches_survive_an_api_server_restart(kube, ferry, ns, operators):
    # Without the Lease: a leader that cannot renew for 10 s exits by design, and a restart under load can take
    # that long. This is about the watches.
    op = operators("operator-0", args=("--leader-election", "false"))
    kube.apply(topic("before", ns, 1, 1))
    wait_ready(kube, "before", ns)
    restarts = op.metric("ferry_operator_watch_restarts_total", resource="topics") or 0
    # A write the Topic watch does not see moves etcd's revision past the operator's: the restarted API server's
    # watch cache starts from the current revision, so resuming from the operator's answers 410 Gone.
    kube.kubectl("create", "configmap", "bump-" + ns, "-n", ns)
    kube.restart_apiserver()
    # Written after the restart: the operator lists again after 410 Gone and sees it.
    kube.apply(topic("after", ns, 2, 1))
    wait_ready(kube, "after", ns, timeout=90)
    assert (op.metric("ferry_operator_watch_restarts_total", resource="topics") or 0) > restarts
    assert "watch of topics expired (410 Gone): listing again" in op.log()
    assert len(zk_partitions(ferry, "after")) == 2


def test_one_of_two_replicas_leads_and_the_other_takes_over(kube, ferry, ns, operators):
    leader = operators("operator-a")
    wait_until(lambda: leader.metric("ferry_operator_leader") == 1, timeout=30, what="operator-a to lead")
    standby = operators("operator-b")  # ready while standing by
    assert standby.metric("ferry_operator_leader") == 0
    kube.apply(topic("led", ns, 1, 1))
    wait_ready(kube, "led", ns)
    assert standby.metric("ferry_operator_reconciles_total", controller="topics") is None, \
        "a standby replica must not reconcile"
    lease = kube.get("lease", "ferry-operator-it", "default")
    assert lease["spec"]["holderIdentity"] == "operator-a"

    leader.stop(signal.SIGKILL)
    wait_until(lambda: standby.metric("ferry_operator_leader") == 1, timeout=60, interval=0.2,
               what="the standby to take the lease")
    kube.apply(topic("after-failover", ns, 2, 1))
    wait_ready(kube, "after-failover", ns, timeout=60)
    assert kube.get("lease", "ferry-operator-it", "default")["spec"]["holderIdentity"] == "operator-b"


def test_a_leader_that_shuts_down_hands_the_lease_over_at_once(kube, ferry, operators):
    leader = operators("handover-a")
    wait_until(lambda: leader.metric("ferry_operator_leader") == 1, timeout=60, interval=0.2,
               what="handover-a to lead")
    standby = operators("handover-b")
    assert standby.metric("ferry_operator_leader") == 0
    watch = LeaseWatch(kube)
    try:
        wait_until(lambda: watch.seen(), timeout=30, what="the Lease watch to start")
        leader.stop(signal.SIGTERM)
        assert leader.process.returncode == 0, leader.log()[-3000:]
        # Without the release the standby waits for the lease to expire: lease_duration after its last renewal.
        wait_until(lambda: watch.seen()[-1] == "handover-b", timeout=LEASE_DURATION / 2, interval=0.1,
                   what="the standby to take the lease well before it would have expired")
        holders = watch.seen()
    finally:
        watch.stop()
    assert holders[:holders.index("handover-b")][-2:] == ["handover-a", ""], \
        f"the leader clears the holder before the standby takes over: {holders}"
    assert "released the lease default/" + LEASE in leader.log()
    wait_until(lambda: standby.metric("ferry_operator_leader") == 1, timeout=30, what="handover-b to lead")


def exec_plugin_kubeconfig(kube, name, status):
    """A kubeconfig whose user is an exec plugin (a shell script) printing an ExecCredential with `status`, and
    the file where the plugin writes the KUBERNETES_EXEC_INFO of each run."""
    runs = os.path.join(kube.dir, f"{name}.runs")
    answer = os.path.join(kube.dir, f"{name}.credential")
    with open(answer, "w") as f:
        json.dump({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": status}, f)
    plugin = os.path.join(kube.dir, f"{name}-plugin.sh")
    with open(plugin, "w") as f:
        f.write(f'#!/bin/sh\necho "$KUBERNETES_EXEC_INFO" >> "{runs}"\ncat "{answer}"\n')
    os.chmod(plugin, 0o700)
    with open(kube.kubeconfig) as f:
        server = re.search(r"server: (\S+)", f.read()).group(1)
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "exec",
        "clusters": [{"name": "c", "cluster": {"server": server,
                                               "certificate-authority": os.path.join(kube.dir, "pki", "ca.crt")}}],
        "users": [{"name": name, "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1", "command": plugin, "args": ["get-token"],
            "interactiveMode": "Never"}}}],
        "contexts": [{"name": "exec", "context": {"cluster": "c", "user": name}}]}
    path = os.path.join(kube.dir, f"{name}.kubeconfig")
    with open(path, "w") as f:
        json.dump(config, f)  # YAML is a superset of JSON
    return path, runs


def token_credential(kube):
    """A service account's token, the account bound to the operator's roles."""
    kube.kubectl("create", "serviceaccount", "exec-operator", "-n", "default")
    grant_operator(kube, "system:serviceaccount:default:exec-operator")
    token = kube.kubectl("create", "token", "exec-operator", "-n", "default", "--duration", "1h").stdout.strip()
    return {"token": token}, token


def certificate_credential(kube):
    """The operator's user's client certificate and key."""
    kube.user("ferry-operator")
    with open(os.path.join(kube.dir, "pki", "user-ferry-operator.crt")) as c, \
            open(os.path.join(kube.dir, "pki", "user-ferry-operator.key")) as k:
        cert, key = c.read(), k.read()
    return {"clientCertificateData": cert, "clientKeyData": key}, key.splitlines()[1]


@pytest.mark.parametrize("credential", [token_credential, certificate_credential], ids=["token", "certificate"])
def test_credentials_from_an_exec_plugin(kube, ferry, ns, operators, credential):
    status, secret = credential(kube)
    kubeconfig, runs = exec_plugin_kubeconfig(kube, "exec-" + credential.__name__, status)
    op = operators("exec-" + credential.__name__, kubeconfig=kubeconfig, args=("--leader-election", "false"))
    kube.apply(topic("by-exec-" + ns, ns, 2, 1))
    wait_ready(kube, "by-exec-" + ns, ns)
    assert len(zk_partitions(ferry, "by-exec-" + ns)) == 2
    with open(runs) as f:
        info = json.loads(f.readline())
    assert info == {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                    "spec": {"interactive": False}}
    assert secret not in op.log()
