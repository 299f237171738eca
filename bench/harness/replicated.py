"""The replicated scenarios, on three-broker clusters (clusters.py):

- replicated: produce to RF=3, min.insync.replicas=2 topics with acks=all, at full speed (rdkafka_performance
  and ProducerPerformance, which also reports its acknowledgement latency under that load) and at a fixed
  rate (benchtool paced-produce: the acknowledgement latency of each record, p50/p99/p99.9).
- failover: many partitions (10,000 in the full run, RF=3), then SIGKILL of the active controller, and later
  of the broker then leading the most partitions: seconds from the kill until the metadata of the surviving brokers names a live leader
  for every partition. The killed broker is started again after each (untimed: until every replica is back
  in sync; that time is recorded too).
"""
import os
import time

from . import loads
from .scenarios import Bench, human_rate

# (id, title, record size, partitions, records per full run for rdkafka_performance and ProducerPerformance,
# records per quick run)
REPLICATED = [
    ("r100", "100 B, 6 partitions", 100, 6, (1_000_000, 500_000), 20_000),
    ("r1k", "1 KiB, 6 partitions", 1024, 6, (300_000, 150_000), 5_000),
]
REPLICATED_TOPIC = {"min.insync.replicas": "2"}
REPLICATION_FACTOR = 3

CLUSTER_PROFILES = {
    # The first seconds after a topic's creation are left out: Kafka's followers take a moment to start
    # fetching a new partition, and acks=all waits for them.
    "full": {"latency": {"rate": 1000, "seconds": 20, "warmup_s": 5},
             "failover": {"topics": 100, "partitions": 100, "timeout": 1800}},
    "quick": {"latency": {"rate": 200, "seconds": 2, "warmup_s": 1},
              "failover": {"topics": 3, "partitions": 10, "timeout": 300}},
}


class ClusterBench(Bench):
    """Runs on clusters instead of single brokers; shares the bookkeeping of every measured run."""

    def __init__(self, mode, systems, tools, run_dir, say, reps=None, scale=1.0, phases=("replicated", "failover")):
        super().__init__(mode, systems, tools, run_dir, say, reps=reps, scale=scale)
        self.phases = phases
        self.cluster_profile = CLUSTER_PROFILES[mode]

    def scenarios(self):
        out = []
        for sid, title, size, parts, full_n, quick_n in REPLICATED:
            n = full_n if self.mode == "full" else (quick_n, quick_n)
            out.append({"id": sid, "title": f"{title}, RF=3, acks=all", "size": size, "partitions": parts,
                        "records": {"rdkafka_performance": max(1, int(n[0] * self.scale)),
                                    "ProducerPerformance": max(1, int(n[1] * self.scale))}})
        return out

    def count_runs(self):
        reps, nsys = self.profile["reps"], len(self.systems)
        n = 0
        if "replicated" in self.phases:
            n += len(REPLICATED) * reps * nsys * 3
        if "failover" in self.phases:
            n += 2 * nsys
        return n

    def warmup(self):
        """Untimed replicated load on every cluster first, as the single-broker phases get: Kafka's JIT
        compiles the replication path (leader and followers) before the first measured run."""
        w = self.profile["warmup"]
        n = max(1, int(w["records"] * self.scale))
        for system in self.systems:
            if not system.alive():
                continue
            self.say(f"warming up {system.label} (3 brokers): {n} records of {w['size']} B with acks=all, untimed")
            log = os.path.join(self.logs, f"{system.key}-cluster-warmup.log")
            try:
                self.create(system, "warmup", w["partitions"])
                for batched in (True, False):
                    self.tools.rdkafka_produce(system.bootstrap, "warmup", w["size"], n if batched else n // 20 + 1,
                                               batched, log, self.profile["timeout"], acks="all")
                self.tools.java_produce(system.bootstrap, "warmup", w["size"], n // 2 + 1, True, log,
                                        self.profile["timeout"], acks="all")
                self.tools.delete_topic(system.bootstrap, "warmup")
            except loads.ToolFailed as e:
                self.notes.append(f"warm-up of {system.label} (3 brokers) failed: {e}")
                self.say(f"  warm-up failed: {e}")

    def run(self):
        self.total = self.count_runs()
        if "replicated" in self.phases:
            self.warmup()
        self.say(f"{self.total} measured runs on 3-broker clusters ({', '.join(s.label for s in self.systems)})")
        if "replicated" in self.phases:
            self.replicated()
        if "failover" in self.phases:
            self.failover()

    def create(self, system, topic, partitions):
        self.tools.create_topic(system.bootstrap, topic, partitions, REPLICATED_TOPIC, REPLICATION_FACTOR)

    def replicated(self):
        timeout = self.profile["timeout"]
        lp = self.cluster_profile["latency"]
        for sc in self.scenarios():
            for rep in range(self.profile["reps"]):
                for system in self.order(rep):
                    for tool in ("rdkafka_performance", "ProducerPerformance"):
                        short = "rdk" if tool.startswith("rdkafka") else "java"
                        topic = f"{sc['id']}-{short}-{rep}"
                        log = os.path.join(self.logs, f"{system.key}-cluster-{topic}.log")

                        def go(system=system, topic=topic, log=log, tool=tool, sc=sc):
                            f = self.tools.rdkafka_produce if tool.startswith("rdkafka") else self.tools.java_produce
                            return f(system.bootstrap, topic, sc["size"], sc["records"][tool], True, log, timeout,
                                     acks="all")

                        self.measure("replicated", sc["id"], sc["title"], tool, system, rep, go,
                                     lambda m: f"{human_rate(m['rec_per_s'])} rec/s, {m['MB_per_s']:.1f} MB/s",
                                     {"records": sc["records"][tool], "size": sc["size"],
                                      "partitions": sc["partitions"], "replication_factor": REPLICATION_FACTOR},
                                     lambda system=system, topic=topic, sc=sc: self.create(system, topic,
                                                                                           sc["partitions"]))
                        if system.alive():
                            self.tools.delete_topic(system.bootstrap, topic)
                    topic = f"{sc['id']}-lat-{rep}"
                    log = os.path.join(self.logs, f"{system.key}-cluster-{topic}.log")

                    def go_lat(system=system, topic=topic, log=log, sc=sc):
                        return self.tools.paced_produce_acks(system.bootstrap, topic, sc["size"], lp["rate"],
                                                             lp["seconds"], lp["warmup_s"], log, timeout, acks="all")

                    self.measure("replicated-latency", f"{sc['id']}-lat",
                                 f"{sc['size']} B at {lp['rate']} records/s, 1 partition, RF=3, acks=all: "
                                 "produce acknowledgement", "benchtool paced-produce (acks)", system, rep, go_lat,
                                 lambda m: f"p50 {m['p50_ms']:.2f} ms, p99 {m['p99_ms']:.2f} ms, "
                                           f"p99.9 {m['p999_ms']:.2f} ms ({m['samples']} samples)",
                                 {"rate": lp["rate"], "size": sc["size"], "replication_factor": REPLICATION_FACTOR},
                                 lambda system=system, topic=topic: self.create(system, topic, 1))
                    if system.alive():
                        self.tools.delete_topic(system.bootstrap, topic)

    def failover(self):
        fp = self.cluster_profile["failover"]
        total = fp["topics"] * fp["partitions"]
        timeout = fp["timeout"]
        title_c = f"{total:,} partitions (RF=3): SIGKILL of the active controller"
        title_b = f"{total:,} partitions (RF=3): SIGKILL of the broker leading the most"
        for system in self.systems:
            log = os.path.join(self.logs, f"{system.key}-failover.log")
            prep = {}

            def setup(system=system, log=log, prep=prep):
                self.say(f"  {system.label}: creating {fp['topics']} topics of {fp['partitions']} partitions, RF=3")
                t0 = time.monotonic()
                self.tools.create_topics(system.bootstrap, "failover", fp["topics"], fp["partitions"],
                                         REPLICATED_TOPIC, REPLICATION_FACTOR, timeout, log)
                prep["create_s"] = round(time.monotonic() - t0, 1)
                self.tools.wait_leaders(system.bootstrap, total, log, timeout, in_sync=True)
                prep["in_sync_s"] = round(time.monotonic() - t0, 1)
                self.say(f"  {system.label}: {total} partitions created in {prep['create_s']} s, every replica in "
                         f"sync after {prep['in_sync_s']} s")

            def created(prep=prep):
                if "create_s" not in prep:
                    raise loads.ToolFailed("the partitions were not created")

            for which, title in (("controller", title_c), ("broker", title_b)):
                def go(system=system, log=log, which=which, prep=prep):
                    controller = system.controller()
                    led = self.tools.wait_leaders(system.bootstrap, total, log, timeout, in_sync=True)["last"]
                    # The other victim is the broker leading the most partitions besides the controller (after
                    # the first restart, the restarted broker leads none until the leader rebalance).
                    victim = controller if which == "controller" else max(
                        (i for i in range(len(system.addresses())) if i != controller),
                        key=lambda i: led.get(str(i), 0))
                    survivors = ",".join(a for i, a in enumerate(system.addresses()) if i != victim)
                    t0 = time.monotonic()
                    system.kill(victim)
                    led = self.tools.wait_leaders(survivors, total, log, timeout, dead=victim)
                    out = {"leaders_s": round(led["at"] - t0, 2), "killed": victim, "controller_before": controller,
                           "moved": led["first"].get(str(victim), 0), **prep}
                    system.restart(victim)
                    back = self.tools.wait_leaders(system.bootstrap, total, log, timeout, in_sync=True)
                    out["in_sync_again_s"] = round(back["at"] - t0, 1)
                    return out

                self.measure("failover", f"failover-{which}", title, "SIGKILL + benchtool leaders", system, 0, go,
                             lambda m: f"every partition led again {m['leaders_s']:.2f} s after the kill "
                                       f"({m['moved']} had their leader on broker {m['killed']}); all in sync "
                                       f"again {m['in_sync_again_s']:.0f} s after it",
                             {"partitions": total, "topics": fp["topics"]}, setup if which == "controller" else created)

