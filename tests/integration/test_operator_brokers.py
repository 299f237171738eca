"""The operator when brokers come: a broker added to a running cluster receives replicas of the managed topics,
a bounded number of moves at a time, while a producer and a consumer run, and nothing acknowledged is lost."""
import json
import threading
import uuid

import pytest
from kafka import KafkaConsumer, KafkaProducer

from conftest import started_cluster, wait_until
from kube_env import Operator, grant_operator, kube_environment, topic, wait_ready, zk_partitions


@pytest.fixture(scope="module")
def ferry():
    # Four brokers, the fourth stopped before any topic exists: starting it again is adding a broker.
    with started_cluster(4) as c:
        c.stop(3)
        yield c


@pytest.fixture(scope="module")
def kube(request):
    with kube_environment(request) as env:
        grant_operator(env, "ferry-operator")
        yield env


@pytest.fixture(scope="module")
def operator(kube, ferry):
    op = Operator(kube, kube.user("ferry-operator"), ferry.zk_port, args=("--max-concurrent-moves", "2"))
    op.start()
    yield op
    op.stop()
    assert not op.sanitizer_reports(), op.sanitizer_reports()


def loads(ferry, topics):
    counts = {b: 0 for b in range(4)}
    for t in topics:
        for replicas in zk_partitions(ferry, t).values():
            for r in replicas:
                counts[r] += 1
    return counts


def test_an_added_broker_receives_replicas_under_load(kube, ferry, operator):
    ns = "b-" + uuid.uuid4().hex[:8]
    kube.kubectl("create", "namespace", ns)
    names = ["load-a", "load-b"]
    kube.apply(*(topic(n, ns, 6, 2) for n in names))
    for n in names:
        wait_ready(kube, n, ns)
    assert loads(ferry, names)[3] == 0

    acked, stop = [], threading.Event()
    producer = KafkaProducer(bootstrap_servers=ferry.bootstrap, acks="all", retries=20, max_in_flight_requests_per_connection=1)

    def produce():
        i = 0
        while not stop.is_set():
            value = f"m-{i}".encode()
            try:
                producer.send("load-a", value).get(timeout=30)
                acked.append(value)
            except Exception:  # a failed send is not acknowledged; the check counts only acknowledged ones
                pass
            i += 1

    writer = threading.Thread(target=produce)
    writer.start()
    try:
        wait_until(lambda: len(acked) > 50, timeout=60, what="the producer to get going")
        ferry.start(3)
        wait_until(lambda: loads(ferry, names)[3] >= 5, timeout=180, interval=0.5,
                   what="broker 3 to receive its share of the 24 replicas")
        # Never more than two moves in flight (--max-concurrent-moves 2).
        zk = ferry.zookeeper()
        try:
            def in_flight():
                total = 0
                for n in names:
                    data, _ = zk.get(f"/brokers/topics/{n}")
                    total += len(json.loads(data).get("adding_replicas", {}))
                return total
            assert in_flight() <= 2
        finally:
            zk.stop()
        wait_until(lambda: max(loads(ferry, names).values()) - min(loads(ferry, names).values()) <= 1, timeout=240,
                   interval=1, what="an even spread")
    finally:
        stop.set()
        writer.join()
        producer.close()
    for n in names:
        assert ready_or_rebalancing(kube, n, ns)

    consumer = KafkaConsumer("load-a", bootstrap_servers=ferry.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=10000)
    seen = {m.value for m in consumer}
    consumer.close()
    missing = [v for v in acked if v not in seen]
    assert not missing, f"{len(missing)} acknowledged records lost, e.g. {missing[:5]}"


def ready_or_rebalancing(kube, name, ns):
    obj = kube.get("topic", name, ns)
    return any(c["type"] == "Ready" and c["status"] == "True" for c in obj["status"]["conditions"])
