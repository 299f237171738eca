"""Results: results.json (every run), results.md (medians, ratios, machine facts, notes) and PNG charts."""
import json
import os
import statistics

LOWER_IS_BETTER = "lower is better"


def memory_per_member(metrics):
    """What a group member costs the broker: on a JVM the live heap growth (its RSS is mostly the fixed heap,
    touched or not), else the RSS growth."""
    return metrics.get("heap_bytes_per_member", metrics.get("rss_bytes_per_member"))


# The group scenarios' tables in results.md: (row, metric key or function of the metrics, unit, digits).
COMMIT_ROWS = [
    ("commits per second, all members together", "commits_per_s", "commits/s", 0),
    ("commit latency p50", "p50_ms", "ms", 2),
    ("commit latency p99", "p99_ms", "ms", 2),
    ("commit latency p99.9", "p999_ms", "ms", 2),
    ("commit latency mean", "avg_ms", "ms", 2),
    ("until every member held its partition (joins, untimed)", "join_s", "s", 1),
    ("broker CPU seconds over the whole run (joins and leaves included)", "broker_cpu_s", "s", 1),
]
GROUP_MEMORY_ROWS = [
    ("time to form every group", "form_s", "s", 1),
    ("JoinGroup requests per member (rebalance rounds)", "joins_per_member", "", 2),
    ("broker RSS before", "rss_before_mib", "MiB", 1),
    ("broker RSS growth", "rss_growth_mib", "MiB", 1),
    ("... per member", "rss_bytes_per_member", "B", 0),
    ("live heap growth after a full GC (JVM only, jmap -histo:live)", "heap_growth_mib", "MiB", 1),
    ("... per member", "heap_bytes_per_member", "B", 0),
    ("memory per member: RSS growth, on a JVM live heap growth", memory_per_member, "B", 0),
]
# Their rows in the summary: (row, kind, tool, metric, unit, digits); {title} is the scenario's title.
SUMMARY_GROUP_ROWS = [
    ("offset commits, {title}", "commits", "benchtool commit-load", "commits_per_s", "commits/s", 0),
    ("commit latency p50, {title}", "commits", "benchtool commit-load", "p50_ms", "ms", 2),
    ("commit latency p99, {title}", "commits", "benchtool commit-load", "p99_ms", "ms", 2),
    ("{title}: time to form them", "group-memory", "grouptool", "form_s", "s", 1),
    ("{title}: memory per member (RSS growth; Kafka: live heap growth)", "group-memory", "grouptool",
     memory_per_member, "B", 0),
]


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt_rate(rps, mbps):
    if rps is None:
        return "–"
    r = f"{rps / 1e6:.2f}M" if rps >= 1e6 else f"{rps / 1e3:.0f}k" if rps >= 1e4 else f"{rps / 1e3:.1f}k"
    return f"{r} rec/s, {mbps:.1f} MB/s"


def fmt_ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    r = a / b
    return f"{r:.2f}×" if r >= 0.1 else f"{r:.3f}×" if r >= 0.01 else f"{r:.4f}×"


def fmt_num(v, digits=2):
    return "–" if v is None else f"{v:.{digits}f}"


class Report:
    def __init__(self, meta, systems, results, notes):
        self.meta, self.systems, self.results, self.notes = meta, systems, results, notes
        self.ferry = systems[0]
        self.kafkas = systems[1:]

    def runs(self, kind, scenario=None, tool=None, system=None):
        return [r for r in self.results if r["kind"] == kind and (scenario is None or r["scenario"] == scenario)
                and (tool is None or r["tool"] == tool) and (system is None or r["system"] == system)]

    def med(self, runs, key, metric=True):
        """The median of a metric (a key, or a function of the metrics) over the good runs; metric=False: of a
        key of the run itself (broker CPU, RSS)."""
        ok = [r for r in runs if r.get("ok")]
        return median([(key(r["metrics"]) if callable(key) else r["metrics"].get(key)) if metric else r.get(key)
                       for r in ok])

    def cell_status(self, runs):
        """None when there are good runs; else what to print instead of a number."""
        if any(r.get("ok") for r in runs):
            return None
        if any(r.get("skipped") for r in runs):
            return "n/a"  # the reason is in the Notes
        return "failed" if runs else "–"

    def keys(self, kind):
        seen = []
        for r in self.results:
            if r["kind"] == kind and (r["scenario"], r["tool"]) not in seen:
                seen.append((r["scenario"], r["tool"]))
        return seen

    def title(self, kind, scenario):
        for r in self.results:
            if r["kind"] == kind and r["scenario"] == scenario:
                return r["title"]
        return scenario

    # --- tables --------------------------------------------------------------------------------------------
    def throughput_rows(self, kind):
        rows = []
        for scenario, tool in self.keys(kind):
            row = {"id": scenario, "scenario": self.title(kind, scenario), "tool": tool, "cells": {}, "rps": {},
                   "mbps": {}}
            for s in self.systems:
                runs = self.runs(kind, scenario, tool, s.key)
                st = self.cell_status(runs)
                rps, mbps = self.med(runs, "rec_per_s"), self.med(runs, "MB_per_s")
                row["rps"][s.key], row["mbps"][s.key] = rps, mbps
                row["cells"][s.key] = st or fmt_rate(rps, mbps)
                row.setdefault("cpu", {})[s.key] = self.med(runs, "broker_cpu_s", metric=False)
                row.setdefault("rss", {})[s.key] = self.med(runs, "broker_peak_rss_mib", metric=False)
                row.setdefault("n", {})[s.key] = len([r for r in runs if r.get("ok")])
            rows.append(row)
        return rows

    def throughput_table(self, kind):
        rows = self.throughput_rows(kind)
        if not rows:
            return ""
        head = ["Scenario", "Tool", *[s.label for s in self.systems], *[f"Ferry / {k.short}" for k in self.kafkas]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in rows:
            ratios = [fmt_ratio(row["mbps"][self.ferry.key], row["mbps"][k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([row["scenario"], row["tool"], *[row["cells"][s.key] for s in self.systems],
                                          *ratios]) + " |")
        return "\n".join(out)

    def resource_table(self):
        rows = [("produce", r) for r in self.throughput_rows("produce")] + \
               [("consume", r) for r in self.throughput_rows("consume")]
        if not rows:
            return ""
        head = ["Run", "Tool", *[f"{s.short} CPU s" for s in self.systems],
                *[f"Ferry / {k.short} CPU" for k in self.kafkas], *[f"{s.short} peak RSS MiB" for s in self.systems]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for kind, row in rows:
            if all(v is None for v in row["cpu"].values()):
                continue
            cpu = [fmt_num(row["cpu"][s.key]) for s in self.systems]
            ratios = [fmt_ratio(row["cpu"][self.ferry.key], row["cpu"][k.key]) for k in self.kafkas]
            rss = [fmt_num(row["rss"][s.key], 0) for s in self.systems]
            out.append("| " + " | ".join([f"{kind} {row['scenario']}", row["tool"], *cpu, *ratios, *rss]) + " |")
        return "\n".join(out)

    def latency_table(self, kind="latency"):
        keys = self.keys(kind)
        if not keys:
            return ""
        head = ["Scenario", "Tool", "Percentile", *[s.label for s in self.systems],
                *[f"Ferry / {k.short}" for k in self.kafkas]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for scenario, tool in keys:
            java = tool == "EndToEndLatency"
            for pkey, pname in (("p50_ms", "p50"), ("p99_ms", "p99"), ("p999_ms", "p99.9"), ("avg_ms", "mean")):
                vals, cells = {}, []
                for s in self.systems:
                    runs = self.runs(kind, scenario, tool, s.key)
                    st = self.cell_status(runs)
                    vals[s.key] = self.med(runs, pkey)
                    digits = 0 if java and pkey != "avg_ms" else 2
                    cells.append(st or f"{fmt_num(vals[s.key], digits)} ms")
                ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
                out.append("| " + " | ".join([self.title(kind, scenario), tool, pname, *cells, *ratios]) + " |")
        return "\n".join(out)

    def load_latency_table(self):
        """ProducerPerformance's acknowledgement latency during the replicated full-speed runs."""
        keys = [k for k in self.keys("replicated") if k[1] == "ProducerPerformance"]
        if not keys:
            return ""
        head = ["Scenario", "Percentile", *[s.label for s in self.systems], *[f"Ferry / {k.short}" for k in self.kafkas]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for scenario, tool in keys:
            for pkey, pname in (("ack_latency_p50_ms", "p50"), ("ack_latency_p99_ms", "p99"),
                                ("ack_latency_p999_ms", "p99.9")):
                vals = {s.key: self.med(self.runs("replicated", scenario, tool, s.key), pkey) for s in self.systems}
                cells = [f"{fmt_num(vals[s.key], 0)} ms" if vals[s.key] is not None else "–" for s in self.systems]
                ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
                out.append("| " + " | ".join([self.title("replicated", scenario), pname, *cells, *ratios]) + " |")
        return "\n".join(out)

    def failover_table(self):
        keys = self.keys("failover")
        if not keys:
            return ""
        head = ["", *[s.label for s in self.systems], *[f"Ferry / {k.short}" for k in self.kafkas]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        rows = [("creating the topics: every partition led", "failover-controller", "create_s", 1),
                ("... and every replica in sync", "failover-controller", "in_sync_s", 1)]
        for scenario, _ in keys:
            title = self.title("failover", scenario).split(": ", 1)[-1]
            rows += [(f"{title}: every partition led again", scenario, "leaders_s", 2),
                     (f"{title}: every replica in sync again (restarted at once)", scenario, "in_sync_again_s", 0)]
        for name, scenario, key, digits in rows:
            vals = {s.key: self.med(self.runs("failover", scenario, None, s.key), key) for s in self.systems}
            cells = [f"{fmt_num(vals[s.key], digits)} s" if vals[s.key] is not None else
                     (self.cell_status(self.runs("failover", scenario, None, s.key)) or "–") for s in self.systems]
            ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([name, *cells, *ratios]) + " |")
        moved = {s.key: self.med(self.runs("failover", None, None, s.key), "moved") for s in self.systems}
        if any(v is not None for v in moved.values()):
            out.append("| " + " | ".join(["partitions led by the killed broker (median)",
                                          *[fmt_num(moved[s.key], 0) for s in self.systems],
                                          *["" for _ in self.kafkas]]) + " |")
        return "\n".join(out)

    def metric_table(self, kind, rows):
        """A table of `kind`'s runs with one row per (name, metric key, unit, digits): the median of each system
        and Ferry / each Kafka. A metric that only some systems report is "–" for the others."""
        if not self.runs(kind):
            return ""
        head = ["", *[s.label for s in self.systems], *[f"Ferry / {k.short}" for k in self.kafkas]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for name, key, unit, digits in rows:
            vals, cells = {}, []
            for s in self.systems:
                runs = self.runs(kind, system=s.key)
                vals[s.key] = self.med(runs, key, metric=key != "broker_cpu_s")
                cells.append(f"{fmt_num(vals[s.key], digits)} {unit}".rstrip() if vals[s.key] is not None
                             else self.cell_status(runs) or "–")
            ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([name, *cells, *ratios]) + " |")
        return "\n".join(out)

    def cpu_per_gb(self, runs):
        """The median broker CPU seconds per GB (10^9 bytes) of records moved, over the good runs."""
        return median([r["broker_cpu_s"] / (r["records"] * r["size"] / 1e9) for r in runs
                       if r.get("ok") and r.get("broker_cpu_s") is not None and r.get("records")])

    def cpu_per_gb_table(self, kinds):
        keys = [(kind, scenario, tool) for kind in kinds for scenario, tool in self.keys(kind)]
        if not keys:
            return ""
        head = ["Run", "Tool", *[f"{s.short} CPU s/GB" for s in self.systems],
                *[f"Ferry / {k.short}" for k in self.kafkas]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for kind, scenario, tool in keys:
            vals = {s.key: self.cpu_per_gb(self.runs(kind, scenario, tool, s.key)) for s in self.systems}
            ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([f"{kind.split('-')[-1]} {self.title(kind, scenario)}", tool,
                                          *[fmt_num(vals[s.key]) for s in self.systems], *ratios]) + " |")
        return "\n".join(out)

    def cores_busy(self, runs, whose):
        """The median cores `whose` ("client" or "broker") kept busy over a run: its CPU seconds per wall second
        of the load generator."""
        def cores(r):
            cpu = r["metrics"].get("client_cpu_s") if whose == "client" else r.get("broker_cpu_s")
            wall = r["metrics"].get("wall_s")
            return cpu / wall if cpu is not None and wall else None
        return median([cores(r) for r in runs if r.get("ok")])

    def cores_table(self, kinds):
        """Per run, the cores the load generator and the broker kept busy: a machine whose cores are all busy, or
        a load generator near the cores its threads can use, limits the throughput whatever the broker does."""
        keys = [(kind, scenario, tool) for kind in kinds for scenario, tool in self.keys(kind)]
        if not keys:
            return ""
        head = ["Run", "Tool", *[f"{s.short}: load generator + broker cores" for s in self.systems]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for kind, scenario, tool in keys:
            cells = []
            for s in self.systems:
                runs = self.runs(kind, scenario, tool, s.key)
                client, broker = self.cores_busy(runs, "client"), self.cores_busy(runs, "broker")
                cells.append("–" if client is None or broker is None else f"{client:.2f} + {broker:.2f}")
            out.append("| " + " | ".join([f"{kind.split('-')[-1]} {self.title(kind, scenario)}", tool, *cells]) + " |")
        return "\n".join(out)

    def connect_rows(self):
        """(row name, {system: value}) for each connection set-up scenario: the rate, the broker's CPU per
        connection and the p99 time of one set-up."""
        rows = []
        for scenario, _ in self.keys("connect"):
            title = self.title("connect", scenario)
            for name, key, unit, digits in ((f"{title}: per second", "per_s", "/s", 0),
                                            (f"{title}: broker CPU each", "broker_cpu_ms_each", "ms", 3),
                                            (f"{title}: p99 of one", "p99_ms", "ms", 1)):
                vals = {s.key: self.med(self.runs("connect", scenario, None, s.key), key) for s in self.systems}
                rows.append((name, vals, unit, digits))
        return rows

    def connect_table(self):
        rows = self.connect_rows()
        if not rows:
            return ""
        head = ["", *[s.label for s in self.systems], *[f"Ferry / {k.short}" for k in self.kafkas]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for name, vals, unit, digits in rows:
            cells = [f"{fmt_num(vals[s.key], digits)} {unit}" if vals[s.key] is not None else "–" for s in self.systems]
            ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([name, *cells, *ratios]) + " |")
        return "\n".join(out)

    def acl_table(self, kind):
        """The ACL phase's throughput on its own two brokers (meta["acls"]: grants only, then many ACLs), their
        MB/s and broker CPU per GB, and the ratio the issue bounds: many ACLs over grants only."""
        systems = self.meta.get("acls") or {}
        keys = self.keys(kind)
        if len(systems) != 2 or not keys:
            return ""
        (grants, g), (many, m) = systems.items()
        head = ["Scenario", "Tool", f"{g['short']} MB/s", f"{m['short']} MB/s", f"{m['short']} / {g['short']}",
                f"{g['short']} CPU s/GB", f"{m['short']} CPU s/GB"]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for scenario, tool in keys:
            mbps, cpu = {}, {}
            for key in (grants, many):
                runs = self.runs(kind, scenario, tool, key)
                mbps[key] = self.med(runs, "MB_per_s")
                cpu[key] = self.cpu_per_gb(runs)
            out.append("| " + " | ".join([self.title(kind, scenario), tool, fmt_num(mbps[grants], 1),
                                          fmt_num(mbps[many], 1), fmt_ratio(mbps[many], mbps[grants]),
                                          fmt_num(cpu[grants]), fmt_num(cpu[many])]) + " |")
        return "\n".join(out)

    def restart_table(self):
        keys = self.keys("restart")
        if not keys:
            return ""
        head = ["Scenario", *[s.label for s in self.systems], *[f"Ferry / {k.short}" for k in self.kafkas]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for scenario, tool in keys:
            vals, cells = {}, []
            for s in self.systems:
                runs = self.runs("restart", scenario, tool, s.key)
                vals[s.key] = self.med(runs, "serve_s")
                cells.append(self.cell_status(runs) or f"{fmt_num(vals[s.key])} s")
            ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([self.title("restart", scenario), *cells, *ratios]) + " |")
        return "\n".join(out)

    def growth_rows(self):
        runs = self.runs("growth")
        chunks = sorted({r["chunk"] for r in runs})
        rows = []
        for c in chunks:
            row = {"chunk": c, "mbps": {}, "retained": {}}
            for s in self.systems:
                rs = [r for r in runs if r["chunk"] == c and r["system"] == s.key and r.get("ok")]
                row["mbps"][s.key] = rs[0]["metrics"]["MB_per_s"] if rs else None
                row["retained"][s.key] = rs[0]["metrics"]["retained_bytes_on_disk"] if rs else None
            row["nominal_gb"] = (c + 1) * runs[0]["records"] * runs[0]["size"] / 1e9
            rows.append(row)
        return rows

    def growth_table(self):
        rows = self.growth_rows()
        if not rows:
            return ""
        head = ["Retained after chunk (GB)", *[f"{s.label} MB/s" for s in self.systems],
                *[f"Ferry / {k.short}" for k in self.kafkas]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in rows:
            cells = [fmt_num(row["mbps"][s.key], 1) for s in self.systems]
            ratios = [fmt_ratio(row["mbps"][self.ferry.key], row["mbps"][k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([f"{row['nominal_gb']:.2f}", *cells, *ratios]) + " |")
        return "\n".join(out)

    def spread(self):
        """(max - min) / median of MB/s over the repetitions of each produce and consume cell."""
        cells = {}
        for r in self.results:
            if r.get("ok") and r["kind"] in ("produce", "consume", "tls-produce", "tls-consume"):
                cells.setdefault((r["kind"], r["title"], r["tool"], r["system"]), []).append(r["metrics"]["MB_per_s"])
        out = []
        for key, v in cells.items():
            if len(v) > 1 and statistics.median(v) > 0:
                out.append(((max(v) - min(v)) / statistics.median(v), key))
        return sorted(out)

    # --- documents -----------------------------------------------------------------------------------------
    def summary_table(self):
        """The compact table for README's Performance section: rows Ferry can run, medians in MB/s or ms."""
        head = ["What", "Tool", *[s.short for s in self.systems], *[f"Ferry / {k.short}" for k in self.kafkas]]
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for kind in ("produce", "consume"):
            for row in self.throughput_rows(kind):
                if row["mbps"][self.ferry.key] is None and row["cells"][self.ferry.key] == "n/a":
                    continue  # rows Ferry cannot run are in results.md
                cells = [row["cells"][s.key] if row["mbps"][s.key] is None else
                         f"{row['mbps'][s.key]:.{0 if row['mbps'][s.key] >= 10 else 1}f} MB/s" for s in self.systems]
                ratios = [fmt_ratio(row["mbps"][self.ferry.key], row["mbps"][k.key]) for k in self.kafkas]
                out.append("| " + " | ".join([f"{kind} {row['scenario']}", row["tool"], *cells, *ratios]) + " |")
        for scenario, tool in self.keys("latency"):
            java = tool == "EndToEndLatency"
            pcts = ((("avg_ms", "mean"), ("p99_ms", "p99"), ("p999_ms", "p99.9")) if java
                    else (("p50_ms", "p50"), ("p99_ms", "p99"), ("p999_ms", "p99.9")))
            for pkey, pname in pcts:
                vals = {s.key: self.med(self.runs("latency", scenario, tool, s.key), pkey) for s in self.systems}
                digits = 0 if java and pkey != "avg_ms" else 2
                cells = [f"{fmt_num(vals[s.key], digits)} ms" if vals[s.key] is not None else "–"
                         for s in self.systems]
                ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
                if java:
                    name = f"latency {pname}, round trip"
                elif scenario == "lat-flush":
                    name = f"produce ack latency {pname}, flush.ms=1000 and 1 MiB segments"
                else:
                    name = f"latency {pname}, {self.title('latency', scenario).split(',')[0]}"
                out.append("| " + " | ".join([name, tool, *cells, *ratios]) + " |")
        for kind in ("tls-produce", "tls-consume"):
            for row in self.throughput_rows(kind):
                cells = [row["cells"][s.key] if row["mbps"][s.key] is None else
                         f"{row['mbps'][s.key]:.{0 if row['mbps'][s.key] >= 10 else 1}f} MB/s" for s in self.systems]
                ratios = [fmt_ratio(row["mbps"][self.ferry.key], row["mbps"][k.key]) for k in self.kafkas]
                out.append("| " + " | ".join([f"{kind.split('-')[-1]} {row['scenario']}", row["tool"], *cells,
                                              *ratios]) + " |")
                gb = {s.key: self.cpu_per_gb(self.runs(kind, row["id"], row["tool"], s.key)) for s in self.systems}
                out.append("| " + " | ".join(["... broker CPU per GB", row["tool"],
                                              *[f"{fmt_num(gb[s.key])} s" if gb[s.key] is not None else "–"
                                                for s in self.systems],
                                              *[fmt_ratio(gb[self.ferry.key], gb[k.key]) for k in self.kafkas]])
                           + " |")
        for name, vals, unit, digits in self.connect_rows():
            if name.endswith("p99 of one"):
                continue
            cells = [f"{fmt_num(vals[s.key], digits)} {unit}" if vals[s.key] is not None else "–" for s in self.systems]
            out.append("| " + " | ".join([name, "connbench", *cells,
                                          *[fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]]) + " |")
        for scenario, tool in self.keys("restart"):
            vals = {s.key: self.med(self.runs("restart", scenario, tool, s.key), "serve_s") for s in self.systems}
            cells = [f"{fmt_num(vals[s.key])} s" if vals[s.key] is not None else "–" for s in self.systems]
            ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([f"restart after SIGKILL, {self.title('restart', scenario).split(':')[0]}",
                                          tool, *cells, *ratios]) + " |")
        for row in self.throughput_rows("replicated"):
            cells = [row["cells"][s.key] if row["mbps"][s.key] is None else
                     f"{row['mbps'][s.key]:.{0 if row['mbps'][s.key] >= 10 else 1}f} MB/s" for s in self.systems]
            ratios = [fmt_ratio(row["mbps"][self.ferry.key], row["mbps"][k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([f"replicated produce {row['scenario']}, 3 brokers", row["tool"], *cells,
                                          *ratios]) + " |")
        for scenario, tool in self.keys("replicated-latency"):
            for pkey, pname in (("p50_ms", "p50"), ("p99_ms", "p99"), ("p999_ms", "p99.9")):
                vals = {s.key: self.med(self.runs("replicated-latency", scenario, tool, s.key), pkey)
                        for s in self.systems}
                cells = [f"{fmt_num(vals[s.key])} ms" if vals[s.key] is not None else "–" for s in self.systems]
                ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
                name = f"replicated ack latency {pname}, {self.title('replicated-latency', scenario).split(':')[0]}"
                out.append("| " + " | ".join([name, tool, *cells, *ratios]) + " |")
        for scenario, tool in self.keys("failover"):
            vals = {s.key: self.med(self.runs("failover", scenario, tool, s.key), "leaders_s") for s in self.systems}
            cells = [f"{fmt_num(vals[s.key])} s" if vals[s.key] is not None else "–" for s in self.systems]
            ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([f"{self.title('failover', scenario)}, 3 brokers: s until every partition "
                                          "is led", tool, *cells, *ratios]) + " |")
        for name, kind, tool, key, unit, digits in SUMMARY_GROUP_ROWS:
            if not self.runs(kind):
                continue
            vals = {s.key: self.med(self.runs(kind, system=s.key), key) for s in self.systems}
            cells = [f"{fmt_num(vals[s.key], digits)} {unit}" if vals[s.key] is not None else "–"
                     for s in self.systems]
            ratios = [fmt_ratio(vals[self.ferry.key], vals[k.key]) for k in self.kafkas]
            out.append("| " + " | ".join([name.format(title=self.title(kind, kind).split(":")[0]), tool, *cells,
                                          *ratios]) + " |")
        rss = {s.key: median([r.get("broker_peak_rss_mib") for r in self.results
                              if r["system"] == s.key and r.get("ok") and r["kind"] in ("produce", "consume")])
               for s in self.systems}
        if any(v is not None for v in rss.values()):
            cells = [f"{fmt_num(rss[s.key], 0)} MiB" if rss[s.key] is not None else "–" for s in self.systems]
            ratios = [fmt_ratio(rss[self.ferry.key], rss[k.key]) for k in self.kafkas]
            out.append("| " + " | ".join(["broker peak RSS, median over produce and consume runs", "", *cells,
                                          *ratios]) + " |")
        return "\n".join(out)

    def markdown(self, charts):
        m = self.meta
        mach = m["machine"]
        L = []
        L.append(f"# Ferry vs Apache Kafka: {m['mode']} run of {m['started']}")
        L.append("")
        L.append(f"Written by `bench/run{' --quick' if m['mode'] == 'quick' else ''}` "
                 f"({m['duration_min']:.1f} min). Medians of {m['reps']} run(s) per cell; the systems ran "
                 "alternately (the order rotates each repetition); ratios are Ferry / Kafka of the medians: "
                 "above 1 is better for Ferry in throughput, below 1 is better for Ferry in latency, CPU and RSS.")
        L.append("")
        if m.get("warning"):
            L.append(f"**{m['warning']}**")
            L.append("")
        L.append("## Machine")
        L.append("")
        L.append(f"- {mach['cores']} cores ({mach['cpu']}), {mach['memory_gib']} GiB memory, kernel {mach['kernel']}, "
                 f"{mach['os']}")
        L.append(f"- disk under the brokers' data: {mach['disk']}")
        L.append(f"- {mach['java']}; librdkafka {m['librdkafka']}")
        la = m["load"]
        L.append(f"- load average (1 min) seen before each run: min {la['min']:.1f}, median {la['median']:.1f}, "
                 f"max {la['max']:.1f}; at start {la['start']:.1f}. Other work on this machine shares its "
                 f"{mach['cores']} cores with the broker and the load generator.")
        L.append("")
        L.append("## Systems")
        L.append("")
        for s in self.systems:
            L.append(f"- **{s.label}**: {s.describe}")
        for key, describe in (m.get("tls") or {}).items():
            label = next((s.label for s in self.systems if s.key == key), key)
            L.append(f"- **{label}, TLS** (the TLS scenarios): {describe}")
        for key, describe in (m.get("clusters") or {}).items():
            label = next((s.label for s in self.systems if s.key == key), key)
            L.append(f"- **{label}, 3 brokers** (replicated scenarios): {describe}")
        L.append("- ZooKeeper (one, shared by Ferry and Kafka 3.9 under its own chroot) is not counted in any "
                 "CPU or RSS figure.")
        L.append("")
        if m.get("context"):
            c = m["context"]
            L.append("## Ceilings of this machine")
            L.append("")
            L.append(f"- loopback TCP, one stream, 1 MiB writes: **{c['loopback_MBps']:.0f} MB/s**")
            for pc in c["pagecache"]:
                L.append(f"- page-cache write (no fsync), {pc['mib']} MiB in 1 MiB writes on the data disk: "
                         f"**{pc['MBps']:.0f} MB/s** (median of 3)")
            if len(c["pagecache"]) > 1:
                L.append("  (larger writes run slower here: the machine then hands out memory pages it has not "
                         "touched recently)")
            L.append("")
        for kind, head, text in (
                ("produce", "Produce (acks=1)", []),
                ("consume", "Consume", ["`rdkafka_performance -C` names every partition itself (no group); "
                                        "ConsumerPerformance subscribes with a consumer group of its own, and its "
                                        "time excludes the group join.", ""])):
            t = self.throughput_table(kind)
            if t:
                L += [f"## {head}", "", *text, t, ""]
        t = self.throughput_table("tls-produce")
        if t:
            L += ["## Over TLS (SSL listener, client certificates)", "",
                  "The loads of the plaintext produce and consume scenarios (acks=1, batched) over an SSL "
                  "listener that asks for client "
                  "certificates (RSA 2048, TLS 1.3 as the peers negotiate it), one partition; each record produced "
                  "is read back warm. Broker CPU per GB: the broker's CPU seconds over the run per 10^9 bytes of "
                  "records moved (lower is better).", "", "### Produce", "", t, ""]
            t = self.throughput_table("tls-consume")
            if t:
                L += ["### Consume (page cache warm)", "", t, ""]
            L += ["### Broker CPU per GB over TLS", "", self.cpu_per_gb_table(("tls-produce", "tls-consume")), ""]
            L += ["### Where the cores went over TLS", "",
                  f"CPU seconds per second of each run, medians: the load generator's (all its threads; "
                  f"encrypting and decrypting its side of TLS) and the broker's, on a machine of "
                  f"{self.meta['machine']['cores']} cores. Where the load generator keeps about a core or more "
                  "busy and the broker a fraction of one, the load generator sets the pace: a broker that needs "
                  "less CPU shows it in CPU per GB, and in throughput only by what it leaves the load generator.",
                  "", self.cores_table(("tls-produce", "tls-consume")), ""]
        t = self.acl_table("acls-produce")
        if t:
            acl = self.meta["acls"]
            L += ["## Authorization (ACLs)", "",
                  "The TLS loads (acks=1, batched, one partition, each record read back warm) as User:client on two "
                  "brokers with Kafka's authorizer on: one with only the grants the load needs (All on Topic:*, "
                  f"Group:* and the cluster), one with those and {list(acl.values())[1]['short']} more of other "
                  "principals (literal topics, prefixed topics, groups). Every request is authorized; the ratio "
                  "shows what the number of ACLs costs (the claim: within 5%). The TLS section's Ferry is the same "
                  "broker without an authorizer.", "", "### Produce", "", t, ""]
            t = self.acl_table("acls-consume")
            if t:
                L += ["### Consume (page cache warm)", "", t, ""]
        t = self.connect_table()
        if t:
            L += ["## Connection set-up", "",
                  "`bench/tools/connbench.c` (OpenSSL) opens connections in a loop from "
                  f"{self.runs('connect')[0].get('threads')} threads for {self.runs('connect')[0].get('seconds')} s "
                  "and closes each once set up: full TLS handshakes (no session resumption) with a client "
                  "certificate followed by one ApiVersions; SCRAM-SHA-512 logins (SaslHandshake and both "
                  "SaslAuthenticate rounds, the server's signature checked) over SASL_PLAINTEXT, and after a TLS "
                  "handshake over SASL_SSL. The client derives the salted password once, as a client that logs in "
                  "again would, so the rate is the broker's. Broker CPU each: its CPU over the run divided by the "
                  "connections set up.", "", t, ""]
        t = self.latency_table()
        if t:
            L += ["## End-to-end latency", "", t, "",
                  "The fixed-rate rows come from `rdkafka_performance -C -l`, which reads each record's send time "
                  "from its payload (microseconds); the paced producer is `benchtool paced-produce` (librdkafka, "
                  "linger.ms=0). EndToEndLatency prints whole milliseconds, so its percentiles are coarse; its "
                  "mean is exact.", ""]
        t = self.throughput_table("replicated")
        if t:
            L += ["## Replicated produce (3 brokers, RF=3, min.insync.replicas=2, acks=all)", "",
                  "Each system runs as a cluster of three brokers on this machine (see Systems); the producers "
                  "wait for every in-sync replica. Medians of the repetitions; broker CPU is summed over the "
                  "three brokers, peak RSS is the largest of the three.", "", t, ""]
        t = self.load_latency_table()
        if t:
            L += ["### Acknowledgement latency at full speed (ProducerPerformance, the runs above)", "", t, ""]
        t = self.latency_table("replicated-latency")
        if t:
            L += ["### Acknowledgement latency at a fixed rate", "",
                  "`benchtool paced-produce` (librdkafka, linger.ms=0, acks=all): send to delivery report of "
                  "each record, without the first seconds.", "", t, ""]
        t = self.failover_table()
        if t:
            L += ["## Failover with many partitions (3 brokers)", "",
                  "Topics of RF=3 and min.insync.replicas=2 with every replica in sync; then SIGKILL of the "
                  "active controller, and (after the killed broker was started again and every replica was "
                  "back in sync) of the broker then leading the most partitions. Measured: from the kill until the metadata of the surviving "
                  "brokers names a live leader for every partition (`benchtool leaders`, polling every 20 ms). "
                  "A killed broker counts as gone when its ZooKeeper session expires "
                  "(zookeeper.session.timeout.ms=18000 on Ferry and Kafka 3.9) or, in KRaft, when its broker "
                  "session does (broker.session.timeout.ms, 9000 by default); that wait is part of each figure. "
                  "One run per system.", "", t, ""]
        t = self.restart_table()
        if t:
            L += ["## Restart after SIGKILL", "",
                  "The broker is killed right after the last acknowledgement of a large produce, then started "
                  "on its data; measured is the time from the kill until one more record is acknowledged "
                  "(leaders known, log recovered). Lower is better. One run per system, whatever the "
                  "repetitions: the log is large.", "", t, ""]
        t = self.metric_table("commits", COMMIT_ROWS)
        if t:
            L += ["## Offset commits from many group members", "",
                  f"`benchtool commit-load` with {self.title('commits', 'commits').split(':')[0]}: one librdkafka "
                  "consumer (and connection) per member, subscribed to a topic with one partition per member of a "
                  "group, so each member holds one; once every member holds its partition, fetching is paused and "
                  "each commits its partition's next offset with `rd_kafka_commit(..., async=0)` and waits for the "
                  "answer before the next. Counted are the commits completed in the measured seconds after a "
                  "warm-up; any failed commit fails the run.", "", t, ""]
        t = self.metric_table("group-memory", GROUP_MEMORY_ROWS)
        if t:
            L += ["## Coordinator memory with many groups", "",
                  f"`bench/tools/grouptool.py` forms {self.title('group-memory', 'group-memory').split(':')[0]}. "
                  "The members speak JoinGroup v2, SyncGroup v1 and Heartbeat v1 themselves (kafka-python's "
                  "protocol classes; consumer-protocol metadata for one topic, range assignor, one partition each) "
                  "with a 30-minute session timeout, so none heartbeats once its group is formed; a group's members "
                  f"are on different connections, and {self.runs('group-memory')[0]['lanes']} groups form at once. "
                  "Every group is checked with ListGroups and DescribeGroups (Stable, every member) before the "
                  "broker's RSS is read (VmRSS, 2 s after the last group formed); Kafka's RSS is mostly its fixed "
                  "1 GiB heap, so its live heap after a full GC (`jmap -histo:live`) is shown too. The members "
                  "leave and the groups are deleted afterwards. One run per system, whatever the repetitions: the "
                  "memory freed then stays with the broker's allocator (or heap), and a second run would reuse "
                  "it.", "", t, ""]
        t = self.resource_table()
        if t:
            L += ["## Broker CPU and memory per run", "",
                  "CPU seconds (user + system, all threads, from /proc/<pid>/stat) the broker spent during the run; "
                  "peak RSS is VmHWM, reset before each run (/proc/<pid>/clear_refs). Kafka's heap is fixed at "
                  "1 GiB (-Xms1G -Xmx1G, as kafka-server-start.sh), so its RSS is mostly heap it has touched.",
                  "", t, ""]
        t = self.growth_table()
        if t:
            L += ["## Throughput as the retained log grows", "",
                  "One topic per system, one partition, 1 KiB records produced in chunks (rdkafka_performance, "
                  "batched); the systems take turns chunk by chunk.", "", t, ""]
        if charts:
            L += ["## Charts", ""]
            for name, title in charts:
                L.append(f"![{title}]({name})")
            L.append("")
        L += ["## Notes", ""]
        label = {s.key: s.label for s in self.systems}
        skipped = sorted({(r["tool"], r["system"], r["skipped"]) for r in self.results if r.get("skipped")})
        for tool, system, why in skipped:
            L.append(f"- n/a: {tool} on {label.get(system, system)}: {why}.")
        failed = [r for r in self.results if r.get("ok") is False]
        for r in failed:
            L.append(f"- FAILED: {r['kind']} {r['title']} | {r['tool']} | {r['system']} rep {r['rep']}: {r['error']}")
        for n in self.notes:
            L.append(f"- {n}")
        sp = self.spread()
        if sp:
            worst = sp[-1]
            L.append(f"- Repeatability: over the repetitions of a throughput cell, (max − min) / median is "
                     f"{statistics.median([x for x, _ in sp]) * 100:.0f} % at the median cell and "
                     f"{worst[0] * 100:.0f} % at worst ({worst[1][0]} {worst[1][1]}, {worst[1][2]}, "
                     f"{label.get(worst[1][3], worst[1][3])}): ratios near 1× are within the noise.")
        if any(r.get("cache") == "cold" and r.get("ok") for r in self.results):
            L.append("- Cold reads: `sync; echo 3 > /proc/sys/vm/drop_caches` before each cold run empties this "
                     "machine's page cache; on a virtual machine the host may still cache the virtual disk, so "
                     "cold reads need not reach a physical disk.")
        L.append("- Settings that differ from each system's defaults, and why: bench/README.md.")
        L.append("")
        return "\n".join(L)

    def write(self, out_dir, charts_ok=True):
        os.makedirs(out_dir, exist_ok=True)
        with open(os.path.join(out_dir, "results.json"), "w") as f:
            json.dump({"meta": self.meta, "results": self.results, "notes": self.notes}, f, indent=1)
        charts = []
        chart_note = None
        if charts_ok:
            try:
                from . import charts as charts_mod
                charts = charts_mod.draw(self, out_dir)
            except ImportError as e:
                chart_note = f"no charts: {e} (install python3-matplotlib)"
        if chart_note:
            self.notes.append(chart_note)
        md = self.markdown(charts)
        with open(os.path.join(out_dir, "results.md"), "w") as f:
            f.write(md)
        with open(os.path.join(out_dir, "summary.md"), "w") as f:
            f.write(self.summary_table() + "\n")
        return md
