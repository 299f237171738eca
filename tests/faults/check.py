#!/usr/bin/env python3
"""The replication fault checker: three brokers, a topic of 6 partitions with 3 replicas and
min.insync.replicas=2, idempotent acks=all producers writing numbered records, a consumer reading all along,
and faults injected one after another:

  kill-leader      SIGKILL of a partition's leader, restarted once another replica leads
  kill-controller  SIGKILL of the controller, restarted once another broker is controller
  zombie           SIGSTOP of a leader until its ZooKeeper session expired and others lead, then SIGCONT
  isolate          a broker cut off from ZooKeeper and its peers (tests/faults/network.py) until its
                   session expired and others lead, then reconnected
  garbled-tail     a broker SIGKILLed, the tail of every segment it holds overwritten, restarted once others
                   lead: it comes back as a follower and must refetch what it lost
  quick-restart    a leader SIGKILLed, records cut off the end of its segments, restarted at once (taking its
                   ZooKeeper session over): it must not lead on its earlier run's leadership
  empty-disk       a broker SIGKILLed, its log dir emptied, restarted: it must never lead before it caught up
  rolling-restart  each broker in turn SIGTERMed (controlled shutdown) and started again

All along, retention and compaction run on two more topics (tests/faults/upkeep.py): one whose segments expire
within seconds, and a compacted one whose keys are overwritten; at the end every key of the compacted topic must
read back with its last acknowledged value or a later one, and their replicas must be back in the ISR too.

After each fault the checker waits until every replica is in sync again. At the end it reads every partition
and prints what was sent, acknowledged, lost, duplicated, reordered and served differently than stored, and
whether all replicas are byte-identical; it exits 1 if anything is off. It also prints how many records the
producers gave up on (failed: their delivery.timeout.ms passed), which is no violation: a record that never was
acknowledged may be stored or not, but never twice. Kafka's brokers give up the same way when a leader cut off
with a producer's first batches of a partition loses its leadership while a later batch of that producer reaches
the new leader, which knows nothing of the producer yet and so accepts it (KIP-360); the earlier batches then
meet OUT_OF_ORDER_SEQUENCE_NUMBER until they expire.

  tests/faults/check.py                      the short form: each fault once (~2 min)
  tests/faults/check.py --duration 3600      the long form: random faults for an hour
  tests/faults/check.py --secure             either form on local-cluster --secure: the brokers replicate,
                                             and the controller reaches them, over SASL_SSL (SCRAM-SHA-512,
                                             user ferry-broker), and every client of the checker connects the
                                             same way, as ferry-broker, to the same (inter-broker) listener

The producers are the Java client's (tests/java, built offline from what scripts/install-deps fetched), the
reader is kcat.

Needs root (cgroups and iptables for the network cut) and a build: $FERRY_BUILD_DIR, default build/debug.
"""
import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import conftest  # noqa: E402  (the integration tests' cluster driver: scripts/local-cluster underneath)
import history  # noqa: E402
import upkeep  # noqa: E402
from network import LoopbackCut  # noqa: E402
from security_clients import java_properties, librdkafka_config  # noqa: E402

TOPIC = "faults"
PARTITIONS = 6
SESSION_TIMEOUT_MS = 6000
FAULTS = ["kill-leader", "kill-controller", "zombie", "isolate", "garbled-tail", "quick-restart", "empty-disk",
          "rolling-restart"]


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class Checker:
    def __init__(self, cluster, cut, rng):
        self.c = cluster
        self.cut = cut
        self.rng = rng
        self.injected = []

    # --- the cluster as the brokers report it -----------------------------------------------------------

    def live(self):
        return [b for b in range(self.c.brokers) if self.c.pid(b) is not None and b != self.cut.cut_broker]

    def topic_state(self, broker, topic=TOPIC):
        try:
            status, body = self.c.admin(broker, f"/v1/topics/{topic}")
        except OSError:
            return None
        return body["partitions"] if status == 200 else None

    def leaders(self, broker):
        state = self.topic_state(broker)
        return None if state is None else {p["partition"]: p["leader"] for p in state}

    def controller(self, broker):
        try:
            status, body = self.c.admin(broker, "/v1/brokers")
        except OSError:
            return None
        return body["controller"] if status == 200 else None

    def states(self):
        """{broker: its partitions' states}, or None while a broker does not answer."""
        states = {b: self.topic_state(b) for b in range(self.c.brokers)}
        return None if any(s is None for s in states.values()) else states

    def healed(self, states=None):
        """Every broker agrees on each partition's leader, and has all three replicas in its ISR."""
        states = states or self.states()
        if states is None:
            return False
        for p in range(PARTITIONS):
            views = [next(x for x in s if x["partition"] == p) for s in states.values()]
            leader = views[0]["leader"]
            if leader < 0 or any(v["leader"] != leader or sorted(v["isr"]) != [0, 1, 2] for v in views):
                return False
            if not states[leader][p]["local"]["leader"]:
                return False
        return True

    def upkeep_in_sync(self):
        """Every replica of the retained and compacted topics in every broker's view of their ISRs."""
        for topic in upkeep.TOPIC_CONFIGS:
            for b in range(self.c.brokers):
                state = self.topic_state(b, topic)
                if state is None or any(sorted(p["isr"]) != [0, 1, 2] for p in state):
                    return False
        return True

    def settled(self):
        """Healed, and with nothing being written, every replica at the same log end, the high watermark there."""
        states = self.states()
        if not self.healed(states):
            return False
        for p in range(PARTITIONS):
            views = {b: next(x for x in s if x["partition"] == p)["local"] for b, s in states.items()}
            leader = states[0][p]["leader"]
            if len({v["log_end_offset"] for v in views.values()}) != 1:
                return False
            if views[leader]["high_watermark"] != views[leader]["log_end_offset"]:
                return False
        return True

    def wait_in_sync(self, timeout=180):
        conftest.wait_until(self.healed, timeout=timeout, interval=0.2, what="every replica in sync again")

    def wait_led_without(self, broker, timeout=60):
        """Until the brokers other than `broker` agree that each partition has a leader other than it."""
        def led():
            others = [b for b in self.live() if b != broker]
            views = [self.leaders(b) for b in others]
            return all(v is not None and all(leader not in (-1, broker) for leader in v.values()) for v in views)
        conftest.wait_until(led, timeout=timeout, interval=0.1, what=f"leaders other than broker {broker}")

    def registered(self, broker):
        zk = self.c.zookeeper()
        try:
            return zk.exists(f"/brokers/ids/{broker}") is not None
        finally:
            zk.stop()

    def start(self, broker):
        subprocess.run([conftest.LOCAL_CLUSTER, "--data", self.c.data, "start", str(broker), "--timeout", "180"],
                       check=True, capture_output=True, preexec_fn=lambda: self.cut.enter(broker))

    def leader_of(self, partition):
        for b in self.live():
            leaders = self.leaders(b)
            if leaders is not None and leaders.get(partition, -1) >= 0:
                return leaders[partition]
        raise AssertionError(f"no leader known for partition {partition}")

    # --- the faults ---------------------------------------------------------------------------------------

    def kill_leader(self):
        partition = self.rng.randrange(PARTITIONS)
        victim = self.leader_of(partition)
        log(f"kill-leader: SIGKILL broker {victim}, leader of {TOPIC}/{partition}")
        self.c.kill(victim)
        self.wait_led_without(victim)
        self.start(victim)

    def kill_controller(self):
        victim = self.controller(self.live()[0])
        log(f"kill-controller: SIGKILL broker {victim}, the controller")
        self.c.kill(victim)
        conftest.wait_until(lambda: all(self.controller(b) not in (None, -1, victim) for b in self.live()),
                            timeout=60, interval=0.1, what="another controller")
        self.wait_led_without(victim)
        self.start(victim)

    def zombie(self):
        partition = self.rng.randrange(PARTITIONS)
        victim = self.leader_of(partition)
        pid = self.c.pid(victim)
        log(f"zombie: SIGSTOP broker {victim}, leader of {TOPIC}/{partition}, until its session expires")
        os.kill(pid, signal.SIGSTOP)
        try:
            conftest.wait_until(lambda: not self.registered(victim), timeout=60, interval=0.2,
                                what=f"broker {victim}'s session to expire")
            self.wait_led_without(victim)
        finally:
            os.kill(pid, signal.SIGCONT)
        log(f"zombie: SIGCONT broker {victim}")

    def isolate(self):
        victim = self.rng.randrange(self.c.brokers)
        log(f"isolate: broker {victim} cut off from ZooKeeper and its peers")
        self.cut.cut(victim)
        try:
            conftest.wait_until(lambda: not self.registered(victim), timeout=60, interval=0.2,
                                what=f"broker {victim}'s session to expire")
            self.wait_led_without(victim)
            dropped = self.cut.dropped()
        finally:
            self.cut.heal()
        peers = {b: p for b, p in self.cut.broker_ports.items() if b != victim}
        log(f"isolate: broker {victim} reconnected; TCP segments dropped: "
            f"{dropped.get((victim, self.c.zk_port), 0)} to ZooKeeper, "
            f"{sum(dropped.get((victim, p), 0) for p in peers.values())} to its peers, "
            f"{sum(dropped.get((b, self.cut.broker_ports[victim]), 0) for b in peers)} from its peers")

    def garbled_tail(self):
        victim = self.rng.randrange(self.c.brokers)
        log(f"garbled-tail: SIGKILL broker {victim}, overwrite the tail of its segments, restart")
        self.c.kill(victim)
        garbled = 0
        for p in range(PARTITIONS):
            segments = self.c.segment_files(victim, TOPIC, p)
            if not segments or os.path.getsize(segments[-1]) == 0:
                continue
            size = os.path.getsize(segments[-1])
            length = min(size, self.rng.randrange(1, 300))
            with open(segments[-1], "r+b") as f:
                f.seek(size - length)
                f.write(os.urandom(length))
            garbled += 1
        log(f"garbled-tail: {garbled} segments garbled")
        self.wait_led_without(victim)
        self.start(victim)

    def quick_restart(self):
        partition = self.rng.randrange(PARTITIONS)
        victim = self.leader_of(partition)
        log(f"quick-restart: SIGKILL broker {victim}, leader of {TOPIC}/{partition}, cut the last records off "
            f"its segments, restart it within its ZooKeeper session")
        self.c.kill(victim)
        for p in range(PARTITIONS):
            segments = self.c.segment_files(victim, TOPIC, p)
            if segments:
                size = os.path.getsize(segments[-1])
                os.truncate(segments[-1], size - min(size, self.rng.randrange(1, 2000)))
        # It takes its session over and registers again: the controller must move the leaderships of its
        # earlier run, whose acknowledged records this run's log has lost.
        self.start(victim)

    def empty_disk(self):
        victim = self.rng.randrange(self.c.brokers)
        log(f"empty-disk: SIGKILL broker {victim}, empty its log dir, restart")
        self.c.kill(victim)
        # What each partition had committed: the returning broker must not lead any of it with less.
        committed = {}
        for b in self.live():
            for p in self.topic_state(b) or []:
                if p["local"]["leader"]:
                    committed[p["partition"]] = p["local"]["high_watermark"]
        shutil.rmtree(self.c.log_dir(victim))
        os.makedirs(self.c.log_dir(victim))
        self.wait_led_without(victim)
        self.start(victim)

        def caught_up():
            state = self.topic_state(victim)
            for p in state or []:
                local = p["local"]
                if p["leader"] == victim and local["leader"] and local["log_end_offset"] < committed.get(p["partition"], 0):
                    raise AssertionError(f"broker {victim} leads {TOPIC}/{p['partition']} with {local['log_end_offset']} "
                                         f"records of the {committed[p['partition']]} committed before it lost them")
            return self.healed()
        conftest.wait_until(caught_up, timeout=180, interval=0.1, what=f"broker {victim} to rebuild its replicas")

    def rolling_restart(self):
        log("rolling-restart: SIGTERM and start each broker in turn")
        for b in range(self.c.brokers):
            self.c.stop(b)
            self.start(b)
            self.wait_in_sync()

    def inject(self, name):
        getattr(self, name.replace("-", "_"))()
        self.injected.append(name)
        self.wait_in_sync()
        log(f"{name}: every replica in sync again")


def replica_digests(cluster):
    """{partition: {broker: sha256 of its segments' bytes in offset order}}."""
    out = {}
    for p in range(PARTITIONS):
        out[p] = {}
        for b in range(cluster.brokers):
            digest = hashlib.sha256()
            for path in cluster.segment_files(b, TOPIC, p):
                with open(path, "rb") as f:
                    digest.update(f.read())
            out[p][b] = digest.hexdigest()
    return out


def client_settings(cluster):
    """What every client of the checker connects with, in librdkafka's names: the bootstrap list, and against a
    secure cluster SASL_SSL with SCRAM-SHA-512 as the brokers' own user to the inter-broker listener."""
    if cluster.secure:
        return librdkafka_config(cluster, "sasl_ssl")
    return {"bootstrap.servers": cluster.bootstrap}


def create_topic(cluster, clients):
    secure = []
    if "security.protocol" in clients:
        secure = ["--command-config", java_properties(os.path.join(cluster.data, "admin.properties"), clients)]
    created = conftest.kafka_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server",
                                  clients["bootstrap.servers"], *secure, "--create", "--topic", TOPIC,
                                  "--partitions", str(PARTITIONS), "--replication-factor", "3",
                                  "--config", "min.insync.replicas=2")
    if created.returncode != 0:
        raise AssertionError(f"kafka-topics --create failed: {created.stdout}{created.stderr}")


def run(args):
    rng = random.Random(args.seed)
    log(f"seed {args.seed}; build {conftest.BUILD_DIR}" + ("; secure: SASL_SSL between the brokers and for the "
                                                           "clients" if args.secure else ""))
    cluster = conftest.Cluster(3, overrides=[f"zookeeper.session.timeout.ms={SESSION_TIMEOUT_MS}",
                                             "replica.lag.time.max.ms=10000", *upkeep.BROKER_SETTINGS],
                               secure=args.secure)
    # A broker's peers reach it on its Kafka port, base_port + id: the only listener with --secure as well (the
    # INTERNAL one, SASL_SSL), which replication and the controller's connections use.
    cut = LoopbackCut(cluster.zk_port, {b: cluster.base_port + b for b in range(3)})
    producers, reader, counts, load = None, None, None, None
    try:
        cluster.up()
        checker = Checker(cluster, cut, rng)
        # Each broker again, in a cgroup of its own: the network cut tells their sockets apart by it.
        for b in range(3):
            cluster.stop(b)
            checker.start(b)
        clients = client_settings(cluster)
        create_topic(cluster, clients)
        for p in range(PARTITIONS):
            cluster.leader(TOPIC, p)
        upkeep.create_topics(cluster)
        load = upkeep.Load(clients)
        producers = history.Producers(3, clients, TOPIC, PARTITIONS, args.rate, cluster.data,
                                      client_debug=args.client_debug)
        reader = history.Reader(clients, TOPIC, os.path.join(cluster.data, "reader.log"))
        checker.wait_in_sync()
        deadline = time.monotonic() + args.duration
        schedule = list(FAULTS) if args.duration == 0 else []
        while schedule or time.monotonic() < deadline:
            name = schedule.pop(0) if schedule else rng.choice(FAULTS)
            checker.inject(name)
            log(f"{len(checker.injected)} faults injected; {producers.acknowledged()} records acknowledged so far")
        log("stopping the producers")
        producers.stop()
        load.stop()
        conftest.wait_until(checker.settled, timeout=180, interval=0.2, what="every replica at the same end")
        final = history.read_all(clients, TOPIC, PARTITIONS)
        # The reader has seen up to the end before it stops.
        ends = {p: rows[-1][0] for p, rows in final.items() if rows}
        try:
            conftest.wait_until(lambda: all((p, o) in reader.served for p, o in ends.items()) or reader.exited(),
                                timeout=60, what="the reader to reach the end")
        except AssertionError:
            reached = {p: max((o for q, o in reader.served if q == p), default=-1) for p in range(PARTITIONS)}
            log(f"the reader reached {reached} of {ends} (kcat {'running' if reader.proc.poll() is None else 'exited'})")
            raise
        if reader.exited():
            raise AssertionError(f"the reader stopped before the end: {reader.exited()}")
        reader.stop()
        counts, examples = history.check(producers.records, reader, final)
        conftest.wait_until(checker.upkeep_in_sync, timeout=180, interval=0.2,
                            what="every replica of the retained and compacted topics in sync")
        upkeep_counts, examples["compacted"] = upkeep.check(clients, load)
        counts.update(upkeep_counts)
        digests = replica_digests(cluster)
        differing = [p for p, by_broker in digests.items() if len(set(by_broker.values())) != 1]
        counts["partitions with differing replicas"] = len(differing)
        log(f"faults injected: {len(checker.injected)} ({', '.join(checker.injected)})")
        log(", ".join(f"{k}: {v}" for k, v in counts.items()))
        for kind, lines in examples.items():
            for line in lines:
                log(f"{kind}: {line}")
        for p in differing:
            log(f"replicas of {TOPIC}/{p} differ: {digests[p]}")
    finally:
        if reader is not None and reader.proc.poll() is None:
            reader.proc.kill()
        if producers is not None:
            producers.stop()
        if load is not None:
            load.stop()
        for b in range(3):
            pid = cluster.pid(b)
            if pid is not None:
                os.kill(pid, signal.SIGCONT)  # a zombie left stopped by a failure stops with the rest
        cut.heal()
        if args.keep:
            log(f"cluster kept running in {cluster.data}")
        else:
            cluster.down()
        cut.cleanup()
    reports = cluster.sanitizer_reports()
    if reports:
        log(f"sanitizer reports in broker logs (kept in {cluster.data}): {reports}")
        return 1
    # Records a producer gave up on are not a violation: they were never acknowledged, and stored at most once.
    bad = {k: v for k, v in counts.items() if k in ("lost", "duplicated", "reordered", "divergent", "unanswered",
                                                     "producers stopped", "partitions with differing replicas",
                                                     "compacted keys older than acknowledged",
                                                     "upkeep that never ran") and v}
    if bad or counts["acknowledged"] == 0:
        log(f"FAILED: {bad or 'nothing was acknowledged'}; the brokers' logs and data are in {cluster.data}")
        return 1
    if args.client_debug:
        log(f"the brokers' and producers' logs are in {cluster.data}")
    elif not args.keep:
        shutil.rmtree(cluster.data, ignore_errors=True)
    log("OK: every acknowledged record is stored once, in order, and every replica is identical")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=0,
                        help="seconds of random faults; 0 (the default) runs each fault once")
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: from the clock, printed)")
    parser.add_argument("--rate", type=float, default=200, help="records a second per producer (3 producers)")
    parser.add_argument("--client-debug", action="store_true",
                        help="the producers' internals (sequence numbers, epoch bumps, retries) at debug level in "
                             "producers.log beside the brokers' logs, kept also when the run passes")
    parser.add_argument("--secure", action="store_true",
                        help="local-cluster --secure: the brokers' inter-broker listener is SASL_SSL, and the "
                             "producers, readers and tools connect over SASL_SSL as user ferry-broker")
    parser.add_argument("--keep", action="store_true", help="leave the cluster running and its directory in place, for inspection")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = int(time.time())
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
