"""Followers replicate: each fetches from its leader as a replica and stores the leader's batches byte for
byte, a follower that was down catches up when it comes back, and the leader's high watermark reaches the
followers. Three brokers, real ZooKeeper, kcat producing.
"""

import json
import os

import pytest

from conftest import create_spread_topic, kcat, started_cluster, wait_until

PARTITIONS = 3


@pytest.fixture(scope="module")
def three():
    with started_cluster(3) as c:
        yield c


def produce(cluster, topic, count, start=0, partitions=range(PARTITIONS)):
    lines = b"".join(b"record-%d-%s\n" % (i, b"x" * (i % 300)) for i in range(start, start + count))
    for p in partitions:
        kcat("-b", cluster.bootstrap, "-P", "-t", topic, "-p", str(p), "-X", "topic.request.required.acks=-1",
             "-X", "linger.ms=5", input=lines)


def local_state(cluster, broker, topic):
    """{partition: (log end offset, high watermark)} of the replicas `broker` hosts."""
    status, body = cluster.admin(broker, f"/v1/topics/{topic}")
    assert status == 200, body
    return {p["partition"]: (p["local"]["log_end_offset"], p["local"]["high_watermark"])
            for p in body["partitions"] if "local" in p}


def isr(cluster, topic):
    """{partition: sorted ISR} as ZooKeeper has it, through broker 0's admin API."""
    status, body = cluster.admin(0, f"/v1/topics/{topic}")
    assert status == 200, body
    return {p["partition"]: sorted(p["isr"]) for p in body["partitions"]}


def assert_all_in_sync(cluster, topic):
    wait_until(lambda: all(v == [0, 1, 2] for v in isr(cluster, topic).values()), timeout=60,
               what=f"every replica of {topic} in the ISR")


def assert_replicas_identical(cluster, topic, brokers=(0, 1, 2)):
    """Waits until every replica has the leader's log end and high watermark, then compares the segment
    bytes: a follower stores the leader's batches as they are (offsets, epochs, CRCs)."""
    def in_sync():
        states = [local_state(cluster, b, topic) for b in brokers]
        return all(len(s) == PARTITIONS for s in states) and all(s == states[0] for s in states) and states[0]
    states = wait_until(in_sync, timeout=60, what=f"every replica of {topic} to reach its leader")
    for p in range(PARTITIONS):
        assert states[p][0] > 0 and states[p][0] == states[p][1], states
        leader_bytes = cluster.segment_bytes(cluster.leader(topic, p), topic, p)
        assert leader_bytes
        for b in brokers:
            assert cluster.segment_bytes(b, topic, p) == leader_bytes, f"broker {b}, partition {p}"


def test_followers_store_the_leaders_batches_byte_for_byte(three):
    create_spread_topic(three, "replicated", PARTITIONS)
    produce(three, "replicated", 500)
    assert_replicas_identical(three, "replicated")
    # Caught up, the followers joined the ISR: acks=all from here waits for all three.
    assert_all_in_sync(three, "replicated")


def test_a_follower_that_was_down_catches_up(three):
    create_spread_topic(three, "catch-up", PARTITIONS)
    produce(three, "catch-up", 200)
    assert_replicas_identical(three, "catch-up")
    # A follower of partition 0 goes down while the leaders of the partitions it does not lead take more.
    leader = three.leader("catch-up", 0)
    follower = next(b for b in range(3) if b != leader)
    others = [p for p in range(PARTITIONS) if three.leader("catch-up", p) != follower]
    assert_all_in_sync(three, "catch-up")
    three.stop(follower)
    # Gone from ZooKeeper, it leaves every ISR (the controller drops it), so acks=all goes on without it.
    wait_until(lambda: all(follower not in v for v in isr(three, "catch-up").values()), timeout=60,
               what=f"broker {follower} out of the ISRs")
    produce(three, "catch-up", 300, start=200, partitions=others)
    three.start(follower)
    assert_replicas_identical(three, "catch-up")
    # Caught up again, it is back in every ISR.
    assert_all_in_sync(three, "catch-up")
    assert "fetching" in three.broker_log(follower)


def test_a_follower_whose_recovery_found_a_hole_fetches_it_again(three):
    # Segments of about 16 KiB, so that the damage below is in a segment that later ones follow.
    zk = three.zookeeper()
    try:
        zk.create("/config/topics/holed", json.dumps({"version": 1, "config": {"segment.bytes": "16384"}}).encode(),
                  makepath=True)
    finally:
        zk.stop()
    create_spread_topic(three, "holed", PARTITIONS)
    lines = b"".join(b"record-%d-%s\n" % (i, b"x" * 100) for i in range(1000))
    for p in range(PARTITIONS):
        # Small batches, so that many segments fill.
        kcat("-b", three.bootstrap, "-P", "-t", "holed", "-p", str(p), "-X", "topic.request.required.acks=-1",
             "-X", "batch.num.messages=20", input=lines)
    assert_replicas_identical(three, "holed")
    leader = three.leader("holed", 0)
    follower = next(b for b in range(3) if b != leader)
    three.stop(follower)  # a clean stop: everything it holds counts as flushed
    segments = three.segment_files(follower, "holed", 0)
    assert len(segments) >= 3, segments
    # Flushed data damaged on disk, found at the next start (a missing index makes it scan the segment): the
    # log reads around the hole, and as a follower it must not keep it.
    with open(segments[1], "r+b") as f:
        f.seek(200)
        byte = f.read(1)
        f.seek(200)
        f.write(bytes([byte[0] ^ 0xFF]))
    os.remove(segments[1][:-len(".log")] + ".index")
    three.start(follower)
    assert_replicas_identical(three, "holed")
    log = three.broker_log(follower)
    assert "truncating there to fetch it all again" in log, log[-3000:]
