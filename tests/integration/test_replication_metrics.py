"""The replication metrics (docs/metrics.md) on a three-broker cluster, while every replica is in sync and after a
broker stops: partition and leader counts, under-replicated and under-min-ISR partitions, follower lag, ISR
expansions, replication bytes, the controller's own (active, offline partitions, elections). Real ZooKeeper,
kcat producing, each broker's /metrics scraped.
"""
import json

from conftest import create_spread_topic, kcat, started_cluster, wait_until

PARTITIONS = 3


def metric(cluster, broker, name, **labels):
    value = cluster.metric(broker, name, **labels)
    assert value is not None, f"broker {broker} exports no {name}{labels or ''}"
    return value


def in_sync(cluster, topic, isr):
    status, body = cluster.admin(0, f"/v1/topics/{topic}")
    return status == 200 and all(sorted(p["isr"]) == isr for p in body["partitions"])


def test_replication_metrics_follow_the_isr_and_the_controller():
    with started_cluster(3, overrides=["zookeeper.session.timeout.ms=6000"]) as c:
        create_spread_topic(c, "watched", PARTITIONS)
        active = [b for b in range(3) if metric(c, b, "ferry_controller_active") == 1]
        assert len(active) == 1, f"controllers: {active}"
        controller = active[0]
        assert metric(c, controller, "ferry_offline_partitions") == 0
        # The broker that will stop, not the controller (so one controller counts everything), gets one more
        # topic of a single replica: offline once it is gone.
        victim = max(b for b in range(3) if b != controller)
        zk = c.zookeeper()
        try:
            zk.create("/brokers/topics/alone", json.dumps({"version": 1, "partitions": {"0": [victim]}}).encode())
        finally:
            zk.stop()
        c.leader("alone", 0)
        lines = b"".join(b"record-%d\n" % i for i in range(500))
        for p in range(PARTITIONS):
            kcat("-b", c.bootstrap, "-P", "-t", "watched", "-p", str(p), "-X", "topic.request.required.acks=-1",
                 input=lines)
        wait_until(lambda: in_sync(c, "watched", [0, 1, 2]), timeout=60, what="every replica in sync")

        # Each broker hosts a replica of every partition and leads its preferred one; nothing is short of its ISR.
        for b in range(3):
            assert metric(c, b, "ferry_partitions") == PARTITIONS + (1 if b == victim else 0)
            assert metric(c, b, "ferry_leader_partitions") == 1 + (1 if b == victim else 0)
            assert metric(c, b, "ferry_under_replicated_partitions") == 0
            assert metric(c, b, "ferry_under_min_isr_partitions") == 0
            # Every replica was in sync from the creation on: nobody had to join.
            assert metric(c, b, "ferry_isr_expands_total") == 0
            assert metric(c, b, "ferry_topic_replication_bytes_out_total", topic="watched") > 0
            assert metric(c, b, "ferry_topic_replication_bytes_in_total", topic="watched") > 0
            for f in range(3):
                if f != b:
                    wait_until(lambda: c.metric(b, "ferry_partition_follower_lag_records", topic="watched",
                                                partition=str(b), follower=str(f)) == 0,
                               timeout=30, what=f"broker {f} caught up on watched/{b}")
        # Consumers' bytes out do not count what the followers fetched.
        assert all(c.metric(b, "ferry_topic_bytes_out_total", topic="watched") in (None, 0) for b in range(3))
        elections = metric(c, controller, "ferry_leader_elections_total")
        c.stop(victim)
        staying = [b for b in range(3) if b != victim]
        wait_until(lambda: in_sync(c, "watched", staying), timeout=60, what=f"broker {victim} out of every ISR")
        # The two left lead all three partitions now, each with two of its three replicas in sync: under-replicated,
        # but not under min.insync.replicas (1 by default).
        wait_until(lambda: sum(c.metric(b, "ferry_leader_partitions") for b in staying) == PARTITIONS, timeout=30,
                   what="the other brokers leading every partition")
        for b in staying:
            # The view says so a moment before the partitions have taken it.
            wait_until(lambda: metric(c, b, "ferry_under_replicated_partitions") == metric(c, b, "ferry_leader_partitions"),
                       timeout=30, what=f"broker {b} counting its partitions under-replicated")
            assert metric(c, b, "ferry_under_min_isr_partitions") == 0
        # The controller elected a new leader for the stopped broker's partition, and has its single-replica
        # partition offline; the other broker counts neither.
        assert metric(c, controller, "ferry_leader_elections_total") >= elections + 1
        assert metric(c, controller, "ferry_offline_partitions") == 1
        other = next(b for b in staying if b != controller)
        assert metric(c, other, "ferry_offline_partitions") == 0
        assert metric(c, other, "ferry_controller_active") == 0
        # Records written meanwhile are what the stopped follower lacks, in records and in bytes.
        led = next(p for p in range(PARTITIONS) if p != victim)
        kcat("-b", c.bootstrap, "-P", "-t", "watched", "-p", str(led), input=lines)
        leader = c.leader("watched", led)
        wait_until(lambda: c.metric(leader, "ferry_partition_follower_lag_records", topic="watched",
                                    partition=str(led), follower=str(victim)) == 500,
                   timeout=30, what=f"broker {victim} 500 records behind on watched/{led}")
        lag_bytes = c.metric(leader, "ferry_partition_follower_lag_bytes", topic="watched", partition=str(led),
                             follower=str(victim))
        assert len(lines) <= lag_bytes < 2 * len(lines) + 4096, lag_bytes
        # The stopped broker comes back, catches up, and joins the ISR through the leader again.
        expands = metric(c, leader, "ferry_isr_expands_total")
        c.start(victim)
        wait_until(lambda: in_sync(c, "watched", [0, 1, 2]), timeout=60, what=f"broker {victim} back in every ISR")
        assert metric(c, leader, "ferry_isr_expands_total") >= expands + 1
