"""What the clients saw, and what the cluster holds at the end.

Producers: the Java client's, idempotent, acks=all, each writing numbered values "<producer>-<seq>"
round-robin over the partitions and remembering, from its callbacks, where each acknowledged record went.
Reader: kcat consuming every partition all along, remembering the value it was served at each offset.
check() compares both with a final read of every partition.

Each takes the clients' settings as librdkafka names them (tests/integration/security_clients.py): a dict with
bootstrap.servers and, against a secure cluster, security.protocol, sasl.* and ssl.ca.location.
"""
import collections
import json
import os
import subprocess
import threading

import conftest
from security_clients import java_properties, kcat_args

METADATA_TIMEOUT_S = 60  # kcat -m: how long kcat waits for its first metadata answer before it gives up


class ProducerRecord:
    """What one producer sent and which answers it got."""

    def __init__(self, index):
        self.index = index
        self.sent = 0
        self.acked = {}   # seq -> (partition, offset)
        self.failed = {}  # seq -> error
        self.unanswered = None
        self.fatal = None  # why the producer stopped early, if it did


class Producers:
    """Java producers (tests/java, ferry.NumberedProducers: KafkaProducer with its defaults, idempotent and
    acks=all) in one JVM, each writing numbered values "<producer>-<seq>" round-robin over the partitions and
    remembering, from its callbacks, where each acknowledged record went. The Java client, because librdkafka
    (up to 2.16 at least) bumps the producer epoch on an OUT_OF_ORDER_SEQUENCE_NUMBER that Kafka gives as well
    and then sends stored but unanswered batches again as new records (librdkafka #4953): the checker would
    count the client's duplicates as the cluster's."""

    CLOSE_TIMEOUT_S = 180

    def __init__(self, count, clients, topic, partitions, rate, work_dir, client_debug=False):
        version = conftest.JAVA_CLIENT_VERSIONS[-1]
        build_dir = os.path.join(work_dir, "java-producers")
        os.makedirs(build_dir, exist_ok=True)
        classpath = conftest.java_checks_classpath(version, build_dir)
        self.records = [ProducerRecord(i) for i in range(count)]
        self.unexpected = []  # output lines that are not a producer's answer
        self.log = open(os.path.join(work_dir, "producers.log"), "wb")
        # With client_debug, the producer internals (sequence numbers, epoch bumps, retries) log at debug level.
        levels = ["-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.showDateTime=true"]
        if client_debug:
            levels.append("-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.producer.internals=debug")
        # TLS and the login, if the cluster wants them, in a properties file added to the producers' settings.
        config = []
        if "security.protocol" in clients:
            config = ["--config", java_properties(os.path.join(work_dir, "producers.properties"), clients)]
        self.proc = subprocess.Popen(
            ["java", *levels, "-cp", classpath, "ferry.NumberedProducers", "--bootstrap", clients["bootstrap.servers"],
             "--topic", topic, "--partitions", str(partitions), "--producers", str(count), "--rate", str(rate),
             "--close-timeout", str(self.CLOSE_TIMEOUT_S), *config],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)
        self._thread = threading.Thread(target=self._read, name="producers", daemon=True)
        self._thread.start()

    def _read(self):
        # Every line is read, whatever it holds: a reader that stopped would leave the producers blocked on a full
        # pipe.
        for line in self.proc.stdout:
            try:
                answer = json.loads(line)
                record = self.records[answer["producer"]]
                kind = answer["check"]
            except (ValueError, KeyError, IndexError, TypeError):
                self.unexpected.append(line.decode(errors="replace").strip())
                continue
            if kind == "acked":
                record.acked[answer["seq"]] = (answer["partition"], answer["offset"])
            elif kind == "failed":
                record.failed[answer["seq"]] = answer["error"]
            elif kind == "fatal":
                record.fatal = answer["error"]
            elif kind == "done":
                record.sent = answer["sent"]
                record.unanswered = record.sent - len(record.acked) - len(record.failed)

    def acknowledged(self):
        return sum(len(r.acked) for r in self.records)

    def stop(self):
        """Stops sending and waits until every record is answered (or failed by the producer's close)."""
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(self.CLOSE_TIMEOUT_S + 60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(60)
        self.log.close()
        for record in self.records:
            if record.unanswered is None and record.fatal is None:
                record.fatal = f"the producer did not finish (exit status {self.proc.returncode}, see producers.log)"
        if self.unexpected and not any(r.fatal for r in self.records):
            self.records[0].fatal = f"unexpected output from the producers: {self.unexpected[:3]}"


class Reader:
    """kcat -C on every partition from the start, for the whole run: the offsets served and their values."""

    def __init__(self, clients, topic, errors_path):
        # -E: kcat stops at the first error otherwise, and a leader change is full of retriable ones. -m: its first
        # metadata answer may take longer than kcat's 5 s default while brokers restart (and with SASL_SSL, the
        # handshake and login come first); kcat exits without it.
        self.errors_path = errors_path
        self.errors = open(errors_path, "wb")
        self.proc = subprocess.Popen(
            ["kcat", *kcat_args(clients), "-C", "-t", topic, "-o", "beginning", "-u", "-E", "-m", str(METADATA_TIMEOUT_S),
             "-f", "%p %o %s\\n", "-X", "topic.metadata.refresh.interval.ms=5000"],
            stdout=subprocess.PIPE, stderr=self.errors)
        self.served = {}        # (partition, offset) -> value
        self.conflicts = []     # (partition, offset, first value, later value)
        self._thread = threading.Thread(target=self._run, name="reader", daemon=True)
        self._thread.start()

    def _run(self):
        for line in self.proc.stdout:
            partition, offset, value = line.rstrip(b"\n").split(b" ", 2)
            key = (int(partition), int(offset))
            seen = self.served.setdefault(key, value)
            if seen != value:
                self.conflicts.append((*key, seen, value))

    def exited(self):
        """None while kcat runs, else how it ended and the end of what it printed on stderr."""
        if self.proc.poll() is None:
            return None
        self.errors.flush()
        with open(self.errors_path, errors="replace") as f:
            tail = "".join(f.readlines()[-10:])
        return f"kcat exited with {self.proc.returncode}:\n{tail}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)
        self._thread.join(30)
        self.errors.close()


def read_all(clients, topic, partitions):
    """{partition: [(offset, value)]} of everything up to each partition's high watermark."""
    out = subprocess.run(["kcat", *kcat_args(clients), "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-m",
                          str(METADATA_TIMEOUT_S), "-f", "%p %o %s\\n"], capture_output=True, timeout=300,
                         check=True).stdout
    records = {p: [] for p in range(partitions)}
    for line in out.split(b"\n")[:-1]:
        partition, offset, value = line.split(b" ", 2)
        records[int(partition)].append((int(offset), value))
    return records


def check(records, reader, final):
    """The checker's counts and the first few examples of each kind of violation."""
    stored = collections.defaultdict(list)  # value -> [(partition, offset)]
    for partition, rows in final.items():
        for offset, value in rows:
            stored[value].append((partition, offset))
    examples = collections.defaultdict(list)

    def note(kind, what):
        if len(examples[kind]) < 5:
            examples[kind].append(what)

    acknowledged = lost = reordered = failed = unanswered = stopped = 0
    for p in records:
        failed += len(p.failed)
        if p.fatal:
            stopped += 1
            note("stopped", f"producer {p.index}: {p.fatal}")
        for seq, error in list(p.failed.items())[:5]:
            note("failed", f"producer {p.index} record {seq}: {error}")
        unanswered += p.unanswered or 0
        last_offset = {}
        for seq in sorted(p.acked):
            acknowledged += 1
            partition, offset = p.acked[seq]
            value = b"%d-%d" % (p.index, seq)
            if (partition, offset) not in stored.get(value, []):
                lost += 1
                note("lost", f"{value.decode()} acknowledged at {partition}/{offset}, stored at {stored.get(value)}")
            if offset <= last_offset.get(partition, -1):
                reordered += 1
                note("reordered", f"{value.decode()} acknowledged at {partition}/{offset} after offset "
                                  f"{last_offset[partition]}")
            last_offset[partition] = offset
    duplicated = sum(len(places) - 1 for places in stored.values())
    for value, places in stored.items():
        if len(places) > 1:
            note("duplicated", f"{value.decode(errors='replace')} at {places}")
    # Per partition, each producer's records are stored in the order it sent them.
    for partition, rows in final.items():
        last_seq = {}
        for offset, value in rows:
            producer, _, seq = value.partition(b"-")
            if int(seq) <= last_seq.get(producer, -1):
                reordered += 1
                note("reordered", f"{value.decode()} stored at {partition}/{offset} after seq {last_seq[producer]}")
            last_seq[producer] = int(seq)
    # An offset a consumer was served must hold the same record at the end.
    final_at = {(partition, offset): value for partition, rows in final.items() for offset, value in rows}
    divergent = len(reader.conflicts)
    for partition, offset, first, later in reader.conflicts[:5]:
        note("divergent", f"{partition}/{offset} served as {first!r}, later as {later!r}")
    for key, value in reader.served.items():
        if final_at.get(key) != value:
            divergent += 1
            note("divergent", f"{key[0]}/{key[1]} served as {value!r}, holds {final_at.get(key)!r} at the end")
    counts = {"sent": sum(p.sent for p in records), "acknowledged": acknowledged, "lost": lost,
              "duplicated": duplicated, "reordered": reordered, "divergent": divergent, "failed": failed,
              "unanswered": unanswered, "producers stopped": stopped, "served": len(reader.served)}
    return counts, examples
