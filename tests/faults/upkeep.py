"""Retention and compaction running while the fault checker's leaders die (tests/faults/check.py): a topic whose
segments expire within seconds, and a compacted topic whose keys are overwritten all along, both written by an
acks=all librdkafka producer. At the end every key of the compacted topic must read back with its last
acknowledged value or a later one (review findings 3 and 6: the cleaner and retention stay below the high
watermark), and every replica of both topics must be back in the ISR (finding 1: a follower behind the leader's
log start starts over there).

The clients take librdkafka settings (bootstrap.servers and, against a secure cluster, TLS and the login).
"""
import json
import threading
import time

from confluent_kafka import Consumer, Producer, TopicPartition

RETAINED = "faults-retained"
COMPACTED = "faults-compacted"
PARTITIONS = 3
KEYS = 60
# The brokers' side: retention and the cleaner look often.
BROKER_SETTINGS = ["log.retention.check.interval.ms=1000", "log.cleaner.backoff.ms=1000"]
TOPIC_CONFIGS = {
    RETAINED: {"retention.ms": "3000", "segment.ms": "1000", "segment.bytes": "16384", "min.insync.replicas": "2"},
    COMPACTED: {"cleanup.policy": "compact", "segment.ms": "2000", "segment.bytes": "16384",
                "min.cleanable.dirty.ratio": "0.01", "min.compaction.lag.ms": "0", "delete.retention.ms": "1000",
                "min.insync.replicas": "2"},
}


def create_topics(cluster):
    zk = cluster.zookeeper()
    try:
        for topic, config in TOPIC_CONFIGS.items():
            zk.create(f"/config/topics/{topic}", json.dumps({"version": 1, "config": config}).encode(), makepath=True)
            assignment = {str(p): [(p + i) % 3 for i in range(3)] for p in range(PARTITIONS)}
            zk.create(f"/brokers/topics/{topic}", json.dumps({"version": 1, "partitions": assignment}).encode())
    finally:
        zk.stop()
    for topic in TOPIC_CONFIGS:
        for p in range(PARTITIONS):
            cluster.leader(topic, p)


class Load:
    """Overwrites KEYS keys of the compacted topic and appends to the retained one, about 200 records a second,
    remembering the last acknowledged value of each key."""

    def __init__(self, clients):
        self.producer = Producer({**clients, "acks": "all", "enable.idempotence": True,
                                  "linger.ms": 5, "message.timeout.ms": 300000})
        self.acked = {}  # key -> the highest sequence acknowledged for it
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _delivered(self, err, msg):
        if err is None and msg.topic() == COMPACTED:
            key = msg.key().decode()
            self.acked[key] = max(self.acked.get(key, -1), int(msg.value()))

    def _run(self):
        while not self._stop.is_set():
            key = f"k{self.sent % KEYS}"
            self.producer.produce(COMPACTED, key=key.encode(), value=str(self.sent).encode(), on_delivery=self._delivered)
            self.producer.produce(RETAINED, value=b"x" * 100)
            self.sent += 1
            self.producer.poll(0.005)
        self.producer.flush(300)

    def stop(self):
        self._stop.set()
        self._thread.join(330)


def latest_values(clients):
    """Every key's latest value in the compacted topic, read from the start."""
    consumer = Consumer({**clients, "group.id": f"upkeep-{time.monotonic_ns()}",
                         "enable.auto.commit": False})
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(COMPACTED, p), timeout=30)[1] for p in range(PARTITIONS)}
        consumer.assign([TopicPartition(COMPACTED, p, -2) for p in range(PARTITIONS)])
        latest, done, read = {}, {p for p, end in ends.items() if end == 0}, 0
        deadline = time.monotonic() + 120
        while len(done) < PARTITIONS and time.monotonic() < deadline:
            msg = consumer.poll(1)
            if msg is None or msg.error():
                continue
            read += 1
            if msg.value() is not None:
                latest[msg.key().decode()] = int(msg.value())
            if msg.offset() + 1 >= ends[msg.partition()]:
                done.add(msg.partition())
        if len(done) < PARTITIONS:
            raise AssertionError(f"the compacted topic was not read to its end: {done} of {ends}")
        return latest, read
    finally:
        consumer.close()


def retained_start(clients):
    """The smallest log start of the retained topic's partitions: above 0 once retention ran."""
    consumer = Consumer({**clients, "group.id": f"upkeep-{time.monotonic_ns()}"})
    try:
        return min(consumer.get_watermark_offsets(TopicPartition(RETAINED, p), timeout=30)[0] for p in range(PARTITIONS))
    finally:
        consumer.close()


def check(clients, load):
    """{what: count} of violations (and of upkeep that never ran), and examples."""
    latest, read = latest_values(clients)
    behind = {k: (v, latest.get(k)) for k, v in load.acked.items() if latest.get(k, -1) < v}
    counts = {"compacted writes": load.sent, "compacted records read": read,
              "compacted keys older than acknowledged": len(behind),
              "upkeep that never ran": int(read >= load.sent) + int(retained_start(clients) == 0)}
    return counts, [f"{k}: acknowledged {v}, read {r}" for k, (v, r) in sorted(behind.items())[:5]]
