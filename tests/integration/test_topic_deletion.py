"""delete.topic.enable=false holds whoever asks for a deletion: DeleteTopics is refused with
TOPIC_DELETION_DISABLED, and a marker written straight into ZooKeeper (/admin/delete_topics/<topic>, as the
operator and Kafka's ZooKeeper-mode tools write it) is removed by the controller and the topic kept, as
Kafka's controller does. (Deletion with the default, true, is tested in test_data_safety.py.)
"""
import os
import socket
import struct

import pytest

from conftest import kafka_request, kcat, read_response, started_cluster, wait_until

TOPIC_DELETION_DISABLED = 73


@pytest.fixture(scope="module")
def undeletable():
    with started_cluster(3, overrides=["delete.topic.enable=false"]) as c:
        yield c


def consume(cluster, topic):
    out = kcat("-b", cluster.bootstrap, "-C", "-t", topic, "-p", "0", "-e", "-f", "%s\\n", timeout=120).stdout
    return out.split(b"\n")[:-1]


def delete_topics_v1(cluster, broker, topics):
    """DeleteTopics v1 by hand: [(topic, error code)]."""
    body = struct.pack(">i", len(topics))
    for t in topics:
        body += struct.pack(">h", len(t)) + t.encode()
    body += struct.pack(">i", 30000)
    with socket.create_connection(("127.0.0.1", cluster.base_port + broker), timeout=60) as s:
        s.sendall(kafka_request(20, 1, 7, body))
        correlation_id, rest = read_response(s)
    assert correlation_id == 7
    (count,) = struct.unpack(">i", rest[4:8])  # after throttle_time_ms
    pos, out = 8, []
    for _ in range(count):
        (length,) = struct.unpack(">h", rest[pos:pos + 2])
        name = rest[pos + 2:pos + 2 + length].decode()
        (error,) = struct.unpack(">h", rest[pos + 2 + length:pos + 4 + length])
        out.append((name, error))
        pos += 4 + length
    return out


def test_a_deletion_marker_is_removed_and_the_topic_kept(undeletable):
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=undeletable.bootstrap)
    try:
        admin.create_topics([NewTopic("kept", 1, 3)], timeout_ms=30000)
    finally:
        admin.close()
    undeletable.leader("kept", 0)
    kcat("-b", undeletable.bootstrap, "-P", "-t", "kept", "-p", "0", "-X", "topic.request.required.acks=-1",
         input=b"still-here\n")
    assert consume(undeletable, "kept") == [b"still-here"]

    zk = undeletable.zookeeper()
    try:
        topic_node, _ = zk.get("/brokers/topics/kept")
        # A marker for the topic, and one for a topic that does not exist: both go, as in Kafka.
        zk.create("/admin/delete_topics/kept")
        zk.create("/admin/delete_topics/ghost")
        wait_until(lambda: zk.get_children("/admin/delete_topics") == [], what="the controller to remove the markers")
        assert zk.get("/brokers/topics/kept")[0] == topic_node
        assert zk.exists("/config/topics/kept") is not None
        assert zk.exists("/brokers/topics/kept/partitions/0/state") is not None
    finally:
        zk.stop()

    status, body = undeletable.admin(0, "/v1/brokers")
    assert status == 200
    controller_log = undeletable.broker_log(body["controller"])
    assert "not deleting topic kept since delete.topic.enable is false" in controller_log
    assert "not deleting topic ghost since delete.topic.enable is false" in controller_log
    for b in range(3):
        wait_until(lambda: undeletable.admin(b, "/v1/topics/kept")[1].get("marked_for_deletion") is False,
                   what=f"broker {b} to see the topic no longer marked")
        assert os.path.isdir(undeletable.partition_dir(b, "kept", 0)), f"broker {b} kept its log"
        assert "deleted the log of kept/0" not in undeletable.broker_log(b)
    undeletable.leader("kept", 0)
    assert consume(undeletable, "kept") == [b"still-here"]


def test_delete_topics_is_refused(undeletable):
    kcat("-b", undeletable.bootstrap, "-P", "-t", "refused", "-p", "0", input=b"x\n")
    undeletable.leader("refused", 0)
    for b in range(3):
        assert delete_topics_v1(undeletable, b, ["refused"]) == [("refused", TOPIC_DELETION_DISABLED)]
    zk = undeletable.zookeeper()
    try:
        assert zk.exists("/admin/delete_topics/refused") is None
        assert zk.exists("/brokers/topics/refused") is not None
    finally:
        zk.stop()
    assert consume(undeletable, "refused") == [b"x"]
