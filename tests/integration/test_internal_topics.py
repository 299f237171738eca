"""The coordinators' internal topics. One created as an ordinary topic (by an old tool, or by a client's
auto-creation on a broker that allowed it) gets cleanup.policy=compact before groups are coordinated on it, so
retention can never delete committed offsets, and the broker says so in its log. Neither is created before as many
brokers are live as its replication factor, as in Kafka: one created smaller would stay under-replicated for good.
"""
import json
import socket
import struct

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from kafka.structs import OffsetAndMetadata

from conftest import kafka_request, read_response, started_cluster, wait_until

COORDINATOR_NOT_AVAILABLE = 15
INVALID_REPLICATION_FACTOR = 38
GROUP, TRANSACTION = 0, 1


@pytest.fixture(scope="module")
def one():
    with started_cluster(1, overrides=["offsets.topic.num.partitions=3"]) as c:
        yield c


@pytest.fixture(scope="module")
def three():
    """Three brokers with the default replication factor (3) of the internal topics."""
    with started_cluster(3, overrides=["offsets.topic.num.partitions=3",
                                       "transaction.state.log.num.partitions=3"]) as c:
        yield c


def find_coordinator(c, broker, key, key_type):
    """(error code, error message, node id) of FindCoordinator v1."""
    body = struct.pack(">h", len(key)) + key.encode() + struct.pack(">b", key_type)
    with socket.create_connection(("127.0.0.1", c.base_port + broker), timeout=30) as sock:
        sock.sendall(kafka_request(10, 1, 7, body))
        _, response = read_response(sock)
    error, length = struct.unpack(">hh", response[4:8])
    message = response[8:8 + length].decode() if length >= 0 else None
    node = struct.unpack(">i", response[8 + max(length, 0):12 + max(length, 0)])[0]
    return error, message, node


def auto_create(c, broker, topic):
    """The error code of Metadata v4 for `topic`, allowing its auto-creation."""
    with socket.create_connection(("127.0.0.1", c.base_port + broker), timeout=30) as sock:
        request = MetadataRequest[4](topics=[topic], allow_auto_topic_creation=True)
        sock.sendall(kafka_request(3, 4, 8, request.encode()))
        _, response = read_response(sock)
    topics = MetadataResponse[4].decode(response).topics
    assert [t[1] for t in topics] == [topic]
    return topics[0][0]


def zk_replicas(c, topic):
    """{partition: replicas} of the topic in ZooKeeper, or None while it does not exist."""
    zk = c.zookeeper()
    try:
        if not zk.exists(f"/brokers/topics/{topic}"):
            return None
        data, _ = zk.get(f"/brokers/topics/{topic}")
        return {int(p): r for p, r in json.loads(data)["partitions"].items()}
    finally:
        zk.stop()


def test_internal_topics_wait_for_as_many_live_brokers_as_their_replication_factor(three):
    c = three
    c.stop(2)
    wait_until(lambda: len(c.admin(0, "/v1/brokers")[1]["brokers"]) == 2, what="broker 0 to see broker 2 gone")

    for key_type, topic, setting in [(GROUP, "__consumer_offsets", "offsets.topic.replication.factor"),
                                     (TRANSACTION, "__transaction_state", "transaction.state.log.replication.factor")]:
        error, message, _ = find_coordinator(c, 0, "k", key_type)
        assert error == COORDINATOR_NOT_AVAILABLE
        assert message == f"cannot create {topic}: {setting} is 3, but 2 brokers are live"
        assert auto_create(c, 0, topic) == INVALID_REPLICATION_FACTOR
        assert zk_replicas(c, topic) is None, f"{topic} was created with fewer replicas than its factor"
    assert "not creating __consumer_offsets yet: offsets.topic.replication.factor is 3, but 2 brokers are live" in \
        c.broker_log(0)

    c.start(2)
    for key_type, topic in [(GROUP, "__consumer_offsets"), (TRANSACTION, "__transaction_state")]:
        def coordinator():
            error, _, node = find_coordinator(c, 0, "k", key_type)
            return error == 0 and node in (0, 1, 2)
        wait_until(coordinator, timeout=60, what=f"the coordinator of {topic}")
        replicas = zk_replicas(c, topic)
        assert sorted(replicas) == [0, 1, 2]
        assert all(sorted(r) == [0, 1, 2] for r in replicas.values()), replicas


def test_an_offsets_topic_created_as_an_ordinary_topic_is_made_compacted(one):
    c = one
    zk = c.zookeeper()
    try:
        # As a tool writes a topic: the assignment only, no config (so cleanup.policy is the default, delete), and
        # a retention override that must survive the repair.
        zk.create("/config/topics/__consumer_offsets",
                  json.dumps({"version": 1, "config": {"retention.ms": "86400000"}}).encode(), makepath=True)
        zk.create("/brokers/topics/__consumer_offsets",
                  json.dumps({"version": 1, "partitions": {str(p): [0] for p in range(3)}}).encode())
    finally:
        zk.stop()
    for p in range(3):
        c.leader("__consumer_offsets", p)
    status, topic = c.admin(0, "/v1/topics/__consumer_offsets")
    assert status == 200 and "cleanup.policy" not in topic["config"]

    producer = KafkaProducer(bootstrap_servers=c.bootstrap)
    producer.send("orders", b"one").get(timeout=60)  # commits are for partitions that exist
    producer.close(timeout=10)
    consumer = KafkaConsumer(bootstrap_servers=c.bootstrap, group_id="repair-check", enable_auto_commit=False)
    try:
        tp = TopicPartition("orders", 0)
        consumer.commit({tp: OffsetAndMetadata(42, "")})
        assert consumer.committed(tp) == 42
    finally:
        consumer.close(autocommit=False)

    def repaired():
        status, topic = c.admin(0, "/v1/topics/__consumer_offsets")
        return topic["config"] if status == 200 and topic["config"].get("cleanup.policy") == "compact" else None
    config = wait_until(repaired, timeout=30, what="cleanup.policy=compact on __consumer_offsets")
    assert config["retention.ms"] == "86400000", "the topic's other overrides are kept"
    assert "__consumer_offsets had cleanup.policy=delete (the default)" in c.broker_log(0)
