"""Where leadership goes. Controlled shutdown: a broker stopped with SIGTERM first hands its leaderships to other
in-sync replicas, so a producer writing through it sees only retriable errors. Preferred leader election:
leadership that moved while a broker was down goes back to each partition's preferred replica (the first of its
assignment) once that replica is in sync again, on request with Kafka's own kafka-leader-election tool (the
ElectLeaders API, answered by the controller), and by itself when the controller checks the leader balance
(auto.leader.rebalance.enable). Controller failover: a SIGKILLed controller is replaced, and its partitions led
again, once its ZooKeeper session expires. Three brokers, real ZooKeeper, kcat producing.
"""
import subprocess
import threading
import time

from conftest import create_spread_topic, kafka_tool, kcat, started_cluster, wait_until

PARTITIONS = 3
ELECTION_TOOL = "org.apache.kafka.tools.LeaderElectionCommand"


def partitions(cluster, topic):
    """{partition: (leader, sorted ISR)} as a running broker's admin API has them."""
    broker = next(b for b in range(cluster.brokers) if cluster.pid(b) is not None)
    status, body = cluster.admin(broker, f"/v1/topics/{topic}")
    assert status == 200, body
    return {p["partition"]: (p["leader"], sorted(p["isr"])) for p in body["partitions"]}


def all_in_sync(cluster, topic):
    return all(isr == [0, 1, 2] for _, isr in partitions(cluster, topic).values())


def preferred_leaders(cluster, topic):
    return all(leader == p for p, (leader, _) in partitions(cluster, topic).items())


def move_leadership_off(cluster, topic, broker):
    """Broker `broker` goes down and comes back: its preferred partition is led elsewhere, every replica in sync."""
    lines = b"".join(b"record-%d\n" % i for i in range(200))
    for p in range(PARTITIONS):
        kcat("-b", cluster.bootstrap, "-P", "-t", topic, "-p", str(p), "-X", "topic.request.required.acks=-1",
             input=lines)
    wait_until(lambda: all_in_sync(cluster, topic), timeout=60, what=f"every replica of {topic} in sync")
    cluster.stop(broker)
    wait_until(lambda: partitions(cluster, topic)[broker][0] not in (-1, broker), timeout=60,
               what=f"a new leader for {topic}/{broker}")
    cluster.start(broker)
    wait_until(lambda: all_in_sync(cluster, topic), timeout=60, what=f"broker {broker} back in every ISR")


def elect(cluster, *args):
    run = kafka_tool(ELECTION_TOOL, "--bootstrap-server", cluster.bootstrap, "--election-type", "PREFERRED", *args)
    assert run.returncode == 0, f"{run.stdout}\n{run.stderr}"
    return run.stdout


def test_kafka_leader_election_tool_restores_the_preferred_leaders():
    # auto.leader.rebalance.enable is on, but checks every 300 s: within this test only the tool moves leaders.
    with started_cluster(3) as c:
        create_spread_topic(c, "elect", PARTITIONS)
        move_leadership_off(c, "elect", 0)
        assert not preferred_leaders(c, "elect")
        out = elect(c, "--all-topic-partitions")
        assert "Successfully completed leader election (PREFERRED) for partitions elect-0" in out, out
        wait_until(lambda: preferred_leaders(c, "elect"), timeout=30, what="broker 0 leading elect/0 again")
        assert all_in_sync(c, "elect")
        # Nothing is left to move: the controller answers ELECTION_NOT_NEEDED, which the tool reports as such.
        out = elect(c, "--topic", "elect", "--partition", "0")
        assert "Valid replica already elected for partitions elect-0" in out, out


def test_the_controller_restores_the_preferred_leaders_by_itself():
    with started_cluster(3, overrides=["leader.imbalance.check.interval.seconds=1"]) as c:
        create_spread_topic(c, "balance", PARTITIONS)
        move_leadership_off(c, "balance", 1)
        wait_until(lambda: preferred_leaders(c, "balance"), timeout=30, what="broker 1 leading balance/1 again")
        assert "moving 1 partitions back to their preferred leaders" in "".join(c.broker_log(b) for b in range(3))


def test_a_stopped_leader_hands_its_partitions_over_before_it_goes():
    with started_cluster(3) as c:
        create_spread_topic(c, "handover", PARTITIONS)
        assert partitions(c, "handover")[0][0] == 0  # partition 0 is led by its preferred replica, broker 0
        kcat("-b", c.bootstrap, "-P", "-t", "handover", "-p", "0", "-X", "topic.request.required.acks=-1",
             input=b"warm-up\n")
        wait_until(lambda: all_in_sync(c, "handover"), timeout=60, what="every replica of handover in sync")

        # A producer writes to partition 0 through broker 0 all the while broker 0 stops, and a thousand
        # records more after it is gone, so the new leader takes records too. It is idempotent: a batch the old
        # leader stored and replicated but answered NOT_LEADER_OR_FOLLOWER for as it stepped down is sent again,
        # and only its sequence numbers let the new leader (which replicated the producer's state) tell the
        # retry from new records, as in Kafka.
        producer = subprocess.Popen(
            ["kcat", "-b", c.bootstrap, "-P", "-t", "handover", "-p", "0", "-X", "enable.idempotence=true",
             "-X", "linger.ms=5"], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        written = []
        last = [None]  # how many records to write in all, once broker 0 is down

        def write():
            while last[0] is None or len(written) < last[0]:
                line = b"record-%d\n" % len(written)
                producer.stdin.write(line)
                written.append(line)
                if len(written) % 100 == 0:
                    producer.stdin.flush()
                    time.sleep(0.005)  # a steady load of up to 20,000 records a second, not a flood
            producer.stdin.close()

        writer = threading.Thread(target=write)
        writer.start()
        wait_until(lambda: len(written) >= 2000, timeout=60, what="the producer under way")
        c.stop(0)
        last[0] = len(written) + 1000
        writer.join(timeout=120)
        errors = producer.stderr.read()
        producer.wait(timeout=120)
        assert producer.returncode == 0, errors.decode(errors="replace")
        assert b"Delivery failed" not in errors, errors.decode(errors="replace")

        log = c.broker_log(0)
        assert "controlled shutdown: no partition left that another in-sync replica could lead" in log, log[-3000:]
        assert partitions(c, "handover")[0][0] in (1, 2)
        # Every record is there once, in order, after the warm-up.
        read = kcat("-b", c.bootstrap, "-C", "-t", "handover", "-p", "0", "-o", "beginning", "-e", "-q").stdout
        assert read.splitlines() == [b"warm-up"] + [w.rstrip(b"\n") for w in written]


def test_a_killed_controller_is_replaced_and_its_partitions_get_new_leaders_within_seconds():
    with started_cluster(3, overrides=["zookeeper.session.timeout.ms=6000"]) as c:
        create_spread_topic(c, "failover", PARTITIONS)
        kcat("-b", c.bootstrap, "-P", "-t", "failover", "-p", "0", "-X", "topic.request.required.acks=-1",
             input=b"before\n")
        wait_until(lambda: all_in_sync(c, "failover"), timeout=60, what="every replica of failover in sync")
        status, body = c.admin(0, "/v1/brokers")
        assert status == 200, body
        controller = body["controller"]
        assert controller in (0, 1, 2)
        led = [p for p, (leader, _) in partitions(c, "failover").items() if leader == controller]
        assert led, "the controller leads its preferred partition"

        c.kill(controller)
        killed = time.monotonic()
        survivors = [b for b in range(3) if b != controller]

        def replaced():
            views = [c.admin(b, "/v1/brokers")[1]["controller"] for b in survivors]
            return views[0] == views[1] and views[0] in survivors
        wait_until(replaced, timeout=30, what="another controller")
        wait_until(lambda: all(leader in survivors for leader, _ in partitions(c, "failover").values()), timeout=30,
                   what="leaders for the killed controller's partitions")
        took = time.monotonic() - killed
        print(f"controller failover: a new controller and leaders {took:.1f} s after the SIGKILL "
              f"(zookeeper.session.timeout.ms=6000)")
        # The new leaders take writes and kept what was there.
        kcat("-b", c.bootstrap, "-P", "-t", "failover", "-p", str(led[0]), "-X", "topic.request.required.acks=-1",
             input=b"after\n")
        read = kcat("-b", c.bootstrap, "-C", "-t", "failover", "-p", "0", "-o", "beginning", "-e", "-q").stdout
        assert read.splitlines()[0] == b"before"
