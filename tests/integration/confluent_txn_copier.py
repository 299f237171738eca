"""A read-process-write loop on confluent-kafka-python and the librdkafka its wheel bundles (run with the interpreter
of the environment scripts/install-deps makes), for test_transactions.py: it consumes INPUT in GROUP as a
read_committed consumer, produces each record to the same partition of OUTPUT in a transaction, sends the consumer's
positions to the transaction with its group metadata (send_offsets_to_transaction) and commits. Every third
transaction is aborted instead, and the consumer rewinds to its committed offsets, so the same records are copied
again by a later transaction. It stops once EXPECTED records went out in committed transactions and prints
{"committed": N, "aborted": M, "transactions": T}.

usage: confluent_txn_copier.py BOOTSTRAP INPUT OUTPUT GROUP TRANSACTIONAL_ID EXPECTED
"""
import json
import sys

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaException, Producer, TopicPartition

TIMEOUT_S = 60


def rewind_to_committed(consumer):
    for tp in consumer.committed(consumer.assignment(), timeout=TIMEOUT_S):
        consumer.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))


def main():
    bootstrap, source, sink, group, transactional_id, expected = sys.argv[1:7]
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id, "linger.ms": 5})
    producer.init_transactions(TIMEOUT_S)
    consumer.subscribe([source])
    committed = aborted = transactions = 0
    while committed < int(expected):
        records = consumer.consume(num_messages=100, timeout=1)
        for r in records:
            if r.error():
                raise KafkaException(r.error())
        if not records:
            continue
        producer.begin_transaction()
        for r in records:
            producer.produce(sink, key=r.key(), value=r.value(), partition=r.partition())
        positions = [tp for tp in consumer.position(consumer.assignment()) if tp.offset >= 0]
        producer.send_offsets_to_transaction(positions, consumer.consumer_group_metadata(), TIMEOUT_S)
        transactions += 1
        if transactions % 3 == 0:
            producer.abort_transaction(TIMEOUT_S)
            aborted += 1
            rewind_to_committed(consumer)
        else:
            producer.commit_transaction(TIMEOUT_S)
            committed += len(records)
    consumer.close()
    print(json.dumps({"committed": committed, "aborted": aborted, "transactions": transactions}), flush=True)


if __name__ == "__main__":
    main()
