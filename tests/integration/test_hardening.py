"""Resource limits and lifecycle on one real broker: long polls of many idle partitions stay flat and wake on
an append, partition counts are capped, acks=all honours min.insync.replicas, InitProducerId never fences
another producer, a fetch of a deleted topic does not make clients spin, descriptors running out is survived
quietly, a broker killed with SIGKILL serves again within seconds (it takes its ZooKeeper session over), a log
dir is never shared by two brokers, and SIGTERM during a ZooKeeper wait shuts down cleanly.
"""
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import confluent_kafka
import kafka.admin
import kafka.errors
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from conftest import BUILD_DIR, init_producer_id, kafka_request, kcat, read_response, started_cluster, wait_until


@pytest.fixture(scope="module")
def one():
    # The default ZooKeeper session timeout (18 s): a restart that had to wait for the old session to expire
    # would show. AddressSanitizer keeps freed memory in a quarantine (256 MiB by default) that would hide a
    # real leak behind its own growth; a small one lets RSS show what the broker holds.
    previous = os.environ.get("ASAN_OPTIONS")
    os.environ["ASAN_OPTIONS"] = ((previous + ":") if previous else "") + "quarantine_size_mb=4"
    with started_cluster(1, overrides=["num.partitions=1", "max.partitions.per.topic=2000", "max.partitions=5000",
                                       "log.flush.offset.checkpoint.interval.ms=1000"]) as c:
        if previous is None:
            del os.environ["ASAN_OPTIONS"]
        else:
            os.environ["ASAN_OPTIONS"] = previous
        yield c


def admin(cluster):
    return AdminClient({"bootstrap.servers": cluster.bootstrap})


def create(cluster, name, partitions=1, config=None, timeout=60):
    client = admin(cluster)  # kept alive until the result arrives
    futures = client.create_topics([NewTopic(name, partitions, 1, config=config or {})], operation_timeout=timeout)
    futures[name].result(timeout=timeout)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


# ------------------------------------------------------------------------------------------------------
# Long polls

def test_long_polls_of_idle_partitions_stay_flat_and_wake_on_append(broker):
    create(broker, "idle-many", partitions=1000)
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": broker.bootstrap, "group.id": "unused", "enable.auto.commit": False,
        "fetch.wait.max.ms": 200, "fetch.error.backoff.ms": 10, "topic.metadata.refresh.interval.ms": 600000})
    consumer.assign([confluent_kafka.TopicPartition("idle-many", p, 0) for p in range(1000)])
    try:
        # The consumer gets going (metadata, then a first fetch of every partition), long polls settle in for a
        # couple of seconds, and then ten seconds are sampled.
        def long_polling():
            consumer.poll(0.1)
            return broker.metric(0, "ferry_fetch_waiters") >= 1000
        wait_until(long_polling, timeout=60, interval=0, what="a fetch to wait on all 1000 partitions")
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            consumer.poll(0.1)
        samples = []
        for _ in range(10):
            end = time.monotonic() + 1
            while time.monotonic() < end:
                assert consumer.poll(0.1) is None
            samples.append((rss_kib(broker.pid(0)), broker.metric(0, "ferry_fetch_waiters")))
        waiters = [w for _, w in samples]
        rss = [r for r, _ in samples]
        # Each fetch registers once per partition and leaves when it answers: at most the partitions one
        # outstanding fetch waits on, whatever the number of fetches answered meanwhile (dozens a second).
        assert max(waiters) <= 1000, samples
        assert max(rss) - min(rss) < 16 * 1024, f"RSS grew under idle long polls: {samples}"
        requests = broker.metric(0, "ferry_requests_total", api="fetch")
        assert requests > 20, "the consumer kept long-polling"
    finally:
        consumer.close()

    # A consumer long-polling with a 5 s max wait sees a record within a fraction of that.
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": broker.bootstrap, "group.id": "unused", "enable.auto.commit": False,
        "fetch.wait.max.ms": 5000})
    consumer.assign([confluent_kafka.TopicPartition("idle-many", 7, 0)])
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    try:
        consumer.poll(1.0)  # the first fetch is now waiting
        latencies = []
        for i in range(5):
            time.sleep(0.5)  # let a fresh long poll start: the wait between the append and its answer is measured
            sent = time.monotonic()
            producer.produce("idle-many", value=b"wake-%d" % i, partition=7)
            producer.flush(10)
            message = None
            while message is None and time.monotonic() - sent < 10:
                message = consumer.poll(0.1)
            assert message is not None and message.value() == b"wake-%d" % i
            latencies.append(time.monotonic() - sent)
        assert sorted(latencies)[len(latencies) // 2] < 1.0, latencies
    finally:
        consumer.close()
    client = admin(broker)
    client.delete_topics(["idle-many"], operation_timeout=60)["idle-many"].result(timeout=60)


# ------------------------------------------------------------------------------------------------------
# Partition caps, min.insync.replicas, InitProducerId

def test_huge_partition_counts_are_refused_with_a_message(broker):
    # librdkafka refuses more than 100,000 partitions itself; kafka-python sends what it is given.
    python_admin = kafka.admin.KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=30000)
    try:
        with pytest.raises(kafka.errors.InvalidPartitionsError) as refused:
            python_admin.create_topics([kafka.admin.NewTopic("huge-max", 2147483647, 1)])
        assert "huge-max' would have 2147483647 partitions; max.partitions.per.topic is 2000" in str(refused.value)
    finally:
        python_admin.close()
    client = admin(broker)
    futures = client.create_topics([NewTopic("huge-2001", 2001, 1)], operation_timeout=30)
    with pytest.raises(confluent_kafka.KafkaException) as refused:
        futures["huge-2001"].result(timeout=30)
    error = refused.value.args[0]
    assert error.code() == confluent_kafka.KafkaError.INVALID_PARTITIONS
    assert "max.partitions.per.topic" in error.str()
    create(broker, "grow", partitions=2)
    python_admin = kafka.admin.KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=30000)
    try:
        with pytest.raises(kafka.errors.InvalidPartitionsError) as refused:
            python_admin.create_partitions({"grow": kafka.admin.NewPartitions(2147483647)})
        assert "max.partitions.per.topic" in str(refused.value)
    finally:
        python_admin.close()
    assert broker.pid(0) is not None
    assert rss_kib(broker.pid(0)) < 2 * 1024 * 1024


def test_acks_all_refuses_to_pretend_below_min_insync_replicas(broker):
    create(broker, "strict-isr", config={"min.insync.replicas": "2"})
    producer = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap, "acks": "all",
                                         "message.timeout.ms": 3000, "retries": 0})
    errors = []
    producer.produce("strict-isr", value=b"x", partition=0, on_delivery=lambda err, msg: errors.append(err))
    producer.flush(10)
    assert [e.code() for e in errors] == [confluent_kafka.KafkaError.NOT_ENOUGH_REPLICAS]
    # acks=1 does not ask for replicas.
    acks1 = confluent_kafka.Producer({"bootstrap.servers": broker.bootstrap, "acks": 1})
    acks1.produce("strict-isr", value=b"y", partition=0, on_delivery=lambda err, msg: errors.append(err))
    acks1.flush(10)
    assert errors[-1] is None


def test_init_producer_id_never_bumps_another_producers_epoch(broker):
    s = socket.create_connection(("127.0.0.1", broker.base_port), timeout=10)
    try:
        error, first, epoch = init_producer_id(s, 1)
        assert (error, epoch) == (0, 0)
        # InitProducerId v3 naming that id and epoch, without a transactional id: Kafka hands out a new id.
        # A compact null transactional id, the timeout, the id and epoch, no tagged fields.
        body = b"\x00" + struct.pack(">i", 60000) + struct.pack(">qh", first, epoch) + b"\x00"
        s.sendall(kafka_request(22, 3, 2, body, flexible=True))
        correlation, response = read_response(s)
        assert correlation == 2
        # Response header v1 has a tagged-field byte; then throttle, error, id, epoch.
        _, error, second, second_epoch = struct.unpack(">ihqh", response[1:17])
        assert error == 0 and second != first and second_epoch == 0
    finally:
        s.close()


# ------------------------------------------------------------------------------------------------------
# A topic deleted under a consumer

# librdkafka (2.0) can hang for good in close() once a partition it was assigned has been deleted: the consumer
# runs in a child process that is killed afterwards.
SPINNING_CONSUMER = """
import sys, confluent_kafka
consumer = confluent_kafka.Consumer({
    "bootstrap.servers": sys.argv[1], "group.id": "unused", "enable.auto.commit": False,
    "fetch.wait.max.ms": 500, "fetch.error.backoff.ms": 0, "topic.metadata.refresh.interval.ms": 600000})
consumer.assign([confluent_kafka.TopicPartition("stays", 0, 0), confluent_kafka.TopicPartition("goes", 0, 0)])
while True:
    consumer.poll(0.1)
"""


def test_fetching_a_deleted_topic_beside_a_live_one_waits_instead_of_spinning(broker):
    create(broker, "stays")
    create(broker, "goes")
    before = broker.metric(0, "ferry_requests_total", api="fetch")
    consumer = subprocess.Popen([sys.executable, "-c", SPINNING_CONSUMER, broker.bootstrap])
    try:
        wait_until(lambda: broker.metric(0, "ferry_requests_total", api="fetch") > before + 2, timeout=30,
                   what="the consumer to long-poll both partitions")
        client = admin(broker)
        futures = client.delete_topics(["goes"], operation_timeout=30)
        futures["goes"].result(timeout=30)
        before = broker.metric(0, "ferry_requests_total", api="fetch")
        time.sleep(5)  # what is counted is the fetches of these five seconds
        fetches = broker.metric(0, "ferry_requests_total", api="fetch") - before
        assert consumer.poll() is None, "the consumer kept running"
        # Against Kafka a fetch that includes the live partition waits for its max wait: about 10 in 5 s.
        assert fetches < 50, f"{fetches} fetches in 5 s"
    finally:
        consumer.kill()
        consumer.wait()


# ------------------------------------------------------------------------------------------------------
# Descriptors running out

@pytest.fixture
def starved(tmp_path):
    """A broker of its own for running out of descriptors. UndefinedBehaviorSanitizer's vptr check reads vtables
    through a pipe it opens on demand, which fails when no descriptor is left, and then reports every member call
    of a polymorphic object as a type mismatch: that check is suppressed for this broker (the others stay)."""
    suppressions = tmp_path / "ubsan-suppressions.txt"
    suppressions.write_text("vptr_check:*\n")
    previous = os.environ.get("UBSAN_OPTIONS")
    os.environ["UBSAN_OPTIONS"] = ((previous + ":") if previous else "") + f"suppressions={suppressions}"
    try:
        with started_cluster(1) as c:
            if previous is None:
                del os.environ["UBSAN_OPTIONS"]
            else:
                os.environ["UBSAN_OPTIONS"] = previous
            yield c
    finally:
        if previous is None:
            os.environ.pop("UBSAN_OPTIONS", None)
        else:
            os.environ["UBSAN_OPTIONS"] = previous


def nofile_limits(pid):
    with open(f"/proc/{pid}/limits") as f:
        line = next(line for line in f if line.startswith("Max open files"))
    soft, hard = line.split()[3:5]
    return soft, hard


def test_running_out_of_descriptors_is_survived_quietly(starved):
    broker = starved
    pid = broker.pid(0)
    soft, hard = nofile_limits(pid)
    log_before = len(broker.broker_log(0))
    open_fds = len(os.listdir(f"/proc/{pid}/fd"))
    keep = socket.create_connection(("127.0.0.1", broker.base_port), timeout=10)
    subprocess.run(["prlimit", f"--pid={pid}", f"--nofile={open_fds + 8}:{hard}"], check=True)
    extra = []
    try:
        for _ in range(40):
            try:
                extra.append(socket.create_connection(("127.0.0.1", broker.base_port), timeout=1))
            except OSError:
                break
        time.sleep(3)  # what is tested is that the broker stays quiet while accept keeps failing
        grown = len(broker.broker_log(0)) - log_before
        assert grown < 20000, f"the broker logged {grown} bytes while out of descriptors"
        # The connection it already had still works.
        keep.sendall(kafka_request(18, 0, 9))
        assert read_response(keep)[0] == 9
    finally:
        for s in extra:
            s.close()
        subprocess.run(["prlimit", f"--pid={pid}", f"--nofile={soft}:{hard}"], check=False)
        keep.close()
    # With descriptors back, new clients get in again, and the failures were counted (the admin port could not
    # accept either while they lasted).
    out = kcat("-b", broker.bootstrap, "-L").stdout
    assert b"1 brokers" in out
    assert broker.metric(0, "ferry_accept_errors_total") > 0
    assert "accept failed: Too many open files" in broker.broker_log(0)


# ------------------------------------------------------------------------------------------------------
# Restarts

def test_a_broker_killed_with_sigkill_serves_again_within_seconds(broker):
    create(broker, "survivor")
    kcat("-b", broker.bootstrap, "-P", "-t", "survivor", "-p", "0", input=b"".join(b"r%d\n" % i for i in range(1000)))
    broker.kill(0)
    started = time.monotonic()
    broker.start(0)  # returns once /v1/ready answers 200
    took = time.monotonic() - started
    # Half the session timeout: it did not wait for the old session to expire. (This is a sanitizer build
    # sharing two cores with other tests; bench/run's restart phase measures a release build with a 10 GB log.)
    assert took < 9.0, f"ready {took:.1f} s after the restart (zookeeper.session.timeout.ms is 18 s)"
    assert "took over the earlier ZooKeeper session" in broker.broker_log(0)
    out = kcat("-b", broker.bootstrap, "-C", "-t", "survivor", "-p", "0", "-e", "-f", "%s\\n").stdout
    assert out.split(b"\n")[:-1] == [b"r%d" % i for i in range(1000)]


def test_a_second_broker_on_the_same_log_dir_is_refused(broker):
    config = os.path.join(broker.data, "broker-0", "broker.yaml")
    binary = os.path.join(BUILD_DIR, "broker", "src", "app", "ferry-broker")
    second = subprocess.run([binary, "--config", config, "--override", "listeners=PLAINTEXT://127.0.0.1:0",
                             "--override", "admin.listener=127.0.0.1:0", "--override", "broker.id=77"],
                            capture_output=True, text=True, timeout=60)
    assert second.returncode != 0
    assert "in use by another process" in second.stderr
    assert broker.ready(0)


def test_sigterm_while_create_topics_waits_on_zookeeper_shuts_down_cleanly(broker):
    broker.zk_stop()
    pid = broker.pid(0)
    outcome = {}

    def create_blocked():
        try:
            create(broker, "never", timeout=30)
            outcome["created"] = True
        except Exception as e:  # the broker goes away under the request
            outcome["error"] = e

    creator = threading.Thread(target=create_blocked, daemon=True)
    try:
        creator.start()
        time.sleep(2)  # the request is now waiting on ZooKeeper in the broker's blocking pool
        os.kill(pid, signal.SIGTERM)
        wait_until(lambda: broker.pid(0) is None, timeout=60, what="the broker to exit after SIGTERM")
    finally:
        broker.zk_start()
    creator.join(60)
    log = broker.broker_log(0)
    assert "stopped" in log.splitlines()[-1], log[-2000:]
    assert not broker.sanitizer_reports()
    broker.start(0)


# ------------------------------------------------------------------------------------------------------
# compression.type

@pytest.mark.parametrize("topic_codec,producer_codec,stored", [("lz4", "none", 3), ("uncompressed", "gzip", 0),
                                                                ("zstd", "snappy", 4), ("gzip", "gzip", 1)])
def test_topic_compression_type_recompresses_on_append(broker, topic_codec, producer_codec, stored):
    from conftest import log_batches
    topic = f"codec-{topic_codec}-{producer_codec}"
    create(broker, topic, config={"compression.type": topic_codec})
    records = [b"k%d:%s" % (i, b"value-%d " % i * 20) for i in range(500)]
    kcat("-b", broker.bootstrap, "-P", "-t", topic, "-p", "0", "-K:", "-z", producer_codec,
         "-X", "linger.ms=50", input=b"\n".join(records) + b"\n")
    [segment] = broker.segment_files(0, topic, 0)
    batches = log_batches(segment)
    assert batches and {b.codec for b in batches} == {stored}
    assert sum(b.records_count for b in batches) == 500
    out = kcat("-b", broker.bootstrap, "-C", "-t", topic, "-p", "0", "-e", "-f", "%k:%s\\n").stdout
    assert out.split(b"\n")[:-1] == records
    consumer = kafka.KafkaConsumer(bootstrap_servers=broker.bootstrap, group_id=None, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000)
    consumer.assign([kafka.TopicPartition(topic, 0)])
    assert [m.key + b":" + m.value for m in consumer] == records
    consumer.close()


# ------------------------------------------------------------------------------------------------------
# A full disk

@pytest.fixture
def small_disk():
    """A 4 MiB tmpfs of this test's own, unmounted afterwards."""
    import tempfile
    mount_point = tempfile.mkdtemp(prefix="ferry-full-")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mount_point], check=True)
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", mount_point], check=False)
        os.rmdir(mount_point)


def test_a_full_disk_is_visible_and_refuses_new_partitions(small_disk):
    data = os.path.join(small_disk, "data")
    with started_cluster(1, overrides=[f"log.dirs={data}", "log.segment.bytes=1048576"]) as c:
        create(c, "filler")
        producer = confluent_kafka.Producer({"bootstrap.servers": c.bootstrap, "linger.ms": 5, "retries": 0,
                                             "message.timeout.ms": 5000})
        failures = []
        value = os.urandom(1000)  # incompressible: the tmpfs fills at 4 MiB
        for _ in range(6000):
            producer.produce("filler", value=value, partition=0,
                             on_delivery=lambda err, msg: err is not None and failures.append(err))
            producer.poll(0)
        producer.flush(30)
        assert failures and {f.code() for f in failures} <= {confluent_kafka.KafkaError.KAFKA_STORAGE_ERROR,
                                                              confluent_kafka.KafkaError._MSG_TIMED_OUT}
        wait_until(lambda: c.metric(0, "ferry_log_dir_full", dir=data) == 1, timeout=20,
                   what="the log dir to be reported full")
        status, body = c.admin(0, "/v1/ready")
        assert status == 503 and any("is full" in r for r in body["reasons"]), body
        wait_until(lambda: c.metric(0, "ferry_log_dir_free_bytes", dir=data) < 1024 * 1024, timeout=20,
                   what="free bytes to be measured below 1 MiB")  # measured every 5 s
        log = c.broker_log(0)
        assert log.count(f"log dir {data} is full") == 1, "said once per episode"
        client = admin(c)
        futures = client.create_topics([NewTopic("more", 1, 1)], operation_timeout=10)
        with pytest.raises(confluent_kafka.KafkaException) as refused:
            futures["more"].result(timeout=30)
        assert refused.value.args[0].code() == confluent_kafka.KafkaError.KAFKA_STORAGE_ERROR
        assert "full" in refused.value.args[0].str()
        # Space comes back: the flag clears and the broker is ready again.
        deleted = client.delete_topics(["filler"], operation_timeout=30)
        deleted["filler"].result(timeout=30)
        wait_until(lambda: c.metric(0, "ferry_log_dir_full", dir=data) == 0, timeout=30,
                   what="the log dir to have space again")
        wait_until(lambda: c.admin(0, "/v1/ready")[0] == 200, timeout=10, what="the broker to be ready again")
