"""Client quotas (issue 32): kafka-configs.sh sets and describes them through AlterClientQuotas and
DescribeClientQuotas, and they are stored in Kafka's ZooKeeper layout (/config/users/<u>, /config/users/<u>/clients/<c>,
/config/clients/<c>, with /config/changes notifications), so ZooKeeper-mode tools read the same quotas.

One local-cluster --secure broker; kafka-configs runs as ferry-broker, and the clients log in over SASL_PLAINTEXT with
SCRAM-SHA-512 as the users made at module setup, so user entities (users/alice) apply to them. The clients are
confluent-kafka on Debian's librdkafka 2.0.2, which ignores throttle_time_ms: only the broker's muting holds them."""
import json
import struct
import time

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from conftest import BackgroundLoop, kafka_request, read_response, started_cluster, wait_until
from security_clients import broker_config_command, librdkafka_config, make_scram_user, scram_login

# alice's producer and carol's consumer are held by quotas; bob's producer and dave's consumer are not; eve's topic
# changes are held by controller_mutation_rate; gina's requests by request_percentage, hank's not.
USERS = {name: f"{name}-secret" for name in ("alice", "bob", "carol", "dave", "eve", "gina", "hank")}
THROTTLING_QUOTA_EXCEEDED = 89


@pytest.fixture(scope="module")
def one():
    with started_cluster(1, secure=True) as c:
        for user, password in USERS.items():
            make_scram_user(c, user, password)
        wait_until(lambda: _logs_in(c, "eve"), timeout=30, what="the users' logins")
        yield c


def client_config(c, user, **extra):
    return {**librdkafka_config(c, "sasl_plaintext", user, USERS[user], "SCRAM-SHA-512"), **extra}


def _logs_in(c, user):
    try:
        AdminClient(client_config(c, user)).list_topics(timeout=5)
        return True
    except confluent_kafka.KafkaException:
        return False


def configs(c, *args, check=True):
    run = broker_config_command(c, *args)
    if check:
        assert run.returncode == 0, run.stdout + run.stderr
    return run


def quota_series(c, name, kind, user="", client_id=""):
    """The broker's series `name` of one client quota budget (0 when it has none)."""
    labels = frozenset({("kind", kind), ("user", user), ("client_id", client_id)})
    return c.metrics(0).get((name, labels), 0)


def znode(c, path):
    zk = c.zookeeper()
    try:
        if not zk.exists(path):
            return None
        data, _ = zk.get(path)
        return json.loads(data.decode())
    finally:
        zk.stop()


def test_user_and_client_quotas_are_stored_in_kafkas_layout_and_described(one):
    configs(one, "--alter", "--add-config", "producer_byte_rate=1048576,consumer_byte_rate=2097152",
            "--entity-type", "users", "--entity-name", "erin")
    configs(one, "--alter", "--add-config", "consumer_byte_rate=65536", "--entity-type", "users", "--entity-name",
            "erin", "--entity-type", "clients", "--entity-name", "app-1")
    configs(one, "--alter", "--add-config", "producer_byte_rate=1024", "--entity-type", "clients",
            "--entity-default")
    configs(one, "--alter", "--add-config", "consumer_byte_rate=4096", "--entity-type", "users",
            "--entity-default")

    # The values as Kafka's ZooKeeper-mode broker writes them: a LONG key as an integer (its brokers parse it with
    # Long.parseLong).
    assert znode(one, "/config/users/erin")["config"] == {"producer_byte_rate": "1048576",
                                                          "consumer_byte_rate": "2097152"}
    assert znode(one, "/config/users/erin/clients/app-1")["config"] == {"consumer_byte_rate": "65536"}
    assert znode(one, "/config/clients/<default>")["config"] == {"producer_byte_rate": "1024"}
    assert znode(one, "/config/users/<default>")["config"] == {"consumer_byte_rate": "4096"}

    described = configs(one, "--describe", "--entity-type", "users", "--entity-name", "erin").stdout
    assert "producer_byte_rate=1048576.0" in described and "consumer_byte_rate=2097152.0" in described, described
    described = configs(one, "--describe", "--entity-type", "users", "--entity-name", "erin",
                        "--entity-type", "clients", "--entity-name", "app-1").stdout
    assert "consumer_byte_rate=65536.0" in described, described
    described = configs(one, "--describe", "--entity-type", "clients", "--entity-default").stdout
    assert "producer_byte_rate=1024.0" in described, described

    # Defaults apply to every client of this broker, the other tests' too.
    configs(one, "--alter", "--delete-config", "producer_byte_rate", "--entity-type", "clients", "--entity-default")
    configs(one, "--alter", "--delete-config", "consumer_byte_rate", "--entity-type", "users", "--entity-default")
    assert "producer_byte_rate" not in configs(one, "--describe", "--entity-type", "clients",
                                               "--entity-default").stdout

    # Removing a key leaves the others.
    configs(one, "--alter", "--delete-config", "consumer_byte_rate", "--entity-type", "users", "--entity-name",
            "erin")
    assert znode(one, "/config/users/erin")["config"] == {"producer_byte_rate": "1048576"}
    described = configs(one, "--describe", "--entity-type", "users", "--entity-name", "erin").stdout
    assert "consumer_byte_rate" not in described and "producer_byte_rate=1048576.0" in described, described


def test_a_quota_written_by_another_tool_is_described(one):
    """A node and notification written as a ZooKeeper-mode Kafka tool writes them reach the broker's view."""
    zk = one.zookeeper()
    try:
        zk.ensure_path("/config/clients")
        zk.create("/config/clients/batch-job", json.dumps({"version": 1, "config": {"producer_byte_rate": "300"}})
                  .encode())
        zk.create("/config/changes/config_change_", json.dumps({"version": 2, "entity_path": "clients/batch-job"})
                  .encode(), sequence=True)
    finally:
        zk.stop()
    wait_until(lambda: "producer_byte_rate=300.0" in configs(
        one, "--describe", "--entity-type", "clients", "--entity-name", "batch-job").stdout,
        what="the quota written to ZooKeeper to be described")


def test_bad_quotas_are_refused_with_kafkas_reasons(one):
    run = configs(one, "--alter", "--add-config", "producer_byte_rate=10.5", "--entity-type", "users",
                  "--entity-name", "frank", check=False)
    assert run.returncode != 0 and "producer_byte_rate" in run.stdout + run.stderr, run.stdout + run.stderr
    run = configs(one, "--alter", "--add-config", "no_such_quota=1", "--entity-type", "users", "--entity-name",
                  "frank", check=False)
    assert run.returncode != 0, run.stdout + run.stderr
    # Keys Kafka has whose enforcement Ferry lacks are refused by name, never stored and ignored.
    run = configs(one, "--alter", "--add-config", "connection_creation_rate=10", "--entity-type", "ips",
                  "--entity-name", "10.1.2.3", check=False)
    assert run.returncode != 0 and "does not enforce connection_creation_rate" in run.stdout + run.stderr
    assert znode(one, "/config/users/frank") is None and znode(one, "/config/ips/10.1.2.3") is None


class Producing(BackgroundLoop):
    """Produces `size`-byte records as `user` as fast as the broker lets it, with librdkafka (which ignores
    throttle_time_ms: only the broker's muting holds it back), counting the bytes acknowledged."""

    join_seconds = 90

    def __init__(self, c, topic, user, size=10_000, pace=None):
        super().__init__()
        self.config = client_config(c, user, **{"acks": "all", "linger.ms": 5, "queue.buffering.max.kbytes": 4096})
        self.topic, self.value = topic, b"x" * size
        self.pace = pace  # at most this many bytes a second, when given (the disk an unthrottled producer fills)
        self.acked = 0

    def _delivered(self, err, msg):
        if err is None:
            self.acked += len(msg.value())

    def run(self):
        producer = confluent_kafka.Producer(self.config)
        start, sent = time.monotonic(), 0
        while not self.stopping():
            if self.pace and sent > self.pace * (time.monotonic() - start):
                producer.poll(0.01)
                continue
            try:
                producer.produce(self.topic, self.value, on_delivery=self._delivered)
                sent += len(self.value)
            except BufferError:
                producer.poll(0.05)
            producer.poll(0)
        producer.flush(60)


def test_a_producer_is_held_to_its_byte_rate_and_others_are_not(one):
    """KIP-219 with a client that ignores throttle_time_ms (librdkafka 2.0.2): alice's quota, set with
    `kafka-configs --alter --add-config producer_byte_rate=1048576 --entity-type users --entity-name alice`, mutes
    her connection, so over 30 s she averages it within 15%, while bob, without a quota, keeps the 8 MiB/s he paces
    himself to (bounded: the disk it fills)
    on the same broker. Her budget's metrics count her bytes and throttles; bob's are never throttled."""
    rate = 1_048_576
    configs(one, "--alter", "--add-config", f"producer_byte_rate={rate}", "--entity-type", "users",
            "--entity-name", "alice")
    admin = AdminClient(client_config(one, "alice"))
    admin.create_topics([NewTopic("quota-produce", 1, 1)])["quota-produce"].result(30)
    with Producing(one, "quota-produce", "alice") as held, Producing(one, "quota-produce", "bob", pace=8 * rate) as free:
        # Kafka's rate is measured over up to 11 one-second windows; what a client sends before its first
        # throttle is part of its budget, so the average is taken over a span after that settles. Her rate is what
        # the broker took from her (her budget's byte count): acknowledgements reach a client in bunches when its
        # polling thread is starved on a busy machine, so her own count may lag at one end of the span.
        wait_until(lambda: held.acked > 2 * rate, timeout=30, what="the held producer to get going")

        def held_bytes():
            return quota_series(one, "ferry_client_quota_bytes_total", "produce", "alice")
        start, held_start, free_start = time.monotonic(), held_bytes(), free.acked
        time.sleep(30)  # the measurement's span itself
        held_end, free_end = held_bytes(), free.acked
        elapsed = time.monotonic() - start
        held_rate = (held_end - held_start) / elapsed
        free_rate = (free_end - free_start) / elapsed
    assert abs(held_rate - rate) <= 0.15 * rate, f"held producer: {held_rate:.0f} B/s against {rate}"
    assert free_rate > 0.85 * 8 * rate, f"unthrottled producer: {free_rate:.0f} B/s against its own pace of {8 * rate}"
    # One budget for every client of alice's (no client_id tag), as Kafka tags it.
    assert quota_series(one, "ferry_client_quota_bytes_total", "produce", "alice") >= held.acked
    assert quota_series(one, "ferry_client_quota_throttled_requests_total", "produce", "alice") > 0
    assert quota_series(one, "ferry_client_quota_throttle_time_seconds_total", "produce", "alice") > 20
    others = [value for (name, labels), value in one.metrics(0).items()
              if name == "ferry_client_quota_throttled_requests_total" and ("kind", "produce") in labels
              and ("user", "alice") not in labels]
    assert sum(others) == 0, others


def test_a_consumer_is_held_to_its_byte_rate_and_others_are_not(one):
    """The same for fetches, with a quota on one client of one user (users/carol/clients/held-consumer): a
    throttled fetch returns no data and mutes the connection, so carol's consumer averages consumer_byte_rate
    within 15% over 30 s, while dave's, without a quota, reads the whole topic at once."""
    rate = 1_048_576
    configs(one, "--alter", "--add-config", f"consumer_byte_rate={rate}", "--entity-type", "users",
            "--entity-name", "carol", "--entity-type", "clients", "--entity-name", "held-consumer")
    admin = AdminClient(client_config(one, "bob"))
    admin.create_topics([NewTopic("quota-fetch", 1, 1)])["quota-fetch"].result(30)
    total = 5000 * 10_000  # 50 MB in 10 kB records
    producer = confluent_kafka.Producer(client_config(one, "bob", **{"linger.ms": 20}))
    for _ in range(5000):
        while True:
            try:
                producer.produce("quota-fetch", b"y" * 10_000)
                break
            except BufferError:
                producer.poll(0.05)
    assert producer.flush(120) == 0

    def consumer(user, client_id):
        return confluent_kafka.Consumer(client_config(one, user, **{
            "client.id": client_id, "group.id": client_id, "auto.offset.reset": "earliest",
            "enable.auto.commit": False}))

    def read(c, seconds, until_bytes=None):
        got, deadline = 0, time.monotonic() + seconds
        while time.monotonic() < deadline and (until_bytes is None or got < until_bytes):
            for msg in c.consume(500, 0.2):
                if not msg.error():
                    got += len(msg.value())
        return got

    held, free = consumer("carol", "held-consumer"), consumer("dave", "free-consumer")
    try:
        held.subscribe(["quota-fetch"])
        free.subscribe(["quota-fetch"])
        warm = read(held, 60, until_bytes=2 * rate)  # joined, past the first throttle
        start = time.monotonic()
        got = read(held, 30)
        held_rate = got / (time.monotonic() - start)
        start = time.monotonic()
        free_got = read(free, 60, until_bytes=total)
        free_rate = free_got / (time.monotonic() - start)
    finally:
        held.close()
        free.close()
    assert abs(held_rate - rate) <= 0.15 * rate, f"held consumer: {held_rate:.0f} B/s against {rate}"
    assert free_got == total and free_rate > 5 * rate, f"unthrottled consumer: {free_got} B at {free_rate:.0f} B/s"
    # Counted in the budget of carol's held-consumer (both tags: the quota's entity names both).
    counted = quota_series(one, "ferry_client_quota_bytes_total", "fetch", "carol", "held-consumer")
    assert counted >= warm + got, (counted, warm, got)
    assert quota_series(one, "ferry_client_quota_throttled_requests_total", "fetch", "carol", "held-consumer") > 0


def _uvarint(n):
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        if n:
            out += bytes([byte | 0x80])
        else:
            return out + bytes([byte])


def _read_uvarint(data, at):
    n = shift = 0
    while True:
        byte = data[at]
        at += 1
        n |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return n, at


def create_topic(sock, name, partitions, version):
    """(error code, throttle_time_ms) of a CreateTopics of one topic with `partitions` partitions and one replica:
    v4 (before THROTTLING_QUOTA_EXCEEDED) or v6 (the first to know it; flexible)."""
    if version >= 5:
        body = _uvarint(2) + _uvarint(len(name) + 1) + name.encode() + struct.pack(">ih", partitions, 1)
        body += _uvarint(1) + _uvarint(1) + b"\0"  # no assignments, no configs, no tags
        body += struct.pack(">i?", 30000, False) + b"\0"
    else:
        body = struct.pack(">ih", 1, len(name)) + name.encode() + struct.pack(">ihii", partitions, 1, 0, 0)
        body += struct.pack(">i?", 30000, False)
    sock.sendall(kafka_request(19, version, 1, body, flexible=version >= 5))
    _, response = read_response(sock)
    if version >= 5:
        response = response[1:]  # response header v1's tags
    throttle = struct.unpack(">i", response[:4])[0]
    if version >= 5:
        _, at = _read_uvarint(response, 4)
        length, at = _read_uvarint(response, at)
        at += length - 1
    else:
        length = struct.unpack(">h", response[8:10])[0]
        at = 10 + length
    return struct.unpack(">h", response[at:at + 2])[0], throttle


def delete_topic(sock, name, version=5):
    """(error code, throttle_time_ms) of a DeleteTopics v5 (flexible) of one topic."""
    body = _uvarint(2) + _uvarint(len(name) + 1) + name.encode() + struct.pack(">i", 30000) + b"\0"
    sock.sendall(kafka_request(20, version, 1, body, flexible=True))
    _, response = read_response(sock)
    response = response[1:]  # response header v1's tags
    throttle = struct.unpack(">i", response[:4])[0]
    _, at = _read_uvarint(response, 4)
    length, at = _read_uvarint(response, at)
    at += length - 1
    return struct.unpack(">h", response[at:at + 2])[0], throttle


def test_topic_changes_are_held_to_the_controller_mutation_rate(one):
    """KIP-599: eve's controller_mutation_rate of 2 partitions a second gives her a bucket of 22 (11 one-second
    windows). The change that empties it is made, into debt; while she is in debt, requests that know
    THROTTLING_QUOTA_EXCEEDED (CreateTopics v6, DeleteTopics v5) are refused with it and told how long the debt
    takes to clear, while older ones (CreateTopics v4) go through and are throttled for it. Bob, without a
    quota, is not held."""
    configs(one, "--alter", "--add-config", "controller_mutation_rate=2", "--entity-type", "users",
            "--entity-name", "eve")
    described = configs(one, "--describe", "--entity-type", "users", "--entity-name", "eve").stdout
    assert "controller_mutation_rate=2.0" in described, described
    address = one.sasl_plaintext_bootstrap().split(",")[0]

    def call(user, request, *args):
        """`request(sock, *args)` on a new connection of `user` (a throttled connection is muted: one each)."""
        sasl = scram_login(address, user, USERS[user])
        try:
            return request(sasl.sock, *args)
        finally:
            sasl.close()

    assert call("eve", create_topic, "mutation-a", 30, 6) == (0, 0)  # 22 tokens, then 8 in debt
    error, throttle = call("eve", create_topic, "mutation-b", 1, 6)
    assert error == THROTTLING_QUOTA_EXCEEDED and 0 < throttle <= 4000, (error, throttle)
    error, throttle = call("eve", delete_topic, "mutation-a")
    assert error == THROTTLING_QUOTA_EXCEEDED and 0 < throttle <= 4000, (error, throttle)
    assert call("bob", create_topic, "mutation-c", 40, 6) == (0, 0)
    # CreateTopics v4 cannot say THROTTLING_QUOTA_EXCEEDED: the topic is made, and the debt throttles.
    error, throttle = call("eve", create_topic, "mutation-d", 2, 4)
    assert error == 0 and throttle > 0, (error, throttle)
    topics = AdminClient(client_config(one, "bob")).list_topics(timeout=10).topics
    assert {"mutation-a", "mutation-c", "mutation-d"} <= set(topics) and "mutation-b" not in topics, topics
    assert quota_series(one, "ferry_client_quota_partition_mutations_total", "controller_mutation", "eve") == 32
    assert quota_series(one, "ferry_client_quota_throttled_requests_total", "controller_mutation", "eve") == 3

    # Out of debt (at 2 partitions a second), her changes go through again; refusals took nothing.
    wait_until(lambda: call("eve", delete_topic, "mutation-a")[0] == 0, timeout=15, interval=0.5,
               what="eve's debt to clear")


class MetadataFlood(BackgroundLoop):
    """Sends Metadata v4 requests for every topic as `user`, one after another as fast as the broker answers,
    ignoring throttle_time_ms (only the broker's muting holds it back); counts requests and throttled answers."""

    BODY = struct.pack(">i?", -1, False)  # all topics, no auto-creation

    def __init__(self, address, user):
        super().__init__()
        self.sasl = scram_login(address, user, USERS[user])
        self.requests = self.throttled = 0

    def step(self):
        self.sasl.sock.sendall(kafka_request(3, 4, self.requests, self.BODY))
        _, response = read_response(self.sasl.sock)
        self.requests += 1
        if struct.unpack(">i", response[:4])[0] > 0:
            self.throttled += 1

    def close(self):
        self.sasl.close()


def test_a_client_is_held_to_its_request_percentage_and_others_are_not(one):
    """KIP-124: gina's request_percentage of 2 (2% of one thread's time) holds a client that floods the broker with
    Metadata requests and ignores throttle_time_ms: the thread time the broker counts for her stays within her
    quota, while hank's identical client, without a quota, gets many times her requests through."""
    percent = 2
    configs(one, "--alter", "--add-config", f"request_percentage={percent}", "--entity-type", "users",
            "--entity-name", "gina")
    assert znode(one, "/config/users/gina")["config"]["request_percentage"] == "2.0"
    assert f"request_percentage={percent}.0" in configs(one, "--describe", "--entity-type", "users",
                                                        "--entity-name", "gina").stdout

    def used_seconds():
        return quota_series(one, "ferry_client_quota_request_time_seconds_total", "request", "gina")

    address = one.sasl_plaintext_bootstrap().split(",")[0]
    with MetadataFlood(address, "gina") as held, MetadataFlood(address, "hank") as free:
        # Past the burst a client gets before its first throttle (its budget over the first window).
        wait_until(lambda: held.throttled > 5, timeout=30, what="gina's first throttles")
        start, used, held_start, free_start = time.monotonic(), used_seconds(), held.requests, free.requests
        time.sleep(15)  # the measurement's span itself
        elapsed = time.monotonic() - start
        share = 100 * (used_seconds() - used) / elapsed
        held_rate = (held.requests - held_start) / elapsed
        free_rate = (free.requests - free_start) / elapsed
    assert share <= 1.25 * percent, f"gina used {share:.2f}% of a thread against her {percent}%"
    assert share >= 0.25 * percent, f"gina used {share:.2f}% of a thread: held back far more than her quota asks"
    assert free_rate > 3 * held_rate, f"hank: {free_rate:.0f} requests/s, gina: {held_rate:.0f}/s"
    assert free.throttled == 0
    assert quota_series(one, "ferry_client_quota_throttled_requests_total", "request", "gina") >= held.throttled
