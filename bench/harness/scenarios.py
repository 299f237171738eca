"""What the bench measures, in which order, and the bookkeeping around every measured run (sync before,
broker CPU and peak RSS across it, machine load, progress lines)."""
import os
import time

from . import brokers as brokers_mod
from . import loads, prepare, procs

# Produce scenarios: (id, title, record size, partitions, batched, records per run in the full run for
# rdkafka_performance and for ProducerPerformance (a run of either takes a few seconds here), records in the
# quick run (None: not in the quick run), consumed afterwards, topic configs).
PRODUCE = [
    ("p100-1", "100 B, 1 partition", 100, 1, True, (3_000_000, 1_000_000), 20_000, True, {}),
    ("p100-8", "100 B, 8 partitions", 100, 8, True, (3_000_000, 1_000_000), None, True, {}),
    ("p1k-1", "1 KiB, 1 partition", 1024, 1, True, (600_000, 200_000), None, True, {}),
    ("p1k-8", "1 KiB, 8 partitions", 1024, 8, True, (600_000, 200_000), 5_000, True, {}),
    ("p100-1-b1", "100 B, 1 partition, batch size 1", 100, 1, False, (100_000, 50_000), 2_000, False, {}),
    # The producers send uncompressed; the broker compresses every batch on append (the cost of a topic's
    # compression.type; compare with p1k-1).
    ("p1k-1-lz4", "1 KiB, 1 partition, topic compression.type=lz4", 1024, 1, True, (600_000, 200_000), 5_000,
     False, {"compression.type": "lz4"}),
]

# The cost of transactions: ProducerPerformance with acks=all and idempotence, then the same as a transactional
# producer committing every 100 ms (Confluent's published figure for this: about 3% of the throughput lost with
# 1 KiB records), then a read_committed ConsumerPerformance of what that wrote: (id, title, record size,
# partitions, transaction interval in ms or None, records per run in the full run, in the quick run).
TRANSACTIONAL = [
    ("a1k-1", "1 KiB, 1 partition, acks=all, idempotent", 1024, 1, None, 300_000, 5_000),
    ("t1k-1", "1 KiB, 1 partition, acks=all, a transaction every 100 ms", 1024, 1, 100, 300_000, 5_000),
]

PROFILES = {
    "full": {
        "reps": 3,
        "latency": {"size": 100, "rate": 1000, "seconds": 20, "warmup_s": 2, "e2e_count": 5000},
        "flush": {"size": 1024, "rate": 4000, "seconds": 20, "warmup_s": 2},
        "restart": {"size": 1024, "records": 10_000_000},
        "growth": {"size": 1024, "chunk": 250_000, "chunks": 8},
        "context": {"loopback_s": 3, "pagecache_mib": [256, 2048]},
        "warmup": {"size": 1024, "partitions": 8, "records": 300_000},
        "commits": {"groups": 10, "members": 10, "seconds": 20, "warmup_s": 2},
        "group_memory": {"groups": 10_000, "members": 10, "lanes": 10, "timeout": 1800},
        "timeout": 600,
    },
    "quick": {
        "reps": 1,
        "latency": {"size": 100, "rate": 200, "seconds": 2, "warmup_s": 1, "e2e_count": 200},
        "flush": {"size": 1024, "rate": 500, "seconds": 2, "warmup_s": 1},
        "restart": {"size": 1024, "records": 20_000},
        "growth": {"size": 1024, "chunk": 2_000, "chunks": 2},
        "context": {"loopback_s": 1, "pagecache_mib": [32]},
        "warmup": {"size": 1024, "partitions": 8, "records": 2_000},
        "commits": {"groups": 2, "members": 3, "seconds": 2, "warmup_s": 1},
        "group_memory": {"groups": 20, "members": 3, "lanes": 4, "timeout": 120},
        "timeout": 120,
    },
}

# The produce-latency-under-disk-work scenario: a time-based fsync every second and 1 MiB segments (at 4 MB/s
# a roll, with its segment seal, every quarter second), set as topic configs so every system gets the same.
FLUSH_TOPIC_CONFIGS = {"flush.ms": "1000", "segment.bytes": "1048576"}

NO_GROUPS = "this build has no consumer groups (its broker refused group.initial.rebalance.delay.ms)"


def human_rate(r):
    return f"{r / 1e6:.2f}M" if r >= 1e6 else f"{r / 1e3:.1f}k" if r >= 1e3 else f"{r:.0f}"


def throughput_summary(m):
    return f"{human_rate(m['rec_per_s'])} rec/s, {m['MB_per_s']:.1f} MB/s"


class Bench:
    def __init__(self, mode, systems, tools, run_dir, say, reps=None, scale=1.0, only=None):
        self.mode, self.systems, self.tools, self.run_dir, self.say = mode, systems, tools, run_dir, say
        self.profile = dict(PROFILES[mode])
        if reps:
            self.profile["reps"] = reps
        self.scale = scale
        self.only = set(only or [])
        self.results = []
        self.notes = []
        self.logs = os.path.join(run_dir, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.drop_ok, self.drop_note = prepare.can_drop_caches()
        self.done = 0
        self.total = 0
        self.t0 = time.monotonic()
        self.loads_seen = []
        self.consume_sources = {}  # (scenario, broker key) -> (topic, records)

    # --- plan --------------------------------------------------------------------------------------------
    def produce_scenarios(self):
        out = []
        for sid, title, size, parts, batched, full_n, quick_n, consumed, configs in PRODUCE:
            n = full_n if self.mode == "full" else (quick_n, quick_n)
            if n[0] is None or (self.only and "produce" not in self.only and sid not in self.only):
                continue
            out.append({"id": sid, "title": title, "size": size, "partitions": parts, "batched": batched,
                        "records": {"rdkafka_performance": max(1, int(n[0] * self.scale)),
                                    "ProducerPerformance": max(1, int(n[1] * self.scale))},
                        "consumed": consumed, "configs": configs})
        return out

    def wants(self, kind):
        return not self.only or kind in self.only

    def count_runs(self):
        reps, nsys = self.profile["reps"], len(self.systems)
        n = 0
        prod = self.produce_scenarios()
        n += len(prod) * reps * nsys * 2
        cons = [p for p in prod if p["consumed"]]
        if self.wants("consume"):
            modes = 2 if self.drop_ok else 1
            n += len(cons) * modes * reps * nsys * 2
        if self.wants("latency"):
            n += reps * nsys * 2
        if self.wants("flush"):
            n += reps * nsys
        if self.wants("restart"):
            n += nsys
        if self.wants("growth"):
            n += self.profile["growth"]["chunks"] * nsys
        if self.wants("groups"):
            n += reps * nsys + nsys
        if self.wants("transactions"):
            n += sum(1 if t[4] is None else 2 for t in TRANSACTIONAL) * reps * nsys
        return n

    def order(self, rep):
        k = rep % len(self.systems)
        return self.systems[k:] + self.systems[:k]

    # --- one measured run ----------------------------------------------------------------------------------
    def measure(self, kind, scenario, title, tool, system, rep, fn, summary, extra=None, setup=None):
        self.done += 1
        label = f"{kind} {title} | {tool} | {system.label} | rep {rep + 1}/{self.profile['reps']}"
        rec = {"kind": kind, "scenario": scenario, "title": title, "tool": tool, "system": system.key, "rep": rep,
               **(extra or {})}
        if not system.alive():
            rec.update(ok=False, error=f"{system.label} is not running")
            self.results.append(rec)
            self.say(f"[{self.done}/{self.total}] {label}: skipped, {system.label} is not running")
            return rec
        try:
            if setup:
                setup()  # topic creation, dropping the page cache: outside the measured window
        except (loads.ToolFailed, OSError) as e:
            rec.update(ok=False, error=f"setup: {e}")
            self.results.append(rec)
            self.say(f"[{self.done}/{self.total}] {label}: FAILED in setup: {e}")
            return rec
        os.sync()  # start every run with no dirty pages of the previous one waiting to be written
        load = procs.loadavg()[0]
        self.loads_seen.append(load)
        meter = procs.BrokerMeter(system.meter_pids())
        meter.start()
        started = time.monotonic()
        try:
            metrics = fn()
            rec.update(ok=True, metrics=metrics)
        except (loads.ToolFailed, OSError, ValueError) as e:
            rec.update(ok=False, error=str(e))
        rec.update(meter.stop())
        rec["load1"] = load
        self.results.append(rec)
        elapsed = time.monotonic() - self.t0
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0
        if rec["ok"]:
            res = summary(rec["metrics"])
            res += f"; broker {rec['broker_cpu_s']} CPU s, peak RSS {rec['broker_peak_rss_mib']} MiB"
        else:
            res = f"FAILED: {rec['error']}"
        self.say(f"[{self.done}/{self.total} {elapsed / 60:.1f} min, ~{eta / 60:.0f} min left] {label}: {res} "
                 f"({time.monotonic() - started:.1f} s, load {load:.1f})")
        if not system.alive():
            self.notes.append(f"{system.label} stopped running during {label}; end of its log:\n{system.log_tail()}")
        return rec

    def skip(self, kind, scenario, title, tool, system, reason, extra=None):
        self.results.append({"kind": kind, "scenario": scenario, "title": title, "tool": tool, "system": system.key,
                             "rep": None, "ok": None, "skipped": reason, **(extra or {})})

    # --- phases --------------------------------------------------------------------------------------------
    def warmup(self):
        """Untimed load on every system first: a long-running broker is warm (JIT-compiled, connections and
        buffers set up); the first measured run should not pay for that."""
        w = self.profile["warmup"]
        n = max(1, int(w["records"] * self.scale))
        for system in self.systems:
            if not system.alive():
                continue
            self.say(f"warming up {system.label}: {n} records of {w['size']} B in and out, untimed")
            log = os.path.join(self.logs, f"{system.key}-warmup.log")
            try:
                self.tools.create_topic(system.bootstrap, "warmup", w["partitions"])
                for batched in (True, False):
                    m = self.tools.rdkafka_produce(system.bootstrap, "warmup", w["size"], n if batched else n // 20 + 1,
                                                   batched, log, self.profile["timeout"])
                self.tools.rdkafka_consume(system.bootstrap, "warmup", w["partitions"], n, log,
                                           self.profile["timeout"])
                self.tools.delete_topic(system.bootstrap, "warmup")
            except loads.ToolFailed as e:
                self.notes.append(f"warm-up of {system.label} failed: {e}")
                self.say(f"  warm-up failed: {e}")

    def run(self):
        self.total = self.count_runs()
        self.warmup()
        self.say(f"{self.total} measured runs: {self.profile['reps']} repetitions, systems alternating "
                 f"({', '.join(s.label for s in self.systems)})")
        prod = self.produce_scenarios()
        if prod:
            self.produce(prod)
        if self.wants("consume"):
            self.consume([p for p in prod if p["consumed"]])
        if self.wants("latency"):
            self.latency()
        if self.wants("flush"):
            self.flush_latency()
        if self.wants("restart"):
            self.restart()
        if self.wants("growth"):
            self.growth()
        if self.wants("groups"):
            self.commits()
            self.group_memory()
        if self.wants("transactions"):
            self.transactions()

    def produce(self, scenarios, kind="produce"):
        timeout = self.profile["timeout"]
        for sc in scenarios:
            for rep in range(self.profile["reps"]):
                for system in self.order(rep):
                    for tool in ("rdkafka_performance", "ProducerPerformance"):
                        short = "rdk" if tool.startswith("rdkafka") else "java"
                        topic = f"{sc['id']}-{short}-{rep}"
                        log = os.path.join(self.logs, f"{system.key}-{topic}.log")
                        keep = sc["consumed"] and short == "rdk" and rep == 0

                        def setup(system=system, topic=topic, sc=sc):
                            self.tools.create_topic(system.bootstrap, topic, sc["partitions"], sc["configs"])

                        def go(system=system, topic=topic, log=log, tool=tool):
                            f = self.tools.rdkafka_produce if tool.startswith("rdkafka") else self.tools.java_produce
                            return f(system.bootstrap, topic, sc["size"], sc["records"][tool], sc["batched"], log,
                                     timeout)

                        rec = self.measure(kind, sc["id"], sc["title"], tool, system, rep, go,
                                           throughput_summary,
                                           {"records": sc["records"][tool], "size": sc["size"],
                                            "partitions": sc["partitions"], "batched": sc["batched"]}, setup)
                        if keep and rec.get("ok"):
                            self.consume_sources[(sc["id"], system.key)] = (topic, rec["metrics"]["records"])
                        elif system.alive():
                            self.tools.delete_topic(system.bootstrap, topic)

    def consume(self, scenarios, kind="consume", modes=("warm", "cold")):
        """What produce() kept, read back; with the page cache dropped before each run too ("cold") when this
        machine can drop it."""
        timeout = self.profile["timeout"]
        if "cold" in modes and not self.drop_ok:
            self.notes.append(self.drop_note)
            modes = ["warm"]
        for mode in modes:
            for sc in scenarios:
                title = f"{sc['title']}, page cache {mode}"
                sid = f"c{sc['id'][1:]}-{mode}"
                for rep in range(self.profile["reps"]):
                    for system in self.order(rep):
                        for tool in ("rdkafka_performance", "ConsumerPerformance"):
                            extra = {"records": sc["records"]["rdkafka_performance"], "size": sc["size"],
                                     "partitions": sc["partitions"],
                                     "cache": mode}
                            src = self.consume_sources.get((sc["id"], system.key))
                            if tool == "ConsumerPerformance" and not system.has_groups:
                                self.done += 1
                                if rep == 0:
                                    self.skip(kind, sid, title, tool, system, NO_GROUPS, extra)
                                continue
                            if src is None:
                                self.done += 1
                                if rep == 0:
                                    self.skip(kind, sid, title, tool, system, "its produce run failed", extra)
                                continue
                            topic, n = src
                            log = os.path.join(self.logs, f"{system.key}-{sid}.log")

                            def go(system=system, topic=topic, n=n, log=log, tool=tool):
                                if tool.startswith("rdkafka"):
                                    return self.tools.rdkafka_consume(system.bootstrap, topic, sc["partitions"], n,
                                                                      log, timeout)
                                return self.tools.java_consume(system.bootstrap, topic, n, log, timeout)

                            self.measure(kind, sid, title, tool, system, rep, go,
                                         throughput_summary,
                                         extra, prepare.drop_caches if mode == "cold" else None)

    def latency(self):
        lp, timeout = self.profile["latency"], self.profile["timeout"]
        title_r = f"{lp['size']} B at {lp['rate']} records/s, 1 partition, acks=1"
        title_j = f"{lp['size']} B, one record at a time (send, then poll it back), acks=1"
        for rep in range(self.profile["reps"]):
            for system in self.order(rep):
                topic = f"lat-rdk-{rep}"
                log = os.path.join(self.logs, f"{system.key}-{topic}.log")

                def go_r(system=system, topic=topic, log=log):
                    return self.tools.rdkafka_latency(system.bootstrap, topic, lp["size"], lp["rate"], lp["seconds"],
                                                      lp["warmup_s"], log, timeout)

                self.measure("latency", "lat-rate", title_r, "rdkafka_performance -C -l + paced producer", system, rep,
                             go_r, lambda m: f"p50 {m['p50_ms']:.2f} ms, p99 {m['p99_ms']:.2f} ms, "
                                             f"p99.9 {m['p999_ms']:.2f} ms ({m['samples']} samples)",
                             {"rate": lp["rate"], "size": lp["size"]},
                             lambda system=system, topic=topic: self.tools.create_topic(system.bootstrap, topic, 1))
                topic = f"lat-java-{rep}"
                log = os.path.join(self.logs, f"{system.key}-{topic}.log")
                extra = {"records": lp["e2e_count"], "size": lp["size"]}
                if not system.has_groups:  # EndToEndLatency ends with commitSync()
                    self.done += 1
                    if rep == 0:
                        self.skip("latency", "lat-e2e", title_j, "EndToEndLatency", system, NO_GROUPS, extra)
                    continue

                def go_j(system=system, topic=topic, log=log):
                    return self.tools.java_end_to_end(system.bootstrap, topic, lp["size"], lp["e2e_count"], log,
                                                      timeout)

                self.measure("latency", "lat-e2e", title_j, "EndToEndLatency", system, rep, go_j,
                             lambda m: f"avg {m['avg_ms']:.2f} ms, p50 {m['p50_ms']:.0f} ms, p99 {m['p99_ms']:.0f} ms, "
                                       f"p99.9 {m['p999_ms']:.0f} ms", extra,
                             lambda system=system, topic=topic: self.tools.create_topic(system.bootstrap, topic, 1))

    def flush_latency(self):
        """Produce acknowledgement latency while the broker fsyncs every second and rolls small segments: disk
        work that stalls the producing thread shows in the tail."""
        fp, timeout = self.profile["flush"], self.profile["timeout"]
        title = (f"{fp['size']} B at {fp['rate']} records/s, 1 partition, acks=1, flush.ms=1000, "
                 f"segment.bytes=1 MiB: produce acknowledgement")
        for rep in range(self.profile["reps"]):
            for system in self.order(rep):
                topic = f"lat-flush-{rep}"
                log = os.path.join(self.logs, f"{system.key}-{topic}.log")

                def go(system=system, topic=topic, log=log):
                    return self.tools.paced_produce_acks(system.bootstrap, topic, fp["size"], fp["rate"], fp["seconds"],
                                                         fp["warmup_s"], log, timeout)

                self.measure("latency", "lat-flush", title, "benchtool paced-produce (acks)", system, rep, go,
                             lambda m: f"p50 {m['p50_ms']:.2f} ms, p99 {m['p99_ms']:.2f} ms, "
                                       f"p99.9 {m['p999_ms']:.2f} ms, max {m['max_ms']:.2f} ms ({m['samples']} samples)",
                             {"rate": fp["rate"], "size": fp["size"], "topic_configs": FLUSH_TOPIC_CONFIGS},
                             lambda system=system, topic=topic: self.tools.create_topic(system.bootstrap, topic, 1,
                                                                                        FLUSH_TOPIC_CONFIGS))

    def restart(self):
        """Time to serve again after SIGKILL with a large log: each system gets one partition of `records`
        1 KiB records (untimed), is killed right after the last acknowledgement, and is started again; measured
        is the time from the kill until one more record is acknowledged. Once per system (the log is large)."""
        r, timeout = self.profile["restart"], self.profile["timeout"]
        records = max(1, int(r["records"] * self.scale))
        gb = records * r["size"] / 1e9
        title = f"{gb:.2f} GB in one partition: SIGKILL, start, until a record is acknowledged"
        for system in self.systems:
            topic = "restart"
            log = os.path.join(self.logs, f"{system.key}-{topic}.log")

            def setup(system=system, topic=topic, log=log):
                self.tools.create_topic(system.bootstrap, topic, 1)
                self.tools.rdkafka_produce(system.bootstrap, topic, r["size"], records, True, log, timeout)

            def go(system=system, topic=topic, log=log):
                t0 = time.monotonic()
                system.kill()
                system.restart()
                self.tools.produce_one(system.bootstrap, topic, log, timeout)
                served = time.monotonic() - t0
                system.wait_restarted(timeout)
                return {"serve_s": round(served, 2), "log_gb": round(gb, 2)}

            self.measure("restart", "restart-kill", title, "SIGKILL + benchtool", system, 0, go,
                         lambda m: f"serving again {m['serve_s']:.2f} s after SIGKILL", {"records": records},
                         setup)
            if system.alive():
                self.tools.delete_topic(system.bootstrap, topic)  # frees the disk for the next system

    def growth(self):
        g, timeout = self.profile["growth"], self.profile["timeout"]
        chunk = max(1, int(g["chunk"] * self.scale))
        topic = "growth"
        for system in self.systems:
            if system.alive():
                try:
                    self.tools.create_topic(system.bootstrap, topic, 1)
                except loads.ToolFailed as e:
                    self.notes.append(f"growth: {system.label}: {e}")
        for c in range(g["chunks"]):
            for system in self.order(c):
                log = os.path.join(self.logs, f"{system.key}-growth.log")
                retained_before = c * chunk * g["size"]

                def go(system=system, log=log):
                    m = self.tools.rdkafka_produce(system.bootstrap, topic, g["size"], chunk, True, log, timeout)
                    m["retained_bytes_on_disk"] = brokers_mod.log_bytes(os.path.join(system.data_dir(), f"{topic}-0"))
                    return m

                self.measure("growth", "growth", f"{g['size']} B records into one partition, chunk {c + 1}", 
                             "rdkafka_performance", system, 0, go,
                             lambda m: f"{human_rate(m['rec_per_s'])} rec/s, {m['MB_per_s']:.1f} MB/s at "
                                       f"{m['retained_bytes_on_disk'] / 1e6:.0f} MB retained",
                             {"chunk": c, "records": chunk, "size": g["size"], "retained_before": retained_before})

    def commits(self):
        """Offset commits from many group members at once."""
        c = self.profile["commits"]
        members = c["groups"] * c["members"]
        title = f"{members} members in {c['groups']} groups: synchronous commits of explicit offsets"
        for rep in range(self.profile["reps"]):
            for system in self.order(rep):
                extra = {"groups": c["groups"], "members": members, "seconds": c["seconds"]}
                if not system.has_groups:
                    self.done += 1
                    if rep == 0:
                        self.skip("commits", "commits", title, "benchtool commit-load", system, NO_GROUPS, extra)
                    continue
                topic = f"commits-{rep}"
                log = os.path.join(self.logs, f"{system.key}-{topic}.log")

                def go(system=system, topic=topic, log=log):
                    return self.tools.commit_load(system.bootstrap, topic, c["groups"], c["members"], c["seconds"],
                                                  c["warmup_s"], log, self.profile["timeout"])

                self.measure("commits", "commits", title, "benchtool commit-load", system, rep, go,
                             lambda m: f"{m['commits_per_s']:.0f} commits/s, p50 {m['p50_ms']:.2f} ms, "
                                       f"p99 {m['p99_ms']:.2f} ms", extra,
                             lambda system=system, topic=topic: self.tools.create_topic(system.bootstrap, topic,
                                                                                        c["members"]))
                if system.alive():
                    self.tools.delete_topic(system.bootstrap, topic)

    def group_memory(self):
        """The coordinator's memory with many groups. Once per system, whatever the repetitions: the memory the
        groups took stays with the broker's allocator once they are gone (Ferry's malloc keeps it for reuse, a
        JVM keeps its heap), so a second run on the same broker would grow it less."""
        g = self.profile["group_memory"]
        title = f"{g['groups']:,} groups of {g['members']} members: formed, then the broker's memory"
        for system in self.systems:
            extra = {"groups": g["groups"], "members": g["groups"] * g["members"], "lanes": g["lanes"]}
            if not system.has_groups:
                self.done += 1
                self.skip("group-memory", "group-memory", title, "grouptool", system, NO_GROUPS, extra)
                continue
            log = os.path.join(self.logs, f"{system.key}-group-memory.log")

            def go(system=system, log=log):
                return self.tools.group_memory(system.bootstrap, system.meter_pids()[0], "members", g["groups"],
                                               g["members"], g["lanes"], isinstance(system, brokers_mod.Kafka), log,
                                               g["timeout"])

            self.measure("group-memory", "group-memory", title, "grouptool", system, 0, go,
                         lambda m: f"formed in {m['form_s']:.1f} s, RSS +{m['rss_growth_mib']:.1f} MiB "
                                   f"({m['rss_bytes_per_member']:.0f} B per member)" +
                                   (f", live heap +{m['heap_growth_mib']:.1f} MiB" if "heap_growth_mib" in m else ""),
                         extra)

    def transactions(self):
        """Idempotent and transactional produce (ProducerPerformance), and a read_committed consume of what the
        transactional producer wrote."""
        timeout = self.profile["timeout"]
        for sid, title, size, parts, interval, full_n, quick_n in TRANSACTIONAL:
            n = max(1, int((full_n if self.mode == "full" else quick_n) * self.scale))
            extra = {"records": n, "size": size, "partitions": parts, "batched": True}
            for rep in range(self.profile["reps"]):
                for system in self.order(rep):
                    topic = f"{sid}-{rep}"
                    log = os.path.join(self.logs, f"{system.key}-{topic}.log")

                    def produce(system=system, topic=topic, log=log, interval=interval):
                        return self.tools.java_produce(system.bootstrap, topic, size, n, True, log, timeout,
                                                       acks="all", transaction_ms=interval)

                    def consume(system=system, topic=topic, log=log.replace(f"-{sid}-", f"-c{sid[1:]}-")):
                        return self.tools.java_consume(system.bootstrap, topic, n, log, timeout, "read_committed")

                    def setup(system=system, topic=topic):
                        self.tools.create_topic(system.bootstrap, topic, parts)

                    rec = self.measure("produce", sid, title, "ProducerPerformance", system, rep, produce,
                                       throughput_summary, extra, setup)
                    if interval is not None:
                        if rec.get("ok"):
                            self.measure("consume", f"c{sid[1:]}", f"{title}, read_committed",
                                         "ConsumerPerformance", system, rep, consume, throughput_summary, extra)
                        else:
                            self.done += 1
                            self.skip("consume", f"c{sid[1:]}", f"{title}, read_committed",
                                      "ConsumerPerformance", system, "its produce run failed", extra)
                    if system.alive():
                        self.tools.delete_topic(system.bootstrap, topic)
