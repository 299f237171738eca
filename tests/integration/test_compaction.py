"""Log compaction with real clients: a compacted topic with 1,000 keys overwritten 100 times reads back one value
per key (the latest) once the cleaner has run, with offsets that only go forward for a consumer that was half-way
through; tombstoned keys disappear after delete.retention.ms; keyless records are refused; __consumer_offsets is
compacted and stays small under a commit loop.
"""
import json
import os
import signal
import time

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka.errors import CorruptRecordException, KafkaError

from conftest import started_cluster, wait_until

KEYS = 1000
ROUNDS = 100


@pytest.fixture(scope="module")
def compacting():
    with started_cluster(1, overrides=["log.cleaner.backoff.ms=200", "offsets.topic.num.partitions=1",
                                       "offsets.topic.replication.factor=1", "offsets.topic.segment.bytes=65536",
                                       "offsets.retention.check.interval.ms=1000"]) as c:
        yield c


def create_compacted(cluster, topic, **extra):
    config = {"cleanup.policy": "compact", "segment.bytes": "65536", "min.cleanable.dirty.ratio": "0.01",
              "segment.ms": "500"}
    config.update({k.replace("_", "."): str(v) for k, v in extra.items()})
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    admin.create_topics([NewTopic(topic, 1, 1, topic_configs=config)])
    admin.close()


def passes(cluster):
    return cluster.metric(0, "ferry_log_cleaner_passes_total") or 0


def read_all(bootstrap, topic, start=0):
    """[(offset, key, value)] of partition 0 from `start` to the end offset when reading began."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, 0)
        consumer.assign([tp])
        end = consumer.end_offsets([tp])[tp]
        consumer.seek(tp, start)
        out = []
        while consumer.position(tp) < end:
            for r in consumer.poll(timeout_ms=500).get(tp, []):
                out.append((r.offset, r.key, r.value))
        return out
    finally:
        consumer.close()


def produce_rounds(bootstrap, topic, rounds, tombstones=(), first_round=0):
    """Every key once per round, then tombstones, then filler under another key that rolls the segment, so that
    the rounds are all in segments the cleaner may clean (it never touches the active one)."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=20, batch_size=16384)
    try:
        for round_ in range(first_round, first_round + rounds):
            for key in range(KEYS):
                producer.send(topic, key=b"key-%d" % key, value=b"round-%d" % round_)
        for key in tombstones:
            producer.send(topic, key=b"key-%d" % key, value=None)
        for _ in range(100):
            producer.send(topic, key=b"filler", value=b"f" * 1024)
        producer.flush(timeout=300)
    finally:
        producer.close(timeout=10)


def test_the_latest_value_per_key_survives_cleaning(compacting):
    topic = "compacted"
    create_compacted(compacting, topic)
    produce_rounds(compacting.bootstrap, topic, ROUNDS // 2)
    # A consumer half-way through the log before cleaning.
    midway = read_all(compacting.bootstrap, topic)
    half = midway[len(midway) // 2][0]
    before = passes(compacting)
    produce_rounds(compacting.bootstrap, topic, ROUNDS - ROUNDS // 2, first_round=ROUNDS // 2)
    def keyed(records):
        return [r for r in records if r[1] != b"filler"]
    wait_until(lambda: passes(compacting) > before and len(keyed(read_all(compacting.bootstrap, topic))) == KEYS,
               timeout=180, interval=1, what="the cleaner to leave one record per key")

    records = keyed(read_all(compacting.bootstrap, topic))
    offsets = [o for o, _, _ in records]
    assert offsets == sorted(set(offsets)), "offsets go forward, with gaps"
    latest = {}
    for _, key, value in records:
        latest[key] = value
    assert len(latest) == KEYS
    assert set(latest.values()) == {b"round-%d" % (ROUNDS - 1)}
    resumed = keyed(read_all(compacting.bootstrap, topic, start=half))
    assert resumed and all(o >= half for o, _, _ in resumed), "the half-way consumer never goes backwards"
    assert [o for o, _, _ in resumed] == [o for o in offsets if o >= half]


def test_tombstoned_keys_disappear_after_delete_retention(compacting):
    topic = "tombstones"
    create_compacted(compacting, topic, delete_retention_ms=1000)
    produce_rounds(compacting.bootstrap, topic, 3, tombstones=range(100))
    def gone():
        records = [r for r in read_all(compacting.bootstrap, topic) if r[1] != b"filler"]
        return len(records) == KEYS - 100 and all(v is not None for _, _, v in records)
    wait_until(gone, timeout=180, interval=1, what="the tombstones and their keys to be gone")


def test_keyless_records_are_refused(compacting):
    topic = "keyless"
    create_compacted(compacting, topic)
    producer = KafkaProducer(bootstrap_servers=compacting.bootstrap, retries=0)
    try:
        with pytest.raises(KafkaError) as refused:
            producer.send(topic, value=b"no key").get(timeout=30)
        assert isinstance(refused.value, CorruptRecordException), refused.value
    finally:
        producer.close(timeout=10)


def test_the_offsets_topic_stays_small_under_a_commit_loop(compacting):
    topic = "committed"
    admin = KafkaAdminClient(bootstrap_servers=compacting.bootstrap)
    admin.create_topics([NewTopic(topic, 1, 1)])
    admin.close()
    consumer = KafkaConsumer(bootstrap_servers=compacting.bootstrap, group_id="looper", enable_auto_commit=False)
    tp = TopicPartition(topic, 0)
    try:
        from kafka.structs import OffsetAndMetadata
        for i in range(3000):
            consumer.commit({tp: OffsetAndMetadata(i, "")})
        assert consumer.committed(tp) == 2999
    finally:
        consumer.close(autocommit=False)
    wait_until(lambda: len(read_all(compacting.bootstrap, "__consumer_offsets")) < 500, timeout=180, interval=1,
               what="__consumer_offsets to be compacted")


def cleaner_leftovers(cluster, topic):
    """The files of a cleaning pass under way in the partition's directory: new segments being written
    (*.cleaned) and swaps not completed (*.swap)."""
    directory = cluster.partition_dir(0, topic, 0)
    return [n for n in os.listdir(directory) if n.endswith((".cleaned", ".swap"))]


def set_compaction_lag(cluster, topic, lag_ms):
    config = {"cleanup.policy": "compact", "segment.bytes": "65536", "min.cleanable.dirty.ratio": "0.01",
              "segment.ms": "500", "min.compaction.lag.ms": str(lag_ms)}
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    try:
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs=config)])
    finally:
        admin.close()


def write_compaction_lag_while_down(cluster, topic, lag_ms):
    """The topic's min.compaction.lag.ms written straight to ZooKeeper, for a broker to read when it starts."""
    zk = cluster.zookeeper()
    try:
        path = f"/config/topics/{topic}"
        node = json.loads(zk.get(path)[0])
        node["config"]["min.compaction.lag.ms"] = str(lag_ms)
        zk.set(path, json.dumps(node, separators=(",", ":")).encode())
    finally:
        zk.stop()


def test_a_broker_killed_while_cleaning_recovers_its_log(compacting):
    """SIGKILL in the middle of a cleaning pass (its *.cleaned files on disk): the log recovers, every key keeps
    its latest value, offsets only go forward, and the next passes finish the cleaning. Last in this module: it
    restarts the broker."""
    c = compacting
    topic = "killed-while-cleaning"
    day_ms = 86_400_000
    create_compacted(c, topic, min_compaction_lag_ms=day_ms)  # nothing is cleanable until the lag drops
    killed_mid_pass = False
    rounds = 0
    for attempt in range(5):
        produce_rounds(c.bootstrap, topic, 30, first_round=rounds)
        rounds += 30
        set_compaction_lag(c, topic, 0)
        deadline = time.monotonic() + 60
        while not cleaner_leftovers(c, topic) and time.monotonic() < deadline:
            time.sleep(0.001)
        os.kill(c.pid(0), signal.SIGKILL)
        c.kill(0)  # forgets the pid and waits for the ports
        killed_mid_pass = bool(cleaner_leftovers(c, topic))
        # Restarted with the lag back at a day, so no new pass starts and what is on disk is what recovery left.
        write_compaction_lag_while_down(c, topic, day_ms)
        c.start(0)
        if killed_mid_pass:
            break
    assert killed_mid_pass, f"no kill landed in the middle of a pass in {attempt + 1} attempts"
    read_all(c.bootstrap, topic)  # the partition's log is open, so recovery has run
    assert not cleaner_leftovers(c, topic), "recovery leaves no half-done pass behind"
    set_compaction_lag(c, topic, 0)

    records = read_all(c.bootstrap, topic)
    offsets = [o for o, _, _ in records]
    assert offsets == sorted(set(offsets)), "offsets only go forward"
    latest = {}
    for _, key, value in records:
        latest[key] = value
    assert all(latest[b"key-%d" % k] == b"round-%d" % (rounds - 1) for k in range(KEYS))

    def cleaned():
        keyed = [k for _, k, _ in read_all(c.bootstrap, topic) if k != b"filler"]
        return len(keyed) == len(set(keyed)) == KEYS
    wait_until(cleaned, timeout=180, interval=1, what="cleaning finished after the restart: one record per key")
