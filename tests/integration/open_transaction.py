"""A transactional producer on confluent-kafka-python (run with the interpreter of the environment
scripts/install-deps makes) that opens a transaction, writes COUNT records to partition 0 of TOPIC, prints
"open" once they are acknowledged, and leaves the transaction open until its stdin closes.

usage: open_transaction.py BOOTSTRAP TOPIC TRANSACTIONAL_ID COUNT
"""
import sys

from confluent_kafka import Producer


def main():
    bootstrap, topic, transactional_id, count = sys.argv[1:5]
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                         "transaction.timeout.ms": 600_000})
    producer.init_transactions(60)
    producer.begin_transaction()
    for i in range(int(count)):
        producer.produce(topic, value=f"open-{i}".encode(), partition=0)
    if producer.flush(60) != 0:
        sys.exit("the records were not acknowledged")
    print("open", flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main()
