"""ConsumerGroup resources against a real kube-apiserver and a real Ferry cluster, with kafka-python as the
group's client: the status reports the group's state, members, protocol and lag, refreshed at a bounded rate;
spec.resetOffsets is a one-shot request (requestId, notAfter) applied at most once, only while the group has no
members (to earliest, latest, a timestamp or explicit offsets): while it has some, a condition says the reset
waits, and it is applied when they leave, unless notAfter has passed first. A re-created resource (no status)
does not apply its request again."""
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
from kube_env import Operator

STATUS_INTERVAL = 5


@pytest.fixture(scope="module")
def ferry():
    with started_cluster(3) as c:
        yield c


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


def in_seconds(seconds):
    """An RFC 3339 time (UTC, whole seconds) `seconds` from now."""
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def consumer_group(name, ns, group_id=None, reset=None, request_id="r1", not_after=None):
    spec = {}
    if group_id:
        spec["groupId"] = group_id
    if reset is not None:
        spec["resetOffsets"] = {"requestId": request_id, "notAfter": not_after or in_seconds(600), "topics": reset}
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


def active_member(ferry, topic, group, records, offset):
    """A member of `group` on a new two-partition topic holding `records`, with `offset` committed on both."""
    create_topic(ferry, topic, 2)
    produce(ferry, topic, records, 2)
    consumer = member(ferry, topic, group)
    consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(offset, "") for p in range(2)})
    return consumer


def test_a_reset_waits_for_an_empty_group(kube, ferry, ns):
    topic, group = "clicks-" + ns, "reader-" + ns
    consumer = active_member(ferry, topic, group, records=20, offset=5)
    try:
        kube.apply(consumer_group("reader", ns, group_id=group, reset=[{"topic": topic, "to": "earliest"}],
                                  request_id="first"))
        refused = wait_condition(kube, "reader", ns, "OffsetsReset", "False", "GroupActive")
        assert "1 members" in refused["message"] and "waits for its consumers" in refused["message"], refused
        assert "resetOffsets" not in status(kube, "reader", ns), "a waiting request is not recorded yet"
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

    assert status(kube, "reader", ns)["resetOffsets"]["requestId"] == "first"
    kube.apply(consumer_group("reader", ns, group_id=group, reset=[{"topic": topic, "to": "latest"}],
                              request_id="second"))
    wait_status(kube, "reader", ns, lambda s: s.get("resetOffsets", {}).get("requestId") == "second", "the second reset")
    assert status(kube, "reader", ns)["resetOffsets"]["outcome"] == "Applied"
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

    kube.apply(consumer_group("batch", ns, group_id=group, request_id="first", reset=[
        {"topic": timed, "to": "timestamp", "timestamp": rfc3339(base + 5500)},
        {"topic": other, "to": "offsets", "offsets": [{"partition": 1, "offset": 7}]}]))
    wait_condition(kube, "batch", ns, "OffsetsReset", "True", "OffsetsReset")
    assert committed(ferry, group) == {(timed, 0): 6, (other, 1): 7}, "the first record at or after the time"

    kube.apply(consumer_group("batch", ns, group_id=group, request_id="second", reset=[
        {"topic": timed, "to": "timestamp", "timestamp": rfc3339(base + 60_000)}]))
    wait_status(kube, "batch", ns, lambda s: s.get("resetOffsets", {}).get("requestId") == "second", "the second reset")
    assert committed(ferry, group)[(timed, 0)] == 10, "after the last record: the log end"


def test_bad_requests_are_refused_with_a_reason(kube, ferry, ns):
    kube.apply(consumer_group("ghost", ns, reset=[{"topic": "no-such-topic", "to": "earliest"}]))
    refused = wait_condition(kube, "ghost", ns, "OffsetsReset", "False", "InvalidReset")
    assert "request r1: topic no-such-topic does not exist" in refused["message"], refused
    s = wait_status(kube, "ghost", ns, lambda s: s if s.get("state") else None, "the group's state")
    assert s["state"] == "Dead" and s["members"] == 0, s
    assert (s["resetOffsets"]["requestId"], s["resetOffsets"]["outcome"]) == ("r1", "Invalid"), s
    assert "does not exist" in condition(kube, "ghost", ns, "Ready")["message"]

    # A reset is a request for now: notAfter at most 24 h ahead, and one already past is never applied.
    kube.apply(consumer_group("later", ns, reset=[{"topic": "t", "to": "earliest"}], not_after=in_seconds(48 * 3600)))
    far = wait_condition(kube, "later", ns, "OffsetsReset", "False", "InvalidReset")
    assert "more than 24 h ahead" in far["message"], far
    kube.apply(consumer_group("late", ns, reset=[{"topic": "t", "to": "earliest"}], request_id="2020-01-01",
                              not_after="2020-01-01T00:00:00Z"))
    late = wait_condition(kube, "late", ns, "OffsetsReset", "False", "ResetExpired")
    assert "request 2020-01-01 expired at 2020-01-01T00:00:00Z" in late["message"], late
    assert status(kube, "late", ns)["resetOffsets"]["outcome"] == "Expired"

    # What the schema can check, the API server refuses.
    bad = kube.apply(consumer_group("bad", ns, reset=[{"topic": "t", "to": "timestamp"}]), check=False)
    assert bad.returncode != 0 and "to=timestamp needs timestamp" in bad.stderr, bad.stderr
    for missing in ("requestId", "notAfter"):
        unnamed = consumer_group("unnamed", ns, reset=[{"topic": "t", "to": "earliest"}])
        del unnamed["spec"]["resetOffsets"][missing]
        bad = kube.apply(unnamed, check=False)
        assert bad.returncode != 0 and f"spec.resetOffsets.{missing}: Required value" in bad.stderr, bad.stderr
    bad = kube.apply(consumer_group("zoned", ns, reset=[{"topic": "t", "to": "earliest"}],
                                    not_after="2026-12-01T10:00:00+01:00"), check=False)
    assert bad.returncode != 0 and "spec.resetOffsets.notAfter" in bad.stderr, bad.stderr
    # A request is applied at most once: changing it needs a new requestId.
    changed = kube.kubectl("patch", "fcg", "ghost", "-n", ns, "--type", "merge", "-p",
                           json.dumps({"spec": {"resetOffsets": {"topics": [{"topic": "t", "to": "latest"}]}}}),
                           check=False)
    assert changed.returncode != 0 and "a changed reset needs a new requestId" in changed.stderr, changed.stderr
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


def test_a_recreated_resource_does_not_apply_its_reset_again(kube, ferry, ns):
    topic, group = "replay-" + ns, "restored-" + ns
    consumer = active_member(ferry, topic, group, records=20, offset=5)
    consumer.close()
    manifest = consumer_group("restored", ns, group_id=group, reset=[{"topic": topic, "to": "earliest"}],
                              request_id="INC-1234")
    kube.apply(manifest)
    wait_condition(kube, "restored", ns, "OffsetsReset", "True", "OffsetsReset")
    assert committed(ferry, group) == {(topic, 0): 0, (topic, 1): 0}

    # The group moves on (a consumer commits partition 0 and leaves), then the resource is deleted and created
    # again from the same manifest, as a backup restore or a GitOps replace does: no status, generation 1, the
    # group empty, notAfter not yet passed.
    consumer = member(ferry, topic, group)
    consumer.commit({TopicPartition(topic, 0): OffsetAndMetadata(12, "")})
    consumer.close()
    first = kube.get("consumergroup", "restored", ns)["metadata"]["uid"]
    kube.kubectl("delete", "fcg", "restored", "-n", ns)
    kube.apply(manifest)
    assert kube.get("consumergroup", "restored", ns)["metadata"]["uid"] != first
    again = wait_condition(kube, "restored", ns, "OffsetsReset", "True", "AlreadyApplied")
    assert "request INC-1234 was applied before" in again["message"], again
    record = status(kube, "restored", ns)["resetOffsets"]
    assert (record["requestId"], record["outcome"]) == ("INC-1234", "AlreadyApplied"), record
    assert committed(ferry, group) == {(topic, 0): 12, (topic, 1): 0}, "not rewound again"
    wait_status(kube, "restored", ns, lambda s: s.get("state") == "Empty", "the group observed")
    assert committed(ferry, group) == {(topic, 0): 12, (topic, 1): 0}


def test_a_waiting_reset_expires_at_its_deadline(kube, ferry, ns):
    topic, group = "late-" + ns, "busy-" + ns
    consumer = active_member(ferry, topic, group, records=10, offset=4)
    try:
        kube.apply(consumer_group("busy", ns, group_id=group, reset=[{"topic": topic, "to": "earliest"}],
                                  request_id="late-1", not_after=in_seconds(10)))
        wait_condition(kube, "busy", ns, "OffsetsReset", "False", "GroupActive")
        # Looked at again when notAfter comes, whatever the status refresh interval.
        expired = wait_condition(kube, "busy", ns, "OffsetsReset", "False", "ResetExpired", timeout=10 + 15)
        assert "request late-1 expired" in expired["message"], expired
        assert "the group had members until then" in expired["message"], expired
    finally:
        consumer.close()
    # The group is empty now: a reset still waiting would be applied at this refresh.
    wait_status(kube, "busy", ns, lambda s: s.get("state") == "Empty" and s.get("members") == 0,
                "the emptied group's status", timeout=3 * STATUS_INTERVAL + 30)
    assert committed(ferry, group) == {(topic, 0): 4, (topic, 1): 4}, "an expired reset is never applied"
    record = status(kube, "busy", ns)["resetOffsets"]
    assert (record["requestId"], record["outcome"]) == ("late-1", "Expired"), record
    assert condition(kube, "busy", ns, "OffsetsReset")["reason"] == "ResetExpired"
    assert "ResetExpired" in [e["reason"] for e in kube.events(ns, "busy")]
