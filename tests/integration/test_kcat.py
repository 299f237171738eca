"""kcat 1.7.1 (librdkafka 2.0.2) against a three-broker cluster: keyed records with headers in every codec,
read back byte for byte and checked on disk; offsets by timestamp; consumers that seek back.

Topics are auto-created with three partitions (num.partitions=3), spread over the brokers.
"""
import collections
import random
import time

import confluent_kafka
import pytest
from kafka.admin import KafkaAdminClient, NewTopic

from conftest import kcat, log_batches, started_cluster

PARTITIONS = 3
RECORDS = 100_000
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
HEADERS = [(b"trace", b"t-123"), (b"source", b"kcat-it")]
FORMAT = "%p %o %k %h %s\\n"


@pytest.fixture(scope="module")
def kc():
    with started_cluster(3, overrides=[f"num.partitions={PARTITIONS}"]) as c:
        yield c


# Value bytes: printable ASCII and high bytes (not UTF-8), never the key delimiter or a line end.
VALUE_ALPHABET = bytes(b for b in list(range(0x20, 0x7F)) + list(range(0x80, 0x100)) if b != ord("|"))


def make_records(seed, count):
    """(key, value) pairs: 1009 distinct keys, values of 0-200 bytes, some repetitive (compressible), some
    random, some empty. The first 200 are long and repetitive: librdkafka may send a partition's first record
    in a batch of its own, and compresses a batch only when that makes it smaller."""
    rng = random.Random(seed)
    records = []
    for i in range(count):
        key = b"key-%d" % rng.randrange(1009)
        kind = i % 10
        if i < 200:
            value = b"one of the first records, maybe in a batch of its own; " * 40
        elif kind == 0:
            value = b""
        elif kind < 6:
            value = (b"record %d of the compressible kind; " % i) * rng.randrange(1, 5)
        else:
            value = bytes(rng.choice(VALUE_ALPHABET) for _ in range(rng.randrange(1, 200)))
        records.append((key, value))
    return records


def write_input(path, records):
    with open(path, "wb") as f:
        for key, value in records:
            f.write(key + b"|" + value + b"\n")


def produce_file(bootstrap, topic, path, *extra):
    args = ["-b", bootstrap, "-P", "-t", topic, "-K", "|", "-l", str(path)]
    for name, value in HEADERS:
        args += ["-H", (name + b"=" + value).decode()]
    kcat(*args, *extra, timeout=300)


def parse_headers(text):
    if not text:
        return []
    return [tuple(pair.split(b"=", 1)) for pair in text.split(b",")]


def consume_all(bootstrap, topic, *extra):
    """Every record of the topic as {partition: [(offset, key, headers, value)]}, through kcat -C -e."""
    out = kcat("-b", bootstrap, "-C", "-t", topic, "-e", "-f", FORMAT, *extra, timeout=300).stdout
    by_partition = collections.defaultdict(list)
    for line in out.split(b"\n")[:-1]:
        partition, offset, key, headers, value = line.split(b" ", 4)
        by_partition[int(partition)].append((int(offset), key, parse_headers(headers), value))
    return by_partition


def check_same_records(produced, consumed):
    """Every produced record was read once, in produce order within its partition (keys decide partitions),
    at consecutive offsets from 0, with its key, headers and value intact."""
    assert sum(len(v) for v in consumed.values()) == len(produced)
    key_partition = {}
    for partition, records in consumed.items():
        assert [r[0] for r in records] == list(range(len(records))), f"offsets of partition {partition}"
        for _, key, headers, _ in records:
            assert key_partition.setdefault(key, partition) == partition, f"key {key!r} is in two partitions"
            assert headers == HEADERS
    assert len(consumed) == PARTITIONS, "the keys should spread over every partition"
    expected = collections.defaultdict(list)
    for key, value in produced:
        expected[key_partition[key]].append((key, value))
    for partition, records in consumed.items():
        got = [(key, value) for _, key, _, value in records]
        assert got == expected[partition], f"partition {partition} differs from what was produced"


@pytest.mark.parametrize("codec", list(CODECS))
def test_100k_keyed_records_with_headers_round_trip(kc, tmp_path, codec):
    topic = f"kcat-{codec}"
    produced = make_records(seed=CODECS[codec], count=RECORDS)
    write_input(tmp_path / "in.txt", produced)
    started = time.monotonic()
    # linger.ms: batches of thousands of records, as a busy producer makes.
    produce_file(kc.bootstrap, topic, tmp_path / "in.txt", "-X", f"compression.codec={codec}", "-X", "linger.ms=50")
    consumed = consume_all(kc.bootstrap, topic)
    print(f"{codec}: {RECORDS} records produced and consumed in {time.monotonic() - started:.1f}s")
    check_same_records(produced, consumed)
    # Starting in the middle of a (compressed) batch: the records from there on, none before.
    start = len(consumed[0]) // 2 + 7
    middle = consume_all(kc.bootstrap, topic, "-p", "0", "-o", str(start), "-c", "50")
    assert middle[0] == consumed[0][start:start + 50]

    # On the leader's disk the batches carry the codec asked for, and hold every record. (librdkafka sends a
    # batch uncompressed when compression does not make it smaller, which a small batch of random bytes can
    # meet: how many such batches there are depends on timing, so most records, not all, must be compressed.)
    sizes = []
    for partition in range(PARTITIONS):
        leader = kc.leader(topic, partition)
        [segment] = kc.segment_files(leader, topic, partition)
        with open(segment, "rb") as f:
            first = f.read(61)
        assert first[16] == 2, "magic"
        assert int.from_bytes(first[21:23], "big") & 0x07 == CODECS[codec], "first batch's attributes"
        batches = log_batches(segment)
        assert {b.codec for b in batches} <= {0, CODECS[codec]}, "no other codec than the one asked for"
        assert sum(b.records_count for b in batches if b.codec == CODECS[codec]) > 0.9 * len(consumed[partition])
        assert sum(b.records_count for b in batches) == len(consumed[partition])
        assert batches[-1].last_offset == len(consumed[partition]) - 1
        sizes.append(sum(b.size for b in batches))
    if codec != "none":
        # The compressed logs are smaller than the values alone: the payload really is compressed.
        assert sum(sizes) < sum(len(v) for _, v in produced)


def produce_with_timestamps(bootstrap, topic, partition, timestamps, codec, groups):
    """Produces one record per timestamp with librdkafka, in `groups` batches (flushed one after another)."""
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 200,
                                         "compression.codec": codec, "acks": "all"})
    failures = []
    per_group = (len(timestamps) + groups - 1) // groups
    for g in range(groups):
        for i in range(g * per_group, min(len(timestamps), (g + 1) * per_group)):
            # Values compressible enough that librdkafka compresses even a batch of one record.
            producer.produce(topic, value=b"ts-%d " % i + b"z" * 200, key=b"k", partition=partition,
                             timestamp=timestamps[i],
                             on_delivery=lambda err, msg: err and failures.append(err))
        assert producer.flush(60) == 0
    assert not failures


def query_offset(bootstrap, topic, partition, timestamp):
    out = kcat("-b", bootstrap, "-Q", "-t", f"{topic}:{partition}:{timestamp}").stdout.decode()
    # "topic [partition] offset N"
    assert out.startswith(f"{topic} [{partition}] offset "), out
    return int(out.split()[-1])


@pytest.mark.parametrize("codec", list(CODECS))
def test_offsets_for_timestamps(kc, codec):
    topic = f"kcat-times-{codec}"
    base = int(time.time() * 1000) - 3_600_000
    # 300 records 10 ms apart, two of them sharing a timestamp, in three batches of 100.
    timestamps = [base + 10 * i for i in range(300)]
    timestamps[151] = timestamps[150]
    produce_with_timestamps(kc.bootstrap, topic, 1, timestamps, codec, groups=3)
    batches = log_batches(kc.segment_files(kc.leader(topic, 1), topic, 1)[0])
    assert len(batches) >= 3 and max(b.records_count for b in batches) > 1, "several records per batch"
    assert {b.codec for b in batches} == {CODECS[codec]}

    expected = {
        base - 1000: 0,              # before everything: the first record
        base: 0,
        base + 5: 1,                 # between two records: the later one
        base + 10: 1,
        base + 10 * 57: 57,          # inside the first batch
        base + 10 * 57 + 1: 58,
        base + 10 * 99 + 3: 100,     # past the first batch's last record: the second batch's first
        base + 10 * 150: 150,        # two records share it: the first of them
        base + 10 * 150 + 1: 152,
        base + 10 * 250: 250,
        base + 10 * 299: 299,        # the last record
        base + 10 * 299 + 1: -1,     # after the last record: none (the end)
        base + 10_000_000: -1,
    }
    got = {ts: query_offset(kc.bootstrap, topic, 1, ts) for ts in expected}
    assert got == expected
    # The other partitions of the topic are empty: no offset for any timestamp.
    assert query_offset(kc.bootstrap, topic, 0, base) == -1


@pytest.fixture(scope="module")
def seek_topic(kc, tmp_path_factory):
    """1000 records in partition 0 of 'kcat-seek', value i for offset i."""
    path = tmp_path_factory.mktemp("seek") / "in.txt"
    write_input(path, [(b"k%d" % (i % 7), b"value-%d" % i) for i in range(1000)])
    kcat("-b", kc.bootstrap, "-P", "-t", "kcat-seek", "-p", "0", "-K", "|", "-l", str(path))
    return "kcat-seek"


def consume_range(bootstrap, topic, start, count):
    out = kcat("-b", bootstrap, "-C", "-t", topic, "-p", "0", "-o", str(start), "-c", str(count), "-e",
               "-f", "%o %k %s\\n").stdout
    return [tuple(line.split(b" ", 2)) for line in out.split(b"\n")[:-1]]


def test_kcat_rereads_from_an_earlier_offset(kc, seek_topic):
    later = consume_range(kc.bootstrap, seek_topic, 600, 100)
    assert [int(o) for o, _, _ in later] == list(range(600, 700))
    assert all(v == b"value-%d" % int(o) for o, _, v in later)
    earlier = consume_range(kc.bootstrap, seek_topic, 550, 150)
    assert [int(o) for o, _, _ in earlier] == list(range(550, 700))
    assert earlier[50:] == later
    # Relative to the end, and from the beginning.
    tail = consume_range(kc.bootstrap, seek_topic, -10, 10)
    assert [int(o) for o, _, _ in tail] == list(range(990, 1000))
    head = consume_range(kc.bootstrap, seek_topic, "beginning", 5)
    assert [v for _, _, v in head] == [b"value-%d" % i for i in range(5)]


def test_librdkafka_consumer_seeks_back_and_rereads(kc, seek_topic):
    consumer = confluent_kafka.Consumer({"bootstrap.servers": kc.bootstrap, "group.id": "unused",
                                         "enable.auto.commit": False, "enable.partition.eof": True})
    try:
        def read(n):
            got = []
            deadline = time.monotonic() + 60
            while len(got) < n and time.monotonic() < deadline:
                msg = consumer.poll(1.0)
                if msg is None or msg.error():
                    assert msg is None or msg.error().code() == confluent_kafka.KafkaError._PARTITION_EOF
                    continue
                got.append((msg.offset(), msg.key(), msg.value()))
            assert len(got) == n
            return got

        tp = confluent_kafka.TopicPartition(seek_topic, 0, 800)
        consumer.assign([tp])
        first = read(100)
        assert [o for o, _, _ in first] == list(range(800, 900))
        consumer.seek(confluent_kafka.TopicPartition(seek_topic, 0, 750))
        again = read(150)
        assert [o for o, _, _ in again] == list(range(750, 900))
        assert again[50:] == first
        assert all(v == b"value-%d" % o for o, _, v in again)
    finally:
        consumer.close()


def create_topic(bootstrap, name, partitions, configs):
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
    try:
        response = admin.create_topics([NewTopic(name, partitions, 1, topic_configs=configs)])
        assert [(t[0], t[1]) for t in response.topic_errors] == [(name, 0)]
    finally:
        admin.close()


def test_offsets_for_timestamps_across_segments(kc):
    """Small segments (segment.bytes=2048): the lookup goes through several segments' time indexes."""
    topic = "kcat-times-segments"
    create_topic(kc.bootstrap, topic, 1, {"segment.bytes": "2048"})
    base = int(time.time() * 1000) - 7_200_000
    timestamps = [base + 100 * i for i in range(600)]
    produce_with_timestamps(kc.bootstrap, topic, 0, timestamps, "none", groups=30)
    segments = kc.segment_files(kc.leader(topic, 0), topic, 0)
    assert len(segments) >= 5
    for i in (0, 1, 19, 20, 21, 150, 333, 419, 420, 598, 599):
        assert query_offset(kc.bootstrap, topic, 0, timestamps[i]) == i
        assert query_offset(kc.bootstrap, topic, 0, timestamps[i] - 1) == i
    assert query_offset(kc.bootstrap, topic, 0, timestamps[-1] + 1) == -1


def test_log_append_time_topic(kc):
    """message.timestamp.type=LogAppendTime: the broker's clock replaces the producer's timestamps, in the
    produce answer, in what consumers read, and for lookups by timestamp."""
    topic = "kcat-log-append-time"
    create_topic(kc.bootstrap, topic, 1, {"message.timestamp.type": "LogAppendTime"})
    old = 1_000_000_000_000  # 2001
    reports = []
    producer = confluent_kafka.Producer({"bootstrap.servers": kc.bootstrap, "linger.ms": 50, "compression.codec": "lz4"})
    started = int(time.time() * 1000)
    for i in range(100):
        producer.produce(topic, value=b"lat-%d" % i, partition=0, timestamp=old + i,
                         on_delivery=lambda err, msg: reports.append((err, msg.timestamp(), msg.offset())))
    assert producer.flush(60) == 0
    finished = int(time.time() * 1000)
    assert len(reports) == 100 and all(err is None for err, _, _ in reports)
    for _, (kind, ts), _ in reports:
        assert kind == confluent_kafka.TIMESTAMP_LOG_APPEND_TIME and started - 1000 <= ts <= finished + 1000
    out = kcat("-b", kc.bootstrap, "-C", "-t", topic, "-e", "-f", "%o %T %s\\n").stdout
    rows = [line.split(b" ") for line in out.split(b"\n")[:-1]]
    assert [int(o) for o, _, _ in rows] == list(range(100))
    assert all(started - 1000 <= int(ts) <= finished + 1000 for _, ts, _ in rows)
    assert [v for _, _, v in rows] == [b"lat-%d" % i for i in range(100)]
    assert query_offset(kc.bootstrap, topic, 0, old) == 0
    assert query_offset(kc.bootstrap, topic, 0, finished + 60_000) == -1


def test_small_fetch_sizes_still_get_whole_batches(kc, tmp_path):
    """A consumer whose fetch limits are smaller than one batch still gets every batch (KIP-74)."""
    topic = "kcat-small-fetch"
    produced = make_records(seed=99, count=20_000)
    write_input(tmp_path / "in.txt", produced)
    produce_file(kc.bootstrap, topic, tmp_path / "in.txt", "-X", "compression.codec=gzip", "-X", "linger.ms=50")
    largest = max(b.size for p in range(PARTITIONS)
                  for b in log_batches(kc.segment_files(kc.leader(topic, p), topic, p)[0]))
    assert largest > 10_000
    consumed = consume_all(kc.bootstrap, topic, "-X", "message.max.bytes=1000", "-X", "fetch.max.bytes=1024",
                           "-X", "max.partition.fetch.bytes=512")
    check_same_records(produced, consumed)


def test_partitions_and_records_right_after_create_topics(kc):
    """librdkafka's admin and producer right after CreateTopics: CreatePartitions through another broker, and a
    produce to every partition, find the topic everywhere, because CreateTopics (and CreatePartitions) answer only
    once every live broker has the partitions and their leaders serve them, as Kafka answers once its brokers have
    the metadata. Before, they could answer UNKNOWN_TOPIC_OR_PARTITION."""
    from confluent_kafka.admin import AdminClient, NewPartitions
    from confluent_kafka.admin import NewTopic as AdminNewTopic
    first = AdminClient({"bootstrap.servers": kc.address(0)})
    last = AdminClient({"bootstrap.servers": kc.address(2)})
    for i in range(8):
        topic = f"fresh-{i}"
        first.create_topics([AdminNewTopic(topic, 4, 2)], operation_timeout=30)[topic].result(60)
        last.create_partitions([NewPartitions(topic, 6)], operation_timeout=30)[topic].result(60)
        errors = []
        producer = confluent_kafka.Producer({"bootstrap.servers": kc.address(1), "acks": "all",
                                             "topic.metadata.refresh.interval.ms": 100000})
        for p in range(6):
            producer.produce(topic, value=b"first", partition=p, on_delivery=lambda err, msg: errors.append(err))
        assert producer.flush(60) == 0
        assert errors == [None] * 6, errors
