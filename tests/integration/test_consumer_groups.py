"""Consumer groups against a three-broker cluster, with real clients: kafka-python 2.0.2 group consumers share
a six-partition topic and hand partitions over as members come and go; kcat's balanced consumer (librdkafka
2.0.2) reads through a group and resumes from its commits; committed offsets survive a full restart and the
SIGKILL of the coordinator's broker; the internal topic __consumer_offsets is created by the broker, never by
a client's produce or CreateTopics.

An at-least-once checker runs across the membership changes: every produced record is read at least once, and
nothing is read that was not produced.
"""
import subprocess
import sys
import threading
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import InvalidTopicError, TopicAuthorizationFailedError

from conftest import kcat, offsets_partition, started_cluster, wait_until

PARTITIONS = 6
OFFSETS_PARTITIONS = 10


@pytest.fixture(scope="module")
def groups():
    with started_cluster(3, overrides=[f"num.partitions={PARTITIONS}", "group.initial.rebalance.delay.ms=200",
                                       f"offsets.topic.num.partitions={OFFSETS_PARTITIONS}"]) as c:
        yield c


def produce(bootstrap, topic, count, tag):
    """Sends `count` keyed records; returns {(partition, offset): value} from the acknowledgements."""
    # Retries (kafka-python's default is none): a leader may not host a partition yet in the moment after the
    # topic's creation returns, and answers a retriable UNKNOWN_TOPIC_OR_PARTITION, as Kafka's would.
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5, retries=5)
    try:
        futures = [(producer.send(topic, key=b"k%d" % i, value=b"%s-%d" % (tag.encode(), i)), i) for i in range(count)]
        producer.flush(timeout=120)
        return {(m.partition, m.offset): b"%s-%d" % (tag.encode(), i)
                for m, i in ((f.get(timeout=60), i) for f, i in futures)}
    finally:
        producer.close(timeout=10)


class Member(threading.Thread):
    """A kafka-python group consumer polling in its own thread, recording what it read and its assignment."""

    def __init__(self, bootstrap, group, topic, seen, lock, **config):
        super().__init__(daemon=True)
        self.consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                                      enable_auto_commit=True, auto_commit_interval_ms=200, session_timeout_ms=6000,
                                      heartbeat_interval_ms=500, max_poll_records=200, **config)
        self.seen = seen
        self.lock = lock
        self.assigned = set()
        self.stopping = threading.Event()
        self.error = None

    def run(self):
        try:
            while not self.stopping.is_set():
                batches = self.consumer.poll(timeout_ms=100)
                with self.lock:
                    for tp, records in batches.items():
                        for r in records:
                            self.seen.setdefault((tp.partition, r.offset), r.value)
                    self.assigned = {tp.partition for tp in self.consumer.assignment()}
            self.consumer.close(autocommit=True)
        except Exception as e:  # reported by the test, not lost in the thread
            self.error = e

    def leave(self):
        self.stopping.set()
        self.join(timeout=60)
        assert not self.is_alive() and self.error is None, self.error


def balanced(members, lock):
    """True when the members' assignments are disjoint, none is empty, and together cover every partition."""
    with lock:
        sets = [m.assigned for m in members]
    union = set().union(*sets)
    return all(sets) and sum(len(s) for s in sets) == len(union) and union == set(range(PARTITIONS))


def test_kafka_python_members_share_the_partitions_and_hand_them_over(groups):
    topic, group = "kp-shared", "kp-group"
    admin = KafkaAdminClient(bootstrap_servers=groups.bootstrap)
    admin.create_topics([NewTopic(topic, PARTITIONS, 3)])
    admin.close()
    produced = produce(groups.bootstrap, topic, 3000, "first")
    seen, lock = {}, threading.Lock()
    members = [Member(groups.bootstrap, group, topic, seen, lock) for _ in range(3)]
    for m in members:
        m.start()
    try:
        wait_until(lambda: balanced(members, lock), timeout=90, what="three members to split six partitions")
        fourth = Member(groups.bootstrap, group, topic, seen, lock)
        fourth.start()
        members.append(fourth)
        wait_until(lambda: balanced(members, lock), timeout=90, what="the fourth member to get partitions")
        produced.update(produce(groups.bootstrap, topic, 3000, "second"))
        members.pop(1).leave()
        wait_until(lambda: balanced(members, lock), timeout=90, what="the leaver's partitions to move")
        produced.update(produce(groups.bootstrap, topic, 3000, "third"))
        wait_until(lambda: len(seen) >= len(produced), timeout=120, what="every record to be read")
    finally:
        for m in members:
            m.leave()
    with lock:
        unknown = {k: v for k, v in seen.items() if produced.get(k) != v}
        missing = set(produced) - set(seen)
    assert not unknown, f"read records nobody produced: {list(unknown.items())[:5]}"
    assert not missing, f"{len(missing)} produced records never read: {sorted(missing)[:5]}"


# A group member in a process of its own, so the test can SIGKILL it: it prints its assignment whenever it changes.
MEMBER_PROCESS = """
import sys
from kafka import KafkaConsumer
consumer = KafkaConsumer(sys.argv[3], bootstrap_servers=sys.argv[1], group_id=sys.argv[2], session_timeout_ms=6000,
                         heartbeat_interval_ms=500)
last = None
while True:
    consumer.poll(timeout_ms=100)
    now = sorted(tp.partition for tp in consumer.assignment())
    if now != last:
        print(" ".join(map(str, now)) or "-", flush=True)
        last = now
"""


def test_a_killed_member_loses_its_partitions_after_its_session_timeout(groups):
    topic, group = "kp-killed", "kp-killed-group"
    admin = KafkaAdminClient(bootstrap_servers=groups.bootstrap)
    admin.create_topics([NewTopic(topic, PARTITIONS, 3)])
    admin.close()
    seen, lock = {}, threading.Lock()
    survivor = Member(groups.bootstrap, group, topic, seen, lock)
    survivor.start()
    victim = subprocess.Popen([sys.executable, "-c", MEMBER_PROCESS, groups.bootstrap, group, topic],
                              stdout=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: len(survivor.assigned) == PARTITIONS // 2, timeout=90,
                   what="the two members to split the partitions")
        victim.kill()  # SIGKILL: no LeaveGroup, only the session timeout tells the coordinator
        victim.wait(timeout=30)
        killed_at = time.monotonic()
        wait_until(lambda: survivor.assigned == set(range(PARTITIONS)), timeout=60,
                   what="the survivor to take every partition")
        assert time.monotonic() - killed_at >= 3, "the partitions moved before the victim's session could expire"
    finally:
        if victim.poll() is None:
            victim.kill()
            victim.wait(timeout=30)
        survivor.leave()


def committed(bootstrap, group, topic):
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        return {p: consumer.committed(TopicPartition(topic, p)) for p in range(PARTITIONS)}
    finally:
        consumer.close(autocommit=False)


def commit_everything(bootstrap, group, topic):
    """Reads the topic to its end in the group and commits; returns the committed offsets."""
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False)
    try:
        ends = None
        read = 0
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            read += sum(len(r) for r in consumer.poll(timeout_ms=200).values())
            if consumer.assignment():
                ends = ends or consumer.end_offsets(list(consumer.assignment()))
                if all(consumer.position(tp) >= end for tp, end in ends.items()):
                    break
        consumer.commit()
        return {tp.partition: consumer.position(tp) for tp in consumer.assignment()}
    finally:
        consumer.close(autocommit=False)


def offsets_topic_in_sync(cluster):
    """Every __consumer_offsets partition has all three replicas in its ISR, as a running broker sees it."""
    broker = next(b for b in range(cluster.brokers) if cluster.pid(b) is not None)
    status, body = cluster.admin(broker, "/v1/topics/__consumer_offsets")
    return status == 200 and all(sorted(p["isr"]) == [0, 1, 2] for p in body["partitions"])


def test_committed_offsets_survive_a_restart_and_the_coordinators_death(groups):
    topic, group = "kp-commits", "kp-commits-group"
    admin = KafkaAdminClient(bootstrap_servers=groups.bootstrap)
    admin.create_topics([NewTopic(topic, PARTITIONS, 3)])
    admin.close()
    produce(groups.bootstrap, topic, 600, "c")
    positions = commit_everything(groups.bootstrap, group, topic)
    assert sum(positions.values()) == 600
    assert committed(groups.bootstrap, group, topic) == positions

    for b in range(3):
        groups.stop(b)
    for b in range(3):
        groups.start(b)
    assert committed(groups.bootstrap, group, topic) == positions

    # After the restart the last broker stopped is the only in-sync replica: the others must catch up before
    # losing the coordinator leaves its partition a leader.
    wait_until(lambda: offsets_topic_in_sync(groups), timeout=90, what="__consumer_offsets back in sync")
    coordinator = groups.leader("__consumer_offsets", offsets_partition(group, OFFSETS_PARTITIONS))
    groups.kill(coordinator)
    try:
        assert committed(groups.bootstrap, group, topic) == positions
    finally:
        groups.start(coordinator)


def test_kcat_balanced_consumer_resumes_from_its_commits(groups):
    topic, group = "kcat-group-topic", "kcat-group"
    admin = KafkaAdminClient(bootstrap_servers=groups.bootstrap)
    admin.create_topics([NewTopic(topic, PARTITIONS, 3)])
    admin.close()
    first = produce(groups.bootstrap, topic, 500, "a")

    def read(count):
        out = kcat("-b", groups.bootstrap, "-G", group, "-X", "auto.offset.reset=earliest", "-X",
                   "enable.auto.commit=true", "-X", "auto.commit.interval.ms=100", "-c", str(count), "-f", "%s\n",
                   topic, timeout=120)
        return out.stdout.decode().split()

    assert sorted(read(500)) == sorted(v.decode() for v in first.values())
    second = produce(groups.bootstrap, topic, 200, "b")
    assert sorted(read(200)) == sorted(v.decode() for v in second.values()), "a new member resumes after the commits"


def test_clients_cannot_create_or_write_the_offsets_topic(groups):
    # The coordinators created it (the tests above used groups) with the broker's settings.
    meta_consumer = KafkaConsumer(bootstrap_servers=groups.bootstrap)
    try:
        assert len(meta_consumer.partitions_for_topic("__consumer_offsets")) == OFFSETS_PARTITIONS
    finally:
        meta_consumer.close()
    producer = KafkaProducer(bootstrap_servers=groups.bootstrap, retries=0)
    try:
        with pytest.raises((InvalidTopicError, TopicAuthorizationFailedError)):
            producer.send("__consumer_offsets", partition=0, value=b"junk").get(timeout=30)
    finally:
        producer.close(timeout=10)
