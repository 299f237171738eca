"""Group members as separate processes (the Java consumer of tests/java's ferry.GroupMember, confluent-kafka-python
in confluent_group_member.py), all printing the same JSON lines, and the membership scenario every client goes
through: three members share a six-partition topic, a fourth joins, one leaves, one is killed with SIGKILL, while an
at-least-once checker compares what they read with what a producer had acknowledged.
"""
import json
import os
import signal
import subprocess
import tempfile
import threading
import time

from kafka import KafkaProducer

from conftest import SOURCE_DIR, wait_until

CONFLUENT_VERSION = "2.16.1"
CONFLUENT_PYTHON = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "ferry",
                                f"confluent-kafka-{CONFLUENT_VERSION}", "bin", "python")
CONFLUENT_MEMBER = os.path.join(SOURCE_DIR, "tests", "integration", "confluent_group_member.py")


class MemberProcess:
    """One member process and what it printed: its assignments in order, the records it read, its errors."""

    def __init__(self, name, cmd):
        self.name = name
        self.stderr = tempfile.TemporaryFile(mode="w+")
        self.process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                        text=True)
        self.lock = threading.Lock()
        self.assignments = []  # every assignment it reported, in order
        self.records = {}  # (partition, offset) -> value
        self.topics = set()  # the topics it read records of (from members that name them)
        self.errors = []
        self.closed = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.process.stdout:
            try:
                event = json.loads(line)
            except ValueError:
                continue  # a client library's own line on stdout
            with self.lock:
                if event["check"] == "assigned":
                    self.assignments.append(frozenset(event["partitions"]))
                elif event["check"] == "record":
                    self.records.setdefault((event["partition"], event["offset"]), event["value"])
                    if "topic" in event:
                        self.topics.add(event["topic"])
                elif event["check"] == "error":
                    self.errors.append(event["error"])
                elif event["check"] == "closed":
                    self.closed.set()

    @property
    def assigned(self):
        with self.lock:
            return self.assignments[-1] if self.assignments else None

    def stop(self, timeout=60):
        """Closes stdin: the member closes its consumer (leaving the group) and exits."""
        self.process.stdin.close()
        assert self.closed.wait(timeout), f"member {self.name} did not close:\n{self.diagnostics()}"
        self.process.wait(timeout=timeout)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def diagnostics(self):
        self.stderr.seek(0)
        return f"errors: {self.errors}\nstderr (end): {self.stderr.read()[-4000:]}"

    def cleanup(self):
        if self.process.poll() is None:
            self.kill()
        self.stderr.close()


def java_member(classpath, bootstrap, topic, group, name, assignor, instance_id=None, session_timeout_ms=6000,
                group_protocol="classic", topic_pattern=None):
    """A ferry.GroupMember subscribed to `topic`, or with `topic_pattern` (and topic None) to a regular expression
    the broker resolves (group_protocol "consumer" only)."""
    subscription = ["--topic", topic] if topic_pattern is None else ["--topic-pattern", topic_pattern]
    cmd = ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath, "ferry.GroupMember",
           "--bootstrap", bootstrap, *subscription, "--group", group, "--assignor", assignor,
           "--session-timeout-ms", str(session_timeout_ms), "--group-protocol", group_protocol]
    if instance_id:
        cmd += ["--instance-id", instance_id]
    return MemberProcess(name, cmd)


def confluent_member(bootstrap, topic, group, name, assignor):
    return MemberProcess(name, [CONFLUENT_PYTHON, CONFLUENT_MEMBER, bootstrap, topic, group, assignor])


class NumberedProducer(threading.Thread):
    """Writes distinct values round the partitions until stopped; `acked` maps (partition, offset) to value."""

    def __init__(self, bootstrap, topic, partitions, rate=100):
        super().__init__(daemon=True)
        self.producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
        self.topic, self.partitions, self.interval = topic, partitions, 1.0 / rate
        self.acked = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()

    def run(self):
        seq = 0
        while not self.stopping.wait(self.interval):
            value = f"v{seq}"
            future = self.producer.send(self.topic, value=value.encode(), partition=seq % self.partitions)
            future.add_callback(lambda m, v=value: self._acked(m, v))
            seq += 1
        self.producer.flush(timeout=60)
        self.producer.close(timeout=10)

    def _acked(self, metadata, value):
        with self.lock:
            self.acked[(metadata.partition, metadata.offset)] = value

    def stop(self):
        self.stopping.set()
        self.join(timeout=90)


def covering(members, partitions):
    """True when every member has partitions, none shares one, and together they hold them all."""
    sets = [m.assigned for m in members]
    if any(not s for s in sets):
        return False
    union = frozenset().union(*sets)
    return sum(len(s) for s in sets) == len(union) and union == frozenset(range(partitions))


def wait_covering(members, partitions, what, timeout=60):
    try:
        wait_until(lambda: covering(members, partitions), timeout=timeout, interval=0.1, what=what)
    except AssertionError:
        raise AssertionError(f"{what}: assignments {[(m.name, m.assigned) for m in members]}\n"
                             + "\n".join(f"{m.name}: {m.diagnostics()}" for m in members))


def check_membership(bootstrap, topic, partitions, spawn, session_timeout_s=6):
    """The scenario of issue 9's acceptance for one client: `spawn(name)` starts a member of the group."""
    producer = NumberedProducer(bootstrap, topic, partitions)
    producer.start()
    members = {}
    try:
        # The topic exists (the producer's first records created it) before members subscribe to it.
        wait_until(lambda: len({p for p, _ in dict(producer.acked)}) == partitions, timeout=60,
                   what="a record acknowledged on every partition")
        for name in "abc":
            members[name] = spawn(name)
        wait_covering([members[n] for n in "abc"], partitions, "three members sharing the partitions")
        members["d"] = spawn("d")
        wait_covering([members[n] for n in "abcd"], partitions, "a fourth member getting partitions")
        members["b"].stop()
        wait_covering([members[n] for n in "acd"], partitions, "the partitions of a member that left moving")
        killed_at = time.monotonic()
        lost = members["c"].assigned
        members["c"].kill()
        wait_covering([members[n] for n in "ad"], partitions, "the partitions of a killed member moving",
                      timeout=session_timeout_s + 60)
        assert time.monotonic() - killed_at >= session_timeout_s * 0.5, \
            "the killed member's partitions moved before its session could have expired"
        assert lost <= members["a"].assigned | members["d"].assigned

        producer.stop()
        acked = dict(producer.acked)
        assert len(acked) > 0

        def read():
            out = {}
            for m in members.values():
                with m.lock:
                    out.update(m.records)
            return out
        try:
            wait_until(lambda: set(acked) <= set(read()), timeout=60, interval=0.2,
                       what="every acknowledged record read by some member")
        except AssertionError:
            missing = sorted(set(acked) - set(read()))
            raise AssertionError(f"{len(missing)} of {len(acked)} acknowledged records never read, e.g. {missing[:10]}")
        seen = read()
        assert all(seen[k] == v for k, v in acked.items()), "a member read another value than was acknowledged"
        unproduced = {k: v for k, v in seen.items() if acked.get(k) != v}
        assert not unproduced, f"records read that were never acknowledged: {list(unproduced.items())[:10]}"
        for name in "ad":
            members[name].stop()
        for m in members.values():
            assert not m.errors, f"member {m.name} reported errors: {m.errors}"
        return len(acked), len(seen)
    finally:
        producer.stopping.set()
        for m in members.values():
            m.cleanup()
