"""A cluster whose __consumer_offsets was created as an ordinary topic (by an old tool, or by a client's
auto-creation on a broker that allowed it): the broker gives it cleanup.policy=compact before coordinating groups
on it, so retention can never delete committed offsets, and says so in its log.
"""
import json

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata

from conftest import started_cluster, wait_until


@pytest.fixture(scope="module")
def one():
    with started_cluster(1, overrides=["offsets.topic.num.partitions=3"]) as c:
        yield c


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
