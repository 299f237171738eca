"""Transactions and exactly-once, end to end, with Apache Kafka's own tools against the three-broker cluster.

The read-process-write loop is Kafka's TransactionalMessageCopier (kafka-tools 4.4, the program Kafka's own
system tests run for exactly-once): it consumes one input partition, produces each record to the output topic in
a transaction, sends the consumed offsets to the transaction with the consumer's group metadata (KIP-447) and
commits, aborting some transactions at random. Around it the tests SIGKILL copiers, the transaction coordinator's
broker and output partition leaders, and SIGSTOP a copier while a second one with the same transactional id fences
it. A checker then reads the output as a read_committed consumer: every input record exactly once, none of an
aborted transaction, and the group's committed offsets at the end of the input.
"""
import json
import os
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import create_spread_topic, kafka_tool, kafka_tools_classpath, kcat, offsets_partition, wait_until

INPUT = "eos-in"
OUTPUT = "eos-out"
PARTITIONS = 3
PER_PARTITION = 6000
GROUP = "eos-copier"
TXN_PARTITIONS = 50  # transaction.state.log.num.partitions


class Copier:
    """One TransactionalMessageCopier process, with its JSON progress lines in a file."""

    def __init__(self, cluster, partition, transactional_id, output=OUTPUT, group=GROUP, size=100):
        self.transactional_id = transactional_id
        self.out = tempfile.NamedTemporaryFile(prefix=f"ferry-copier-{transactional_id}-", suffix=".log", delete=False)
        cmd = ["java", "-cp", kafka_tools_classpath(), "org.apache.kafka.tools.TransactionalMessageCopier",
               "--broker-list", cluster.bootstrap, "--input-topic", INPUT, "--input-partition", str(partition),
               "--output-topic", output, "--consumer-group", group, "--transactional-id", transactional_id,
               "--transaction-size", str(size), "--max-messages", "-1", "--enable-random-aborts",
               "--use-group-metadata",
               # A killed copier's open transaction holds its offsets pending, and the restarted one's consumer
               # waits for them before its producer fences the old one: the coordinator aborts it after this
               # timeout (checked every 10 s), well within the consumer's 60 s.
               "--transaction-timeout", "10000"]
        self.process = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT)

    def lines(self):
        with open(self.out.name) as f:
            return [json.loads(line) for line in f if line.startswith("{")]

    def processed(self):
        done = [line["totalProcessed"] for line in self.lines() if "totalProcessed" in line]
        return done[-1] if done else 0

    def wait_processed(self, n, timeout=120):
        wait_until(lambda: self.processed() >= n or self.process.poll() is not None, timeout=timeout,
                   what=f"{self.transactional_id} to copy {n} records")
        assert self.process.poll() is None, f"{self.transactional_id} exited early:\n{self.log()}"

    def wait(self, timeout=300):
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(f"{self.transactional_id} did not finish in {timeout}s:\n{self.log()}")

    def signal(self, sig):
        self.process.send_signal(sig)

    def log(self):
        with open(self.out.name) as f:
            return f.read()[-5000:]

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.unlink(self.out.name)


def coordinator_of(cluster, transactional_id):
    """The broker coordinating a transactional id: the leader of its __transaction_state partition."""
    return cluster.leader("__transaction_state", offsets_partition(transactional_id, TXN_PARTITIONS))


def read_values(cluster, topic, isolation):
    out = kcat("-C", "-b", cluster.bootstrap, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%s\n",
               "-X", f"isolation.level={isolation}")
    return out.stdout.decode().split()


def input_values(partitions=range(PARTITIONS)):
    return [f"{p}-{i}" for p in partitions for i in range(PER_PARTITION)]


@pytest.fixture(scope="module")
def eos(cluster):
    """The input topic, filled: partition p holds "p-0" .. "p-5999"."""
    create_spread_topic(cluster, INPUT, PARTITIONS)
    create_spread_topic(cluster, OUTPUT, PARTITIONS)
    for p in range(PARTITIONS):
        lines = "".join(f"{p}-{i}\n" for i in range(PER_PARTITION))
        kcat("-P", "-b", cluster.bootstrap, "-t", INPUT, "-p", str(p), "-X", "acks=all", input=lines.encode())
    return cluster


def copy_all_exactly_once(cluster, copiers, expected, output):
    """Waits for the copiers, then for every transaction they committed to be readable, and checks the output."""
    for c in copiers:
        assert c.wait() == 0, f"{c.transactional_id} failed:\n{c.log()}"
    # Markers follow a commit's answer: wait until read_committed readers see as many records as went in.
    wait_until(lambda: len(read_values(cluster, output, "read_committed")) >= len(expected), timeout=60,
               interval=0.5, what="the committed output to be readable")
    committed = read_values(cluster, output, "read_committed")
    assert len(committed) == len(set(committed)), "a record was copied twice"
    assert sorted(committed) == sorted(expected)
    return committed


def test_read_process_write_is_exactly_once_through_kills(eos):
    cluster = eos
    copiers = {p: Copier(cluster, p, f"eos-{p}") for p in range(PARTITIONS)}
    try:
        # A copier killed in the middle of a transaction; the new one with its id aborts what it left open and
        # resumes from the offsets it committed.
        copiers[0].wait_processed(1500)
        copiers[0].signal(signal.SIGKILL)
        copiers[0].process.wait()
        copiers[0] = Copier(cluster, 0, "eos-0")

        # The transaction coordinator of eos-1 killed: another replica of its __transaction_state partition takes
        # over, completes what was prepared, and the copier carries on.
        copiers[1].wait_processed(1500)
        coordinator = coordinator_of(cluster, "eos-1")
        cluster.kill(coordinator)
        copiers[1].wait_processed(copiers[1].processed() + 500)
        cluster.start(coordinator)

        # A leader of the output topic killed under open transactions.
        copiers[2].wait_processed(1500)
        leader = cluster.leader(OUTPUT, 0)
        cluster.kill(leader)
        copiers[2].wait_processed(copiers[2].processed() + 500)
        cluster.start(leader)

        copy_all_exactly_once(cluster, copiers.values(), input_values(), OUTPUT)
        everything = read_values(cluster, OUTPUT, "read_uncommitted")
        assert len(everything) > PARTITIONS * PER_PARTITION, "no transaction was aborted: the check proves little"

        # The group's offsets were committed with the outputs: at the end of every input partition.
        described = kafka_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server",
                               cluster.bootstrap, "--describe", "--group", GROUP)
        assert described.returncode == 0, described.stderr
        rows = [line.split() for line in described.stdout.splitlines() if line.startswith(GROUP)]
        assert sorted((int(r[2]), int(r[3]), int(r[4])) for r in rows) == \
            [(p, PER_PARTITION, PER_PARTITION) for p in range(PARTITIONS)]
    finally:
        for c in copiers.values():
            c.close()


def test_kafka_transactions_tool_lists_and_describes_the_copiers(eos):
    listed = kafka_tool("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", eos.bootstrap, "list")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split()[0]: line.split() for line in listed.stdout.splitlines()[1:] if line.strip()}
    for p in range(PARTITIONS):
        assert rows[f"eos-{p}"][3] in ("CompleteCommit", "CompleteAbort", "Empty"), listed.stdout
        assert int(rows[f"eos-{p}"][1]) == coordinator_of(eos, f"eos-{p}")
    described = kafka_tool("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", eos.bootstrap,
                           "describe", "--transactional-id", "eos-0")
    assert described.returncode == 0, described.stderr
    assert "eos-0" in described.stdout and "Complete" in described.stdout


def test_a_zombie_is_fenced_and_writes_nothing_visible(eos):
    cluster = eos
    output = "eos-zombie-out"
    create_spread_topic(cluster, output, PARTITIONS)  # the copier writes to its input partition's number
    zombie = Copier(cluster, 1, "zombie", output=output, group="zombie-group")
    successor = None
    try:
        zombie.wait_processed(1000)
        zombie.signal(signal.SIGSTOP)
        # Same transactional id: InitProducerId bumps the epoch, aborting the zombie's open transaction.
        successor = Copier(cluster, 1, "zombie", output=output, group="zombie-group")
        assert successor.wait() == 0, successor.log()
        zombie.signal(signal.SIGCONT)
        # Whatever the zombie still sends is refused with PRODUCER_FENCED / INVALID_PRODUCER_EPOCH.
        zombie.wait(timeout=120)
        assert "ProducerFenced" in zombie.log() or "InvalidProducerEpoch" in zombie.log() or \
            zombie.process.returncode != 0, zombie.log()
        wait_until(lambda: len(read_values(cluster, output, "read_committed")) >= PER_PARTITION, timeout=60,
                   interval=0.5, what="the successor's output to be readable")
        committed = read_values(cluster, output, "read_committed")
        assert sorted(committed) == sorted(input_values([1]))
    finally:
        if zombie.process.poll() is None:
            zombie.signal(signal.SIGCONT)
        zombie.close()
        if successor:
            successor.close()
