"""Fetching from the closest replica (KIP-392): three brokers in racks a, b and c with
replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector. A consumer that names its rack
(client.rack) is sent by the leader to the in-sync replica in that rack and reads from it; one that names none
reads from the leader. kcat (librdkafka) and Kafka's Java console consumer, real ZooKeeper and brokers; which
broker served the records is read from each broker's bytes-out counter.
"""
import json

import pytest

from conftest import kafka_tool, kcat, started_cluster, wait_until

SELECTOR = "replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector"
RACKS = ["rack-a", "rack-b", "rack-c"]
RECORDS = 1000


@pytest.fixture(scope="module")
def racked():
    with started_cluster(3, overrides=[SELECTOR], racks=RACKS) as c:
        yield c


def served(cluster, topic):
    """{broker: record batch bytes it sent to consumers of `topic`}."""
    return {b: cluster.metric(b, "ferry_topic_bytes_out_total", topic=topic) or 0 for b in range(cluster.brokers)}


def committed_everywhere(cluster, topic, records):
    """Every replica of partition 0 is in the ISR, has `records` records and knows they are committed (its high
    watermark): the leader names only in-sync replicas."""
    for b in range(cluster.brokers):
        status, body = cluster.admin(b, f"/v1/topics/{topic}")
        if status != 200:
            return False
        partition = next(p for p in body["partitions"] if p["partition"] == 0)
        local = partition.get("local")
        if sorted(partition["isr"]) != [0, 1, 2] or local is None or local["high_watermark"] != records:
            return False
    return True


def led_by_broker_0(cluster, topic):
    """A topic of one partition with replicas 0 (rack-a, the leader), 1 and 2, holding RECORDS records that every
    replica knows are committed."""
    zk = cluster.zookeeper()
    try:
        zk.create(f"/brokers/topics/{topic}", json.dumps({"version": 1, "partitions": {"0": [0, 1, 2]}}).encode())
    finally:
        zk.stop()
    assert cluster.leader(topic, 0) == 0
    kcat("-b", cluster.bootstrap, "-P", "-t", topic, "-p", "0", "-X", "topic.request.required.acks=-1",
         input=b"".join(b"record-%d\n" % i for i in range(RECORDS)))
    wait_until(lambda: committed_everywhere(cluster, topic, RECORDS), timeout=60,
               what=f"every replica of {topic} in the ISR, holding the records as committed")


def consumed_with_kcat(cluster, topic, *extra):
    out = kcat("-b", cluster.bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e", "-q", *extra).stdout
    return out.splitlines()


def test_kcat_reads_from_the_replica_in_its_rack(racked):
    c = racked
    led_by_broker_0(c, "near")
    before = served(c, "near")
    records = consumed_with_kcat(c, "near", "-X", "client.rack=rack-c")
    assert records == [b"record-%d" % i for i in range(RECORDS)]
    after = served(c, "near")
    # Broker 2 (rack-c) sent the records; the leader only named it.
    assert after[2] > before[2], (before, after)
    assert after[0] == before[0] and after[1] == before[1], (before, after)


def test_a_consumer_that_names_no_rack_or_an_unknown_one_reads_from_the_leader(racked):
    c = racked
    led_by_broker_0(c, "plain")
    for extra in ((), ("-X", "client.rack=rack-z")):
        before = served(c, "plain")
        assert len(consumed_with_kcat(c, "plain", *extra)) == RECORDS
        after = served(c, "plain")
        assert after[0] > before[0], (extra, before, after)
        assert after[1] == before[1] and after[2] == before[2], (extra, before, after)


def test_the_java_consumer_reads_from_the_replica_in_its_rack(racked):
    c = racked
    led_by_broker_0(c, "java-near")
    before = served(c, "java-near")
    run = kafka_tool("org.apache.kafka.tools.consumer.ConsoleConsumer", "--bootstrap-server", c.bootstrap,
                     "--topic", "java-near", "--partition", "0", "--offset", "earliest",
                     "--max-messages", str(RECORDS), "--timeout-ms", "60000",
                     "--command-property", "client.rack=rack-b")
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.splitlines() == ["record-%d" % i for i in range(RECORDS)]
    after = served(c, "java-near")
    assert after[1] > before[1], (before, after)
    assert after[0] == before[0] and after[2] == before[2], (before, after)
