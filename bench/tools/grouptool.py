#!/usr/bin/python3
"""grouptool: many consumer groups, formed by speaking JoinGroup, SyncGroup and Heartbeat directly (kafka-python's
protocol classes, Debian's python3-kafka; no consumer client, so a member costs the client almost nothing). For
bench/run's coordinator-memory scenario; prints one JSON object on stdout and its progress on stderr.

  grouptool.py -b HOST:PORT -g GROUPS -m MEMBERS --prefix PREFIX --pid BROKER_PID [--lanes N] [--jvm]

Forms the groups PREFIX-0 .. PREFIX-<GROUPS-1> of MEMBERS members each (classic protocol, "consumer" members
subscribed to the topic PREFIX with the range protocol; the topic need not exist), with a session timeout of
30 minutes (group.max.session.timeout.ms on both sides) so that no member has to heartbeat once its group is
formed. Then checks with ListGroups and DescribeGroups that every group is Stable with MEMBERS members, and
reads the broker's RSS (VmRSS of BROKER_PID) before and after; with --jvm also the broker's live heap before
and after, from `jmap -histo:live` (a full GC first). At the end every member leaves and the groups are
deleted, outside the measurement.

Members of one group go on different connections: a broker may read one request at a time per connection (Kafka
does), and a JoinGroup waits there until the rebalance completes, which needs the group's other members. So the
groups are formed in LANES lanes at once, each lane one group at a time on MEMBERS connections of its own.
"""
import argparse
import asyncio
import json
import subprocess
import sys
import time

from kafka.coordinator.protocol import ConsumerProtocolMemberAssignment, ConsumerProtocolMemberMetadata
from kafka.errors import for_code
from kafka.protocol.admin import DeleteGroupsRequest, DescribeGroupsRequest, ListGroupsRequest
from kafka.protocol.commit import GroupCoordinatorRequest
from kafka.protocol.group import HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, SyncGroupRequest
from kafka.protocol.parser import KafkaProtocol

SESSION_TIMEOUT_MS = 1_800_000  # group.max.session.timeout.ms, Kafka's default and Ferry's
REBALANCE_TIMEOUT_MS = 300_000  # the Java consumer's max.poll.interval.ms
HEARTBEAT_S = 0.02  # how often a member of an incomplete generation asks whether a rebalance began

NONE = 0
RETRIABLE = {14, 15, 16}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR
ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS = 22, 25, 27


class Failed(RuntimeError):
    pass


def error_name(code):
    return for_code(code).__name__


def progress(msg):
    print(f"grouptool: {msg}", file=sys.stderr, flush=True)


class Connection:
    """One TCP connection; requests may be pipelined, answers come back in order."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer
        self.protocol = KafkaProtocol(client_id="grouptool")
        self.waiting = {}  # correlation id -> future
        self.pump = asyncio.ensure_future(self._read())

    @classmethod
    async def open(cls, host, port):
        return cls(*await asyncio.open_connection(host, port))

    def call(self, request):
        future = asyncio.get_running_loop().create_future()
        self.waiting[self.protocol.send_request(request)] = future
        self.writer.write(self.protocol.send_bytes())
        return future

    async def _read(self):
        while True:
            data = await self.reader.read(1 << 16)
            if not data:
                for future in self.waiting.values():
                    future.set_exception(Failed("the broker closed the connection"))
                self.waiting.clear()
                return
            for correlation_id, response in self.protocol.receive_bytes(data):
                self.waiting.pop(correlation_id).set_result(response)

    def close(self):
        self.pump.cancel()
        self.writer.close()


class Stats:
    def __init__(self):
        self.formed = 0
        self.joins = 0  # JoinGroup requests answered
        self.requests = 0


def check(code, what, group):
    if code != NONE:
        raise Failed(f"{what} of {group}: {error_name(code)}")


async def member(conn, group, topic, size, stats):
    """Joins `group` and syncs until it is in a generation of `size` members; returns its member id."""
    member_id = ""
    metadata = ConsumerProtocolMemberMetadata.SCHEMA.encode((0, [topic], b""))
    while True:
        join = await conn.call(JoinGroupRequest[2](group, SESSION_TIMEOUT_MS, REBALANCE_TIMEOUT_MS, member_id,
                                                   "consumer", [("range", metadata)]))
        stats.joins += 1
        stats.requests += 1
        if join.error_code in RETRIABLE:
            await asyncio.sleep(0.05)
            continue
        if join.error_code == UNKNOWN_MEMBER_ID:
            member_id = ""
            continue
        check(join.error_code, "JoinGroup", group)
        member_id, generation = join.member_id, join.generation_id
        assignments = []
        if join.leader_id == member_id:
            # One partition each; the user data tells every member how many the generation has.
            count = str(len(join.members)).encode()
            assignments = [(m, ConsumerProtocolMemberAssignment.SCHEMA.encode((0, [(topic, [i])], count)))
                           for i, (m, _) in enumerate(join.members)]
        sync = await conn.call(SyncGroupRequest[1](group, generation, member_id, assignments))
        stats.requests += 1
        if sync.error_code in (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION):
            continue
        if sync.error_code == UNKNOWN_MEMBER_ID:
            member_id = ""
            continue
        check(sync.error_code, "SyncGroup", group)
        if int(ConsumerProtocolMemberAssignment.decode(sync.member_assignment).user_data) == size:
            return member_id
        # A generation without every member: the others' JoinGroups start the next rebalance, which this member
        # learns from a heartbeat.
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            beat = await conn.call(HeartbeatRequest[1](group, generation, member_id))
            stats.requests += 1
            if beat.error_code == NONE:
                continue
            if beat.error_code == UNKNOWN_MEMBER_ID:
                member_id = ""
            elif beat.error_code not in (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION):
                check(beat.error_code, "Heartbeat", group)
            break


async def lane(conns, groups, topic, size, stats, formed):
    for group in groups:
        ids = await asyncio.gather(*(member(conns[i], group, topic, size, stats) for i in range(size)))
        formed[group] = ids
        stats.formed += 1


async def report_progress(stats, groups, size, t0):
    while True:
        await asyncio.sleep(5)
        progress(f"{stats.formed:,} of {groups:,} groups formed ({stats.formed * size:,} members, "
                 f"{stats.joins:,} joins), {time.monotonic() - t0:.0f} s")


async def wait_for_coordinator(conn, group, port, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        found = await conn.call(GroupCoordinatorRequest[0](group))
        if found.error_code == NONE:
            if found.port != port:
                raise Failed(f"the coordinator of {group} is at port {found.port}, not this broker's {port}")
            return
        if time.monotonic() > deadline:
            raise Failed(f"FindCoordinator: {error_name(found.error_code)} for {timeout} s")
        await asyncio.sleep(0.2)


async def verify(conn, prefix, groups, size):
    """Every group listed, and described as Stable with `size` members."""
    listed = await conn.call(ListGroupsRequest[0]())
    check(listed.error_code, "ListGroups", "the broker")
    ours = {g for g, _ in listed.groups if g.startswith(prefix + "-")}
    if len(ours) != groups:
        raise Failed(f"ListGroups lists {len(ours):,} of the {groups:,} groups")
    ids = [f"{prefix}-{g}" for g in range(groups)]
    batches = [ids[i:i + 100] for i in range(0, len(ids), 100)]
    described = await asyncio.gather(*(conn.call(DescribeGroupsRequest[0](b)) for b in batches))
    wrong = [f"{group}: {error_name(code) if code else state} with {len(members)} members"
             for answer in described for code, group, state, _, _, members in answer.groups
             if code != NONE or state != "Stable" or len(members) != size]
    if wrong:
        raise Failed(f"{len(wrong)} groups are not Stable with {size} members, e.g. {'; '.join(wrong[:3])}")


async def leave_and_delete(conns, formed):
    """Every member leaves, then the empty groups are deleted; returns how many answers were errors."""
    errors = 0
    items = list(formed.items())
    for start in range(0, len(items), 1000):
        calls = [conns[i % len(conns)].call(LeaveGroupRequest[1](group, member_id))
                 for group, ids in items[start:start + 1000] for i, member_id in enumerate(ids)]
        errors += sum(1 for r in await asyncio.gather(*calls) if r.error_code != NONE)
    groups = [g for g, _ in items]
    batches = [groups[i:i + 100] for i in range(0, len(groups), 100)]
    for answer in await asyncio.gather(*(conns[0].call(DeleteGroupsRequest[0](b)) for b in batches)):
        errors += sum(1 for _, code in answer.results if code != NONE)
    return errors


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise Failed(f"no VmRSS for pid {pid}")


def live_heap_mib(pid):
    """The JVM's live objects after a full GC, from the last line of `jmap -histo:live` ("Total N BYTES")."""
    r = subprocess.run(["jmap", "-histo:live", str(pid)], capture_output=True, text=True, timeout=300)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("Total")]
    if r.returncode != 0 or not lines:
        raise Failed(f"jmap -histo:live {pid} failed: {(r.stdout + r.stderr)[-300:]}")
    return int(lines[-1].split()[2]) / 1048576


async def form(args):
    host, port = args.bootstrap.rsplit(":", 1)
    port = int(port)
    size, groups = args.members, args.groups
    conns = [await Connection.open(host, port) for _ in range(args.lanes * size)]
    await wait_for_coordinator(conns[0], f"{args.prefix}-0", port)
    stats, formed = Stats(), {}
    out = {"groups": groups, "members": groups * size, "connections": len(conns)}
    try:
        if args.jvm:
            out["heap_before_mib"] = live_heap_mib(args.pid)
        out["rss_before_mib"] = rss_mib(args.pid)
        progress(f"forming {groups:,} groups of {size} members in {args.lanes} lanes over {len(conns)} connections")
        t0 = time.monotonic()
        reporter = asyncio.ensure_future(report_progress(stats, groups, size, t0))
        names = [f"{args.prefix}-{g}" for g in range(groups)]
        try:
            await asyncio.gather(*(lane(conns[k * size:(k + 1) * size], names[k::args.lanes], args.prefix, size,
                                        stats, formed) for k in range(args.lanes)))
        finally:
            reporter.cancel()
        out["form_s"] = time.monotonic() - t0
        out["joins_per_member"] = stats.joins / (groups * size)
        out["requests"] = stats.requests
        progress(f"{groups:,} groups formed in {out['form_s']:.1f} s; checking them (ListGroups, DescribeGroups)")
        await verify(conns[0], args.prefix, groups, size)
        await asyncio.sleep(2)  # whatever the coordinator does after the last SyncGroup (group metadata appends)
        if args.jvm:
            out["heap_after_mib"] = live_heap_mib(args.pid)
            out["heap_growth_mib"] = out["heap_after_mib"] - out["heap_before_mib"]
            out["heap_bytes_per_member"] = out["heap_growth_mib"] * 1048576 / (groups * size)
        out["rss_after_mib"] = rss_mib(args.pid)
        out["rss_growth_mib"] = out["rss_after_mib"] - out["rss_before_mib"]
        out["rss_bytes_per_member"] = out["rss_growth_mib"] * 1048576 / (groups * size)
    finally:
        progress(f"{sum(map(len, formed.values())):,} members leaving, {len(formed):,} groups being deleted")
        t0 = time.monotonic()
        out["cleanup_errors"] = await leave_and_delete(conns, formed)
        out["cleanup_s"] = time.monotonic() - t0
        for c in conns:
            c.close()
    return out


def main():
    p = argparse.ArgumentParser(prog="grouptool.py", description=__doc__.split("\n\n")[0])
    p.add_argument("-b", "--bootstrap", required=True, help="HOST:PORT of the one broker")
    p.add_argument("-g", "--groups", type=int, required=True)
    p.add_argument("-m", "--members", type=int, required=True, help="members per group")
    p.add_argument("--prefix", required=True, help="group ids PREFIX-0 ..; also the subscribed topic")
    p.add_argument("--pid", type=int, required=True, help="the broker's pid, for its RSS")
    p.add_argument("--lanes", type=int, default=10, help="groups formed at once (default 10)")
    p.add_argument("--jvm", action="store_true", help="also the live heap after a full GC (jmap -histo:live)")
    args = p.parse_args()
    try:
        out = asyncio.run(form(args))
    except (Failed, OSError, subprocess.TimeoutExpired) as e:
        print(json.dumps({"ok": False, "error": str(e)}), flush=True)
        return 1
    print(json.dumps({"ok": True, **{k: round(v, 3) if isinstance(v, float) else v for k, v in out.items()}}),
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
