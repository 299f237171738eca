"""What the clients saw, and what the cluster holds at the end.

Producers: librdkafka (confluent-kafka), idempotent, acks=all, each writing numbered values "<producer>-<seq>"
round-robin over the partitions and remembering, from the delivery reports, where each acknowledged record
went. Reader: kcat consuming every partition all along, remembering the value it was served at each offset.
check() compares both with a final read of every partition.
"""
import collections
import logging
import subprocess
import threading
import time

import confluent_kafka


def librdkafka_version():
    """(major, minor, patch) of the librdkafka that confluent_kafka uses."""
    number = confluent_kafka.libversion()[1]
    return (number >> 24) & 0xFF, (number >> 16) & 0xFF, (number >> 8) & 0xFF


def _file_logger(name, path):
    """A logger that writes librdkafka's log lines (handed over on poll()) to `path`, with the time."""
    logger = logging.getLogger(name)
    logger.propagate = False
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    return logger


class Producer:
    def __init__(self, index, bootstrap, topic, partitions, rate, debug_log=None):
        self.index = index
        self.topic = topic
        self.partitions = partitions
        self.interval = 1.0 / rate
        self.client = confluent_kafka.Producer({
            "bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5,
            "message.timeout.ms": 600000, "reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 1000,
            "topic.metadata.refresh.interval.ms": 5000, "log_level": 2,
            # With debug_log, librdkafka's idempotence, message and connection debug lines go there.
            **({"debug": "eos,msg,broker", "log_level": 7, "logger": _file_logger(f"producer-{index}", debug_log)}
               if debug_log else {})})
        self.sent = 0
        self.acked = {}   # seq -> (partition, offset)
        self.failed = {}  # seq -> error
        self.unanswered = None
        self.fatal = None  # the error that ended the producer (librdkafka raises fatal idempotence errors)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"producer-{index}", daemon=True)

    def _report(self, seq):
        def report(err, msg):
            if err is None:
                self.acked[seq] = (msg.partition(), msg.offset())
            else:
                self.failed[seq] = str(err)
        return report

    def _run(self):
        next_send = time.monotonic()
        while not self._stop.is_set():
            seq = self.sent
            try:
                self.client.produce(self.topic, value=b"%d-%d" % (self.index, seq), partition=seq % self.partitions,
                                    on_delivery=self._report(seq))
            except BufferError:
                self.client.poll(0.1)
                continue
            except confluent_kafka.KafkaException as e:
                self.fatal = str(e)
                break
            self.sent += 1
            next_send += self.interval
            self.client.poll(max(0.0, next_send - time.monotonic()))
        self.unanswered = self.client.flush(180)

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        self._thread.join(240)


class Reader:
    """kcat -C on every partition from the start, for the whole run: the offsets served and their values."""

    def __init__(self, bootstrap, topic, errors_path):
        # -E: kcat stops at the first error otherwise, and a leader change is full of retriable ones.
        self.errors = open(errors_path, "wb")
        self.proc = subprocess.Popen(
            ["kcat", "-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-u", "-E", "-f", "%p %o %s\\n",
             "-X", "topic.metadata.refresh.interval.ms=5000"],
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

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)
        self._thread.join(30)
        self.errors.close()


def read_all(bootstrap, topic, partitions):
    """{partition: [(offset, value)]} of everything up to each partition's high watermark."""
    out = subprocess.run(["kcat", "-b", bootstrap, "-C", "-t", topic, "-o", "beginning", "-e", "-q", "-f",
                          "%p %o %s\\n"], capture_output=True, timeout=300, check=True).stdout
    records = {p: [] for p in range(partitions)}
    for line in out.split(b"\n")[:-1]:
        partition, offset, value = line.split(b" ", 2)
        records[int(partition)].append((int(offset), value))
    return records


def check(producers, reader, final):
    """The checker's counts and the first few examples of each kind of violation."""
    stored = collections.defaultdict(list)  # value -> [(partition, offset)]
    for partition, rows in final.items():
        for offset, value in rows:
            stored[value].append((partition, offset))
    examples = collections.defaultdict(list)

    def note(kind, what):
        if len(examples[kind]) < 5:
            examples[kind].append(what)

    acknowledged = lost = reordered = failed = unanswered = 0
    for p in producers:
        failed += len(p.failed) + (1 if p.fatal else 0)
        if p.fatal:
            note("failed", f"producer {p.index} stopped: {p.fatal}")
        for seq, error in list(p.failed.items())[:5]:
            note("failed", f"producer {p.index} record {seq}: {error}")
        unanswered += p.unanswered or 0
        last_offset = {}
        for seq in sorted(p.acked):
            acknowledged += 1
            partition, offset = p.acked[seq]
            value = b"%d-%d" % (p.index, seq)
            if offset is None:  # acknowledged without an offset: it must be stored somewhere all the same
                if not stored.get(value):
                    lost += 1
                    note("lost", f"{value.decode()} acknowledged (no offset), not stored")
                continue
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
    counts = {"sent": sum(p.sent for p in producers), "acknowledged": acknowledged, "lost": lost,
              "duplicated": duplicated, "reordered": reordered, "divergent": divergent, "failed": failed,
              "unanswered": unanswered, "served": len(reader.served)}
    return counts, examples
