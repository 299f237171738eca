"""num.replica.fetchers: a follower fetches from each leader over that many fetchers (connections and threads),
each partition always over the same one, and replicates as with one. Two brokers, real ZooKeeper, kcat.
"""
import json
import re

import pytest

from conftest import kcat, started_cluster, wait_until

FETCHERS = 4
PARTITIONS = 8


@pytest.fixture(scope="module")
def two():
    with started_cluster(2, overrides=[f"num.replica.fetchers={FETCHERS}"]) as c:
        yield c


def test_a_follower_replicates_over_every_fetcher(two):
    c = two
    zk = c.zookeeper()
    try:
        assignment = {str(p): [0, 1] for p in range(PARTITIONS)}
        zk.create("/brokers/topics/spread", json.dumps({"version": 1, "partitions": assignment}).encode())
    finally:
        zk.stop()
    for p in range(PARTITIONS):
        assert c.leader("spread", p) == 0
        # acks=all: each batch is acknowledged once broker 1, the follower, has it.
        kcat("-b", c.bootstrap, "-P", "-t", "spread", "-p", str(p), "-X", "topic.request.required.acks=-1",
             input=b"".join(b"p%d-record-%d\n" % (p, i) for i in range(200)))

    def replicated():
        status, body = c.admin(1, "/v1/topics/spread")
        return status == 200 and all(q["local"]["log_end_offset"] == 200 and sorted(q["isr"]) == [0, 1]
                                     for q in body["partitions"])
    wait_until(replicated, timeout=60, what="broker 1 to hold every partition and be in every ISR")
    for p in range(PARTITIONS):
        assert c.segment_bytes(1, "spread", p) == c.segment_bytes(0, "spread", p), p

    # Broker 1 followed broker 0 over all its fetchers, the partitions spread between them.
    started = re.findall(r"fetcher (\d+) fetching (\d+) partitions from broker 0", c.broker_log(1))
    assert {int(i) for i, _ in started} == set(range(FETCHERS)), started
