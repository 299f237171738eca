"""ConsumerGroup resources against a real kube-apiserver and a real Ferry cluster, with kafka-python as the
group's client: the status reports the group's state, members, protocol and lag, refreshed at a bounded rate;
spec.resetOffsets is applied once, only while the group has no members (to earliest, latest, a timestamp or
explicit offsets): while it has some, a condition says the reset waits, and it is applied when they leave."""
import datetime
import json
import time
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.structs import OffsetAndMetadata

from conftest import started_cluster, wait_until
from group_members import confluent_member
from kube_env import Operator, grant_operator, kube_environment

STATUS_INTERVAL = 5


@pytest.fixture(scope="module")
def ferry():
    with started_cluster(3) as c:
        yield c


@pytest.fixture(scope="module")
def kube(request):
    with kube_environment(request) as env:
        grant_operator(env, "ferry-operator")
        yield env


@pytest.fixture(scope="module")
def operator(kube, ferry):
    op = Operator(kube, kube.user("ferry-operator"), ferry.zk_port,
                  args=("--group-status-interval-seconds", str(STATUS_INTERVAL), "--log-format", "json"))
    op.start()
    yield op
    op.stop()
    assert not op.sanitizer_reports(), op.sanitizer_reports()
    # --log-format json: every line is one object a log collector can take apart.
    lines = op.log().splitlines()
    assert lines
    for line in lines:
        assert set(json.loads(line)) == {"time", "level", "component", "message"}, line


@pytest.fixture
def ns(kube, operator):
    name = "g-" + uuid.uuid4().hex[:8]
    kube.kubectl("create", "namespace", name)
    return name


def consumer_group(name, ns, group_id=None, reset=None):
    spec = {}
    if group_id:
        spec["groupId"] = group_id
    if reset is not None:
        spec["resetOffsets"] = {"topics": reset}
    return {"apiVersion": "ferry.dev/v1alpha1", "kind": "ConsumerGroup",
            "metadata": {"name": name, "namespace": ns, "labels": {"ferry.dev/cluster": "it"}}, "spec": spec}


def status(kube, name, ns):
    return (kube.get("consumergroup", name, ns) or {}).get("status", {})


def condition(kube, name, ns, kind):
    return next((c for c in status(kube, name, ns).get("conditions", []) if c["type"] == kind), None)


def wait_status(kube, name, ns, check, what, timeout=60):
    return wait_until(lambda: check(status(kube, name, ns)), timeout=timeout, interval=0.2, what=what)


def wait_condition(kube, name, ns, kind, state, reason, timeout=60):
    def met():
        c = condition(kube, name, ns, kind)
        return c if c and c["status"] == state and c["reason"] == reason else None
    return wait_until(met, timeout=timeout, interval=0.2, what=f"{kind}={state} {reason}")


def create_topic(ferry, name, partitions):
    admin = KafkaAdminClient(bootstrap_servers=ferry.bootstrap)
    admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=2)])
    admin.close()


def produce(ferry, topic, per_partition, partitions, timestamps=None):
    producer = KafkaProducer(bootstrap_servers=ferry.bootstrap, acks="all")
    for p in range(partitions):
        for i in range(per_partition):
            ts = timestamps[i] if timestamps else None
            producer.send(topic, f"{p}-{i}".encode(), partition=p, timestamp_ms=ts)
    producer.flush()
    producer.close()


def committed(ferry, group):
    admin = KafkaAdminClient(bootstrap_servers=ferry.bootstrap)
    try:
        return {(tp.topic, tp.partition): o.offset for tp, o in admin.list_consumer_group_offsets(group).items()}
    finally:
        admin.close()


def member(ferry, topic, group):
    """A consumer that joins `group`, subscribed to `topic`, and stays in it (heartbeats) until closed."""
    consumer = KafkaConsumer(topic, bootstrap_servers=ferry.bootstrap, group_id=group, enable_auto_commit=False,
                             auto_offset_reset="earliest")
    wait_until(lambda: consumer.poll(timeout_ms=200) is not None and consumer.assignment(), timeout=60,
               what="the consumer to join its group")
    return consumer


def test_status_reports_state_members_protocol_and_lag(kube, ferry, ns):
    topic, group = "orders-" + ns, "app-" + ns
    create_topic(ferry, topic, 3)
    produce(ferry, topic, 30, 3)
    consumer = member(ferry, topic, group)
    try:
        consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(10 + 5 * p, "") for p in range(3)})
        kube.apply(consumer_group("app", ns, group_id=group))
        s = wait_status(kube, "app", ns, lambda s: s if s.get("state") == "Stable" and s.get("lag", {}).get("total") == 45
                        else None, "Stable with a lag of 45 (90 records, 10 + 15 + 20 committed)")
        assert s["members"] == 1 and s["protocolType"] == "consumer" and s["protocol"] == "range", s
        assert s["groupId"] == group and s["lag"]["partitions"] == 3, s
        assert s["lag"]["worstPartition"] == {"topic": topic, "partition": 0, "lag": 20}, s
        ready = condition(kube, "app", ns, "Ready")
        assert ready["status"] == "True" and ready["reason"] == "GroupObserved", ready
        columns = kube.kubectl("get", "fcg", "app", "-n", ns).stdout.split("\n")
        assert columns[0].split()[:5] == ["NAME", "CLUSTER", "STATE", "MEMBERS", "LAG"], columns
        assert columns[1].split()[:5] == ["app", "it", "Stable", "1", "45"], columns

        # Lag follows production, refreshed at most once per interval: a steady producer changes the lag every
        # time, so the resource changes about once per interval and no more.
        producer = KafkaProducer(bootstrap_servers=ferry.bootstrap, acks=1)
        versions, start = set(), time.monotonic()
        while time.monotonic() - start < 3 * STATUS_INTERVAL:
            producer.send(topic, b"more", partition=1)
            versions.add(kube.get("consumergroup", "app", ns)["metadata"]["resourceVersion"])
            time.sleep(0.2)
        producer.close()
        assert 2 <= len(versions) <= 5, f"{len(versions)} status writes in {3 * STATUS_INTERVAL} s"
        wait_status(kube, "app", ns, lambda s: s["lag"]["worstPartition"]["partition"] == 1,
                    "partition 1 to lag most", timeout=3 * STATUS_INTERVAL)
    finally:
        consumer.close()


def test_a_reset_waits_for_an_empty_group(kube, ferry, ns):
    topic, group = "clicks-" + ns, "reader-" + ns
    create_topic(ferry, topic, 2)
    produce(ferry, topic, 20, 2)
    consumer = member(ferry, topic, group)
    consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(5, "") for p in range(2)})
    try:
        kube.apply(consumer_group("reader", ns, group_id=group, reset=[{"topic": topic, "to": "earliest"}]))
        refused = wait_condition(kube, "reader", ns, "OffsetsReset", "False", "GroupActive")
        assert "1 members" in refused["message"] and "waiting for its consumers" in refused["message"], refused
        # Refused while the consumer is there, however often the status is refreshed meanwhile.
        wait_status(kube, "reader", ns, lambda s: s.get("state") == "Stable" and s["lag"]["total"] == 30,
                    "a refreshed status of the active group")
        assert committed(ferry, group) == {(topic, 0): 5, (topic, 1): 5}, "an active group's offsets stay"
        assert "GroupActive" in [e["reason"] for e in kube.events(ns, "reader")]
    finally:
        consumer.close()
    # Once the member has left, the waiting reset is applied.
    done = wait_condition(kube, "reader", ns, "OffsetsReset", "True", "OffsetsReset",
                          timeout=3 * STATUS_INTERVAL + 30)
    assert "2 partitions" in done["message"], done
    assert committed(ferry, group) == {(topic, 0): 0, (topic, 1): 0}
    wait_status(kube, "reader", ns, lambda s: s["lag"]["total"] == 40, "the whole topic as lag after a reset to earliest")
    assert "OffsetsReset" in [e["reason"] for e in kube.events(ns, "reader")]

    kube.apply(consumer_group("reader", ns, group_id=group, reset=[{"topic": topic, "to": "latest"}]))
    wait_status(kube, "reader", ns, lambda s: s.get("resetOffsets", {}).get("generation") == 2, "the second reset")
    assert committed(ferry, group) == {(topic, 0): 20, (topic, 1): 20}
    wait_status(kube, "reader", ns, lambda s: s["lag"]["total"] == 0, "no lag after a reset to latest")

    # Applied once: later refreshes leave offsets a consumer commits alone.
    consumer = member(ferry, topic, group)
    consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(3, "")})
    consumer.close()
    wait_status(kube, "reader", ns, lambda s: s["lag"]["total"] == 17, "the consumer's commit to show as lag")
    assert committed(ferry, group)[(topic, 0)] == 3


def test_reset_to_a_timestamp_and_to_explicit_offsets(kube, ferry, ns):
    timed, other, group = "timed-" + ns, "other-" + ns, "batch-" + ns
    create_topic(ferry, timed, 1)
    create_topic(ferry, other, 2)
    base = 1_790_000_000_000
    produce(ferry, timed, 10, 1, timestamps=[base + i * 1000 for i in range(10)])
    produce(ferry, other, 10, 2)

    def rfc3339(ms):
        return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

    kube.apply(consumer_group("batch", ns, group_id=group, reset=[
        {"topic": timed, "to": "timestamp", "timestamp": rfc3339(base + 5500)},
        {"topic": other, "to": "offsets", "offsets": [{"partition": 1, "offset": 7}]}]))
    wait_condition(kube, "batch", ns, "OffsetsReset", "True", "OffsetsReset")
    assert committed(ferry, group) == {(timed, 0): 6, (other, 1): 7}, "the first record at or after the time"

    kube.apply(consumer_group("batch", ns, group_id=group, reset=[
        {"topic": timed, "to": "timestamp", "timestamp": rfc3339(base + 60_000)}]))
    wait_status(kube, "batch", ns, lambda s: s.get("resetOffsets", {}).get("generation") == 2, "the second reset")
    assert committed(ferry, group)[(timed, 0)] == 10, "after the last record: the log end"


def test_bad_requests_are_refused_with_a_reason(kube, ferry, ns):
    kube.apply(consumer_group("ghost", ns, reset=[{"topic": "no-such-topic", "to": "earliest"}]))
    refused = wait_condition(kube, "ghost", ns, "OffsetsReset", "False", "InvalidReset")
    assert "topic no-such-topic does not exist" in refused["message"], refused
    s = wait_status(kube, "ghost", ns, lambda s: s if s.get("state") else None, "the group's state")
    assert s["state"] == "Dead" and s["members"] == 0, s
    assert "does not exist" in condition(kube, "ghost", ns, "Ready")["message"]

    # What the schema can check, the API server refuses.
    bad = kube.apply(consumer_group("bad", ns, reset=[{"topic": "t", "to": "timestamp"}]), check=False)
    assert bad.returncode != 0 and "to=timestamp needs timestamp" in bad.stderr, bad.stderr
    kube.apply(consumer_group("renamed", ns, group_id="first"))
    changed = kube.kubectl("patch", "fcg", "renamed", "-n", ns, "--type", "merge", "-p",
                           json.dumps({"spec": {"groupId": "second"}}), check=False)
    assert changed.returncode != 0 and "groupId cannot be changed" in changed.stderr, changed.stderr


def test_a_consumer_protocol_group_is_described_and_guarded(kube, ferry, ns):
    # KIP-848 groups are not classic groups: DescribeGroups calls them Dead, ConsumerGroupDescribe describes them.
    topic, group = "modern-" + ns, "kip848-" + ns
    create_topic(ferry, topic, 2)
    m = confluent_member(ferry.bootstrap, topic, group, "m0", "consumer:uniform")
    try:
        wait_until(lambda: m.assigned, timeout=60, what=f"the member's assignment: {m.diagnostics()}")
        kube.apply(consumer_group("modern", ns, group_id=group))
        s = wait_status(kube, "modern", ns, lambda s: s if s.get("members") == 1 else None, "one member")
        assert (s["state"], s["protocolType"], s["protocol"]) == ("Stable", "consumer", "uniform"), s
        kube.apply(consumer_group("modern", ns, group_id=group, reset=[{"topic": topic, "to": "earliest"}]))
        wait_condition(kube, "modern", ns, "OffsetsReset", "False", "GroupActive")
    finally:
        m.stop()
        m.cleanup()
