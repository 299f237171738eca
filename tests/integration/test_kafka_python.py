"""kafka-python 2.0.2 against a three-broker cluster: keyed records in every codec it can write (gzip natively;
snappy, lz4 and zstd through Debian's python3-snappy, python3-lz4 and python3-zstandard), read back by
partition with assign + seek; records crossing between kafka-python and kcat both ways; topic creation
through KafkaAdminClient.
"""
import collections
import os

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

from conftest import kcat, log_batches, started_cluster, wait_until

PARTITIONS = 3
RECORDS = 5000
CODECS = {None: 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@pytest.fixture(scope="module")
def kp():
    with started_cluster(3, overrides=[f"num.partitions={PARTITIONS}"]) as c:
        yield c


def make_records(tag, count):
    return [(b"key-%d" % (i % 101), b"%s value %d " % (tag.encode(), i) * (1 + i % 5),
             [("seq", b"%d" % i), ("tag", tag.encode())]) for i in range(count)]


def produce(bootstrap, topic, records, compression=None, **config):
    """Sends every record and returns {(partition, offset): record} from the acknowledgements."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", compression_type=compression, linger_ms=20,
                             **config)
    try:
        futures = [(producer.send(topic, key=k, value=v, headers=h), (k, v, h)) for k, v, h in records]
        producer.flush(timeout=120)
        placed = {}
        for future, record in futures:
            meta = future.get(timeout=60)
            placed[(meta.partition, meta.offset)] = record
        return placed
    finally:
        producer.close(timeout=10)


def consume_partitions(bootstrap, topic, partitions, start=None, until=None):
    """{partition: [(offset, key, value, headers)]} from `start` ({partition: offset}, else the beginning)
    up to `until` ({partition: end offset}, else the end offsets when reading starts)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             consumer_timeout_ms=1000)
    try:
        tps = [TopicPartition(topic, p) for p in partitions]
        consumer.assign(tps)
        ends = until or {tp.partition: off for tp, off in consumer.end_offsets(tps).items()}
        if start is None:
            consumer.seek_to_beginning(*tps)
        else:
            for tp in tps:
                consumer.seek(tp, start[tp.partition])
        out = collections.defaultdict(list)

        def done():
            for msg in consumer:
                if msg.offset < ends[msg.partition]:
                    out[msg.partition].append((msg.offset, msg.key, msg.value, [(k, v) for k, v in msg.headers]))
                if all(consumer.position(tp) >= ends[tp.partition] for tp in tps):
                    return True
            return all(consumer.position(tp) >= ends[tp.partition] for tp in tps)

        wait_until(done, timeout=120, interval=0, what=f"kafka-python to read {topic} to {ends}")
        return out
    finally:
        consumer.close()


@pytest.mark.parametrize("compression", list(CODECS), ids=lambda c: c or "none")
def test_produce_and_consume_by_partition(kp, compression):
    topic = f"kp-{compression or 'none'}"
    records = make_records(topic, RECORDS)
    placed = produce(kp.bootstrap, topic, records, compression)
    assert len(placed) == RECORDS, "every send got its own offset"
    consumed = consume_partitions(kp.bootstrap, topic, range(PARTITIONS))
    assert len(consumed) == PARTITIONS
    for partition, got in consumed.items():
        assert [o for o, *_ in got] == list(range(len(got)))
        assert [(k, v, h) for _, k, v, h in got] == [placed[(partition, o)] for o, *_ in got]
    assert sum(len(g) for g in consumed.values()) == RECORDS
    # Within a partition, the records are in the order they were sent.
    for partition, got in consumed.items():
        seqs = [int(dict(h)["seq"]) for _, _, _, h in got]
        assert seqs == sorted(seqs)
    # Stored with the codec kafka-python compressed them in (it sends a batch uncompressed when compression
    # does not make it smaller, which only a batch of one short record can meet).
    for partition in range(PARTITIONS):
        leader = kp.leader(topic, partition)
        batches = log_batches(kp.segment_files(leader, topic, partition)[0])
        assert {b.codec for b in batches if b.records_count > 1} == {CODECS[compression]}
        in_codec = sum(b.records_count for b in batches if b.codec == CODECS[compression])
        assert in_codec > 0.99 * len(consumed[partition])


def test_seek_rereads_the_same_records(kp):
    topic = "kp-seek"
    placed = produce(kp.bootstrap, topic, make_records(topic, 600), None)
    counts = collections.Counter(p for p, _ in placed)
    partition = max(counts, key=counts.get)
    n = counts[partition]
    later = consume_partitions(kp.bootstrap, topic, [partition], start={partition: n // 2}, until={partition: n})
    assert [o for o, *_ in later[partition]] == list(range(n // 2, n))
    again = consume_partitions(kp.bootstrap, topic, [partition], start={partition: n // 4}, until={partition: n})
    assert [o for o, *_ in again[partition]] == list(range(n // 4, n))
    assert again[partition][-len(later[partition]):] == later[partition]
    for o, k, v, h in again[partition]:
        assert placed[(partition, o)] == (k, v, h)


def test_kafka_python_reads_what_kcat_wrote(kp, tmp_path):
    topic = "kp-from-kcat"
    lines = [b"k%d|kcat value %d %s" % (i % 13, i, b"x" * (i % 50)) for i in range(3000)]
    (tmp_path / "in.txt").write_bytes(b"\n".join(lines) + b"\n")
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        kcat("-b", kp.bootstrap, "-P", "-t", topic, "-K", "|", "-H", f"codec={codec}", "-X",
             f"compression.codec={codec}", "-X", "linger.ms=20", "-l", str(tmp_path / "in.txt"))
    consumed = consume_partitions(kp.bootstrap, topic, range(PARTITIONS))
    assert sum(len(g) for g in consumed.values()) == 4 * len(lines)
    expected = collections.defaultdict(list)  # by key: what kcat sent, in order
    for codec in ("gzip", "snappy", "lz4", "zstd"):
        for line in lines:
            key, value = line.split(b"|", 1)
            expected[key].append((value, [("codec", codec.encode())]))
    got = collections.defaultdict(list)
    for partition, records in consumed.items():
        assert [o for o, *_ in records] == list(range(len(records)))
        for _, k, v, h in records:
            got[k].append((v, h))
    assert got == expected


def test_kcat_reads_what_kafka_python_wrote(kp):
    topic = "kp-to-kcat"
    placed = {}
    for compression in ("gzip", "lz4", "zstd"):
        before = len(placed)
        placed.update(produce(kp.bootstrap, topic, make_records(compression, 1000), compression))
        assert len(placed) == before + 1000
    out = kcat("-b", kp.bootstrap, "-C", "-t", topic, "-e", "-f", "%p %o %k %h %S %s\\n").stdout
    seen = {}
    for line in out.split(b"\n")[:-1]:
        partition, offset, key, headers, length, rest = line.split(b" ", 5)
        # %S, the value's length, shows the value's trailing space survived.
        seen[(int(partition), int(offset))] = (key, headers, int(length), rest)
    assert set(seen) == set(placed)
    for where, (key, value, headers) in placed.items():
        k, h, length, v = seen[where]
        assert (k, length, v) == (key, len(value), value)
        assert h == b",".join(name.encode() + b"=" + val for name, val in headers)


def test_admin_client_creates_and_deletes_topics():
    """KafkaAdminClient on a cluster of its own. create_topics (CreateTopics v3) is answered without error and
    the topic gets its partitions and leaders; delete_topics removes topics (one with a name of 249
    characters, Kafka's longest) from the broker's disk, and a topic created again under the same name starts
    empty. The broker stays alive throughout."""
    long_name = "L" * 249
    with started_cluster(1) as c:
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap, request_timeout_ms=30000)
        try:
            response = admin.create_topics([NewTopic("kp-admin", 4, 1)])
            assert [(t[0], t[1]) for t in response.topic_errors] == [("kp-admin", 0)]
            assert c.pid(0) is not None, "the broker died:\n" + c.broker_log(0)[-3000:]
            for partition in range(4):
                assert c.leader("kp-admin", partition) == 0
            kcat("-b", c.bootstrap, "-P", "-t", "kp-admin", "-p", "3", input=b"after create\n")
            out = kcat("-b", c.bootstrap, "-C", "-t", "kp-admin", "-p", "3", "-e", "-f", "%s\\n").stdout
            assert out == b"after create\n"

            kcat("-b", c.bootstrap, "-P", "-t", long_name, input=b"old record\n")
            assert os.path.isdir(c.partition_dir(0, long_name, 0))
            response = admin.delete_topics(["kp-admin", long_name], timeout_ms=30000)
            assert sorted(response.topic_error_codes) == sorted([("kp-admin", 0), (long_name, 0)])
            # Only partition logs are directories (beside them: the checkpoints, the lock, the session file).
            wait_until(lambda: not [e for e in os.scandir(c.log_dir(0)) if e.is_dir()],
                       what="the deleted topics' logs to be removed")
            assert "cannot delete" not in c.broker_log(0)
        finally:
            admin.close()
        kcat("-b", c.bootstrap, "-P", "-t", long_name, input=b"new record\n")
        out = kcat("-b", c.bootstrap, "-C", "-t", long_name, "-e", "-f", "%o %s\\n").stdout
        assert out == b"0 new record\n"
