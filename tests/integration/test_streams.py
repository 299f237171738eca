"""Kafka Streams 4.4 (from Maven Central, unmodified) on the three-broker cluster, with the applications of
tests/streams:
- an exactly_once_v2 word count (a repartition topic, a state store with a compacted changelog) over three
  instances, one SIGKILLed and later restarted: every word's counts, as a read_committed consumer sees them, are
  1, 2, ..., its number of occurrences, nothing repeated or skipped, and the last one exact;
- an at_least_once count per key in 10 s windows of the records' timestamps.
"""
import collections
import json
import os
import signal
import subprocess
import tempfile

import pytest
from kafka import KafkaProducer

from conftest import SOURCE_DIR, create_spread_topic, java_project_classpath, kafka_tool, kcat, wait_until

STREAMS_PROJECT = os.path.join(SOURCE_DIR, "tests", "streams")
WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord", "glade", "heron", "inlet", "junco", "kelp", "larch"]
LINES_PER_PHASE = 600


@pytest.fixture(scope="module")
def streams_classpath(tmp_path_factory):
    return java_project_classpath(STREAMS_PROJECT, str(tmp_path_factory.mktemp("streams-build")))


class Instance:
    """One StreamsApp process, its output in a file."""

    def __init__(self, classpath, app, cluster, application_id, state_dir, source, sink):
        self.out = tempfile.NamedTemporaryFile(prefix=f"ferry-streams-{application_id}-", suffix=".log",
                                               delete=False)
        self.process = subprocess.Popen(["java", "-cp", classpath, "ferry.StreamsApp", app, cluster.bootstrap,
                                         application_id, str(state_dir), source, sink],
                                        stdout=self.out, stderr=subprocess.STDOUT)

    def states(self):
        with open(self.out.name, errors="replace") as f:
            return [json.loads(line)["state"] for line in f if line.startswith('{"state"')]

    def wait_running(self):
        wait_until(lambda: "RUNNING" in self.states() or self.process.poll() is not None, timeout=180,
                   what="a Streams instance to be RUNNING")
        assert self.process.poll() is None, self.log()

    def alive(self):
        assert self.process.poll() is None, f"a Streams instance exited:\n{self.log()}"
        return True

    def log(self):
        with open(self.out.name, errors="replace") as f:
            return f.read()[-8000:]

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        os.unlink(self.out.name)


def line(i):
    return " ".join(WORDS[(i * step) % len(WORDS)] for step in (1, 5, 7))


def read_outputs(cluster, topic):
    """{key: [value, ...]} in log order, as a read_committed consumer sees them."""
    out = kcat("-C", "-b", cluster.bootstrap, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%k %s\n",
               "-X", "isolation.level=read_committed")
    seen = collections.defaultdict(list)
    for row in out.stdout.decode().splitlines():
        key, value = row.split()
        seen[key].append(value)
    return seen


def test_exactly_once_word_count_survives_a_killed_instance(cluster, streams_classpath, tmp_path):
    source, sink, application_id = "words-in", "words-out", "word-count"
    create_spread_topic(cluster, source, 3)
    create_spread_topic(cluster, sink, 3)
    expected = collections.Counter()

    def produce(phase, instances):
        lines = [line(i) for i in range(phase * LINES_PER_PHASE, (phase + 1) * LINES_PER_PHASE)]
        kcat("-P", "-b", cluster.bootstrap, "-t", source, "-X", "acks=all",
             input="".join(f"{text}\n" for text in lines).encode())
        expected.update(word for text in lines for word in text.split())
        wait_until(lambda: all(i.alive() for i in instances) and
                   {k: int(v[-1]) for k, v in read_outputs(cluster, sink).items()} == dict(expected),
                   timeout=240, interval=1, what=f"the counts of phase {phase}")

    def start(n):
        return Instance(streams_classpath, "word-count", cluster, application_id, tmp_path / f"state-{n}", source,
                        sink)

    instances = [start(n) for n in range(3)]
    try:
        for instance in instances:
            instance.wait_running()
        produce(0, instances)
        # Killed with its transaction open: another instance takes its tasks over once the group drops it,
        # fencing its producer, restoring the counts from the changelog and carrying on where it committed.
        instances[0].process.send_signal(signal.SIGKILL)
        instances[0].process.wait()
        produce(1, instances[1:])
        instances[0].close()
        instances[0] = start(0)
        instances[0].wait_running()
        produce(2, instances)
    finally:
        for instance in instances:
            instance.close()

    # Every count went out once: a record processed twice would repeat or skip a number.
    for word, counts in read_outputs(cluster, sink).items():
        assert counts == [str(n) for n in range(1, expected[word] + 1)], f"{word}: {counts}"
    described = kafka_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", cluster.bootstrap,
                           "--describe", "--topic", f"{application_id}-counts-changelog")
    assert described.returncode == 0, described.stderr
    assert "cleanup.policy=compact" in described.stdout, described.stdout


def test_at_least_once_windowed_count(cluster, streams_classpath, tmp_path):
    source, sink = "clicks-in", "clicks-out"
    create_spread_topic(cluster, source, 3)
    create_spread_topic(cluster, sink, 3)
    base = 1_700_000_000_000
    records = [(f"user-{i % 5}", base + i * 700) for i in range(600)]
    expected = collections.Counter(f"{key}@{ts - ts % 10_000}" for key, ts in records)

    instance = Instance(streams_classpath, "windowed-count", cluster, "windowed-count", tmp_path / "state", source,
                        sink)
    try:
        instance.wait_running()
        # Retries: a new topic's leaders may need a moment to host it.
        producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all", retries=5)
        for key, ts in records:
            producer.send(source, key=key.encode(), value=b"click", timestamp_ms=ts)
        producer.flush(timeout=60)
        producer.close()
        wait_until(lambda: instance.alive() and
                   {k: int(v[-1]) for k, v in read_outputs(cluster, sink).items()} == dict(expected),
                   timeout=180, interval=1, what="the windowed counts")
    finally:
        instance.close()
