"""What survives what: a SIGKILL under a running producer (acks=1, and idempotent), idempotent retries across
a restart, garbage at the end of an active segment, damaged or missing indexes, a clean SIGTERM restart, a
ZooKeeper restart under running brokers, and a broker whose ZooKeeper session expired.

The crash and damage tests use a one-broker cluster, so every partition lives on the broker that dies and
the data must come back from its own disk.
"""
import os
import random
import signal
import socket
import threading

import confluent_kafka
import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from conftest import init_producer_id, kcat, log_batches, produce_v3, record_batch, started_cluster, wait_until

PARTITIONS = 3
MARKER = ".ferry-clean-shutdown"
OUT_OF_ORDER_SEQUENCE = 45


@pytest.fixture(scope="module")
def one():
    # A short ZooKeeper session: a broker restarted after a SIGKILL registers once its old session expired.
    with started_cluster(1, overrides=[f"num.partitions={PARTITIONS}", "zookeeper.session.timeout.ms=6000"]) as c:
        yield c


def read_topic(bootstrap, topic):
    """{partition: [(offset, key, value)]} of every record in the topic, through kcat."""
    out = kcat("-b", bootstrap, "-C", "-t", topic, "-e", "-f", "%p %o %k %s\\n", timeout=180).stdout
    records = {}
    for line in out.split(b"\n")[:-1]:
        partition, offset, key, value = line.split(b" ", 3)
        records.setdefault(int(partition), []).append((int(offset), key, value))
    return records


class BackgroundProducer:
    """A librdkafka producer sending keyed records "k<i % 30>" / "v-<i>" from a thread, one about every
    millisecond, until stopped; remembers which sends were acknowledged (and where) and which failed."""

    def __init__(self, bootstrap, topic, config):
        self.topic = topic
        self.producer = confluent_kafka.Producer({
            "bootstrap.servers": bootstrap, "linger.ms": 5, "message.timeout.ms": 90000,
            "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500, **config})
        self.sent = 0
        self.acked = {}   # i -> (partition, offset)
        self.failed = {}  # i -> error
        self.unflushed = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _report(self, i):
        def report(err, msg):
            if err is None:
                self.acked[i] = (msg.partition(), msg.offset())
            else:
                self.failed[i] = err
        return report

    def _run(self):
        i = 0
        while not self._stop.is_set():
            try:
                self.producer.produce(self.topic, key=b"k%d" % (i % 30), value=b"v-%d" % i, on_delivery=self._report(i))
            except BufferError:
                self.producer.poll(0.1)
                continue
            i += 1
            self.sent = i
            self.producer.poll(0.001)
        self.unflushed = self.producer.flush(120)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join(180)
        assert not self._thread.is_alive()
        assert self.unflushed == 0, f"{self.unflushed} records still unanswered"


def check_acknowledged(records, producer):
    """Every acknowledged record is at the offset it was acknowledged with, acknowledged records are in send
    order within a partition, no record was stored twice, and nothing was stored that was not sent."""
    stored = {}
    for partition, rows in records.items():
        assert [o for o, _, _ in rows] == list(range(len(rows))), f"offsets of partition {partition}"
        for offset, key, value in rows:
            i = int(value[2:])
            assert value not in stored, f"{value!r} stored twice: {stored[value]} and {(partition, offset)}"
            assert 0 <= i < producer.sent and key == b"k%d" % (i % 30)
            stored[value] = (partition, offset)
    for i, where in producer.acked.items():
        assert stored.get(b"v-%d" % i) == where, f"acknowledged record {i} is not where it was acknowledged"
    by_partition = {}
    for i in sorted(producer.acked):
        partition, offset = producer.acked[i]
        assert offset > by_partition.get(partition, -1), f"record {i} acknowledged out of order"
        by_partition[partition] = offset
    return stored


def crash_under(cluster, producer):
    """Runs the producer, SIGKILLs the broker once 2000 records are acknowledged, restarts it while the
    producer keeps sending, and stops the producer once 2000 more were acknowledged after the restart.
    The topic has small segments, so the logs roll (and snapshot the producer state) along the way."""
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    try:
        response = admin.create_topics([NewTopic(producer.topic, PARTITIONS, 1, topic_configs={"segment.bytes": "16384"})])
        assert [(t[0], t[1]) for t in response.topic_errors] == [(producer.topic, 0)]
    finally:
        admin.close()
    producer.start()
    try:
        wait_until(lambda: len(producer.acked) >= 2000, timeout=120, what="2000 acknowledged records")
        pid = cluster.pid(0)
        cluster.kill(0)
        assert cluster.pid(0) is None
        assert not os.path.exists(os.path.join(cluster.log_dir(0), MARKER)), "a SIGKILL leaves no clean marker"
        down_at = producer.sent
        wait_until(lambda: producer.sent >= down_at + 300, timeout=60, what="sends while the broker is down")
        cluster.start(0)
        assert cluster.pid(0) not in (None, pid)
        restarted_with = len(producer.acked)
        wait_until(lambda: len(producer.acked) >= restarted_with + 2000, timeout=180,
                   what="2000 more acknowledged records after the restart")
    finally:
        producer.stop()
    log = cluster.broker_log(0)
    assert "was not shut down cleanly" in log
    segments = sum(len(cluster.segment_files(0, producer.topic, p)) for p in range(PARTITIONS))
    print(f"{producer.topic}: {producer.sent} sent, {len(producer.acked)} acknowledged, {len(producer.failed)} "
          f"failed, {segments} segments")
    assert segments > PARTITIONS, "the logs rolled"


def test_sigkill_under_acks1_producer_keeps_every_acknowledged_record(broker):
    # No retries: a request lost with the broker fails instead of being sent again, so every record is stored
    # at most once, and every acknowledged one must be back after the restart.
    producer = BackgroundProducer(broker.bootstrap, "crash-acks1",
                                  {"acks": 1, "enable.idempotence": False, "retries": 0})
    crash_under(broker, producer)
    # (Requests in flight at the kill fail, if there were any: those records may or may not be stored.)
    stored = check_acknowledged(read_topic(broker.bootstrap, "crash-acks1"), producer)
    assert len(producer.acked) + len(producer.failed) == producer.sent
    assert len(stored) >= len(producer.acked)


def test_sigkill_under_idempotent_producer_loses_and_duplicates_nothing(broker):
    # An idempotent producer resends what the kill cut off, with the same sequence numbers: the restarted
    # broker (its producer state rebuilt from the log) must store each record exactly once.
    producer = BackgroundProducer(broker.bootstrap, "crash-idempotent", {"enable.idempotence": True, "acks": "all"})
    crash_under(broker, producer)
    assert not producer.failed, f"failed sends: {list(producer.failed.items())[:5]}"
    assert len(producer.acked) == producer.sent
    stored = check_acknowledged(read_topic(broker.bootstrap, "crash-idempotent"), producer)
    assert len(stored) == producer.sent


def produce_lines(bootstrap, topic, partition, first, count):
    """Records first.. first+count-1 in batches of at most 100."""
    lines = b"".join(b"k%d|garbage-test-%d\n" % (i % 5, i) for i in range(first, first + count))
    kcat("-b", bootstrap, "-P", "-t", topic, "-p", str(partition), "-K", "|", "-X", "linger.ms=20",
         "-X", "batch.num.messages=100", input=lines)


@pytest.mark.parametrize("stop", ["kill", "stop"])
@pytest.mark.parametrize("garbage", ["random", "torn-batch"])
def test_garbage_at_the_end_of_the_active_segment_is_cut(broker, stop, garbage):
    topic = f"garbage-{garbage}-{stop}"
    produce_lines(broker.bootstrap, topic, 0, 0, 500)
    produce_lines(broker.bootstrap, topic, 0, 500, 500)
    [segment] = broker.segment_files(0, topic, 0)
    batches = log_batches(segment)
    assert sum(b.records_count for b in batches) == 1000
    size = os.path.getsize(segment)
    assert size == batches[-1].position + batches[-1].size

    getattr(broker, stop)(0)
    rng = random.Random(f"{garbage}-{stop}")
    if garbage == "random":
        junk = bytes(rng.randrange(256) for _ in range(1000))
    else:
        # A write cut short: the first part of a copy of the last batch, with the next offset.
        with open(segment, "rb") as f:
            f.seek(batches[-1].position)
            last = bytearray(f.read(batches[-1].size))
        last[0:8] = (batches[-1].last_offset + 1).to_bytes(8, "big")
        junk = bytes(last[: len(last) // 2])
    with open(segment, "ab") as f:
        f.write(junk)
    log_before = len(broker.broker_log(0))
    broker.start(0)

    log = broker.broker_log(0)[log_before:]
    assert f"{segment}:" in log and f"at position {size}; truncated {len(junk)} bytes" in log, log[-3000:]
    assert os.path.getsize(segment) == size
    records = read_topic(broker.bootstrap, topic)
    assert [(o, v) for o, _, v in records[0]] == [(i, b"garbage-test-%d" % i) for i in range(1000)]
    # New records go right after the old ones.
    produce_lines(broker.bootstrap, topic, 0, 1000, 200)
    records = read_topic(broker.bootstrap, topic)
    assert [(o, v) for o, _, v in records[0]] == [(i, b"garbage-test-%d" % i) for i in range(1200)]
    batches = log_batches(segment)
    assert batches[-1].last_offset == 1199 and os.path.getsize(segment) == batches[-1].position + batches[-1].size


@pytest.mark.parametrize("stop", ["kill", "stop"])
@pytest.mark.parametrize("damage", ["garbage", "missing"])
def test_damaged_indexes_of_the_active_segment_are_rebuilt(broker, stop, damage):
    topic = f"index-{damage}-{stop}"
    produce_lines(broker.bootstrap, topic, 0, 0, 2000)
    [segment] = broker.segment_files(0, topic, 0)
    index, time_index = segment[:-4] + ".index", segment[:-4] + ".timeindex"
    assert os.path.getsize(index) > 0, "the segment is large enough to be indexed"
    getattr(broker, stop)(0)
    rng = random.Random(f"{damage}-{stop}")
    for path in (index, time_index):
        if damage == "garbage":
            with open(path, "ab") as f:
                f.write(bytes(rng.randrange(256) for _ in range(37)))
        else:
            os.remove(path)
    broker.start(0)

    records = read_topic(broker.bootstrap, topic)
    assert [(o, v) for o, _, v in records[0]] == [(i, b"garbage-test-%d" % i) for i in range(2000)]
    middle = kcat("-b", broker.bootstrap, "-C", "-t", topic, "-p", "0", "-o", "1234", "-c", "3", "-e",
                  "-f", "%o %s\\n").stdout
    assert middle == b"".join(b"%d garbage-test-%d\n" % (i, i) for i in range(1234, 1237))
    produce_lines(broker.bootstrap, topic, 0, 2000, 100)
    records = read_topic(broker.bootstrap, topic)
    assert [(o, v) for o, _, v in records[0]] == [(i, b"garbage-test-%d" % i) for i in range(2100)]
    out = kcat("-b", broker.bootstrap, "-Q", "-t", f"{topic}:0:0").stdout
    assert out.split()[-1] == b"0"


def test_clean_restart_keeps_topics_and_data(broker):
    topics = {f"clean-{codec}": codec for codec in ("none", "gzip", "zstd")}
    for topic, codec in topics.items():
        lines = b"".join(b"k%d|%s record %d\n" % (i % 17, codec.encode(), i) for i in range(2000))
        kcat("-b", broker.bootstrap, "-P", "-t", topic, "-K", "|", "-X", f"compression.codec={codec}", input=lines)
    before = {topic: read_topic(broker.bootstrap, topic) for topic in topics}
    assert all(sum(len(r) for r in records.values()) == 2000 for records in before.values())

    marker = os.path.join(broker.log_dir(0), MARKER)
    assert not os.path.exists(marker), "no marker while the broker runs"
    log_before = len(broker.broker_log(0))
    broker.stop(0)
    assert broker.pid(0) is None
    assert os.path.exists(marker), "a clean shutdown leaves the marker"
    broker.start(0)
    wait_until(lambda: not os.path.exists(marker), what="the marker to be removed at start")

    log = broker.broker_log(0)[log_before:]
    assert "was not shut down cleanly" not in log and "recovery:" not in log
    listing = kcat("-b", broker.bootstrap, "-L").stdout.decode()
    for topic in topics:
        assert f'topic "{topic}" with {PARTITIONS} partitions' in listing
        assert read_topic(broker.bootstrap, topic) == before[topic]
    # And the restarted broker appends after what it had.
    kcat("-b", broker.bootstrap, "-P", "-t", "clean-none", "-p", "0", input=b"after restart\n")
    after = read_topic(broker.bootstrap, "clean-none")
    assert after[0][:-1] == before["clean-none"][0]
    assert after[0][-1] == (len(before["clean-none"][0]), b"", b"after restart")


def metadata_brokers(bootstrap):
    """Broker ids in a Metadata response (kcat -L), or None if it fails."""
    result = kcat("-b", bootstrap, "-L", "-m", "5", timeout=30, check=False)
    if result.returncode != 0:
        return None
    return sorted(int(line.split()[1]) for line in result.stdout.decode().splitlines()
                  if line.strip().startswith("broker ") and " at " in line)


def test_zookeeper_restart_brokers_reconnect_without_restarting():
    with started_cluster(3, overrides=[f"num.partitions={PARTITIONS}"]) as c:
        lines = b"".join(b"k%d|before %d\n" % (i % 11, i) for i in range(300))
        kcat("-b", c.bootstrap, "-P", "-t", "zk-before", "-K", "|", input=lines)
        pids = [c.pid(b) for b in range(3)]

        c.zk_stop()
        assert "zookeeper  stopped" in c.run("status", check=False).stdout
        # Without ZooKeeper the brokers keep running and keep serving the partitions they lead.
        records = read_topic(c.bootstrap, "zk-before")
        assert sum(len(r) for r in records.values()) == 300
        kcat("-b", c.bootstrap, "-P", "-t", "zk-before", "-K", "|", input=b"k2|during\n")
        assert all(c.pid(b) == pids[b] for b in range(3))
        c.zk_start()

        wait_until(lambda: all(c.ready(b) for b in range(3)), timeout=60, what="every broker ready again")
        wait_until(lambda: metadata_brokers(c.bootstrap) == [0, 1, 2], timeout=60, what="all brokers in Metadata")
        assert [c.pid(b) for b in range(3)] == pids, "no broker restarted"
        status, body = c.admin(0, "/v1/brokers")
        assert status == 200 and sorted(b["id"] for b in body["brokers"]) == [0, 1, 2]

        # Produce and consume again: to the old topic, and to a new one (which needs ZooKeeper to be created).
        kcat("-b", c.bootstrap, "-P", "-t", "zk-before", "-K", "|", input=b"k1|after\n")
        kcat("-b", c.bootstrap, "-P", "-t", "zk-after", "-K", "|", input=b"".join(b"k%d|after %d\n" % (i, i) for i in range(50)))
        records = read_topic(c.bootstrap, "zk-before")
        assert sum(len(r) for r in records.values()) == 302
        values = [v for rows in records.values() for _, _, v in rows]
        assert b"during" in values and b"after" in values
        records = read_topic(c.bootstrap, "zk-after")
        assert sorted(v for rows in records.values() for _, _, v in rows) == sorted(b"after %d" % i for i in range(50))


@pytest.mark.parametrize("restart", ["kill", "stop"])
def test_retried_idempotent_batches_are_not_stored_twice_across_a_restart(broker, restart):
    """An idempotent producer's retry of a batch the broker stored before it went down is answered with the
    original offsets and not stored again: the producer state comes back from the log (and its snapshot)."""
    topic = f"idempotent-raw-{restart}"
    kcat("-b", broker.bootstrap, "-L", "-t", topic)  # creates the topic
    broker.leader(topic, 0)
    s = socket.create_connection(("127.0.0.1", broker.base_port), timeout=30)
    error, pid, epoch = init_producer_id(s, 1)
    assert error == 0 and pid >= 0 and epoch >= 0
    batches = [record_batch([b"idem-%d" % (5 * n + i) for i in range(5)], producer_id=pid, producer_epoch=epoch,
                            base_sequence=5 * n) for n in range(7)]
    for n in range(5):
        assert produce_v3(s, topic, 0, batches[n], 10 + n) == (0, 5 * n)
    assert produce_v3(s, topic, 0, batches[4], 20) == (0, 20), "a retry before the restart"
    s.close()

    getattr(broker, restart)(0)
    broker.start(0)
    s = socket.create_connection(("127.0.0.1", broker.base_port), timeout=30)
    broker.leader(topic, 0)
    assert produce_v3(s, topic, 0, batches[3], 30) == (0, 15), "a retry of an older batch after the restart"
    assert produce_v3(s, topic, 0, batches[4], 31) == (0, 20), "a retry of the last batch after the restart"
    assert produce_v3(s, topic, 0, batches[6], 32) == (OUT_OF_ORDER_SEQUENCE, -1), "a gap in the sequence"
    assert produce_v3(s, topic, 0, batches[5], 33) == (0, 25), "the next batch"
    s.close()
    records = read_topic(broker.bootstrap, topic)
    assert [(o, v) for o, _, v in records[0]] == [(i, b"idem-%d" % i) for i in range(30)]


def test_broker_whose_zookeeper_session_expired_registers_again():
    """A broker frozen (SIGSTOP) past its ZooKeeper session timeout loses its registration; thawed, it opens a
    new session, registers again, and serves, without a restart."""
    with started_cluster(2, overrides=[f"num.partitions={PARTITIONS}", "zookeeper.session.timeout.ms=6000"]) as c:
        pid = c.pid(1)
        os.kill(pid, signal.SIGSTOP)
        try:
            wait_until(lambda: metadata_brokers(c.address(0)) == [0], timeout=60,
                       what="broker 1 to drop out of the cluster")
        finally:
            os.kill(pid, signal.SIGCONT)
        wait_until(lambda: metadata_brokers(c.address(0)) == [0, 1], timeout=60, what="broker 1 to register again")
        wait_until(lambda: c.ready(1), timeout=60, what="broker 1 ready")
        assert c.pid(1) == pid
        assert "session expired" in c.broker_log(1)
        lines = b"".join(b"k%d|after expiry %d\n" % (i, i) for i in range(60))
        kcat("-b", c.address(1), "-P", "-t", "zk-expired", "-K", "|", input=lines)
        records = read_topic(c.address(1), "zk-expired")
        assert sorted(v for rows in records.values() for _, _, v in rows) == sorted(b"after expiry %d" % i for i in range(60))
