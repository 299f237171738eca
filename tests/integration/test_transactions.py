"""Transactions and exactly-once, end to end, with Apache Kafka's own tools against the three-broker cluster.

The read-process-write loop is Kafka's TransactionalMessageCopier (kafka-tools 4.4, the program Kafka's own
system tests run for exactly-once): it consumes one input partition, produces each record to the output topic in
a transaction, sends the consumed offsets to the transaction with the consumer's group metadata (KIP-447) and
commits, aborting some transactions at random. Around it the tests SIGKILL copiers, the transaction coordinator's
broker and output partition leaders, and SIGSTOP a copier while a second one with the same transactional id fences
it. A checker then reads the output as a read_committed consumer: every input record exactly once, none of an
aborted transaction, and the group's committed offsets at the end of the input. The same check runs on
confluent-kafka-python's read-process-write loop (confluent_txn_copier.py, send_offsets_to_transaction); kcat's
transactional producer sends its input in one transaction, and franz-go's (tests/go/franz-txn) commits and aborts.
kafka-transactions.sh finds no hanging transaction and aborts an open one.

Java 4.4 and franz-go producers run at transaction version 2 (KIP-890 part 2), which the cluster finalizes: the
broker adds partitions to their transactions and every commit or abort bumps their epoch; librdkafka's stay on the
classic flow, and a cluster at transaction.version=1 keeps the Java client there too.
"""
import collections
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from conftest import (SOURCE_DIR, create_spread_topic, kafka_tool, kafka_tools_classpath, kcat, offsets_partition,
                      started_cluster, wait_until)
from group_members import CONFLUENT_PYTHON

INPUT = "eos-in"
OUTPUT = "eos-out"
PARTITIONS = 3
PER_PARTITION = 6000
GROUP = "eos-copier"
CONFLUENT_COPIER = os.path.join(SOURCE_DIR, "tests", "integration", "confluent_txn_copier.py")
OPEN_TRANSACTION = os.path.join(SOURCE_DIR, "tests", "integration", "open_transaction.py")
TXN_HISTORY = os.path.join(SOURCE_DIR, "tests", "integration", "txn_history.py")
FRANZ_TXN = os.path.join(SOURCE_DIR, "tests", "go", "franz-txn")
GO = shutil.which("go") or "/usr/local/go/bin/go"  # scripts/install-deps fetched the program's modules
TXN_PARTITIONS = 50  # transaction.state.log.num.partitions
TRANSACTION_TIMEOUT_MS = 30000
# A SIGKILLed broker's partitions and transaction coordinators move once its ZooKeeper session expires; timed-out
# transactions are looked for every 2 s rather than 10 s, so a restarted copier waits less.
CLUSTER_SETTINGS = ["zookeeper.session.timeout.ms=10000",
                    "transaction.abort.timed.out.transaction.cleanup.interval.ms=2000"]


class JsonLinesProcess:
    """A process whose output goes to a file, read back as JSON lines."""

    def __init__(self, cmd, prefix):
        self.out = tempfile.NamedTemporaryFile(prefix=prefix, suffix=".log", delete=False)
        self.process = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.STDOUT)

    def lines(self):
        with open(self.out.name) as f:
            return [json.loads(line) for line in f if line.startswith("{")]

    def log(self):
        with open(self.out.name) as f:
            return f.read()[-5000:]

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.unlink(self.out.name)


class Copier(JsonLinesProcess):
    """One TransactionalMessageCopier process, with its JSON progress lines in a file."""

    def __init__(self, cluster, partition, transactional_id, output=OUTPUT, group=GROUP, size=100):
        self.transactional_id = transactional_id
        cmd = ["java", "-cp", kafka_tools_classpath(), "org.apache.kafka.tools.TransactionalMessageCopier",
               "--broker-list", cluster.bootstrap, "--input-topic", INPUT, "--input-partition", str(partition),
               "--output-topic", output, "--consumer-group", group, "--transactional-id", transactional_id,
               "--transaction-size", str(size), "--max-messages", "-1", "--enable-random-aborts",
               "--use-group-metadata",
               # Longer than a failover (see `eos`), which a transaction open on a killed broker lives through:
               # the coordinator aborts a transaction open longer and fences its producer, as Kafka does. Short
               # enough for a restarted copier, whose consumer waits for the offsets its killed predecessor left
               # pending in an open transaction until the coordinator aborts it, within the consumer's 60 s.
               "--transaction-timeout", str(TRANSACTION_TIMEOUT_MS)]
        super().__init__(cmd, f"ferry-copier-{transactional_id}-")

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


def described_epoch(cluster, transactional_id):
    """The producer epoch kafka-transactions.sh describes for a transactional id."""
    described = kafka_tool("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", cluster.bootstrap,
                           "describe", "--transactional-id", transactional_id)
    assert described.returncode == 0, described.stderr
    header, row = described.stdout.splitlines()[:2]
    return int(row.split()[header.split().index("ProducerEpoch")])


def finalized_transaction_version(cluster):
    """transaction.version as kafka-features.sh describes it: (supported max, finalized level)."""
    described = kafka_tool("org.apache.kafka.tools.FeatureCommand", "--bootstrap-server", cluster.bootstrap,
                           "describe")
    assert described.returncode == 0, described.stderr
    line = next(line for line in described.stdout.splitlines() if "Feature: transaction.version" in line)
    fields = dict(zip(line.split()[::2], line.split()[1::2]))
    return int(fields["SupportedMaxVersion:"]), int(fields["FinalizedVersionLevel:"])


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
def eos():
    """Three brokers; the input topic, filled: partition p holds "p-0" .. "p-5999"."""
    with started_cluster(3, overrides=CLUSTER_SETTINGS) as cluster:
        create_spread_topic(cluster, INPUT, PARTITIONS)
        create_spread_topic(cluster, OUTPUT, PARTITIONS)
        for p in range(PARTITIONS):
            lines = "".join(f"{p}-{i}\n" for i in range(PER_PARTITION))
            kcat("-P", "-b", cluster.bootstrap, "-t", INPUT, "-p", str(p), "-X", "acks=all", input=lines.encode())
        yield cluster


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


def assert_committed_at_the_end_of_the_input(cluster, group):
    described = kafka_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server",
                           cluster.bootstrap, "--describe", "--group", group)
    assert described.returncode == 0, described.stderr
    rows = [line.split() for line in described.stdout.splitlines() if line.startswith(group)]
    assert sorted((int(r[2]), int(r[3]), int(r[4])) for r in rows) == \
        [(p, PER_PARTITION, PER_PARTITION) for p in range(PARTITIONS)], described.stdout


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
        assert_committed_at_the_end_of_the_input(cluster, GROUP)
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
    # The copiers' Java 4.4 clients run at transaction version 2 (KIP-890 part 2), which this cluster finalizes:
    # every commit or abort bumped the epoch, and eos-0 ended at least one transaction per 100 records copied.
    assert finalized_transaction_version(eos) == (2, 2)
    assert described_epoch(eos, "eos-0") >= PER_PARTITION // 100


def test_kafka_transactions_tool_finds_no_hanging_transaction_and_aborts_an_open_one(eos):
    cluster, topic, count = eos, "eos-open", 10
    create_spread_topic(cluster, topic, 1)
    opener = subprocess.Popen([CONFLUENT_PYTHON, OPEN_TRANSACTION, cluster.bootstrap, topic, "left-open", str(count)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert opener.stdout.readline().strip() == "open", opener.stderr.read()
        # Open, and known to its coordinator: not hanging, whichever broker is asked about its replicas.
        for broker in range(cluster.brokers):
            found = kafka_tool("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", cluster.bootstrap,
                               "find-hanging", "--broker-id", str(broker), "--max-transaction-timeout", "0")
            assert found.returncode == 0 and found.stdout.splitlines()[1:] == [], found.stdout + found.stderr
        producers = kafka_tool("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server",
                               cluster.bootstrap, "describe-producers", "--topic", topic, "--partition", "0")
        assert producers.stdout.splitlines()[1].split()[5] == "0", producers.stdout  # CurrentTransactionStartOffset

        # An operator's abort: markers written straight to the partition, which read_committed readers then pass.
        aborted = kafka_tool("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", cluster.bootstrap,
                             "abort", "--topic", topic, "--partition", "0", "--start-offset", "0")
        assert aborted.returncode == 0, aborted.stdout + aborted.stderr
        producers = kafka_tool("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server",
                               cluster.bootstrap, "describe-producers", "--topic", topic, "--partition", "0")
        assert producers.stdout.splitlines()[1].split()[5] == "None", producers.stdout
        kcat("-P", "-b", cluster.bootstrap, "-t", topic, "-p", "0", input=b"after\n")
        assert read_values(cluster, topic, "read_committed") == ["after"]
    finally:
        opener.kill()
        opener.wait()


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


def test_confluent_kafka_read_process_write_is_exactly_once(eos):
    cluster = eos
    output, group = "eos-confluent-out", "confluent-copier"
    create_spread_topic(cluster, output, PARTITIONS)
    expected = input_values()
    copier = subprocess.run([CONFLUENT_PYTHON, CONFLUENT_COPIER, cluster.bootstrap, INPUT, output, group,
                             "confluent-copier", str(len(expected))], capture_output=True, text=True, timeout=600)
    assert copier.returncode == 0, copier.stderr[-5000:]
    summary = json.loads(copier.stdout.splitlines()[-1])
    assert summary["committed"] == len(expected) and summary["aborted"] > 0, summary

    wait_until(lambda: len(read_values(cluster, output, "read_committed")) >= len(expected), timeout=60,
               interval=0.5, what="the committed output to be readable")
    committed = read_values(cluster, output, "read_committed")
    assert len(committed) == len(set(committed)), "a record was copied twice"
    assert sorted(committed) == sorted(expected)
    assert len(read_values(cluster, output, "read_uncommitted")) > len(expected), "the aborted copies are not there"
    assert_committed_at_the_end_of_the_input(cluster, group)


def test_kcat_sends_its_input_in_one_transaction(eos):
    cluster, topic, count = eos, "eos-kcat", 1000
    create_spread_topic(cluster, topic, 1)
    kcat("-P", "-b", cluster.bootstrap, "-t", topic, "-p", "0", "-X", "transactional.id=kcat-txn",
         input="".join(f"kcat-{i}\n" for i in range(count)).encode())
    # kcat commits once its input ends: the records are readable as committed, and the commit marker after them
    # takes an offset of its own.
    assert read_values(cluster, topic, "read_committed") == [f"kcat-{i}" for i in range(count)]
    end = kcat("-Q", "-b", cluster.bootstrap, "-t", f"{topic}:0:-1").stdout.decode().split()
    assert int(end[-1]) == count + 1, end
    described = kafka_tool("org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", cluster.bootstrap,
                           "describe", "--transactional-id", "kcat-txn")
    assert described.returncode == 0, described.stderr
    assert "CompleteCommit" in described.stdout, described.stdout
    assert described_epoch(cluster, "kcat-txn") == 0, "librdkafka keeps the classic flow: no epoch bump at commit"


def test_franz_go_transactional_producer_commits_and_aborts(eos, tmp_path):
    cluster, topic, count, size = eos, "eos-franz", 1000, 100
    create_spread_topic(cluster, topic, 1)
    binary = str(tmp_path / "franz-txn")
    subprocess.run([GO, "build", "-o", binary, "."], cwd=FRANZ_TXN, check=True, timeout=600,
                   env={**os.environ, "GOPROXY": "off"})
    run = subprocess.run([binary, cluster.bootstrap, topic, "franz-txn", str(count), str(size)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-5000:]
    summary = json.loads(run.stdout.splitlines()[-1])
    assert summary["committed"] == count and summary["aborted"] > 0, summary
    # Every record once, in order; the aborted sends are in the log, invisible to read_committed.
    assert read_values(cluster, topic, "read_committed") == [f"franz-{i}" for i in range(count)]
    assert len(read_values(cluster, topic, "read_uncommitted")) == count + summary["aborted"] * size
    # franz-go takes transaction version 2 where it is finalized: an epoch bump per commit and per abort.
    assert described_epoch(cluster, "franz-txn") >= count // size + summary["aborted"]


def test_a_cluster_at_transaction_version_1_keeps_producers_on_the_classic_flow():
    topic, transactional_id = "tv1", "tv1-producer"
    with started_cluster(1, overrides=["transaction.version=1"]) as cluster:
        assert finalized_transaction_version(cluster) == (2, 1)
        created = kafka_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", cluster.bootstrap,
                             "--create", "--topic", topic, "--partitions", "1", "--replication-factor", "1")
        assert created.returncode == 0, created.stderr
        # Kafka's producer-perf-test, committing every 50 ms: the Java client sees level 1, adds partitions itself
        # and ends transactions with EndTxn v4, which leaves the epoch where InitProducerId put it.
        run = kafka_tool("org.apache.kafka.tools.ProducerPerformance", "--topic", topic, "--num-records", "20000",
                         "--record-size", "100", "--throughput", "20000", "--transactional-id", transactional_id,
                         "--transaction-duration-ms", "50", "--producer-props", f"bootstrap.servers={cluster.bootstrap}")
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        assert len(read_values(cluster, topic, "read_committed")) == 20000
        assert described_epoch(cluster, transactional_id) == 0


class History(JsonLinesProcess):
    """txn_history.py's writers, with what they printed in a file."""

    def __init__(self, cluster, topic, partitions, writers, transactions):
        super().__init__([CONFLUENT_PYTHON, TXN_HISTORY, cluster.bootstrap, topic, str(partitions), str(writers),
                          str(transactions)], "ferry-history-")

    def wait_finished(self, n, timeout=180):
        wait_until(lambda: sum("outcome" in line for line in self.lines()) >= n or self.process.poll() is not None,
                   timeout=timeout, what=f"{n} transactions to finish")

    def transactions(self, timeout=300):
        assert self.process.wait(timeout=timeout) == 0, self.log()
        lines = self.lines()
        assert lines[-1] == {"done": True}, self.log()
        return [line for line in lines if "outcome" in line]


def read_partitions(cluster, topic):
    """{partition: [value, ...]} in log order, as a read_committed consumer sees them."""
    out = kcat("-C", "-b", cluster.bootstrap, "-t", topic, "-o", "beginning", "-e", "-q", "-f", "%p %s\n",
               "-X", "isolation.level=read_committed")
    seen = collections.defaultdict(list)
    for line in out.stdout.decode().splitlines():
        partition, value = line.split()
        seen[int(partition)].append(value)
    return seen


def test_concurrent_transactions_show_none_of_the_anomalies_jepsen_found(eos):
    """Writers commit and abort transactions over several partitions at once while a leader is killed; a
    read_committed reader then must see no aborted write, every committed write in each of its partitions, a
    transaction whose outcome its writer never learnt in all of its partitions or none, no duplicate, and, in every
    partition, a transaction committed before another began ahead of it."""
    cluster, topic, partitions, writers, per_writer = eos, "eos-history", 6, 4, 150
    create_spread_topic(cluster, topic, partitions)
    history = History(cluster, topic, partitions, writers, per_writer)
    try:
        history.wait_finished(100)
        leader = cluster.leader(topic, 0)
        cluster.kill(leader)
        history.wait_finished(250)
        cluster.start(leader)
        transactions = history.transactions()
    finally:
        history.close()
    assert sum(t["outcome"] == "commit" for t in transactions) > 0 and \
        sum(t["outcome"] == "abort" for t in transactions) > 0, transactions
    writes = {t["value"]: t for t in transactions}
    expected = sum(len(t["partitions"]) for t in transactions if t["outcome"] == "commit")
    wait_until(lambda: sum(map(len, read_partitions(cluster, topic).values())) >= expected, timeout=60, interval=0.5,
               what="the committed transactions to be readable")
    seen = read_partitions(cluster, topic)

    position = {}
    for p, values in seen.items():
        assert len(values) == len(set(values)), f"partition {p} holds a write twice"
        for i, value in enumerate(values):
            write = writes.get(value)
            assert write is not None, f"partition {p} holds {value}, which no writer sent"
            assert write["outcome"] != "abort", f"aborted read: {value} of an aborted transaction in partition {p}"
            assert p in write["partitions"], f"{value} in partition {p}, which its transaction did not write"
            position[(p, value)] = i
    for t in transactions:
        present = [(p, t["value"]) in position for p in t["partitions"]]
        if t["outcome"] == "commit":
            assert all(present), f"lost write: committed {t} is missing from some of its partitions"
        elif t["outcome"] == "unknown":
            assert all(present) or not any(present), f"{t} is visible in only some of its partitions"
    # Real-time order: a transaction committed before another began comes first wherever both wrote.
    committed = [t for t in transactions if t["outcome"] == "commit"]
    for first in committed:
        for later in committed:
            if first["end"] >= later["start"]:
                continue
            for p in set(first["partitions"]) & set(later["partitions"]):
                assert position[(p, first["value"])] < position[(p, later["value"])], \
                    f"partition {p} shows {later['value']} before {first['value']}, committed before it began"
