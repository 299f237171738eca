"""Static members (KIP-345) of a classic consumer group churning at once, with franz-go (tests/go/franz-static).

Four franz-go consumers of one group, instance ids static-0 .. static-3, cooperative-sticky, are restarted (closed
without leaving, then started again under the same instance id, which replaces the old member at the coordinator),
made to leave (LeaveGroup naming several instance ids at once, as kafka-consumer-groups --delete-members sends it)
and removed while they run, several at a time and in overlapping rounds, for about a minute, while an idempotent
producer writes distinct records and the members commit as they go. Removing a static member by instance id used to
crash the broker that coordinates the group: the member's id was read after the static-member table entry holding
it was erased. The test checks that every broker is still running and ready, that no broker log shows a crash or a
failed group state machine, and, at least once, that every produced record was consumed (the members drain the
topic at the end).
"""
import json
import os
import shutil
import subprocess

import pytest

from conftest import SANITIZER_MARKERS, SOURCE_DIR, create_spread_topic, started_cluster, wait_until

FRANZ_STATIC = os.path.join(SOURCE_DIR, "tests", "go", "franz-static")
GO = shutil.which("go") or "/usr/local/go/bin/go"  # scripts/install-deps fetched the program's modules
PARTITIONS = 6
RECORDS = 3000
DURATION_S = 55  # of churn; the drain at the end takes at most 25 s more
# What a broker's log shows when it died of an exception or when a group's state machine threw (the coordinator
# then unloads and reloads the group), besides the sanitizers' reports.
CRASH_MARKERS = ("terminate called", "internal error", "its state machine failed") + SANITIZER_MARKERS


@pytest.fixture(scope="module")
def static_cluster():
    with started_cluster(3, overrides=["group.initial.rebalance.delay.ms=200", "offsets.topic.num.partitions=10"]) as c:
        yield c


def broker_problems(cluster):
    """Why each broker is not well: not running, not ready, or a crash marker in its log (with the lines around)."""
    problems = []
    for b in range(cluster.brokers):
        if cluster.pid(b) is None:
            problems.append(f"broker {b} is not running")
        elif not cluster.ready(b):
            problems.append(f"broker {b} does not answer /v1/ready")
        lines = cluster.broker_log(b).splitlines()
        for i, line in enumerate(lines):
            if any(marker in line for marker in CRASH_MARKERS):
                problems.append(f"broker {b} log:\n" + "\n".join(lines[max(0, i - 5):i + 15]))
                break
    return problems


def test_franz_go_static_members_joining_leaving_and_restarting_at_once(static_cluster, tmp_path):
    c, topic, group = static_cluster, "static-churn", "franz-static"
    create_spread_topic(c, topic, PARTITIONS)
    binary = str(tmp_path / "franz-static")
    subprocess.run([GO, "build", "-o", binary, "."], cwd=FRANZ_STATIC, check=True, timeout=600,
                   env={**os.environ, "GOPROXY": "off"})
    run = subprocess.run([binary, c.bootstrap, topic, group, f"{DURATION_S}s", str(RECORDS), "7"],
                         capture_output=True, text=True, timeout=DURATION_S + 90)
    summary_lines = [line for line in run.stdout.splitlines() if line.startswith("{")]
    summary = json.loads(summary_lines[-1]) if summary_lines else None
    print("franz-static:", summary)

    # The brokers first: a coordinator that died would also explain anything the program saw. A broker that is
    # running answers /v1/ready within a few seconds once the load is gone.
    wait_until(lambda: all(c.pid(b) is None or c.ready(b) for b in range(c.brokers)), timeout=30, interval=0.5,
               what="the running brokers to be ready")
    problems = broker_problems(c)
    assert not problems, "\n\n".join(problems) + f"\n\nprogram summary: {summary}"

    assert summary is not None, f"no summary (exit {run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-5000:]}"
    assert run.returncode == 0, f"exit {run.returncode}: {summary}\n{run.stderr[-5000:]}"
    assert summary["produced"] == RECORDS and summary["consumed"] == RECORDS, summary
    assert summary["restarts"] >= 5 and summary["leaves"] >= 5, summary
