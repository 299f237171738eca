"""charts/ferry on a real single-node Kubernetes (scripts/kube-cluster: kubelet on containerd, kube-proxy, CNI,
CoreDNS), with the images built from the repository's Dockerfiles by podman.

One installation with the chart's defaults (TLS everywhere with certificates the operator issues, SCRAM logins,
ACLs), checked in order: ZooKeeper, brokers and the operator become ready; `helm test` passes; a Topic resource
becomes Ready and a client pod produces and consumes through the bootstrap Service, logged in as a User; a User
with ACLs for one topic works there from a pod with its Secret and is refused on another; a pod without
credentials cannot connect; a TLS User connects with its certificate; deleting a User locks it out; the brokers
take a newly issued certificate without a restart; ZooKeeper's nodes are locked to the cluster's identity and its
port, by the chart's NetworkPolicies (which kube-router enforces here), to the brokers and the operator; a Prometheus on the host scrapes the pods with the chart's own scrape
configuration and every dashboard query returns data; `helm upgrade` to four brokers rebalances and back to three
drains first; a `helm upgrade` that changes a broker setting has the operator roll the brokers one at a time under
a producer, losing nothing and never leaving a partition with two replicas out of sync; a broker whose volume is
lost rebuilds its replicas from the others.
"""
import base64
import json
import os
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request

import pytest
import yaml

from conftest import SOURCE_DIR, wait_until
from kube_cluster import kube_cluster

CHART = os.path.join(SOURCE_DIR, "charts", "ferry")
HELM_TOOLS = os.path.join(SOURCE_DIR, "scripts", "helm-tools")
PROMETHEUS_TOOLS = os.path.join(SOURCE_DIR, "scripts", "prometheus-tools")
NS = "ferry"
TAG = "e2e"
TOPIC = "e2e-orders"
NODE_PORT_BASE = 31090
# The User the test's client pods log in as (every topic and group), and the shell function that has kcat do so
# with the User's Secret mounted at /user.
CLIENT_USER = "e2e-app"
SCRAM_KCAT = ("kcat() { command kcat -X security.protocol=SASL_SSL -X sasl.mechanisms=SCRAM-SHA-512 "
              "-X sasl.username=\"$KAFKA_USER\" -X sasl.password=\"$(cat /user/password)\" "
              "-X ssl.ca.location=/user/ca.crt \"$@\"; }\n")


class Installation:
    def __init__(self, kube, helm_bin, workdir):
        self.kube = kube
        self.helm_bin = helm_bin
        self.workdir = workdir

    def helm(self, *args, check=True, timeout=900):
        env = dict(os.environ, KUBECONFIG=self.kube.kubeconfig, HELM_CACHE_HOME=f"{self.workdir}/helm-cache",
                   HELM_CONFIG_HOME=f"{self.workdir}/helm-config", HELM_DATA_HOME=f"{self.workdir}/helm-data")
        result = subprocess.run([os.path.join(self.helm_bin, "helm"), *args], capture_output=True, text=True,
                                env=env, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"helm {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n"
                                 f"{result.stderr}\n{self.describe()}")
        return result

    def describe(self):
        """What the pods are doing, for failure messages."""
        pods = self.kube.kubectl("get", "pods", "-n", NS, "-o", "wide", check=False).stdout
        events = self.kube.kubectl("get", "events", "-n", NS, "--sort-by=.lastTimestamp", check=False).stdout
        logs = ""
        for component in ("broker", "operator"):
            out = self.kube.kubectl("logs", "-n", NS, "-l", f"app.kubernetes.io/component={component}", "--tail",
                                    "15", "--prefix", check=False)
            logs += f"\n{component} logs (last 15 lines each):\n{out.stdout}{out.stderr}"
        return f"pods:\n{pods}\nevents (last 30):\n" + "\n".join(events.splitlines()[-30:]) + logs

    def pods(self, component):
        out = self.kube.kubectl("get", "pods", "-n", NS, "-l", f"app.kubernetes.io/component={component}",
                                "-o", "json").stdout
        return json.loads(out)["items"]

    def pod_ip(self, name):
        pod = self.kube.get("pod", name, namespace=NS)
        return pod["status"].get("podIP") if pod else None

    def secret(self, name, key):
        return base64.b64decode(self.kube.get("secret", name, namespace=NS)["data"][key]).decode()

    def cluster_ca_file(self):
        """The cluster CA's bundle (Secret ferry-cluster-ca-cert), in a file."""
        path = os.path.join(self.workdir, "cluster-ca.crt")
        with open(path, "w") as f:
            f.write(self.secret("ferry-cluster-ca-cert", "ca.crt"))
        return path

    def admin(self, broker, path):
        """GET on a broker's admin API from the host, through its pod address on the cluster's bridge: HTTPS,
        checked against the cluster CA (not the host name: the certificate names the brokers, not their pod
        addresses), logged in as the operator's user."""
        ip = self.pod_ip(f"ferry-broker-{broker}")
        if not ip:
            return None, None
        context = ssl.create_default_context(cafile=self.cluster_ca_file())
        context.check_hostname = False
        login = base64.b64encode(f"ferry-operator:{self.secret('ferry-operator-identity', 'password')}".encode())
        request = urllib.request.Request(f"https://{ip}:9644{path}", headers={"Authorization": b"Basic " + login})
        try:
            with urllib.request.urlopen(request, timeout=5, context=context) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")
        except OSError:
            return None, None

    def client_pod(self, name, script, user=CLIENT_USER, login=True, env=()):
        """A pod of the Ferry image (kcat, curl, jq, openssl) running `script` with sh, User `user`'s Secret mounted
        at /user and, with `login`, kcat logging in as that User over SASL_SSL."""
        return {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS},
            "spec": {"restartPolicy": "Never", "containers": [{
                "name": "client", "image": f"localhost/ferry:{TAG}", "imagePullPolicy": "Never",
                "command": ["/bin/sh", "-c", (SCRAM_KCAT if login else "") + script],
                "env": [{"name": "BOOTSTRAP", "value": "ferry-bootstrap.ferry.svc.cluster.local:9092"},
                        {"name": "KAFKA_USER", "value": user}, *env],
                "volumeMounts": [{"name": "user", "mountPath": "/user", "readOnly": True}]}],
                "volumes": [{"name": "user", "secret": {"secretName": user}}]}}

    def run_pod(self, name, script, timeout=300, **client):
        """Runs `script` in a client_pod and returns its output."""
        self.kube.kubectl("delete", "pod", name, "-n", NS, "--ignore-not-found", "--wait=true")
        self.kube.apply(self.client_pod(name, script, **client))
        return self.wait_pod(name, timeout)

    def wait_pod(self, name, timeout=300):
        """The output of pod `name` once it has finished; fails when it failed."""
        def finished():
            pod = self.kube.get("pod", name, namespace=NS)
            return pod and pod["status"].get("phase") in ("Succeeded", "Failed") and pod["status"]["phase"]
        phase = wait_until(finished, timeout=timeout, interval=1, what=f"pod {name} to finish")
        logs = self.kube.kubectl("logs", name, "-n", NS).stdout
        assert phase == "Succeeded", f"pod {name} failed:\n{logs}"
        return logs

    def apply_user(self, name, spec):
        """A User resource of this cluster, Ready (its Secret written)."""
        self.kube.apply({"apiVersion": "ferry.dev/v1alpha1", "kind": "User",
                         "metadata": {"name": name, "namespace": NS, "labels": {"ferry.dev/cluster": "ferry"}},
                         "spec": spec})

        def ready():
            user = self.kube.get("user", name, namespace=NS) or {}
            conditions = user.get("status", {}).get("conditions", [])
            return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions) and \
                user["status"].get("observedGeneration") == user["metadata"]["generation"]
        wait_until(ready, timeout=120, interval=1, what=f"User {name} to be Ready")

    def replicas_of(self, topic):
        status, body = self.admin(0, f"/v1/topics/{topic}")
        assert status == 200, body
        return {p["partition"]: p for p in body["partitions"]}


@pytest.fixture(scope="module")
def ferry(request):
    subprocess.run([HELM_TOOLS, "build"], check=True, capture_output=True, text=True, timeout=1800)
    helm_bin = subprocess.run([HELM_TOOLS, "bin"], check=True, capture_output=True, text=True).stdout.strip()
    workdir = tempfile.mkdtemp(prefix="ferry-chart-e2e-")
    try:
        with kube_cluster(request) as kube:
            started = time.monotonic()
            kube.build_image(f"localhost/ferry:{TAG}", SOURCE_DIR)
            kube.build_image(f"localhost/ferry-zookeeper:{TAG}", os.path.join(SOURCE_DIR, "images", "zookeeper"))
            kube.build_image(f"localhost/kafka-python:{TAG}", os.path.join(SOURCE_DIR, "tests", "images", "kafka-python"))
            print(f"images built in {time.monotonic() - started:.0f} s")
            kube.load_image(f"localhost/ferry:{TAG}", f"localhost/ferry-zookeeper:{TAG}", f"localhost/kafka-python:{TAG}")
            kube.kubectl("create", "namespace", NS)
            yield Installation(kube, helm_bin, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


VALUES = ["image.repository=localhost/ferry", f"image.tag={TAG}", "image.pullPolicy=Never",
          "zookeeper.image.repository=localhost/ferry-zookeeper", f"zookeeper.image.tag={TAG}",
          "zookeeper.image.pullPolicy=Never", "zookeeper.storage.size=1Gi", "broker.storage.size=2Gi",
          # One node: requests sized so that four brokers, three ZooKeeper servers and the rest fit.
          "broker.resources.requests.cpu=50m", "broker.resources.requests.memory=128Mi",
          "zookeeper.resources.requests.cpu=20m", "zookeeper.resources.requests.memory=128Mi",
          "operator.groupStatusIntervalSeconds=5",
          # Every broker also reachable from outside the cluster (here: the host) at the node's address.
          "broker.external.enabled=true", f"broker.external.nodePortBase={NODE_PORT_BASE}",
          # The host's Prometheus scrapes the operator's authenticated /metrics as this ServiceAccount.
          f"operator.metricsReaders[0].namespace={NS}", "operator.metricsReaders[0].name=e2e-prometheus"]


def node_address(ferry):
    node = json.loads(ferry.kube.kubectl("get", "nodes", "-o", "json").stdout)["items"][0]
    return next(a["address"] for a in node["status"]["addresses"] if a["type"] == "InternalIP")


def test_install_brings_up_zookeeper_brokers_and_operator(ferry):
    args = ["install", "ferry", CHART, "--namespace", NS, "--wait", "--timeout", "10m",
            # The external listener's address (the node's), which the brokers' certificate must name.
            "--set", f"tls.extraAddresses[0]={node_address(ferry)}"]
    for v in VALUES:
        args += ["--set", v]
    started = time.monotonic()
    out = ferry.helm(*args).stdout
    print(f"helm install --wait took {time.monotonic() - started:.0f} s")
    assert "ferry-bootstrap.ferry.svc.cluster.local:9092" in out  # NOTES.txt
    # helm --wait does not wait for the pods of an OnDelete StatefulSet (the brokers', rolled by the operator).
    wait_until(lambda: unready_brokers(ferry) == 0, timeout=300, interval=1, what="the brokers to be ready")
    assert len(ferry.pods("zookeeper")) == 3 and len(ferry.pods("broker")) == 3 and len(ferry.pods("operator")) == 1
    for pod in ferry.pods("zookeeper") + ferry.pods("broker") + ferry.pods("operator"):
        assert all(c["ready"] for c in pod["status"]["containerStatuses"]), pod["metadata"]["name"]
    # Each broker's id is its ordinal and its rack the node's zone (the broker-identity init container).
    status, body = ferry.admin(0, "/v1/brokers")
    assert status == 200, body
    brokers = {b["id"]: b for b in body["brokers"]}
    assert sorted(brokers) == [0, 1, 2]
    for i, b in brokers.items():
        assert b["host"] == f"ferry-broker-{i}.ferry-broker-headless.ferry.svc.cluster.local", b
        assert b.get("rack") == "zone-a", b
    # The test's own clients log in as a User allowed every topic and group.
    ferry.apply_user(CLIENT_USER, {"authentication": {"type": "scram-sha-512"}, "authorization": {"acls": [
        {"resource": {"type": "topic", "name": "*"}, "operations": ["All"]},
        {"resource": {"type": "group", "name": "*"}, "operations": ["All"]},
        {"resource": {"type": "cluster"}, "operations": ["IdempotentWrite", "Describe"]}]}})


def test_helm_test_passes(ferry):
    result = ferry.helm("test", "ferry", "--namespace", NS, "--logs", "--timeout", "5m")
    assert "Phase:          Succeeded" in result.stdout, result.stdout
    assert "kafka_consumergroup_lag_sum" in result.stdout, result.stdout


def test_topic_resource_and_a_client_pod_through_the_bootstrap_service(ferry):
    ferry.kube.apply({"apiVersion": "ferry.dev/v1alpha1", "kind": "Topic",
                      "metadata": {"name": TOPIC, "namespace": NS, "labels": {"ferry.dev/cluster": "ferry"}},
                      "spec": {"partitions": 6, "replicationFactor": 3, "config": {"min.insync.replicas": "2"}}})

    def ready():
        topic = ferry.kube.get("topic", TOPIC, namespace=NS)
        conditions = (topic or {}).get("status", {}).get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    wait_until(ready, timeout=120, interval=1, what=f"Topic {TOPIC} to be Ready")
    out = ferry.run_pod("e2e-client", f"""
        set -eu
        seq 1 1000 | kcat -P -b "$BOOTSTRAP" -t {TOPIC} -X acks=all
        kcat -C -b "$BOOTSTRAP" -t {TOPIC} -o beginning -e -q | sort -n | uniq | wc -l
    """)
    assert out.strip().splitlines()[-1] == "1000", out


def apply_topic(ferry, name, partitions=3):
    ferry.kube.apply({"apiVersion": "ferry.dev/v1alpha1", "kind": "Topic",
                      "metadata": {"name": name, "namespace": NS, "labels": {"ferry.dev/cluster": "ferry"}},
                      "spec": {"partitions": partitions, "replicationFactor": 3}})

    def ready():
        conditions = (ferry.kube.get("topic", name, namespace=NS) or {}).get("status", {}).get("conditions", [])
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    wait_until(ready, timeout=120, interval=1, what=f"Topic {name} to be Ready")


KAFKA_PYTHON_APP = """
import kafka
from kafka.errors import KafkaError
secret = {k: open("/user/" + k).read() for k in ("bootstrap.servers", "security.protocol", "sasl.mechanism",
                                                 "password")}
login = dict(bootstrap_servers=secret["bootstrap.servers"], security_protocol=secret["security.protocol"],
             sasl_mechanism=secret["sasl.mechanism"], sasl_plain_username="orders-app",
             sasl_plain_password=secret["password"], ssl_cafile="/user/ca.crt")
producer = kafka.KafkaProducer(acks="all", **login)
for i in range(50):
    producer.send("e2e-allowed", b"python-%d" % i).get(timeout=60)
print("python produced 50", flush=True)
consumer = kafka.KafkaConsumer("e2e-allowed", group_id="orders-python", auto_offset_reset="earliest",
                               consumer_timeout_ms=20000, **login)
print("python consumed", sum(1 for m in consumer if m.value.startswith(b"python-")), flush=True)
try:
    producer.send("e2e-other", b"refused").get(timeout=30)
    print("python wrote e2e-other")
except KafkaError as e:
    print("python refused", type(e).__name__)
"""


def test_a_users_secret_lets_an_application_pod_use_its_topic_and_no_other(ferry):
    """A User with SCRAM-SHA-512 and ACLs for one topic: a pod with its Secret mounted produces and consumes through
    the bootstrap Service over SASL_SSL, checking the brokers' certificate with the Secret's ca.crt, and is refused
    on another topic."""
    apply_topic(ferry, "e2e-allowed")
    apply_topic(ferry, "e2e-other")
    ferry.apply_user("orders-app", {"authentication": {"type": "scram-sha-512"}, "authorization": {"acls": [
        {"resource": {"type": "topic", "name": "e2e-allowed"}, "operations": ["Read", "Write", "Describe"]},
        {"resource": {"type": "group", "name": "orders-", "patternType": "prefix"}, "operations": ["Read"]}]}})
    secret = ferry.kube.get("secret", "orders-app", namespace=NS)["data"]
    assert {"password", "sasl.jaas.config", "sasl.mechanism", "ca.crt", "bootstrap.servers"} <= set(secret), secret
    assert base64.b64decode(secret["security.protocol"]) == b"SASL_SSL"
    out = ferry.run_pod("e2e-orders-app", """
        seq 1 100 | kcat -P -b "$(cat /user/bootstrap.servers)" -t e2e-allowed -X acks=all && echo produced
        echo "consumed $(kcat -b "$BOOTSTRAP" -G orders-1 -c 100 -q -X auto.offset.reset=earliest e2e-allowed | wc -l)"
        echo refused | kcat -P -b "$BOOTSTRAP" -t e2e-other -X acks=all -X message.timeout.ms=15000 2>&1
        kcat -C -b "$BOOTSTRAP" -t e2e-other -o beginning -e -q 2>&1 | head -n 3
        true
    """, user="orders-app")
    assert "produced" in out and "consumed 100" in out, out
    assert "Topic authorization failed" in out, out

    # kafka-python, with the same Secret: every setting it needs is there.
    pod = ferry.client_pod("e2e-orders-python", "", user="orders-app", login=False)
    container = pod["spec"]["containers"][0]
    container["image"] = f"localhost/kafka-python:{TAG}"
    container["command"] = ["python3", "-c", KAFKA_PYTHON_APP]
    ferry.kube.kubectl("delete", "pod", "e2e-orders-python", "-n", NS, "--ignore-not-found", "--wait=true")
    ferry.kube.apply(pod)
    out = ferry.wait_pod("e2e-orders-python")
    assert "python produced 50" in out and "python consumed 50" in out, out
    assert "python refused TopicAuthorizationFailedError" in out, out


def test_without_credentials_a_pod_cannot_connect(ferry):
    """No login, a wrong password, or PLAINTEXT to the SASL_SSL port: refused, nothing readable."""
    out = ferry.run_pod("e2e-anonymous", f"""
        kcat -L -b "$BOOTSTRAP" -m 10 >/dev/null 2>&1; echo "plaintext exit $?"
        kcat -L -b "$BOOTSTRAP" -m 10 -X security.protocol=SSL -X ssl.ca.location=/user/ca.crt >/dev/null 2>&1
        echo "no-login exit $?"
        kcat -L -b "$BOOTSTRAP" -m 10 -X security.protocol=SASL_SSL -X sasl.mechanisms=SCRAM-SHA-512 \
          -X sasl.username={CLIENT_USER} -X sasl.password=wrong -X ssl.ca.location=/user/ca.crt 2>&1 | head -n 3
        echo "wrong-password exit $?"
    """, login=False)
    assert "plaintext exit 0" not in out and "no-login exit 0" not in out, out
    assert "Authentication failed" in out, out


def test_a_tls_user_connects_with_its_certificate(ferry):
    """A User with authentication type tls gets a certificate from the clients CA; a pod presenting it on the TLS
    port is that User (its ACLs apply)."""
    ferry.apply_user("tls-app", {"authentication": {"type": "tls"}, "authorization": {"acls": [
        {"resource": {"type": "topic", "name": "e2e-allowed"}, "operations": ["Read", "Write", "Describe"]}]}})
    out = ferry.run_pod("e2e-tls-app", """
        tls="-X security.protocol=SSL -X ssl.certificate.location=/user/tls.crt -X ssl.key.location=/user/tls.key
             -X ssl.ca.location=/user/ca.crt"
        seq 1 10 | sed 's/^/tls-/' | kcat $tls -P -b ferry-bootstrap:9093 -t e2e-allowed -X acks=all && echo produced
        echo "read $(kcat $tls -C -b ferry-bootstrap:9093 -t e2e-allowed -o beginning -e -q | grep -c '^tls-')"
        echo x | kcat $tls -P -b ferry-bootstrap:9093 -t e2e-other -X message.timeout.ms=15000 2>&1
        true
    """, user="tls-app", login=False)
    assert "produced" in out and "read 10" in out, out
    assert "Topic authorization failed" in out, out


def test_deleting_a_user_locks_it_out(ferry):
    password = ferry.secret("orders-app", "password")
    ferry.kube.kubectl("delete", "user", "orders-app", "-n", NS, "--wait=true", timeout=120)
    wait_until(lambda: ferry.kube.get("secret", "orders-app", namespace=NS) is None, timeout=60,
               what="the User's Secret to go with it")
    out = ferry.run_pod("e2e-deleted-user", """
        kcat -L -b "$BOOTSTRAP" -m 10 -X security.protocol=SASL_SSL -X sasl.mechanisms=SCRAM-SHA-512 \
          -X sasl.username=orders-app -X "sasl.password=$OLD_PASSWORD" -X ssl.ca.location=/user/ca.crt 2>&1 |
          head -n 3
    """, login=False, env=[{"name": "OLD_PASSWORD", "value": password}])
    assert "Authentication failed" in out, out


def served_serial(ferry, broker):
    """The serial of the certificate broker `broker` serves new connections, checked against the cluster CA."""
    context = ssl.create_default_context(cafile=ferry.cluster_ca_file())
    context.check_hostname = False
    with socket.create_connection((ferry.pod_ip(f"ferry-broker-{broker}"), 9092), timeout=10) as raw:
        with context.wrap_socket(raw) as tls:
            return tls.getpeercert()["serialNumber"]


def test_a_new_certificate_is_taken_by_the_brokers_without_a_restart(ferry):
    """The operator issues the brokers' certificate again when its Secret is gone (as when it nears its end); the
    kubelet updates the mounted files and every broker serves the new certificate to new connections, none
    restarted, and clients carry on."""
    before = {b: served_serial(ferry, b) for b in range(3)}
    restarts = {p["metadata"]["name"]: p["status"]["containerStatuses"][0]["restartCount"]
                for p in ferry.pods("broker")}
    ferry.kube.kubectl("delete", "secret", "ferry-broker-tls", "-n", NS)

    def renewed():
        try:
            return all(served_serial(ferry, b) != before[b] for b in range(3))
        except (OSError, ssl.SSLError):
            return False
    wait_until(renewed, timeout=300, interval=2, what="every broker to serve a new certificate")
    assert {p["metadata"]["name"]: p["status"]["containerStatuses"][0]["restartCount"]
            for p in ferry.pods("broker")} == restarts
    out = ferry.run_pod("e2e-after-renewal", f"""
        seq 1 50 | kcat -P -b "$BOOTSTRAP" -t {TOPIC} -X acks=all && echo produced
    """)
    assert "produced" in out, out


def test_zookeeper_nodes_are_locked_to_the_cluster(ferry):
    """zookeeper.acl, on by default: another client that reaches ZooKeeper (here the host, through a server's pod
    address) reads the cluster's metadata but cannot change it. The Topic above was written by the operator and its
    partitions' state by the controller, both as the cluster's identity from the chart's Secret."""
    from kazoo.client import KazooClient
    from kazoo.exceptions import NoAuthError
    zk = KazooClient(hosts=f"{ferry.pod_ip('ferry-zookeeper-0')}:2181", timeout=10)
    zk.start(timeout=30)
    try:
        assert len(json.loads(zk.get(f"/brokers/topics/{TOPIC}")[0])["partitions"]) == 6
        for path in (f"/brokers/topics/{TOPIC}", f"/brokers/topics/{TOPIC}/partitions/0/state", "/config/topics"):
            acls, _ = zk.get_acls(path)
            assert sorted((a.id.scheme, a.id.id.split(":")[0], a.perms) for a in acls) == [
                ("digest", "ferry", 31), ("world", "anyone", 1)], (path, acls)
        for attempt in (lambda: zk.set(f"/brokers/topics/{TOPIC}", b'{"version":3,"partitions":{}}'),
                        lambda: zk.set(f"/brokers/topics/{TOPIC}/partitions/0/state", b"{}"),
                        lambda: zk.create("/config/topics/forged", b"{}"),
                        lambda: zk.create("/admin/delete_topics/" + TOPIC)):
            with pytest.raises(NoAuthError):
                attempt()
    finally:
        zk.stop()
        zk.close()
    secret = ferry.kube.get("secret", "ferry-zookeeper-identity", namespace=NS)
    assert secret["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep", secret["metadata"]


def test_network_policies_keep_other_pods_away_from_zookeeper(ferry):
    """The chart's NetworkPolicies, enforced in this cluster by kube-router (scripts/kube-cluster): a pod in another
    namespace, and one in the release's namespace that is neither a broker nor the operator, cannot open ZooKeeper's
    client port, while both reach the brokers' admin port, open to anyone by default. The same probe from the node
    itself (always let through, as the kubelet's probes are) gets ZooKeeper's answer. The brokers and the operator
    reach ZooKeeper: they work."""
    zookeeper, broker = ferry.pod_ip("ferry-zookeeper-0"), ferry.pod_ip("ferry-broker-0")
    probe = f"""
        out="$(echo srvr | curl -s -m 5 telnet://{zookeeper}:2181 | head -n 1)"
        echo "zookeeper: ${{out:-nothing}}"
    """
    script = probe + f"""
        echo "admin $(curl -sk -m 5 -o /dev/null -w '%{{http_code}}' https://{broker}:9644/v1/health)"
    """
    from_node = subprocess.run(["sh", "-c", probe], capture_output=True, text=True, timeout=30).stdout
    assert "zookeeper: Zookeeper version" in from_node, from_node
    ferry.kube.kubectl("create", "namespace", "e2e-outside", check=False)
    outputs = {}
    for ns in (NS, "e2e-outside"):
        name = "e2e-zookeeper-probe"
        ferry.kube.kubectl("delete", "pod", name, "-n", ns, "--ignore-not-found", "--wait=true")
        ferry.kube.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns},
                          "spec": {"restartPolicy": "Never", "containers": [{
                              "name": "probe", "image": f"localhost/ferry:{TAG}", "imagePullPolicy": "Never",
                              "command": ["/bin/sh", "-c", script]}]}})

        def finished():
            phase = (ferry.kube.get("pod", name, namespace=ns) or {}).get("status", {}).get("phase")
            return phase in ("Succeeded", "Failed")
        wait_until(finished, timeout=120, interval=1, what=f"pod {ns}/{name} to finish")
        outputs[ns] = ferry.kube.kubectl("logs", name, "-n", ns).stdout
    for ns, out in outputs.items():
        assert "zookeeper: nothing" in out and "admin 200" in out, (ns, out)


def test_clients_outside_the_cluster_are_given_each_brokers_external_address(ferry):
    """kcat on the host, outside the pod network's DNS: it bootstraps from broker 0's node port and is told every
    broker's node address and node port (listener EXTERNAL), while clients in pods keep the in-cluster names."""
    address = node_address(ferry)
    bootstrap = f"{address}:{NODE_PORT_BASE}"
    # SASL_SSL, the broker's certificate checked against the cluster CA for the node's address (tls.extraAddresses).
    login = ["-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-512",
             "-X", f"sasl.username={CLIENT_USER}", "-X", f"sasl.password={ferry.secret(CLIENT_USER, 'password')}",
             "-X", f"ssl.ca.location={ferry.cluster_ca_file()}", "-X", "ssl.endpoint.identification.algorithm=https"]
    metadata = subprocess.run(["kcat", "-L", "-J", "-b", bootstrap, "-m", "10", *login], capture_output=True,
                              text=True, timeout=60)
    assert metadata.returncode == 0, metadata.stderr
    brokers = {b["id"]: b["name"] for b in json.loads(metadata.stdout)["brokers"]}
    assert brokers == {i: f"{address}:{NODE_PORT_BASE + i}" for i in range(3)}, brokers
    produce = subprocess.run(["kcat", "-P", "-b", bootstrap, "-t", TOPIC, "-X", "acks=all", *login],
                             input="".join(f"outside-{i}\n" for i in range(200)), capture_output=True, text=True,
                             timeout=60)
    assert produce.returncode == 0, produce.stderr
    consume = subprocess.run(["kcat", "-C", "-b", bootstrap, "-t", TOPIC, "-o", "beginning", "-e", "-q", *login],
                             capture_output=True, text=True, timeout=60)
    assert consume.returncode == 0, consume.stderr
    assert sum(1 for line in consume.stdout.splitlines() if line.startswith("outside-")) == 200
    # The registration carries every listener, the inter-broker one (TLS) first.
    status, body = ferry.admin(1, "/v1/brokers")
    assert status == 200
    endpoints = {b["id"]: [e["listener"] for e in b["endpoints"]] for b in body["brokers"]}
    assert endpoints == {i: ["TLS", "INTERNAL", "EXTERNAL"] for i in range(3)}, endpoints


def prometheus_config(ferry, path):
    """prometheus.yml: the chart's scrape_configs, with Kubernetes discovery pointed at this cluster's API
    server through the admin client certificate of its kubeconfig."""
    with open(ferry.kube.kubeconfig) as f:
        kubeconfig = yaml.safe_load(f)
    cluster = kubeconfig["clusters"][0]["cluster"]
    user = kubeconfig["users"][0]["user"]
    scrape = ferry.kube.get("configmap", "ferry-prometheus-scrape", namespace=NS)["data"]["scrape-configs.yaml"]
    jobs = yaml.safe_load(scrape)
    for job in jobs:
        if "authorization" in job:
            # The operator's job (operator.metricsAuth kubernetes): the token of the ServiceAccount that
            # operator.metricsReaders binds to the metrics reader role, where a Prometheus pod would mount its own.
            ferry.kube.apply({"apiVersion": "v1", "kind": "ServiceAccount",
                              "metadata": {"name": "e2e-prometheus", "namespace": NS}})
            token = ferry.kube.kubectl("create", "token", "e2e-prometheus", "-n", NS, "--duration", "2h")
            token_file = os.path.join(ferry.workdir, "prometheus-token")
            with open(token_file, "w") as f:
                f.write(token.stdout.strip())
            job["authorization"] = {"credentials_file": token_file}
        if "tls_config" in job:
            # The brokers' job: HTTPS, checked against the cluster CA's bundle, where a Prometheus pod would mount it.
            job["tls_config"]["ca_file"] = ferry.cluster_ca_file()
        for sd in job["kubernetes_sd_configs"]:
            sd["api_server"] = cluster["server"]
            sd["tls_config"] = {"ca_file": cluster["certificate-authority"],
                                "cert_file": user["client-certificate"], "key_file": user["client-key"]}
        job["scrape_interval"] = "2s"
    with open(path, "w") as f:
        yaml.safe_dump({"global": {"evaluation_interval": "2s"}, "scrape_configs": jobs,
                        "rule_files": [os.path.join(SOURCE_DIR, "dashboards", "ferry-alerts.yaml")]}, f)


def test_prometheus_scrapes_with_the_charts_configuration_and_dashboards_have_data(ferry):
    import test_dashboards as dash

    config = os.path.join(ferry.workdir, "prometheus.yml")
    prometheus_config(ferry, config)
    # A lagging consumer group and steady traffic for the consumer group and topic panels.
    ferry.kube.apply(ferry.client_pod("e2e-load", f"""
                while true; do
                  seq 1 200 | kcat -P -b ferry-bootstrap:9092 -t {TOPIC} -X acks=all
                  kcat -b ferry-bootstrap:9092 -G e2e-lagging -c 50 -q -X auto.offset.reset=earliest {TOPIC} >/dev/null
                  sleep 1
                done"""))
    # Debian's Prometheus has no Kubernetes discovery; scripts/prometheus-tools builds one that has.
    subprocess.run([PROMETHEUS_TOOLS, "build"], check=True, capture_output=True, text=True, timeout=1800)
    binary = os.path.join(subprocess.run([PROMETHEUS_TOOLS, "bin"], check=True, capture_output=True, text=True)
                          .stdout.strip(), "prometheus")
    prometheus = dash.rp.Prometheus(config=config, binary=binary)
    try:
        try:
            wait_until(lambda: prometheus.value('count(up{job="ferry-broker"} == 1)') == 3, timeout=120, interval=1,
                       what="Prometheus scraping the three brokers through Kubernetes discovery")
        except AssertionError:
            targets = prometheus.api("/api/v1/targets")
            with open(prometheus.log_path, errors="replace") as f:
                log = f.read()[-3000:]
            pytest.fail(f"Prometheus does not scrape the brokers.\ntargets: {json.dumps(targets)[:3000]}\nlog:\n{log}")
        for label in ("cluster", "namespace", "pod", "broker"):
            values = prometheus.label_values(label, 'up{job="ferry-broker"}')
            assert values, f"no {label} label on the brokers' series"
        assert sorted(prometheus.label_values("broker", 'up{job="ferry-broker"}')) == ["0", "1", "2"]
        assert prometheus.label_values("cluster", 'up{job="ferry-broker"}') == ["ferry"]
        dashboards = dash.rp.load_dashboards()
        # Each variable offers this cluster's values, and every panel has data with the variables at "All" and
        # at one value each.
        chosen = {"namespace": NS, "cluster": "ferry", "broker": "1", "topic": TOPIC, "group": "e2e-lagging"}
        failures = []

        def all_pass():
            failures[:] = dash.check_variables(prometheus, dashboards, chosen) + \
                dash.check_panels(prometheus, dashboards, dash.rp.all_values) + \
                dash.check_panels(prometheus, dashboards, lambda d: {v: chosen[v] for v in dash.rp.all_values(d)})
            return not failures
        try:
            wait_until(all_pass, timeout=180, interval=3, what="every dashboard query to return data")
        except AssertionError:
            pytest.fail(f"{len(failures)} dashboard queries fail on the cluster:\n" + "\n".join(failures))
    finally:
        prometheus.stop()
        ferry.kube.kubectl("delete", "pod", "e2e-load", "-n", NS, "--wait=false")


def broker_replica_counts(ferry, topic):
    counts = {}
    for p in ferry.replicas_of(topic).values():
        for r in p["replicas"]:
            counts[r] = counts.get(r, 0) + 1
    return counts


def test_scale_out_rebalances_and_scale_in_drains_first(ferry):
    args = ["upgrade", "ferry", CHART, "--namespace", NS, "--reuse-values", "--set", "broker.replicas=4",
            "--wait", "--timeout", "5m"]
    ferry.helm(*args)
    # The operator spreads managed topics' replicas until the loads (every topic's replicas, __consumer_offsets
    # included) differ by at most one, or no managed partition can move to the new broker any more (it holds one
    # of each already). A move in flight lists the old and the new replicas together, so settled also means every
    # partition of a topic lists as many replicas.
    state = {}

    def settled():
        status, topics = ferry.admin(0, "/v1/topics")
        if status != 200:
            return False
        loads = {b: 0 for b in range(4)}
        managed = []
        for t in topics["topics"]:
            partitions = list(ferry.replicas_of(t["name"]).values())
            if len({len(p["replicas"]) for p in partitions}) != 1:
                return False
            for p in partitions:
                for r in p["replicas"]:
                    loads[r] += 1
            if not t["name"].startswith("__"):
                managed += partitions
        state.update(loads=loads, managed=[p["replicas"] for p in managed])
        return max(loads.values()) - min(loads.values()) <= 1 or all(3 in p["replicas"] for p in managed)
    try:
        wait_until(settled, timeout=240, interval=1, what="the operator to move replicas onto broker 3")
    except AssertionError:
        pytest.fail(f"replicas did not settle onto broker 3: {state}")
    assert state["loads"][3] > 0, state

    ferry.helm("upgrade", "ferry", CHART, "--namespace", NS, "--reuse-values", "--set", "broker.replicas=3")
    sts = ferry.kube.get("statefulset", "ferry-broker", namespace=NS)
    assert sts["spec"]["replicas"] == 4 and sts["metadata"]["annotations"]["ferry.dev/brokers"] == "3"

    def scaled_down():
        s = ferry.kube.get("statefulset", "ferry-broker", namespace=NS)
        return s["spec"]["replicas"] == 3
    wait_until(scaled_down, timeout=300, interval=0.5, what="the operator to drain broker 3 and scale down")
    # At the moment the StatefulSet went to 3, broker 3 held nothing.
    assert 3 not in broker_replica_counts(ferry, TOPIC)
    status, topics = ferry.admin(0, "/v1/topics")
    for t in topics["topics"]:
        assert 3 not in broker_replica_counts(ferry, t["name"]), t["name"]
    wait_until(lambda: len(ferry.pods("broker")) == 3, timeout=120, what="broker 3's pod to go")
    # The next upgrade agrees with the operator.
    ferry.helm("upgrade", "ferry", CHART, "--namespace", NS, "--reuse-values", "--wait", "--timeout", "5m")
    assert ferry.kube.get("statefulset", "ferry-broker", namespace=NS)["spec"]["replicas"] == 3


def min_isr(ferry):
    """The smallest ISR of the topic's partitions as some broker reports it, or None if none answers."""
    for b in range(3):
        status, body = ferry.admin(b, f"/v1/topics/{TOPIC}")
        if status == 200:
            return min(len(p["isr"]) for p in body["partitions"])
    return None


def unready_brokers(ferry):
    """Broker pods that do not serve now: missing, terminating or not ready."""
    pods = ferry.pods("broker")
    serving = [p for p in pods if not p["metadata"].get("deletionTimestamp") and any(
        c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))]
    return 3 - len(serving)


def test_helm_upgrade_rolls_one_broker_at_a_time_under_a_producer_and_loses_nothing(ferry):
    """A changed broker setting makes every broker pod outdated; the StatefulSet is OnDelete and the operator
    restarts them one at a time, each only when every partition it is in sync for has all its other replicas in
    sync. Under an acks=all idempotent producer to a topic of replication factor 3 and min.insync.replicas 2: no
    partition's ISR ever drops below 2, never two broker pods are down at once, and nothing acknowledged is lost."""
    count = 6000
    ferry.kube.kubectl("delete", "pod", "e2e-producer", "-n", NS, "--ignore-not-found")
    ferry.kube.apply(ferry.client_pod("e2e-producer", f"""
                seq 1 {count} | while read i; do echo "roll-$i"; sleep 0.02; done |
                  kcat -E -P -b ferry-bootstrap:9092 -t {TOPIC} -X acks=all -X enable.idempotence=true \
                    -X message.timeout.ms=300000 2>&1
                echo "producer exit $?" """))
    wait_until(lambda: (ferry.kube.get("pod", "e2e-producer", namespace=NS) or {}).get("status", {})
               .get("phase") == "Running", timeout=60, what="the producer to start")
    assert ferry.kube.get("statefulset", "ferry-broker", namespace=NS)["spec"]["updateStrategy"]["type"] == "OnDelete"
    lowest, down = [], []
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            value = min_isr(ferry)
            if value is not None:
                lowest.append(value)
            down.append(unready_brokers(ferry))
            stop.wait(0.5)
    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.monotonic()
    try:
        ferry.helm("upgrade", "ferry", CHART, "--namespace", NS, "--reuse-values",
                   "--set", "broker.config.log\\.retention\\.hours=100")

        def rolled():
            sts = ferry.kube.get("statefulset", "ferry-broker", namespace=NS)
            revision = sts["status"].get("updateRevision")
            pods = ferry.pods("broker")
            return (sts["status"].get("observedGeneration") == sts["metadata"]["generation"] and len(pods) == 3
                    and all(p["metadata"]["labels"].get("controller-revision-hash") == revision for p in pods)
                    and unready_brokers(ferry) == 0
                    and sts["metadata"].get("annotations", {}).get("ferry.dev/roll", "").startswith("done"))
        try:
            wait_until(rolled, timeout=600, interval=1, what="the operator to roll every broker")
        except AssertionError:
            events = ferry.kube.kubectl("get", "events", "-n", NS, "--field-selector",
                                        "involvedObject.kind=StatefulSet", check=False).stdout
            pytest.fail(f"the roll did not complete:\n{ferry.describe()}\n{events}")
    finally:
        stop.set()
        sampler.join()
    print(f"roll of 3 brokers took {time.monotonic() - started:.0f} s")
    assert lowest and min(lowest) >= 2, f"a partition lost two in-sync replicas during the roll: {min(lowest)}"
    assert max(down) <= 1, f"two broker pods were down at once during the roll: {down}"
    assert max(down) == 1, "no broker was restarted"
    events = json.loads(ferry.kube.kubectl("get", "events.events.k8s.io", "-n", NS, "-o", "json").stdout)["items"]
    rolling = [e for e in events if e.get("reason") == "RollingBroker"]
    assert len(rolling) >= 3, [e.get("note") for e in rolling]
    config = ferry.kube.get("configmap", "ferry-broker", namespace=NS)["data"]["broker.yaml"]
    assert "log.retention.hours: \"100\"" in config, config

    def done():
        pod = ferry.kube.get("pod", "e2e-producer", namespace=NS)
        return pod["status"].get("phase") in ("Succeeded", "Failed")
    wait_until(done, timeout=600, interval=1, what="the producer to finish")
    logs = ferry.kube.kubectl("logs", "e2e-producer", "-n", NS).stdout
    # Disconnects from restarting brokers are logged ("Broker transport failure") and retried; a record the
    # producer gave up on would be "Delivery failed".
    assert "producer exit 0" in logs and "Delivery failed" not in logs, logs
    out = ferry.run_pod("e2e-roll-check", f"""
        kcat -C -b "$BOOTSTRAP" -t {TOPIC} -o beginning -e -q | grep '^roll-' | sort | uniq | wc -l
    """)
    assert out.strip().splitlines()[-1] == str(count), out


def test_a_lost_disk_is_rebuilt_from_the_other_replicas(ferry):
    before = {p: d["replicas"] for p, d in ferry.replicas_of(TOPIC).items()}
    hosted = [p for p, replicas in before.items() if 1 in replicas]
    assert hosted
    ferry.kube.kubectl("delete", "pvc", "data-ferry-broker-1", "-n", NS, "--wait=false")
    ferry.kube.kubectl("delete", "pod", "ferry-broker-1", "-n", NS, "--wait=true", timeout=300)

    def rebuilt():
        status, body = ferry.admin(1, "/v1/ready?in_sync=true")
        return status == 200
    wait_until(rebuilt, timeout=300, interval=1, what="broker 1 to rebuild its replicas and be in sync")
    pvc = ferry.kube.get("pvc", "data-ferry-broker-1", namespace=NS)
    assert pvc["status"]["phase"] == "Bound"
    status, local = ferry.admin(1, f"/v1/topics/{TOPIC}")
    for p in local["partitions"]:
        if p["partition"] in hosted:
            assert 1 in p["isr"], p
            assert p.get("local", {}).get("log_end_offset", 0) > 0, p
