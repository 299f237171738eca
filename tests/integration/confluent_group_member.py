"""One member of a consumer group for group_members.py, on confluent-kafka-python and the librdkafka its wheel
bundles (run with the interpreter of the environment scripts/install-deps makes). It prints the same JSON lines as
tests/java's ferry.GroupMember: the whole assignment after every rebalance callback, each record read, and "closed"
once stdin closes and the consumer has left the group.

usage: confluent_group_member.py BOOTSTRAP TOPIC GROUP ASSIGNOR [INSTANCE_ID]

ASSIGNOR is a client-side assignor of the classic protocol (range, cooperative-sticky, ...), or consumer:NAME for
Kafka 4's consumer protocol (group.protocol=consumer, KIP-848) with the broker's assignor NAME (uniform, range).
"""
import json
import sys
import threading

from confluent_kafka import Consumer, KafkaError, KafkaException

# A commit refused because a rebalance is under way or passed this member by: applications leave it to the next
# commit (the records it covered may be read again by whoever gets their partitions). STALE_MEMBER_EPOCH is the
# consumer protocol's word for it: the commit crossed a heartbeat that moved the member to a new epoch.
REBALANCING = {KafkaError.REBALANCE_IN_PROGRESS, KafkaError.ILLEGAL_GENERATION, KafkaError.UNKNOWN_MEMBER_ID,
               KafkaError._NO_OFFSET, KafkaError._ASSIGNMENT_LOST, KafkaError.STALE_MEMBER_EPOCH}


def emit(check, **fields):
    print(json.dumps({"check": check, **fields}), flush=True)


def main():
    bootstrap, topic, group, assignor = sys.argv[1:5]
    config = {"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
              "enable.auto.commit": False}
    if assignor.startswith("consumer:"):
        # The broker assigns, and its session timeout and heartbeat interval apply.
        config.update({"group.protocol": "consumer", "group.remote.assignor": assignor.split(":", 1)[1]})
    else:
        config.update({"session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                       "partition.assignment.strategy": assignor})
    if len(sys.argv) > 5:
        config["group.instance.id"] = sys.argv[5]
    consumer = Consumer(config)
    assigned = set()

    def on_assign(_, partitions):
        assigned.update(p.partition for p in partitions)
        emit("assigned", partitions=sorted(assigned))

    def on_revoke(_, partitions):
        assigned.difference_update(p.partition for p in partitions)
        emit("assigned", partitions=sorted(assigned))

    stopping = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), stopping.set()), daemon=True).start()
    consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
    try:
        while not stopping.is_set():
            records = consumer.consume(num_messages=500, timeout=0.1)
            for r in records:
                if r.error():
                    emit("error", error=str(r.error()))
                    continue
                emit("record", partition=r.partition(), offset=r.offset(), value=r.value().decode())
            if any(not r.error() for r in records):
                try:
                    consumer.commit(asynchronous=False)
                except KafkaException as e:
                    if e.args[0].code() not in REBALANCING:
                        raise
                    emit("commit_refused", error=str(e))
    except Exception as e:  # noqa: BLE001 - reported to the test, which fails on it
        emit("error", error=repr(e))
    consumer.close()
    emit("closed")


if __name__ == "__main__":
    main()
