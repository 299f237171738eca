"""DeleteRecords (API 21) with Kafka's own tool (kafka-delete-records.sh, org.apache.kafka.tools.DeleteRecordsCommand)
on three brokers: the partition's log start moves on the leader and, as they fetch, on the followers (the answer
waits for the in-sync ones); consumers from the beginning start there; the start survives a restart of every
replica (log-start-offset-checkpoint) and a change of leader.
"""
import json

import confluent_kafka
import pytest

from conftest import kafka_tool, started_cluster, wait_until

TOPIC = "purged"


@pytest.fixture(scope="module")
def three():
    with started_cluster(3, ["log.flush.offset.checkpoint.interval.ms=500"]) as c:
        yield c


def log_starts(cluster):
    return {b: cluster.metric(b, "ferry_partition_log_start_offset", topic=TOPIC, partition="0")
            for b in range(3) if cluster.pid(b) is not None}


def earliest(cluster):
    consumer = confluent_kafka.Consumer({"bootstrap.servers": cluster.bootstrap, "group.id": "earliest"})
    try:
        return consumer.get_watermark_offsets(confluent_kafka.TopicPartition(TOPIC, 0), timeout=30)[0]
    finally:
        consumer.close()


def test_delete_records_moves_every_replicas_log_start(three, tmp_path):
    c = three
    zk = c.zookeeper()
    try:
        zk.create(f"/brokers/topics/{TOPIC}", json.dumps({"version": 1, "partitions": {"0": [0, 1, 2]}}).encode())
    finally:
        zk.stop()
    c.leader(TOPIC, 0)
    producer = confluent_kafka.Producer({"bootstrap.servers": c.bootstrap, "acks": "all", "batch.size": 2000})
    for i in range(1000):
        producer.produce(TOPIC, value=f"r-{i}".encode(), partition=0)
    assert producer.flush(60) == 0

    spec = tmp_path / "delete.json"
    spec.write_text(json.dumps({"version": 1, "partitions": [{"topic": TOPIC, "partition": 0, "offset": 600}]}))
    run = kafka_tool("org.apache.kafka.tools.DeleteRecordsCommand", "--bootstrap-server", c.bootstrap,
                     "--offset-json-file", str(spec))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "low_watermark: 600" in run.stdout, run.stdout
    assert earliest(c) == 600
    # The answer waited for the in-sync followers: every replica's log starts there.
    wait_until(lambda: set(log_starts(c).values()) == {600.0}, what="every replica's log start at 600")
    consumer = confluent_kafka.Consumer({"bootstrap.servers": c.bootstrap, "group.id": "from-start",
                                         "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([TOPIC])
        msg = None
        while msg is None or msg.error():
            msg = consumer.poll(30)
            assert msg is not None, "nothing consumed"
        assert msg.offset() == 600 and msg.value() == b"r-600"
    finally:
        consumer.close()

    # Past the high watermark: refused, nothing moves.
    spec.write_text(json.dumps({"version": 1, "partitions": [{"topic": TOPIC, "partition": 0, "offset": 5000}]}))
    refused = kafka_tool("org.apache.kafka.tools.DeleteRecordsCommand", "--bootstrap-server", c.bootstrap,
                         "--offset-json-file", str(spec))
    assert "OffsetOutOfRange" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    assert earliest(c) == 600

    # Every replica restarted (the checkpoint is written every 500 ms here): the start is kept, whoever leads.
    wait_until(lambda: all(f"{TOPIC} 0 600" in open(f"{c.log_dir(b)}/log-start-offset-checkpoint").read()
                           for b in range(3)), what="the log start in every broker's checkpoint")
    for b in range(3):
        c.stop(b)
        c.start(b)
    c.leader(TOPIC, 0)
    wait_until(lambda: earliest(c) == 600, what="the log start after the restarts")
    assert set(log_starts(c).values()) == {600.0}
