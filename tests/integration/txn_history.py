"""Concurrent transactional writers for the Jepsen-style check in test_transactions.py, on confluent-kafka-python
(run with the interpreter of the environment scripts/install-deps makes).

WRITERS threads, each a transactional producer of its own id, run TRANSACTIONS transactions one after the other.
Each writes its value "<writer>-<n>" to two or three random partitions of TOPIC, then commits, or aborts one time in
four. Each transaction becomes a JSON line on stdout with its outcome, as the writer's client saw it, and its
start and end on one monotonic clock:
{"value": "2-17", "partitions": [0, 4], "outcome": "commit" | "abort" | "unknown", "start": s, "end": s}
"unknown" is a commit whose answer never came (the writer stops there). {"progress": n} lines count the
transactions finished so far; {"done": true} comes last.

usage: txn_history.py BOOTSTRAP TOPIC PARTITIONS WRITERS TRANSACTIONS
"""
import json
import random
import sys
import threading
import time

from confluent_kafka import KafkaException, Producer

TIMEOUT_S = 90
lock = threading.Lock()
finished = 0


def emit(line):
    global finished
    with lock:
        if "outcome" in line:
            finished += 1
        print(json.dumps(line), flush=True)
        if "outcome" in line and finished % 50 == 0:
            print(json.dumps({"progress": finished}), flush=True)


def write(bootstrap, topic, partitions, writer, transactions):
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"history-{writer}", "linger.ms": 2})
    producer.init_transactions(TIMEOUT_S)
    rng = random.Random(writer)
    for n in range(transactions):
        value = f"{writer}-{n}"
        chosen = sorted(rng.sample(range(partitions), rng.choice((2, 3))))
        start = time.monotonic()
        producer.begin_transaction()
        for p in chosen:
            producer.produce(topic, value=value.encode(), partition=p)
        try:
            if rng.randrange(4) == 0:
                producer.abort_transaction(TIMEOUT_S)
                outcome = "abort"
            else:
                producer.commit_transaction(TIMEOUT_S)
                outcome = "commit"
        except KafkaException as e:
            error = e.args[0]
            if not error.txn_requires_abort():
                emit({"value": value, "partitions": chosen, "outcome": "unknown", "start": start,
                      "end": time.monotonic(), "error": str(error)})
                return
            producer.abort_transaction(TIMEOUT_S)
            outcome = "abort"
        emit({"value": value, "partitions": chosen, "outcome": outcome, "start": start, "end": time.monotonic()})


def main():
    bootstrap, topic = sys.argv[1:3]
    partitions, writers, transactions = (int(a) for a in sys.argv[3:6])
    threads = [threading.Thread(target=write, args=(bootstrap, topic, partitions, w, transactions))
               for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"done": True}), flush=True)


if __name__ == "__main__":
    main()
