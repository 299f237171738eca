"""What may delete a partition's data and what may not: a topic znode mangled or removed by hand deletes
nothing (the topic turns invalid, or its logs are set aside as "-stray"), while DeleteTopics does delete.
Three brokers, real ZooKeeper, znodes written with kazoo the way an operator or an old tool would.
"""
import glob
import json
import os

import pytest

from conftest import kcat, started_cluster, wait_until


@pytest.fixture(scope="module")
def three():
    with started_cluster(3) as c:
        yield c


def produce(cluster, topic, count):
    lines = b"".join(b"v-%d\n" % i for i in range(count))
    kcat("-b", cluster.bootstrap, "-P", "-t", topic, "-p", "0", "-X", "topic.request.required.acks=-1", input=lines)


def consume(cluster, topic):
    out = kcat("-b", cluster.bootstrap, "-C", "-t", topic, "-p", "0", "-e", "-f", "%s\\n", timeout=120).stdout
    return out.split(b"\n")[:-1]


def create(cluster, topic, replicas=(0, 1, 2)):
    zk = cluster.zookeeper()
    try:
        zk.create(f"/brokers/topics/{topic}",
                  json.dumps({"version": 1, "partitions": {"0": list(replicas)}}).encode())
    finally:
        zk.stop()
    leader = cluster.leader(topic, 0)
    wait_until(lambda: all(os.path.isdir(cluster.partition_dir(b, topic, 0)) for b in replicas),
               what=f"every replica of {topic} to have a log")
    return leader


def log_bytes(cluster, broker, pattern):
    return sum(os.path.getsize(f) for f in glob.glob(os.path.join(cluster.log_dir(broker), pattern, "*.log")))


def invalid_topics(cluster, broker):
    return cluster.metric(broker, "ferry_invalid_topics")


def test_a_mangled_topic_znode_deletes_nothing_and_recovers_when_fixed(three):
    leader = create(three, "mangled")
    produce(three, "mangled", 100)
    sizes = {b: log_bytes(three, b, "mangled-0") for b in range(3)}
    assert sizes[leader] > 0
    zk = three.zookeeper()
    try:
        original, _ = zk.get("/brokers/topics/mangled")
        for broken in (b"not json", b'{"version":3,"partitions":{}}'):
            zk.set("/brokers/topics/mangled", broken)
            for b in range(3):
                wait_until(lambda: invalid_topics(three, b) == 1, what=f"broker {b} to count the invalid topic")
                status, body = three.admin(b, "/v1/topics/mangled")
                assert status == 200 and body["invalid"] and body["partitions"] == []
                assert os.path.isdir(three.partition_dir(b, "mangled", 0)), "the log is still there"
                assert log_bytes(three, b, "mangled-0") == sizes[b]
        zk.set("/brokers/topics/mangled", original)
    finally:
        zk.stop()
    for b in range(3):
        wait_until(lambda: invalid_topics(three, b) == 0, what=f"broker {b} to read the fixed topic")
    three.leader("mangled", 0)
    assert consume(three, "mangled") == [b"v-%d" % i for i in range(100)]
    for b in range(3):
        assert "no data is deleted" in three.broker_log(b)


def test_a_topic_znode_removed_by_hand_sets_the_logs_aside(three):
    create(three, "vanished")
    produce(three, "vanished", 50)
    leader = three.leader("vanished", 0)
    size = log_bytes(three, leader, "vanished-0")
    assert size > 0
    zk = three.zookeeper()
    try:
        # In one transaction: the controller recreates a partition's missing state node, so a node-by-node
        # recursive delete can find a child reappear under it.
        def subtree(path):
            return [node for child in zk.get_children(path) for node in subtree(f"{path}/{child}")] + [path]
        removal = zk.transaction()
        for node in subtree("/brokers/topics/vanished"):
            removal.delete(node)
        results = removal.commit()
        assert all(r is True for r in results), results
    finally:
        zk.stop()
    for b in range(3):
        wait_until(lambda: not os.path.isdir(three.partition_dir(b, "vanished", 0)),
                   what=f"broker {b} to stop hosting the vanished topic")
        strays = glob.glob(os.path.join(three.log_dir(b), "vanished-0.*-stray"))
        assert len(strays) == 1, f"broker {b} kept its log aside"
        assert three.metric(b, "ferry_stray_logs") >= 1
    assert log_bytes(three, leader, "vanished-0.*-stray") == size


def test_delete_topics_deletes_the_logs(three):
    create(three, "doomed")
    produce(three, "doomed", 10)
    assert len(consume(three, "doomed")) == 10
    from kafka.admin import KafkaAdminClient
    admin = KafkaAdminClient(bootstrap_servers=three.bootstrap)
    try:
        admin.delete_topics(["doomed"], timeout_ms=30000)
    finally:
        admin.close()
    for b in range(3):
        wait_until(lambda: not glob.glob(os.path.join(three.log_dir(b), "doomed-0*")),
                   what=f"broker {b} to delete the topic's log")
