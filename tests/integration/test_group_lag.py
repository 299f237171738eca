"""Consumer lag computed in the broker, against a three-broker cluster: the group's coordinator exports
kafka_exporter's series (kafka_consumergroup_current_offset, kafka_consumergroup_lag, ...) for partitions it leads
and for partitions led by the other brokers (whose high watermarks it polls), and serves /v1/groups and
/v1/groups/<id>. A real Prometheus server scrapes the brokers while a group falls behind a producer and catches up.
"""
import os
import shutil
import socket
import subprocess
import tempfile
import urllib.parse
import urllib.request
import json

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from conftest import offsets_partition, started_cluster, wait_until

PARTITIONS = 6
OFFSETS_PARTITIONS = 10


@pytest.fixture(scope="module")
def lagging():
    # One replica per partition, spread over the brokers: the coordinator leads some of the partitions a group
    # commits to, and the others' high watermarks come from their leaders.
    with started_cluster(3, overrides=[f"num.partitions={PARTITIONS}", "default.replication.factor=1",
                                       "group.initial.rebalance.delay.ms=200",
                                       f"offsets.topic.num.partitions={OFFSETS_PARTITIONS}"]) as c:
        yield c


def coordinator_of(cluster, group):
    """The broker leading the group's __consumer_offsets partition (Kafka's choice of partition)."""
    return cluster.leader("__consumer_offsets", offsets_partition(group, OFFSETS_PARTITIONS))


def produce(bootstrap, topic, count):
    """Sends `count` records round the partitions; returns the high watermark each partition ends at."""
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    try:
        futures = [producer.send(topic, value=b"v%d" % i, partition=i % PARTITIONS) for i in range(count)]
        producer.flush(timeout=120)
        ends = {}
        for f in futures:
            m = f.get(timeout=60)
            ends[m.partition] = max(ends.get(m.partition, 0), m.offset + 1)
        return ends
    finally:
        producer.close(timeout=10)


def commit(bootstrap, group, topic, offsets):
    """Commits {partition: offset} for the group as an assign() consumer does (no membership)."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, f"at-{o}") for p, o in offsets.items()})
    finally:
        consumer.close(autocommit=False)


def test_the_coordinator_exports_lag_for_partitions_led_anywhere(lagging):
    c = lagging
    topic, group = "lag-metrics", "lag-metrics-app"
    ends = produce(c.bootstrap, topic, 600)
    leaders = {c.leader(topic, p) for p in range(PARTITIONS)}
    assert len(leaders) == 3, f"the partitions should be led by every broker, not only {leaders}"
    committed = {p: end // 2 for p, end in ends.items()}
    commit(c.bootstrap, group, topic, committed)
    coordinator = coordinator_of(c, group)

    def series(broker, name, p):
        return c.metric(broker, name, consumergroup=group, topic=topic, partition=str(p))

    def all_lag_known():
        return all(series(coordinator, "kafka_consumergroup_lag", p) == ends[p] - committed[p] for p in ends)
    wait_until(all_lag_known, timeout=30, interval=0.5, what="lag of every partition, led here or elsewhere")
    for p in ends:
        assert series(coordinator, "kafka_consumergroup_current_offset", p) == committed[p]
    assert c.metric(coordinator, "kafka_consumergroup_lag_sum", consumergroup=group, topic=topic) == \
        sum(ends[p] - committed[p] for p in ends)
    assert c.metric(coordinator, "kafka_consumergroup_members", consumergroup=group) == 0
    assert c.metric(coordinator, "ferry_consumergroup_state", consumergroup=group, state="Empty") == 1
    for other in set(range(3)) - {coordinator}:
        assert series(other, "kafka_consumergroup_current_offset", 0) is None, "only the coordinator exports a group"

    # The producer moves on: the lag of every partition follows its new high watermark.
    more = produce(c.bootstrap, topic, 60)
    wait_until(lambda: all(series(coordinator, "kafka_consumergroup_lag", p) == more[p] - committed[p] for p in more),
               timeout=30, interval=0.5, what="lag following the high watermarks")

    status, listed = c.admin(coordinator, "/v1/groups")
    assert status == 200
    entry = next(g for g in listed["groups"] if g["group_id"] == group)
    assert entry["state"] == "Empty" and entry["members"] == 0
    assert entry["lag"] == sum(more[p] - committed[p] for p in more)

    status, detail = c.admin(coordinator, f"/v1/groups/{group}")
    assert status == 200, detail
    assert detail["coordinator"] == coordinator and detail["members"] == []
    offsets = {o["partition"]: o for o in detail["offsets"]}
    assert set(offsets) == set(range(PARTITIONS))
    for p, o in offsets.items():
        assert o["topic"] == topic
        assert o["committed_offset"] == committed[p] and o["metadata"] == f"at-{committed[p]}"
        assert o["high_watermark"] == more[p] and o["lag"] == more[p] - committed[p]

    other = next(b for b in range(3) if b != coordinator)
    status, body = c.admin(other, f"/v1/groups/{group}")
    assert status == 404 and body["coordinator"] == coordinator, body
    status, body = c.admin(coordinator, "/v1/groups/no-such-group")
    assert status == 404 and "does not exist" in body["error"]
    status, body = c.admin(coordinator, "/v1/groups/bad%zz")
    assert status == 400, body


def test_a_members_group_shows_its_members_and_assignments(lagging):
    c = lagging
    topic, group = "lag-members", "lag members/with slash"  # a group id the path must percent-encode
    produce(c.bootstrap, topic, 60)
    consumer = KafkaConsumer(topic, bootstrap_servers=c.bootstrap, group_id=group, client_id="lag-member-client",
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        wait_until(lambda: consumer.poll(timeout_ms=200) is not None and len(consumer.assignment()) == PARTITIONS,
                   timeout=60, what="the member's assignment")
        coordinator = coordinator_of(c, group)
        path = "/v1/groups/" + urllib.parse.quote(group, safe="")

        def stable():
            consumer.poll(timeout_ms=50)
            status, body = c.admin(coordinator, path)
            return body if status == 200 and body["state"] == "Stable" else None
        detail = wait_until(stable, timeout=30, what="a stable group")
        assert detail["group_id"] == group and detail["protocol_type"] == "consumer" and detail["protocol"]
        assert len(detail["members"]) == 1
        member = detail["members"][0]
        assert member["client_id"] == "lag-member-client" and member["client_host"]
        assert member["assignment"] == [{"topic": topic, "partitions": list(range(PARTITIONS))}]
        assert c.metric(coordinator, "kafka_consumergroup_members", consumergroup=group) == 1
        assert c.metric(coordinator, "ferry_consumergroup_state", consumergroup=group, state="Stable") == 1
    finally:
        consumer.close(autocommit=False)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Prometheus:
    """A real Prometheus server (Debian's), scraping the brokers' /metrics every second."""

    def __init__(self, cluster):
        binary = shutil.which("prometheus")
        if binary is None:
            pytest.fail("prometheus is not installed; run scripts/install-deps")
        self.dir = tempfile.mkdtemp(prefix="ferry-it-prometheus-")
        self.port = free_port()
        targets = ", ".join(f"'127.0.0.1:{cluster.base_port + 1000 + b}'" for b in range(cluster.brokers))
        config = os.path.join(self.dir, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    f"scrape_configs:\n  - job_name: ferry\n    static_configs:\n      - targets: [{targets}]\n")
        self.log = open(os.path.join(self.dir, "prometheus.log"), "wb")
        self.process = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={os.path.join(self.dir, 'data')}",
             f"--web.listen-address=127.0.0.1:{self.port}"], stdout=self.log, stderr=subprocess.STDOUT)

    def query(self, expression):
        """The value of an instant query that yields one series, or None."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expression})
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                body = json.load(response)
        except OSError:
            return None
        result = body["data"]["result"]
        return float(result[0]["value"][1]) if len(result) == 1 else None

    def targets_up(self):
        return self.query("sum(up{job='ferry'})")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def test_prometheus_sees_lag_rise_and_fall_to_zero(lagging):
    c = lagging
    topic, group = "lag-prometheus", "lag-prometheus-app"
    prometheus = Prometheus(c)
    consumer = KafkaConsumer(topic, bootstrap_servers=c.bootstrap, group_id=group, auto_offset_reset="earliest",
                             enable_auto_commit=False)
    try:
        wait_until(lambda: prometheus.targets_up() == c.brokers, timeout=60, interval=0.5,
                   what="Prometheus scraping every broker")
        wait_until(lambda: consumer.poll(timeout_ms=200) is not None and len(consumer.assignment()) == PARTITIONS,
                   timeout=60, what="the member's assignment")
        consumer.commit()  # at the start of every partition, before anything is produced
        lag = f"sum(kafka_consumergroup_lag{{consumergroup='{group}',topic='{topic}'}})"
        wait_until(lambda: prometheus.query(lag) == 0, timeout=60, interval=0.5, what="no lag before producing")

        produce(c.bootstrap, topic, 900)
        wait_until(lambda: prometheus.query(lag) == 900, timeout=60, interval=0.5,
                   what="Prometheus seeing the group 900 records behind")
        assert prometheus.query(f"max(kafka_consumergroup_members{{consumergroup='{group}'}})") == 1

        read = 0
        while read < 900:
            read += sum(len(records) for records in consumer.poll(timeout_ms=500).values())
        consumer.commit()
        wait_until(lambda: prometheus.query(lag) == 0, timeout=60, interval=0.5,
                   what="Prometheus seeing the group catch up")
    finally:
        consumer.close(autocommit=False)
        prometheus.stop()
