"""PNG charts of a Report (matplotlib, Debian's python3-matplotlib)."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .report import median  # noqa: E402

COLORS = {"ferry": "#1f77b4", "kafka4": "#ff7f0e", "kafka39": "#2ca02c"}


def _bars(ax, groups, series, values, ylabel, title, log=False, labels=False):
    n = len(series)
    width = 0.8 / max(n, 1)
    for i, (key, label) in enumerate(series):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        ys = [values[j].get(key) or 0 for j in range(len(groups))]
        bars = ax.bar(xs, ys, width, label=label, color=COLORS.get(key))
        if labels:
            ax.bar_label(bars, fmt="%.0f", fontsize=8)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, rotation=25, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    if log:
        ax.set_yscale("log")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def short(title):
    for a, b in ((", 1 partition", " · 1 p"), (", 8 partitions", " · 8 p"), (", page cache ", " · "),
                 ("batch size 1", "batch 1")):
        title = title.replace(a, b)
    return title


def draw(report, out_dir):
    series = [(s.key, s.label) for s in report.systems]
    made = []
    for kind, title in (("produce", "Produce throughput (median, acks=1)"),
                        ("consume", "Consume throughput (median)")):
        rows = report.throughput_rows(kind)
        if not rows:
            continue
        if kind == "produce":
            # Batch size 1 runs two orders of magnitude slower: a panel of its own, or its bars vanish.
            panels = [([r for r in rows if "batch size 1" not in r["scenario"]], title),
                      ([r for r in rows if "batch size 1" in r["scenario"]], "batch size 1")]
        else:
            panels = [([r for r in rows if r["tool"] == "rdkafka_performance"], title + ", rdkafka_performance"),
                      ([r for r in rows if r["tool"] != "rdkafka_performance"],
                       "ConsumerPerformance (subscribed with a consumer group)")]
        panels = [p for p in panels if p[0]]
        nrows = max(len(p[0]) for p in panels)
        fig, axes = plt.subplots(len(panels), 1, figsize=(max(8, 1.3 * nrows + 2), 4.2 * len(panels)),
                                 squeeze=False)
        for ax, (prow, sub) in zip(axes[:, 0], panels):
            groups = [short(r["scenario"]) + ("" if kind == "consume" else f"\n{r['tool']}") for r in prow]
            _bars(ax, groups, series, [r["mbps"] for r in prow], "MB/s", sub)
        fig.tight_layout()
        name = f"{kind}.png"
        fig.savefig(os.path.join(out_dir, name), dpi=110)
        plt.close(fig)
        made.append((name, title))

    keys = report.keys("latency")
    if keys:
        fig, axes = plt.subplots(1, len(keys), figsize=(5.5 * len(keys), 4.2), squeeze=False)
        for ax, (scenario, tool) in zip(axes[0], keys):
            pcts = [("p50_ms", "p50"), ("p99_ms", "p99"), ("p999_ms", "p99.9")]
            values = [{s.key: report.med(report.runs("latency", scenario, tool, s.key), k) for s in report.systems}
                      for k, _ in pcts]
            _bars(ax, [p for _, p in pcts], series, values, "ms (log scale)", f"{tool}\n"
                  f"{report.title('latency', scenario)}", log=True)
            ax.tick_params(axis="x", labelrotation=0)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "latency.png"), dpi=110)
        plt.close(fig)
        made.append(("latency.png", "End-to-end latency"))

    prod = [r for r in report.throughput_rows("produce") if any(v is not None for v in r["cpu"].values())]
    cons = [r for r in report.throughput_rows("consume") if any(v is not None for v in r["cpu"].values())]
    if prod or cons:
        panels = [p for p in ((prod, "Broker CPU seconds per produce run (median)"),
                              (cons, "Broker CPU seconds per consume run (median)")) if p[0]]
        fig, axes = plt.subplots(len(panels) + 1, 1, figsize=(max(8, 1.2 * max(len(p[0]) for p in panels) + 2),
                                                               4.2 * (len(panels) + 1)), squeeze=False)
        for ax, (rows, sub) in zip(axes[:, 0], panels):
            groups = [short(r["scenario"]) + f"\n{r['tool']}" for r in rows]
            _bars(ax, groups, series, [r["cpu"] for r in rows], "CPU seconds", sub)
        ax = axes[-1, 0]
        runs = [r for r in report.results if r.get("ok") and r["kind"] in ("produce", "consume")]
        med = {s.key: median([r.get("broker_peak_rss_mib") for r in runs if r["system"] == s.key])
               for s in report.systems}
        mx = {s.key: max([r.get("broker_peak_rss_mib") or 0 for r in runs if r["system"] == s.key] or [0])
              for s in report.systems}
        _bars(ax, ["median over runs", "largest"], series, [med, mx], "MiB",
              "Broker peak RSS during produce and consume runs", labels=True)
        ax.tick_params(axis="x", labelrotation=0)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "resources.png"), dpi=110)
        plt.close(fig)
        made.append(("resources.png", "Broker CPU and peak RSS"))

    g = report.growth_rows()
    if g:
        fig, ax = plt.subplots(figsize=(7, 4.2))
        for key, label in series:
            pts = [(r["retained"][key] / 1e9, r["mbps"][key]) for r in g if r["mbps"][key] is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label, color=COLORS.get(key))
        ax.set_xlabel("retained log on disk after the chunk (GB)")
        ax.set_ylabel("MB/s")
        ax.set_ylim(bottom=0)
        ax.set_title("Produce throughput as the retained log grows (1 KiB records, 1 partition)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, "growth.png"), dpi=110)
        plt.close(fig)
        made.append(("growth.png", "Throughput as the retained log grows"))
    return made
