"""Partition reassignment with Kafka's own kafka-reassign-partitions tool (AlterPartitionReassignments and
ListPartitionReassignments): a topic moves from brokers {0,1,2} to {1,2,3} while an idempotent producer writes
to it, and a topic's replication factor goes up and down. The new replicas catch up from the leaders, join the
ISR, and the controller then drops the old ones, whose brokers delete their logs. Four brokers, real ZooKeeper,
kcat producing and consuming.
"""
import json
import os
import subprocess
import tempfile
import threading
import time

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource

from conftest import kafka_tool, kcat, started_cluster, wait_until

REASSIGN_TOOL = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"


@pytest.fixture(scope="module")
def four():
    with started_cluster(4) as c:
        yield c


def create_topic(cluster, topic, assignment):
    """A topic written to ZooKeeper as a tool would: {partition: [replicas]}. Returns once every partition is
    led."""
    zk = cluster.zookeeper()
    try:
        zk.create(f"/brokers/topics/{topic}",
                  json.dumps({"version": 1, "partitions": {str(p): r for p, r in assignment.items()}}).encode())
    finally:
        zk.stop()
    for p in assignment:
        cluster.leader(topic, p)


def partitions(cluster, topic):
    """{partition: (replicas, sorted ISR)} through a running broker's admin API."""
    broker = next(b for b in range(cluster.brokers) if cluster.pid(b) is not None)
    status, body = cluster.admin(broker, f"/v1/topics/{topic}")
    assert status == 200, body
    return {p["partition"]: (p["replicas"], sorted(p["isr"])) for p in body["partitions"]}


def reassign(cluster, topic, targets, action="--execute", *extra):
    """Runs kafka-reassign-partitions with {partition: [replicas]} and returns its output."""
    plan = {"version": 1, "partitions": [{"topic": topic, "partition": p, "replicas": r} for p, r in targets.items()]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(plan, f)
    try:
        run = kafka_tool(REASSIGN_TOOL, "--bootstrap-server", cluster.bootstrap, "--reassignment-json-file", f.name,
                         action, *extra)
    finally:
        os.unlink(f.name)
    assert run.returncode == 0, f"{action} failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run.stdout


def wait_moved(cluster, topic, targets):
    """Waits until the tool reports every move completed and the brokers agree: the targets are the replicas,
    all in sync."""
    def done():
        out = reassign(cluster, topic, targets, "--verify")
        return all(f"Reassignment of partition {topic}-{p} is completed" in out for p in targets)
    wait_until(done, timeout=120, interval=0.5, what=f"the reassignment of {topic} to complete")
    expected = {p: (r, sorted(r)) for p, r in targets.items()}
    wait_until(lambda: partitions(cluster, topic) == expected, timeout=30,
               what=f"every broker's view of {topic} to be {expected}")


def local_state(cluster, broker, topic, partition):
    status, body = cluster.admin(broker, f"/v1/topics/{topic}")
    assert status == 200, body
    for p in body["partitions"]:
        if p["partition"] == partition and "local" in p:
            return p["local"]["log_end_offset"], p["local"]["high_watermark"]
    return None


def assert_replicas_identical(cluster, topic, partition, brokers):
    def same():
        states = [local_state(cluster, b, topic, partition) for b in brokers]
        return states[0] is not None and states[0][0] > 0 and all(s == states[0] for s in states) and states
    wait_until(same, timeout=60, what=f"the replicas of {topic}/{partition} on {brokers} to reach the leader")
    reference = cluster.segment_bytes(brokers[0], topic, partition)
    for b in brokers[1:]:
        assert cluster.segment_bytes(b, topic, partition) == reference, f"broker {b}, {topic}/{partition}"


def consume(cluster, topic, partition):
    out = kcat("-b", cluster.bootstrap, "-C", "-t", topic, "-p", str(partition), "-o", "beginning", "-e",
               "-q").stdout
    return out.splitlines()


class LoadProducer:
    """An idempotent kcat producer writing numbered records round-robin over a topic's partitions in the
    background, acks=all, until stopped."""

    def __init__(self, cluster, topic):
        self.written = []
        self.stopping = False
        self.process = subprocess.Popen(
            ["kcat", "-b", cluster.bootstrap, "-P", "-t", topic, "-X", "enable.idempotence=true", "-X",
             "linger.ms=5"], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        self.thread = threading.Thread(target=self._write)
        self.thread.start()

    def _write(self):
        while not self.stopping:
            line = b"record-%d\n" % len(self.written)
            self.process.stdin.write(line)
            self.written.append(line.strip())
            if len(self.written) % 100 == 0:
                self.process.stdin.flush()
                time.sleep(0.01)  # up to 10,000 records a second
        self.process.stdin.close()

    def stop(self):
        self.stopping = True
        self.thread.join(timeout=60)
        errors = self.process.stderr.read().decode(errors="replace")
        self.process.wait(timeout=120)
        assert self.process.returncode == 0, errors
        assert "Delivery failed" not in errors, errors
        return self.written


def test_a_topic_moves_to_other_brokers_under_load(four):
    c = four
    topic = "moving"
    create_topic(c, topic, {p: [(p + i) % 3 for i in range(3)] for p in range(3)})
    for p in range(3):
        kcat("-b", c.bootstrap, "-P", "-t", topic, "-p", str(p), "-X", "topic.request.required.acks=-1",
             input=b"warm-up\n")
    wait_until(lambda: all(isr == [0, 1, 2] for _, isr in partitions(c, topic).values()), timeout=60,
               what="every replica in sync")

    producer = LoadProducer(c, topic)
    wait_until(lambda: len(producer.written) >= 3000, timeout=60, what="the producer under way")
    targets = {p: [1 + (p + i) % 3 for i in range(3)] for p in range(3)}  # {1,2,3}, broker p+1 preferred
    out = reassign(c, topic, targets)
    assert f"Successfully started partition reassignments for {topic}-0,{topic}-1,{topic}-2" in out, out
    # The move is in progress or done; either way the tool lists it truthfully.
    wait_moved(c, topic, targets)
    written = producer.stop()

    # Broker 0 holds no replica any more and deleted its logs; broker 3 holds the leader's bytes.
    wait_until(lambda: not any(os.path.exists(c.partition_dir(0, topic, p)) for p in range(3)), timeout=30,
               what="broker 0 to delete its replicas")
    stored = []
    for p in range(3):
        assert_replicas_identical(c, topic, p, [1, 2, 3])
        stored += [r for r in consume(c, topic, p) if r != b"warm-up"]
    assert len(stored) == len(set(stored)), "records stored twice"
    assert sorted(stored) == sorted(written), f"{len(set(written) - set(stored))} acknowledged records missing"

    # Nothing is left in progress.
    listed = kafka_tool(REASSIGN_TOOL, "--bootstrap-server", c.bootstrap, "--list")
    assert listed.returncode == 0, listed.stderr
    assert "No partition reassignments found" in listed.stdout, listed.stdout


def test_the_replication_factor_goes_up_and_down(four):
    c = four
    topic = "grows"
    create_topic(c, topic, {0: [2]})
    lines = b"".join(b"record-%d\n" % i for i in range(5000))
    kcat("-b", c.bootstrap, "-P", "-t", topic, "-p", "0", "-X", "topic.request.required.acks=-1", input=lines)

    wider = {0: [2, 0, 3]}
    reassign(c, topic, wider)
    wait_moved(c, topic, wider)
    assert_replicas_identical(c, topic, 0, [2, 0, 3])
    # acks=all now waits for three replicas, and gets them.
    kcat("-b", c.bootstrap, "-P", "-t", topic, "-p", "0", "-X", "topic.request.required.acks=-1",
         input=b"after-growing\n")

    narrower = {0: [3]}
    reassign(c, topic, narrower)
    wait_moved(c, topic, narrower)
    assert c.leader(topic, 0) == 3
    wait_until(lambda: not any(os.path.exists(c.partition_dir(b, topic, 0)) for b in (0, 2)), timeout=30,
               what="brokers 0 and 2 to delete their replicas")
    records = consume(c, topic, 0)
    assert records == [b"record-%d" % i for i in range(5000)] + [b"after-growing"]


def test_bad_reassignments_are_refused_with_the_reason(four):
    c = four
    create_topic(c, "refused", {0: [0, 1]})
    plan = {"version": 1, "partitions": [{"topic": "refused", "partition": 0, "replicas": [0, 7]}]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(plan, f)
    try:
        run = kafka_tool(REASSIGN_TOOL, "--bootstrap-server", c.bootstrap, "--reassignment-json-file", f.name,
                         "--execute")
    finally:
        os.unlink(f.name)
    # The tool checks the broker ids against the cluster's before it asks (the broker's own checks, which other
    # clients meet, are in handlers_test); nothing moves.
    assert run.returncode != 0
    assert "7" in run.stdout + run.stderr, run.stdout + run.stderr
    assert partitions(c, "refused")[0][0] == [0, 1]


def test_a_reassignment_in_progress_can_be_cancelled(four):
    c = four
    topic = "cancelled"
    create_topic(c, topic, {0: [0, 1]})
    kcat("-b", c.bootstrap, "-P", "-t", topic, "-p", "0", "-X", "topic.request.required.acks=-1",
         input=b"".join(b"record-%d\n" % i for i in range(1000)))
    wait_until(lambda: partitions(c, topic) == {0: ([0, 1], [0, 1])}, timeout=60, what="both replicas in sync")
    # A move that cannot finish, written to ZooKeeper as the operator would (docs/zookeeper-layout.md rule 5):
    # broker 9 does not exist, so it never joins the ISR.
    zk = c.zookeeper()
    try:
        path = f"/brokers/topics/{topic}"
        data, stat = zk.get(path)
        node = json.loads(data)
        node.update({"partitions": {"0": [0, 1, 9]}, "adding_replicas": {"0": [9]}, "removing_replicas": {}})
        zk.set(path, json.dumps(node).encode(), version=stat.version)
    finally:
        zk.stop()
    wait_until(lambda: partitions(c, topic) == {0: ([0, 1, 9], [0, 1])}, timeout=30, what="the move under way")
    listed = kafka_tool(REASSIGN_TOOL, "--bootstrap-server", c.bootstrap, "--list")
    assert listed.returncode == 0, listed.stderr
    assert f"{topic}-0: replicas: 0,1,9. adding: 9.\n" in listed.stdout, listed.stdout

    # The tool then clears throttles on every broker the plan names, which broker 9 cannot answer.
    out = reassign(c, topic, {0: [0, 1, 9]}, "--cancel", "--preserve-throttles")
    assert f"Successfully cancelled partition reassignment for: {topic}-0" in out, out
    wait_until(lambda: partitions(c, topic) == {0: ([0, 1], [0, 1])}, timeout=30, what="the original assignment back")
    assert len(consume(c, topic, 0)) == 1000


def broker_configs(cluster, broker, names):
    """{name: (value, source)} of `names` as DescribeConfigs reports them for `broker`."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    resource = ConfigResource("broker", str(broker))
    described = admin.describe_configs([resource])[resource].result(30)
    return {n: (described[n].value, ConfigSource(described[n].source).value) for n in names if n in described}


THROTTLE_RATES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate")
UNLIMITED = str(2**63 - 1)  # the rates' default, as Kafka reports it


def test_a_throttled_move_replicates_no_faster_than_its_rate(four):
    c = four
    topic = "throttled"
    create_topic(c, topic, {0: [0]})
    size = 24_000_000
    record = b"x" * 999 + b"\n"
    kcat("-b", c.bootstrap, "-P", "-t", topic, "-p", "0", "-X", "topic.request.required.acks=-1",
         input=record * (size // len(record)))
    rate = 1_000_000
    def throttle_counters():
        """{(broker, side, what): value}, for the leader (0) and the new follower (1)."""
        return {(b, side, what): c.metric(b, f"ferry_replication_throttled_{what}_total", side=side) or 0
                for b, side in ((0, "leader"), (1, "follower")) for what in ("bytes", "skips")}
    before = throttle_counters()

    started = time.monotonic()
    out = reassign(c, topic, {0: [0, 1]}, "--execute", "--throttle", str(rate))
    assert f"The inter-broker throttle limit was set to {rate} B/s" in out, out
    # The tool set the rates as dynamic broker configs and named the replicas to throttle in topic configs
    # (docs/zookeeper-layout.md, /config/brokers).
    for b in (0, 1):
        assert broker_configs(c, b, THROTTLE_RATES) == {n: (str(rate), ConfigSource.DYNAMIC_BROKER_CONFIG.value)
                                                         for n in THROTTLE_RATES}, b
    zk = c.zookeeper()
    try:
        topic_config = json.loads(zk.get(f"/config/topics/{topic}")[0])["config"]
        assert json.loads(zk.get("/config/brokers/1")[0])["config"]["follower.replication.throttled.rate"] == str(rate)
    finally:
        zk.stop()
    assert topic_config["leader.replication.throttled.replicas"] == "0:0", topic_config
    assert topic_config["follower.replication.throttled.replicas"] == "0:1", topic_config

    wait_moved(c, topic, {0: [0, 1]})
    elapsed = time.monotonic() - started
    # Kafka's quota measures over 11 one-second windows and lets about ten seconds' worth through at first; the
    # rest goes no faster than the rate, give or take the fetch (up to replica.fetch.max.bytes, 1 MiB) that each
    # side admits before it counts the bytes. Unthrottled, this copy takes a few seconds.
    fetch_max = 1 << 20
    assert elapsed >= (size - 11 * rate - 2 * fetch_max) / rate, f"{size} bytes moved in {elapsed:.1f} s at {rate} B/s"
    # Both sides counted the copy against their rate, and at least one of them held it back.
    after = throttle_counters()
    assert after[(0, "leader", "bytes")] - before[(0, "leader", "bytes")] >= size * 0.9, after
    assert after[(1, "follower", "bytes")] - before[(1, "follower", "bytes")] >= size * 0.9, after
    assert after[(0, "leader", "skips")] + after[(1, "follower", "skips")] > \
        before[(0, "leader", "skips")] + before[(1, "follower", "skips")], after
    assert_replicas_identical(c, topic, 0, [0, 1])

    # --verify, once the move is done, removed the throttles again.
    for b in (0, 1):
        assert broker_configs(c, b, THROTTLE_RATES) == {n: (UNLIMITED, ConfigSource.DEFAULT_CONFIG.value)
                                                         for n in THROTTLE_RATES}, b
    zk = c.zookeeper()
    try:
        topic_config = json.loads(zk.get(f"/config/topics/{topic}")[0])["config"]
    finally:
        zk.stop()
    assert not any(name.endswith(".replication.throttled.replicas") for name in topic_config), topic_config
