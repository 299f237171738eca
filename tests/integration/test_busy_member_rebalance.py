"""A second member joining a classic (eager) group whose first member is busy: not calling poll() for longer than
the issue's 10 s, with a rebalance callback that commits synchronously on revoke (librdkafka 2.0.2 through Debian's
confluent-kafka-python).

What Kafka does, and so what this test holds Ferry to:

- B's JoinGroup is parked (MEMBER_ID_REQUIRED first, then parked): the group is PreparingRebalance and the join
  phase ends only once every member rejoined, or after the rebalance timeout (the members' largest
  max.poll.interval.ms, 300 s by default; KIP-62). Kafka's GroupCoordinator.prepareRebalance / DelayedJoin
  (GroupMetadataManager.maybeCompleteJoinElseSchedule in Kafka 4).
- A's background thread keeps heartbeating; each heartbeat is answered REBALANCE_IN_PROGRESS and keeps A's session
  alive. librdkafka (eager protocol, rdkafka_cgrp.c rd_kafka_cgrp_revoke_all_rejoin) then pauses A's partitions and
  hands the revoke to the application's rebalance callback, which only the application's poll() serves; A sends
  its JoinGroup after the callback ran. confluent-kafka-python always installs a rebalance callback, so this holds
  even for a consumer subscribed without on_revoke.
- So B gets its partitions only once A polls again, right after A's commit on revoke. B getting any of them while A
  is busy would mean two owners of one partition, or A expelled with its uncommitted work (its commit on revoke
  would then fail): the expectation "B is assigned within 10 s while A is busy" is not Kafka's and not asserted.

Asserted: while A is busy, A stays a member, the group waits in PreparingRebalance and B holds nothing; once A
polls, its commit on revoke succeeds and B is assigned within 10 s; the two assignments are disjoint and cover every
partition; the committed offsets are A's positions, B reads on from them, and every record is read.
"""
import json
import threading
import time
import urllib.error
import urllib.request

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from conftest import started_cluster, wait_until

PARTITIONS = 6
RECORDS = 50  # per partition
BUSY_S = 12.0  # A does not poll this long after B subscribed: more than 10 s, several heartbeat intervals (3 s)
ASSIGNED_AFTER_RESUME_S = 10.0


@pytest.fixture(scope="module")
def busy_cluster():
    with started_cluster(3, overrides=["group.initial.rebalance.delay.ms=200"]) as c:
        yield c


def group_view(cluster, group):
    """The group as its coordinator's admin API shows it (/v1/groups/<id>), or None while no broker has it."""
    broker = 0
    for _ in range(cluster.brokers + 1):
        url = f"http://127.0.0.1:{cluster.base_port + 1000 + broker}/v1/groups/{group}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as e:
            body = json.loads(e.read() or b"null") or {}
            if e.code != 404 or body.get("coordinator", -1) < 0:
                return None
            broker = body["coordinator"]
    return None


class Member:
    """A confluent_kafka consumer of the group whose rebalance callback commits what it read, synchronously, on
    revoke. Everything it sees is recorded with monotonic timestamps; poll() is called only by its owner."""

    def __init__(self, bootstrap, topic, group, name):
        self.name = name
        self.topic = topic
        self.lock = threading.Lock()
        self.assigned = set()
        self.assignments = []  # (time, sorted partitions) after each callback
        self.positions = {}  # partition -> offset after the last record read
        self.read = {}  # partition -> offsets read
        self.first_read = {}  # partition -> first offset read after the last assignment
        self.revoke_commits = []  # (time, {partition: offset committed}) per revoke
        self.commit_errors = []
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "client.id": name,
                                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                                  "partition.assignment.strategy": "range"})
        self.consumer.subscribe([topic], on_assign=self._on_assign, on_revoke=self._on_revoke)

    def _on_assign(self, consumer, partitions):
        with self.lock:
            self.assigned = {p.partition for p in partitions}
            for p in self.assigned:
                self.first_read.pop(p, None)
            self.assignments.append((time.monotonic(), sorted(self.assigned)))

    def _on_revoke(self, consumer, partitions):
        with self.lock:
            offsets = {p.partition: self.positions[p.partition] for p in partitions if p.partition in self.positions}
        committed = {}
        if offsets:
            try:
                result = consumer.commit(offsets=[TopicPartition(self.topic, p, o) for p, o in offsets.items()],
                                         asynchronous=False)
                for tp in result or []:
                    if tp.error:
                        self.commit_errors.append(f"partition {tp.partition}: {tp.error}")
                    else:
                        committed[tp.partition] = tp.offset
            except KafkaException as e:
                self.commit_errors.append(str(e))
        with self.lock:
            self.revoke_commits.append((time.monotonic(), committed))
            self.assigned = set()
            self.assignments.append((time.monotonic(), []))

    def poll(self, timeout=0.1):
        message = self.consumer.poll(timeout)
        if message is None or message.error():
            return
        with self.lock:
            p, o = message.partition(), message.offset()
            self.read.setdefault(p, set()).add(o)
            self.first_read.setdefault(p, o)
            self.positions[p] = o + 1

    def snapshot(self):
        with self.lock:
            return set(self.assigned)

    def offsets_read(self, partition):
        with self.lock:
            return set(self.read.get(partition, ()))

    def records_read(self):
        with self.lock:
            return sum(len(offsets) for offsets in self.read.values())


def fill_topic(cluster, topic):
    """The topic, with RECORDS records in each partition (the clients are gone when this returns)."""
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    for future in admin.create_topics([NewTopic(topic, PARTITIONS, 3)], operation_timeout=30).values():
        future.result()
    # Small batches, so that A can stop part way through a partition.
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "batch.num.messages": 5})
    for p in range(PARTITIONS):
        for i in range(RECORDS):
            producer.produce(topic, value=f"{p}-{i}".encode(), partition=p)
    assert producer.flush(60) == 0


def test_second_member_waits_for_the_busy_member_to_revoke_then_both_share_the_partitions(busy_cluster):
    c = busy_cluster
    topic = group = "busy-member"
    fill_topic(c, topic)

    everything = set(range(PARTITIONS))
    a = Member(c.bootstrap, topic, group, "A")
    b = None
    stop_b = threading.Event()
    b_thread = None
    try:
        # A alone: every partition, and some records read (not all: B must go on from A's commits).
        deadline = time.monotonic() + 60
        while not (a.snapshot() == everything and a.records_read() >= RECORDS + RECORDS // 2):
            assert time.monotonic() < deadline, f"A alone: assigned {a.snapshot()}, read {a.records_read()} records"
            a.poll()
        a_view = wait_until(lambda: (v := group_view(c, group)) and v["state"] == "Stable" and v, timeout=30,
                            what="the group Stable with A")
        (a_member,) = [m["member_id"] for m in a_view["members"]]
        with a.lock:
            positions_before_busy = dict(a.positions)
        print(f"A read up to {positions_before_busy} before it went busy")

        # A is busy from here: no poll. B subscribes and polls all along in its own thread.
        b = Member(c.bootstrap, topic, group, "B")

        def run_b():
            while not stop_b.is_set():
                b.poll()

        b_thread = threading.Thread(target=run_b, daemon=True)
        busy_since = time.monotonic()
        b_thread.start()
        view = wait_until(lambda: (v := group_view(c, group)) and v["state"] == "PreparingRebalance" and
                          len(v["members"]) == 2 and v, timeout=30, what="B's JoinGroup parked in PreparingRebalance")
        assert a_member in {m["member_id"] for m in view["members"]}, view

        # The busy period itself (legitimately a pause: A's application does not poll).
        time.sleep(max(0.0, BUSY_S - (time.monotonic() - busy_since)))
        view = group_view(c, group)
        assert view is not None, "the group's coordinator does not answer"
        print(f"after {time.monotonic() - busy_since:.1f} s of A busy: group {view['state']}, "
              f"{len(view['members'])} members; B's assignments {b.assignments}")
        assert a_member in {m["member_id"] for m in view["members"]}, \
            f"A was dropped from the group while its heartbeats kept its session alive: {view}"
        assert view["state"] == "PreparingRebalance", view
        assert all(not parts for _, parts in b.assignments), \
            f"B was assigned partitions A still holds (A has not revoked them): {b.assignments}"
        assert a.snapshot() == everything and not a.revoke_commits

        # A polls again: the revoke callback commits, A rejoins, and the rebalance completes for both.
        resumed = time.monotonic()
        deadline = resumed + ASSIGNED_AFTER_RESUME_S
        while not b.snapshot():
            assert time.monotonic() < deadline, \
                f"B not assigned {ASSIGNED_AFTER_RESUME_S} s after A polled again: A {a.assignments}, B {b.assignments}"
            a.poll()
        b_assigned_after = time.monotonic() - resumed
        print(f"B assigned {b_assigned_after:.3f} s after A polled again ({time.monotonic() - busy_since:.1f} s after "
              f"B subscribed); A's commit on revoke: {a.revoke_commits}")

        assert not a.commit_errors, f"A's commit on revoke failed: {a.commit_errors}"
        assert len(a.revoke_commits) == 1, a.revoke_commits
        revoke_time, committed = a.revoke_commits[0]
        assert revoke_time >= resumed, "A revoked before it polled again"
        assert committed == positions_before_busy, (committed, positions_before_busy)

        while not a.snapshot():
            assert time.monotonic() < deadline + 10, f"A not assigned again: {a.assignments}"
            a.poll()
        a_parts, b_parts = a.snapshot(), b.snapshot()
        assert not a_parts & b_parts, f"both assigned {a_parts & b_parts}"
        assert a_parts | b_parts == everything, f"A {sorted(a_parts)} + B {sorted(b_parts)} leave some out"

        # No committed offset lost: the group's offsets are A's commits, and each member reads on from them.
        checker = Consumer({"bootstrap.servers": c.bootstrap, "group.id": group, "enable.auto.commit": False})
        try:
            stored = checker.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=30)
        finally:
            checker.close()
        stored = {tp.partition: tp.offset for tp in stored if tp.offset >= 0}
        assert stored == committed, f"committed offsets {stored}, A committed {committed} on revoke"

        def all_read():
            a.poll()
            return all(a.offsets_read(p) | b.offsets_read(p) == set(range(RECORDS)) for p in range(PARTITIONS))

        wait_until(all_read, timeout=60, interval=0, what="every record read by A or B")
        for member, parts in ((a, a_parts), (b, b_parts)):
            for p in parts:
                start = committed.get(p, 0)
                if start < RECORDS:
                    assert member.first_read.get(p) == start, \
                        f"{member.name} read partition {p} from {member.first_read.get(p)}, committed {start}"
    finally:
        stop_b.set()
        if b_thread is not None:
            b_thread.join(timeout=30)
        a.consumer.close()
        if b is not None:
            b.consumer.close()
