"""Bad input on raw sockets: garbage, impossible sizes, cut-off frames, unknown APIs and versions, bodies that
do not parse, and a produce whose batch fails its CRC. Each time the offending connection is closed (or
answered, where Kafka answers), while a connection opened before it and a kcat consumer running all along
keep working, and the broker process stays the same and healthy.
"""
import random
import socket
import struct
import subprocess
import threading
import urllib.request

import pytest
from kafka.record.default_records import DefaultRecordBatch

from conftest import kafka_request as request
from conftest import kcat, produce_v3, read_response, wait_until
from conftest import record_batch as build_batch

API_VERSIONS, METADATA, PRODUCE, FETCH, CREATE_TOPICS = 18, 3, 0, 1, 19
UNSUPPORTED_VERSION, CORRUPT_MESSAGE = 35, 2


# ------------------------------------------------------------------------------------------------------
# The wire, by hand.

def connect(cluster, timeout=10.0):
    s = socket.create_connection(("127.0.0.1", cluster.base_port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def done_sending(s):
    """Half-closes the connection; the broker may have closed it already."""
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def closed_by_broker(s, timeout=10.0):
    """True when the broker closes the connection (EOF or reset) without sending anything first."""
    s.settimeout(timeout)
    try:
        data = s.recv(65536)
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False
    return data == b""


def parse_api_versions_v0(body):
    """(error code, {api key: (min, max)}) of a v0-encoded ApiVersions response body."""
    error, count = struct.unpack(">hi", body[:6])
    ranges = {}
    for i in range(count):
        key, lo, hi = struct.unpack(">hhh", body[6 + 6 * i: 12 + 6 * i])
        ranges[key] = (lo, hi)
    assert len(body) == 6 + 6 * count, "a v0 body: nothing after the key list"
    return error, ranges


def api_versions_v0(s, correlation_id=7):
    s.sendall(request(API_VERSIONS, 0, correlation_id))
    got, body = read_response(s)
    assert got == correlation_id
    return parse_api_versions_v0(body)


def metadata_v1_brokers(s, correlation_id=8):
    """Broker ids in a Metadata v1 answer for no topics (an empty topic list)."""
    s.sendall(request(METADATA, 1, correlation_id, struct.pack(">i", 0)))
    got, body = read_response(s)
    assert got == correlation_id
    count = struct.unpack(">i", body[:4])[0]
    ids, at = [], 4
    for _ in range(count):
        node, host_len = struct.unpack(">ih", body[at:at + 6])
        at += 6 + host_len + 4  # host, port
        rack_len = struct.unpack(">h", body[at:at + 2])[0]
        at += 2 + max(rack_len, 0)
        ids.append(node)
    return ids


# ------------------------------------------------------------------------------------------------------
# Fixtures: the one broker, a raw connection opened before each bad input, and a kcat consumer that runs
# through the whole module.

class KcatWatcher:
    """`kcat -C` on topic 'witness', running for the whole module; check() produces a fresh record and waits
    for this long-lived consumer to print it."""

    def __init__(self, cluster):
        self.cluster = cluster
        kcat("-b", cluster.bootstrap, "-P", "-t", "witness", "-p", "0", input=b"ping-0\n")
        self.process = subprocess.Popen(
            ["kcat", "-b", cluster.bootstrap, "-C", "-t", "witness", "-p", "0", "-o", "beginning", "-u",
             "-f", "%s\\n"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines = []
        self.pings = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        wait_until(lambda: b"ping-0" in self.lines, what="the watching kcat to start consuming")

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line.rstrip(b"\n"))

    def check(self):
        assert self.process.poll() is None, "the watching kcat exited"
        self.pings += 1
        ping = b"ping-%d" % self.pings
        kcat("-b", self.cluster.bootstrap, "-P", "-t", "witness", "-p", "0", input=ping + b"\n")
        wait_until(lambda: ping in self.lines, timeout=30, what=f"the watching kcat to read {ping!r}")

    def close(self):
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture(scope="module")
def broker(single_broker):
    single_broker.original_pid = single_broker.pid(0)
    watcher = KcatWatcher(single_broker)
    single_broker.watcher = watcher
    yield single_broker
    watcher.close()


@pytest.fixture
def bystander(broker):
    """A connection opened (and used) before the bad input."""
    s = connect(broker)
    assert api_versions_v0(s)[0] == 0
    yield s
    s.close()


def assert_unharmed(broker, bystander):
    """The connection opened before the bad input still works, the watching kcat still consumes, and the
    broker is the same healthy process."""
    error, ranges = api_versions_v0(bystander, correlation_id=99)
    assert error == 0 and PRODUCE in ranges and FETCH in ranges
    assert metadata_v1_brokers(bystander) == [0]
    broker.watcher.check()
    assert broker.pid(0) == broker.original_pid, "the broker restarted"
    assert broker.admin(0, "/v1/health") == (200, {"status": "ok", "broker_id": 0})


# ------------------------------------------------------------------------------------------------------
# Bad input.

@pytest.mark.parametrize("seed", range(12))
def test_random_bytes_close_the_connection(broker, bystander, seed):
    rng = random.Random(seed)
    data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
    s = connect(broker)
    s.sendall(data)
    # A random size prefix may ask for more bytes than were sent; the client going away ends that wait too.
    done_sending(s)
    assert closed_by_broker(s)
    s.close()
    assert_unharmed(broker, bystander)


@pytest.mark.parametrize("size", [0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 104857601], ids=hex)
def test_impossible_frame_size_closes_the_connection_at_once(broker, bystander, size):
    signed = struct.unpack(">i", struct.pack(">I", size))[0]

    def closed_and_logged():
        s = connect(broker)
        s.sendall(struct.pack(">I", size) + b"\x00\x12\x00\x00")
        assert closed_by_broker(s), "closed without waiting for the rest of the frame"
        s.close()
        return f"request size {signed} is outside" in broker.broker_log(0)

    # The warning is rate-limited (a few lines a second): the frames of the tests before may have used them up.
    wait_until(closed_and_logged, interval=0.25, what="the warning")
    assert_unharmed(broker, bystander)


@pytest.mark.parametrize("cut", ["in-size", "after-header", "mid-body"])
def test_truncated_frame_then_close(broker, bystander, cut):
    whole = request(METADATA, 1, 3, struct.pack(">i", 1) + struct.pack(">h", 7) + b"witness")
    sent = {"in-size": whole[:2], "after-header": whole[:4 + 8 + 2 + len(b"ferry-it")], "mid-body": whole[:-3]}[cut]
    s = connect(broker)
    s.sendall(sent)
    done_sending(s)
    assert closed_by_broker(s)
    s.close()
    assert_unharmed(broker, bystander)


@pytest.mark.parametrize("key,version", [(999, 0), (-1, 0), (127, 0), (128, 0), (32767, 1),
                                         (METADATA, 99), (PRODUCE, 99), (FETCH, 99), (FETCH, 0), (METADATA, -1)])
def test_unknown_api_or_version_closes_the_connection(broker, bystander, key, version):
    s = connect(broker)
    # A valid ApiVersions first: the connection was fine until the bad request.
    assert api_versions_v0(s)[0] == 0
    s.sendall(request(key, version, 11, b"\x00" * 16))
    assert closed_by_broker(s), "Kafka closes the connection without an answer"
    s.close()
    assert_unharmed(broker, bystander)


MALFORMED = {
    "metadata-huge-topic-count": (METADATA, 1, struct.pack(">i", 0x7FFFFFFF)),
    "metadata-name-past-end": (METADATA, 4, struct.pack(">ih", 1, 200) + b"abc"),
    "metadata-negative-name": (METADATA, 1, struct.pack(">ih", 1, -5)),
    "produce-records-past-end": (PRODUCE, 3, struct.pack(">hhii", -1, 1, 1000, 1) + struct.pack(">h", 7) + b"witness"
                                 + struct.pack(">iii", 1, 0, 100000) + b"\x00" * 10),
    "produce-huge-partition-count": (PRODUCE, 7, struct.pack(">hhii", -1, 1, 1000, 1) + struct.pack(">h", 1) + b"t"
                                     + struct.pack(">i", 0x7FFFFFFF)),
    "fetch-empty-body": (FETCH, 11, b""),
    "fetch-garbage": (FETCH, 11, bytes(range(200))),
    "create-topics-huge-count": (CREATE_TOPICS, 3, struct.pack(">i", 0x7FFFFFF0) + b"\x00" * 8),
    "api-versions-v3-bad-body": (API_VERSIONS, 3, b"\xff\xff\xff\xff\xff\xff"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_body_closes_the_connection(broker, bystander, case):
    key, version, body = MALFORMED[case]
    s = connect(broker)
    s.sendall(request(key, version, 21, body, flexible=(key == API_VERSIONS)))
    assert closed_by_broker(s), "a body that does not parse closes the connection"
    s.close()
    assert_unharmed(broker, bystander)


def test_random_bodies_for_every_api(broker, bystander):
    """Random bytes as the body of every API the broker serves, at its lowest and highest version."""
    s = connect(broker)
    _, ranges = api_versions_v0(s)
    s.close()
    rng = random.Random(42)
    for key, (lo, hi) in sorted(ranges.items()):
        for version in sorted({lo, hi}):
            for _ in range(2):
                body = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 64)))
                s = connect(broker)
                s.sendall(request(key, version, 5, body, flexible=False))
                done_sending(s)
                s.settimeout(10)
                try:
                    while s.recv(65536):  # an answer (if the bytes happened to parse) and then the close
                        pass
                except (ConnectionResetError, socket.timeout):
                    pass  # a body that parsed may wait (a fetch for data), as it would on Kafka
                s.close()
    assert_unharmed(broker, bystander)


def test_api_versions_v99_gets_a_v0_unsupported_version_answer(broker, bystander):
    s = connect(broker)
    s.sendall(request(API_VERSIONS, 99, 1234, b"\x00\x00\x00", flexible=True))
    correlation_id, body = read_response(s)
    assert correlation_id == 1234
    error, ranges = parse_api_versions_v0(body)
    assert error == UNSUPPORTED_VERSION
    assert API_VERSIONS in ranges and ranges[API_VERSIONS][0] == 0 and ranges[API_VERSIONS][1] >= 3
    # As Kafka, the connection stays open, and the client retries in a version the broker serves: v3,
    # flexible, whose answer still has a v0 response header (KIP-511).
    body = b"\x0bferry-test\x061.0.0\x00"  # compact strings: client software name and version, tag buffer
    s.sendall(request(API_VERSIONS, 3, 1235, body, flexible=True))
    correlation_id, body = read_response(s)
    assert correlation_id == 1235
    assert struct.unpack(">h", body[:2])[0] == 0
    s.close()
    assert_unharmed(broker, bystander)


# ------------------------------------------------------------------------------------------------------
# A produce whose batch fails its CRC.

def log_end_offset(cluster, topic):
    status, body = cluster.admin(0, f"/v1/topics/{topic}")
    assert status == 200
    return body["partitions"][0]["local"]["log_end_offset"]


INVALID_RECORD = 87


# Kafka answers CORRUPT_MESSAGE when the CRC fails; a batch cut short is no batch at all for it (INVALID_RECORD).
@pytest.mark.parametrize("damage,errors", [("flipped-value-byte", {CORRUPT_MESSAGE}), ("flipped-crc", {CORRUPT_MESSAGE}),
                                           ("flipped-attributes", {CORRUPT_MESSAGE}),
                                           ("cut-short", {CORRUPT_MESSAGE, INVALID_RECORD})])
def test_produce_with_a_corrupt_batch_gets_corrupt_message(broker, bystander, damage, errors):
    topic = f"crc-{damage}"
    kcat("-b", broker.bootstrap, "-P", "-t", topic, "-p", "0", input=b"one\ntwo\n")
    assert log_end_offset(broker, topic) == 2
    good = build_batch([b"value-%d" % i for i in range(5)])
    assert DefaultRecordBatch(bytearray(good)).validate_crc()
    bad = bytearray(good)
    if damage == "flipped-value-byte":
        bad[-10] ^= 0x01
    elif damage == "flipped-crc":
        bad[17] ^= 0x80
    elif damage == "flipped-attributes":
        bad[22] ^= 0x01  # claims gzip: inside the CRC
    else:
        bad = bad[:-7]  # the batch length says 7 bytes more than there are
    s = connect(broker)
    error, base_offset = produce_v3(s, topic, 0, bytes(bad), 31)
    assert error in errors and base_offset == -1
    assert log_end_offset(broker, topic) == 2, "nothing was appended"
    # The same connection goes on: the intact batch lands right after the two records.
    assert produce_v3(s, topic, 0, good, 32) == (0, 2)
    s.close()
    out = kcat("-b", broker.bootstrap, "-C", "-t", topic, "-p", "0", "-e", "-f", "%o %s\\n").stdout
    assert out == b"0 one\n1 two\n" + b"".join(b"%d value-%d\n" % (2 + i, i) for i in range(5))
    assert_unharmed(broker, bystander)


def test_corrupt_batch_with_acks0_closes_the_connection(broker, bystander):
    """acks=0 gets no answer, so an error is told the way Kafka tells it: by closing the connection
    (KafkaApis.handleProduceRequest), which makes the client refresh its metadata and notice."""
    topic = "crc-acks0"
    kcat("-b", broker.bootstrap, "-P", "-t", topic, "-p", "0", input=b"one\n")
    bad = bytearray(build_batch([b"x", b"y"]))
    bad[-3] ^= 0x40
    body = struct.pack(">hhi", -1, 0, 10000) + struct.pack(">i", 1) + struct.pack(">h", len(topic)) + topic.encode()
    body += struct.pack(">i", 1) + struct.pack(">ii", 0, len(bad)) + bytes(bad)
    s = connect(broker)
    s.sendall(request(PRODUCE, 3, 41, body))
    assert closed_by_broker(s), "an acks=0 produce that failed closes the connection"
    s.close()
    assert log_end_offset(broker, topic) == 1
    assert_unharmed(broker, bystander)


# ------------------------------------------------------------------------------------------------------
# Batches that pass the CRC but whose records are not records: stored, they would stop every consumer at
# their offset, so the broker checks each record as Kafka's LogValidator does.

MESSAGE_TOO_LARGE = 10


def zigzag(value):
    from kafka.record.util import encode_varint
    out = bytearray()
    encode_varint(value, out.append)
    return bytes(out)


def raw_record(offset_delta=0, key_length=1, key=b"k", value=b"v", headers=b"\x00", length_skew=0):
    body = b"\x00" + zigzag(0) + zigzag(offset_delta) + zigzag(key_length) + key + zigzag(len(value)) + value + headers
    return zigzag(len(body) + length_skew) + body


def crafted_batch(records, count, codec=0, base_ts=1_700_000_000_000):
    """A RecordBatch v2 around `records` (already encoded, compressed if codec != 0), claiming `count` records,
    with a length and CRC-32C that match."""
    from kafka.record.util import calc_crc32c
    after_crc = struct.pack(">hiqqqhii", codec, count - 1, base_ts, base_ts, -1, -1, -1, count) + records
    crc = calc_crc32c(after_crc)
    return struct.pack(">qiibI", 0, 4 + 1 + 4 + len(after_crc), -1, 2, crc) + after_crc


def gzip_bomb(inflated_bytes):
    import zlib
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    header = zigzag((1 << 31) - 1) + b"\x00" + zigzag(0) + zigzag(0) + zigzag(-1) + zigzag(inflated_bytes)
    out = packer.compress(header)
    chunk = bytes(1 << 20)
    for _ in range(inflated_bytes >> 20):
        out += packer.compress(chunk)
    return out + packer.flush()


POISON_PILLS = {
    "negative-key-length": (lambda: crafted_batch(raw_record(key_length=-5, key=b""), 1), INVALID_RECORD),
    "null-header-key": (lambda: crafted_batch(raw_record(headers=zigzag(1) + zigzag(-1) + zigzag(-1)), 1),
                        INVALID_RECORD),
    "length-past-fields": (lambda: crafted_batch(raw_record(length_skew=3) + b"\x00\x00\x00", 1), INVALID_RECORD),
    "fewer-records-than-counted": (lambda: crafted_batch(raw_record(0) + raw_record(1), 3), INVALID_RECORD),
    "more-records-than-counted": (lambda: crafted_batch(raw_record(0) + raw_record(1), 1), INVALID_RECORD),
    "claims-2^31-1-records": (lambda: crafted_batch(raw_record(0), (1 << 31) - 1), INVALID_RECORD),
    "no-records": (lambda: crafted_batch(b"", 1), INVALID_RECORD),
    "offsets-out-of-order": (lambda: crafted_batch(raw_record(0) + raw_record(5), 2), INVALID_RECORD),
    "gzip-bomb-of-256-MiB": (lambda: crafted_batch(gzip_bomb(256 << 20), 1, codec=1), MESSAGE_TOO_LARGE),
}


@pytest.mark.parametrize("case", sorted(POISON_PILLS))
def test_batches_with_malformed_records_are_refused(broker, bystander, case):
    make, expected = POISON_PILLS[case]
    topic = f"pill-{case.replace('^', '')}"
    kcat("-b", broker.bootstrap, "-P", "-t", topic, "-p", "0", input=b"one\ntwo\n")
    pill = make()
    assert DefaultRecordBatch(bytearray(pill)).validate_crc(), "the CRC is right: only the records are wrong"
    rss_before = broker_rss_kib(broker)
    s = connect(broker)
    error, base_offset = produce_v3(s, topic, 0, pill, 51)
    assert (error, base_offset) == (expected, -1)
    assert log_end_offset(broker, topic) == 2, "nothing was appended"
    assert produce_v3(s, topic, 0, build_batch([b"three"]), 52) == (0, 2)
    s.close()
    assert broker_rss_kib(broker) - rss_before < 64 * 1024, "checking the batch took bounded memory"
    # Consumers read past where the pill would have been.
    out = kcat("-b", broker.bootstrap, "-C", "-t", topic, "-p", "0", "-e", "-f", "%o %s\\n").stdout
    assert out == b"0 one\n1 two\n2 three\n"
    from kafka import KafkaConsumer, TopicPartition
    consumer = KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000)
    consumer.assign([TopicPartition(topic, 0)])
    assert [m.value for m in consumer] == [b"one", b"two", b"three"]
    consumer.close()
    assert_unharmed(broker, bystander)


def broker_rss_kib(broker):
    with open(f"/proc/{broker.pid(0)}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def unread_by_broker(broker, client_ports):
    """Bytes waiting in the broker's receive queue of each of these connections (from /proc/net/tcp), or
    None while the broker has not accepted all of them."""
    queues = {}
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            local_port = int(fields[1].split(":")[1], 16)
            remote_port = int(fields[2].split(":")[1], 16)
            if local_port == broker.base_port and remote_port in client_ports:
                queues[remote_port] = int(fields[4].split(":")[1], 16)
    return queues if len(queues) == len(client_ports) else None


def test_announced_but_unsent_large_frames_do_not_take_memory(broker, bystander):
    """A frame size at the limit (socket.request.max.bytes, 100 MiB) costs the broker memory for the bytes
    that actually arrive, not for the size announced: 20 such connections must not add 2 GiB."""
    before = broker_rss_kib(broker)
    sockets = []
    try:
        for _ in range(20):
            s = connect(broker)
            s.sendall(struct.pack(">i", 104857600) + request(API_VERSIONS, 0, 1)[4:])
            sockets.append(s)
        ports = {s.getsockname()[1] for s in sockets}
        # Once the broker has read what was sent, it has sized its buffers for the frames.
        wait_until(lambda: (q := unread_by_broker(broker, ports)) and not any(q.values()),
                   what="the broker to read the size prefixes")
        grown = broker_rss_kib(broker) - before
        assert grown < 300 * 1024, f"the broker grew by {grown // 1024} MiB"
        # Those connections still wait for their frames: the rest of one arrives and is answered.
        rest = request(API_VERSIONS, 0, 1)
        sockets[0].sendall(b"\0" * (104857600 - (len(rest) - 4)))
        correlation_id, body = read_response(sockets[0])
        assert correlation_id == 1 and struct.unpack(">h", body[:2])[0] == 0
    finally:
        for s in sockets:
            s.close()
    assert_unharmed(broker, bystander)


def test_pipelined_and_trickled_requests(broker, bystander):
    """200 requests sent at once are answered in order; a request sent a byte at a time is answered."""
    s = connect(broker)
    s.sendall(b"".join(request(API_VERSIONS if i % 2 else METADATA, 0 if i % 2 else 1, i,
                               b"" if i % 2 else struct.pack(">i", 0)) for i in range(200)))
    assert [read_response(s)[0] for _ in range(200)] == list(range(200))
    for byte in request(API_VERSIONS, 0, 777):
        s.sendall(bytes([byte]))
    assert read_response(s)[0] == 777
    s.close()
    assert_unharmed(broker, bystander)


def test_many_connections_at_once(broker, bystander):
    sockets = [connect(broker) for _ in range(300)]
    try:
        for i, s in enumerate(sockets):
            s.sendall(request(API_VERSIONS, 0, i))
        assert [read_response(s)[0] for s in sockets] == list(range(300))
    finally:
        for s in sockets:
            s.close()
    assert_unharmed(broker, bystander)


def open_connections_metric(broker):
    with urllib.request.urlopen(f"http://127.0.0.1:{broker.base_port + 1000}/metrics", timeout=10) as r:
        text = r.read().decode()
    return float(next(line.split()[-1] for line in text.splitlines() if line.startswith("ferry_open_connections")))


def test_open_connections_metric_counts_connections(broker, bystander):
    sockets = [connect(broker) for _ in range(25)]
    try:
        for i, s in enumerate(sockets):
            assert api_versions_v0(s, correlation_id=i)[0] == 0
        wait_until(lambda: open_connections_metric(broker) >= 26, timeout=5, what="the gauge to count 26 connections")
    finally:
        for s in sockets:
            s.close()
    wait_until(lambda: open_connections_metric(broker) < 26, timeout=5, what="the gauge to drop")
    assert_unharmed(broker, bystander)
