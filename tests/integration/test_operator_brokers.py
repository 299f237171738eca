"""The operator when brokers come and go. An added broker receives replicas of the managed topics, a bounded
number of moves at a time; a scale-down asked for on the brokers' StatefulSet (ferry.dev/brokers) empties the
leaving broker of every topic's replicas before the operator scales the StatefulSet down, and the scale-down
guard (operator/deploy/broker-scale-guard.yaml) refuses any other way to lower the broker count meanwhile; the
leaving broker's external Service stays until then and goes after.
A producer (and, while draining, a consumer group) runs throughout and nothing acknowledged is lost."""
import json
import os
import threading
import uuid

import pytest
import yaml
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import NewTopic

from conftest import started_cluster, wait_until
from kube_env import DEPLOY, Operator, topic, wait_ready, zk_partitions

STATEFULSET = "ferry-broker"


@pytest.fixture(scope="module")
def ferry():
    # Four brokers, the fourth stopped before any topic exists: starting it again is adding a broker.
    with started_cluster(4) as c:
        c.stop(3)
        yield c


@pytest.fixture(scope="module")
def operator(kube, ferry):
    op = Operator(kube, kube.user("ferry-operator"), ferry.zk_port,
                  args=("--max-concurrent-moves", "2", "--broker-statefulset", f"default/{STATEFULSET}"))
    op.start()
    yield op
    op.stop()
    assert not op.sanitizer_reports(), op.sanitizer_reports()


def all_partitions(ferry):
    """Every topic's partitions from ZooKeeper: {topic: {partition: replicas}}, and the moves in flight."""
    zk = ferry.zookeeper()
    try:
        out, in_flight = {}, 0
        for name in zk.get_children("/brokers/topics"):
            data, _ = zk.get(f"/brokers/topics/{name}")
            assignment = json.loads(data)
            out[name] = {int(p): r for p, r in assignment["partitions"].items()}
            in_flight += len(assignment.get("adding_replicas", {}))
        return out, in_flight
    finally:
        zk.stop()


def loads(ferry, topics):
    counts = {b: 0 for b in range(4)}
    for t in topics:
        for replicas in zk_partitions(ferry, t).values():
            for r in replicas:
                counts[r] += 1
    return counts


class Producer:
    """Sends numbered records with acks=all until stopped; `acked` holds the ones the cluster acknowledged."""

    def __init__(self, ferry, topic_name):
        self.topic, self.acked, self.stopping = topic_name, [], threading.Event()
        self.producer = KafkaProducer(bootstrap_servers=ferry.bootstrap, acks="all", retries=20,
                                      max_in_flight_requests_per_connection=1)
        self.thread = threading.Thread(target=self._run)

    def _run(self):
        i = 0
        while not self.stopping.is_set():
            value = f"m-{i}".encode()
            try:
                self.producer.send(self.topic, value).get(timeout=30)
                self.acked.append(value)
            except Exception:  # a failed send is not acknowledged; the check counts only acknowledged ones
                pass
            i += 1

    def __enter__(self):
        self.thread.start()
        wait_until(lambda: len(self.acked) > 50, timeout=60, what="the producer to get going")
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join()
        self.producer.close()


class Reader:
    """Consumes a topic in a group until stopped; `seen` holds the values it read."""

    def __init__(self, ferry, topic_name):
        self.seen, self.stopping = set(), threading.Event()
        self.consumer = KafkaConsumer(topic_name, bootstrap_servers=ferry.bootstrap, group_id="reader-" + topic_name,
                                      auto_offset_reset="earliest")
        self.thread = threading.Thread(target=self._run)

    def _run(self):
        while not self.stopping.is_set():
            for records in self.consumer.poll(timeout_ms=200).values():
                self.seen.update(r.value for r in records)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping.set()
        self.thread.join()
        self.consumer.close()


def assert_nothing_lost(ferry, producer):
    consumer = KafkaConsumer(producer.topic, bootstrap_servers=ferry.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=10000)
    seen = {m.value for m in consumer}
    consumer.close()
    missing = [v for v in producer.acked if v not in seen]
    assert not missing, f"{len(missing)} of {len(producer.acked)} acknowledged records lost, e.g. {missing[:5]}"


def test_an_added_broker_receives_replicas_under_load(kube, ferry, operator):
    ns = "b-" + uuid.uuid4().hex[:8]
    kube.kubectl("create", "namespace", ns)
    names = ["load-a", "load-b"]
    kube.apply(*(topic(n, ns, 6, 2) for n in names))
    for n in names:
        wait_ready(kube, n, ns)
    assert loads(ferry, names)[3] == 0

    most_in_flight, sampling = [0], threading.Event()

    def sample():  # --max-concurrent-moves 2: never more than two reassignments at once
        while not sampling.is_set():
            most_in_flight[0] = max(most_in_flight[0], all_partitions(ferry)[1])
            sampling.wait(0.05)

    sampler = threading.Thread(target=sample)
    with Producer(ferry, "load-a") as producer:
        sampler.start()
        try:
            ferry.start(3)
            wait_until(lambda: max(loads(ferry, names).values()) - min(loads(ferry, names).values()) <= 1,
                       timeout=240, interval=0.5, what="an even spread of the 24 replicas over 4 brokers")
        finally:
            sampling.set()
            sampler.join()
    assert loads(ferry, names)[3] >= 5
    assert 1 <= most_in_flight[0] <= 2, most_in_flight[0]
    for n in names:
        wait_ready(kube, n, ns)
    assert_nothing_lost(ferry, producer)


def broker_statefulset(replicas):
    # Only the object matters here: no kubelet runs its pods; the brokers are local processes, broker i for pod i.
    return {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": STATEFULSET, "namespace": "default"},
            "spec": {"replicas": replicas, "serviceName": STATEFULSET,
                     "selector": {"matchLabels": {"app": STATEFULSET}},
                     "template": {"metadata": {"labels": {"app": STATEFULSET}},
                                  "spec": {"containers": [{"name": "broker", "image": "ferry:unused"}]}}}}


def scale_guard(namespace="default", name=STATEFULSET):
    """operator/deploy/broker-scale-guard.yaml, bound to the StatefulSet `name` in `namespace` (by default this
    test's)."""
    with open(os.path.join(DEPLOY, "broker-scale-guard.yaml")) as f:
        policy, binding = yaml.safe_load_all(f)
    binding["metadata"]["name"] = f"ferry-broker-scale-guard-{namespace}"
    binding["spec"]["paramRef"]["namespace"] = namespace
    binding["spec"]["paramRef"]["name"] = name
    binding["spec"]["matchResources"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"] = namespace
    binding["spec"]["matchResources"]["resourceRules"][0]["resourceNames"] = [name]
    return policy, binding


def statefulset(kube):
    return kube.get("statefulset", STATEFULSET, "default")


def external_service(name, labels):
    # As the chart labels broker i's external Service (charts/ferry/templates/broker-services.yaml).
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": "default", "labels": labels},
            "spec": {"selector": {"app": STATEFULSET}, "ports": [{"name": "external", "port": 9094}]}}


def external_services():
    """Broker 0 to 3's external Services, another StatefulSet's broker 3's, and one without the labels."""
    ours = [external_service(f"{STATEFULSET}-{i}-external",
                             {"ferry.dev/external-for": STATEFULSET, "ferry.dev/broker-ordinal": str(i)})
            for i in range(4)]
    return ours + [external_service("other-broker-3-external",
                                    {"ferry.dev/external-for": "other-broker", "ferry.dev/broker-ordinal": "3"}),
                   external_service(f"{STATEFULSET}-3-unlabelled", {})]


def service_names(kube):
    listed = json.loads(kube.kubectl("get", "services", "-n", "default", "-o", "json").stdout)
    return {s["metadata"]["name"] for s in listed["items"]}


def annotation(kube, name):
    return (statefulset(kube)["metadata"].get("annotations") or {}).get(name)


def replicas_on(ferry, broker):
    return sorted(f"{t}-{p}" for t, partitions in all_partitions(ferry)[0].items()
                  for p, replicas in partitions.items() if broker in replicas)


def test_a_scale_down_drains_the_leaving_broker_first(kube, ferry, operator):
    ns = "d-" + uuid.uuid4().hex[:8]
    kube.kubectl("create", "namespace", ns)
    kube.apply(topic("drain-a", ns, 6, 2))
    wait_ready(kube, "drain-a", ns)
    # A topic no resource manages must leave the broker too.
    admin = KafkaAdminClient(bootstrap_servers=ferry.bootstrap)
    admin.create_topics([NewTopic("unmanaged", num_partitions=-1, replication_factor=-1,
                                  replica_assignments={p: [3, p % 3] for p in range(4)})])
    admin.close()
    wait_until(lambda: zk_partitions(ferry, "unmanaged"), timeout=30, what="the unmanaged topic")
    assert replicas_on(ferry, 3), "broker 3 holds replicas to drain"

    kube.apply(*scale_guard())
    kube.apply(broker_statefulset(4), *external_services())
    wait_until(lambda: annotation(kube, "ferry.dev/replica-floor") == "4", timeout=60,
               what="the operator to write the replica floor")

    # The guard: no way but the annotation lowers the count while broker 3 holds replicas. The API server
    # enforces a policy once it has loaded it: a server-side dry run (which runs admission) awaits that.
    wait_until(lambda: kube.kubectl("scale", "statefulset", STATEFULSET, "-n", "default", "--replicas=3",
                                    "--dry-run=server", check=False).returncode != 0,
               timeout=60, what="the API server to enforce the scale-down guard")
    refusal = kube.kubectl("scale", "statefulset", STATEFULSET, "-n", "default", "--replicas=3", check=False)
    assert refusal.returncode != 0, "scaled down past the guard"
    assert "broker 3 still holds partition replicas" in refusal.stderr, refusal.stderr
    assert "ferry.dev/brokers=3" in refusal.stderr, refusal.stderr
    patched = kube.kubectl("patch", "statefulset", STATEFULSET, "-n", "default", "--type", "merge",
                           "-p", '{"spec":{"replicas":3}}', check=False)
    assert patched.returncode != 0 and "still holds partition replicas" in patched.stderr, patched.stderr
    assert statefulset(kube)["spec"]["replicas"] == 4

    with Producer(ferry, "drain-a") as producer, Reader(ferry, "drain-a") as reader:
        kube.kubectl("annotate", "statefulset", STATEFULSET, "-n", "default", "ferry.dev/brokers=3")

        def scaled_down():
            # The Services before the StatefulSet: the operator scales down before it deletes the Service, so a
            # Service missing at the first read must be seen with the StatefulSet already scaled.
            services = service_names(kube)
            if statefulset(kube)["spec"]["replicas"] != 3:
                # Broker 3's external clients keep their address while it leads partitions (H9: under GitOps
                # the chart no longer renders it).
                assert f"{STATEFULSET}-3-external" in services, "external Service deleted mid-drain"
                return False
            left = replicas_on(ferry, 3)
            assert not left, f"scaled down while broker 3 still holds {left}"
            return True
        wait_until(scaled_down, timeout=240, interval=0.5, what="broker 3 drained and the StatefulSet scaled to 3")
        wait_until(lambda: f"{STATEFULSET}-3-external" not in service_names(kube), timeout=60,
                   what="the operator to delete the drained broker's external Service")
        expected = {s["metadata"]["name"] for s in external_services()} - {f"{STATEFULSET}-3-external"}
        assert expected <= service_names(kube), expected - service_names(kube)
        assert annotation(kube, "ferry.dev/replica-floor") == "3"
        reasons = [e["reason"] for e in kube.events("default", STATEFULSET)]
        assert "DrainingBrokers" in reasons and "BrokersDrained" in reasons, reasons
        ferry.stop(3)  # its pod goes
        wait_ready(kube, "drain-a", ns)
        producer.stopping.set()
        producer.thread.join()
        wait_until(lambda: set(producer.acked) <= reader.seen, timeout=60,
                   what="the running consumer to read every acknowledged record")
    assert_nothing_lost(ferry, producer)
    partitions, _ = all_partitions(ferry)
    assert all(3 not in r for t in partitions.values() for r in t.values())

    # More than the topics allow: a replication factor 2 topic cannot live on one broker.
    kube.kubectl("annotate", "--overwrite", "statefulset", STATEFULSET, "-n", "default", "ferry.dev/brokers=1")
    warning = wait_until(lambda: next((e for e in kube.events("default", STATEFULSET)
                                       if e["reason"] == "CannotDrain"), None),
                         timeout=60, what="a CannotDrain warning")
    assert warning["type"] == "Warning" and "replication factor" in warning["note"], warning
    assert statefulset(kube)["spec"]["replicas"] == 3
    assert annotation(kube, "ferry.dev/replica-floor") == "3"
    refusal = kube.kubectl("scale", "statefulset", STATEFULSET, "-n", "default", "--replicas=1", check=False)
    assert "brokers 1 to 2 still hold partition replicas" in refusal.stderr, refusal.stderr


def test_a_malformed_replica_floor_neither_locks_the_statefulset_nor_its_fix(kube):
    """A ferry.dev/replica-floor that is not a number counts as 0: the guard's parameter is the stored
    StatefulSet, so failing on it would refuse every update (helm upgrade, the operator's, and the fix of the
    annotation itself) until the policy was deleted. No operator watches this StatefulSet."""
    ns, name = "g-" + uuid.uuid4().hex[:8], "guarded-broker"
    kube.kubectl("create", "namespace", ns)
    sts = broker_statefulset(3)
    sts["metadata"] = {"name": name, "namespace": ns, "annotations": {"ferry.dev/replica-floor": "3"}}
    kube.apply(*scale_guard(ns, name), sts)

    def scale(replicas, *extra):
        return kube.kubectl("scale", "statefulset", name, "-n", ns, f"--replicas={replicas}", *extra, check=False)
    wait_until(lambda: scale(2, "--dry-run=server").returncode != 0, timeout=60,
               what="the API server to enforce the scale-down guard")

    kube.kubectl("annotate", "--overwrite", "statefulset", name, "-n", ns, "ferry.dev/replica-floor=three")
    result = scale(2)
    assert result.returncode == 0, result.stderr
    # The fix goes through, and the guard holds again.
    kube.kubectl("annotate", "--overwrite", "statefulset", name, "-n", ns, "ferry.dev/replica-floor=2")
    refused = scale(1)
    assert refused.returncode != 0 and "broker 1 still holds partition replicas" in refused.stderr, refused.stderr
    assert kube.get("statefulset", name, ns)["spec"]["replicas"] == 2
