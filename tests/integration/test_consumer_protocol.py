"""The consumer group protocol of Kafka 4 (KIP-848, group.protocol=consumer) from the Java consumer (kafka-clients,
newest tested version) and confluent-kafka-python (its bundled librdkafka): the broker's uniform and range
assignors through the membership scenario of group_members.py with an at-least-once check; a coordinator killed under a live group hands it to the next
leader of its __consumer_offsets partition, which reads the group back and keeps its committed offsets; and
kafka-consumer-groups.sh lists and describes the group through ListGroups v5 and ConsumerGroupDescribe; and members
subscribed by regular expression (SubscribedTopicRegex, resolved by the broker), from the Java consumer's
SubscriptionPattern and franz-go's next-gen consumer, get the matching topics, a matching topic created later, never
an internal topic, and an expression the broker cannot compile is refused as INVALID_REGULAR_EXPRESSION.
"""
import os
import shutil
import subprocess
import tempfile

import pytest
from kafka import KafkaAdminClient, KafkaProducer

from conftest import (JAVA_CLIENT_VERSIONS, SOURCE_DIR, create_spread_topic, java_checks_classpath, kafka_tool,
                      offsets_partition, started_cluster, wait_until)
from group_members import (CONFLUENT_PYTHON, MemberProcess, NumberedProducer, check_membership, confluent_member,
                           java_member, wait_covering)

PARTITIONS = 6
OFFSETS_PARTITIONS = 10
SESSION_TIMEOUT_S = 6
GO = shutil.which("go") or "/usr/local/go/bin/go"


@pytest.fixture(scope="module")
def cluster():
    # The consumer protocol's session timeout is the broker's (45 s by default); a short one keeps the killed
    # member's hand-over quick.
    with started_cluster(3, overrides=[f"num.partitions={PARTITIONS}", f"offsets.topic.num.partitions={OFFSETS_PARTITIONS}",
                                       "group.consumer.min.session.timeout.ms=1000",
                                       f"group.consumer.session.timeout.ms={SESSION_TIMEOUT_S * 1000}",
                                       "group.consumer.min.heartbeat.interval.ms=500",
                                       "group.consumer.heartbeat.interval.ms=500"]) as c:
        yield c


@pytest.fixture(scope="module")
def java_classpath():
    out_dir = tempfile.mkdtemp(prefix="ferry-java-consumer-protocol-")
    try:
        yield java_checks_classpath(JAVA_CLIENT_VERSIONS[-1], out_dir)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def franz_regex(tmp_path_factory):
    """tests/go/franz-regex built (offline: scripts/install-deps fetched its modules)."""
    binary = str(tmp_path_factory.mktemp("franz-regex") / "franz-regex")
    subprocess.run([GO, "build", "-o", binary, "."], cwd=os.path.join(SOURCE_DIR, "tests", "go", "franz-regex"),
                   check=True, timeout=600, env={**os.environ, "GOPROXY": "off"})
    return binary


def member(cluster, classpath, topic, group, assignor):
    return lambda name: java_member(classpath, cluster.bootstrap, topic, group, name, assignor,
                                    group_protocol="consumer")


@pytest.mark.parametrize("assignor", ["uniform", "range"])
def test_java_members_with_the_server_assignors(cluster, java_classpath, assignor):
    topic = group = f"kip848-{assignor}"
    acked, seen = check_membership(cluster.bootstrap, topic, PARTITIONS,
                                   member(cluster, java_classpath, topic, group, assignor),
                                   session_timeout_s=SESSION_TIMEOUT_S)
    print(f"java group.protocol=consumer {assignor}: {acked} records acknowledged, {seen} distinct records read")


def test_confluent_kafka_members_with_the_uniform_assignor(cluster):
    if not os.path.exists(CONFLUENT_PYTHON):
        pytest.fail(f"{CONFLUENT_PYTHON} is missing; run scripts/install-deps")
    topic = group = "kip848-confluent"
    acked, seen = check_membership(cluster.bootstrap, topic, PARTITIONS,
                                   lambda name: confluent_member(cluster.bootstrap, topic, group, name,
                                                                 "consumer:uniform"),
                                   session_timeout_s=SESSION_TIMEOUT_S)
    print(f"confluent-kafka group.protocol=consumer: {acked} records acknowledged, {seen} distinct records read")


def test_the_group_survives_its_coordinators_death(cluster, java_classpath):
    topic = group = "kip848-failover"
    spawn = member(cluster, java_classpath, topic, group, "uniform")
    producer = NumberedProducer(cluster.bootstrap, topic, PARTITIONS)
    producer.start()
    members = {}
    coordinator = None
    try:
        wait_until(lambda: len({p for p, _ in dict(producer.acked)}) == PARTITIONS, timeout=60,
                   what="a record acknowledged on every partition")
        for name in "ab":
            members[name] = spawn(name)
        wait_covering(list(members.values()), PARTITIONS, "two members sharing the partitions")
        before = {n: m.assigned for n, m in members.items()}
        wait_until(lambda: all(len(m.records) > 0 for m in members.values()), timeout=60,
                   what="both members reading")

        coordinator = cluster.leader("__consumer_offsets", offsets_partition(group, OFFSETS_PARTITIONS))
        cluster.kill(coordinator)
        # The new coordinator reads the group back: the members go on with the partitions they had, without
        # being fenced (that would show as an assignment report with nothing, then a new one).
        reports = {n: len(m.assignments) for n, m in members.items()}
        read = {n: len(m.records) for n, m in members.items()}
        wait_until(lambda: all(len(m.records) > read[n] + 50 for n, m in members.items()), timeout=90,
                   what="both members reading again after the coordinator died")
        assert {n: m.assigned for n, m in members.items()} == before
        assert {n: len(m.assignments) for n, m in members.items()} == reports, \
            "a member lost its partitions when the coordinator moved"
        cluster.start(coordinator)
        coordinator = None

        producer.stop()
        acked = dict(producer.acked)

        def seen():
            out = {}
            for m in members.values():
                with m.lock:
                    out.update(m.records)
            return out
        wait_until(lambda: set(acked) <= set(seen()), timeout=60, interval=0.2,
                   what="every acknowledged record read by some member")
        for m in members.values():
            m.stop()
        for m in members.values():
            assert not m.errors, f"member {m.name} reported errors: {m.errors}"

        # What they read is committed, through the new coordinator: an admin's OffsetFetch of the now empty group
        # finds every partition's commit at or past its last acknowledged record.
        last = {}
        for p, o in acked:
            last[p] = max(last.get(p, -1), o)
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        try:
            committed = {tp.partition: meta.offset for tp, meta in admin.list_consumer_group_offsets(group).items()}
        finally:
            admin.close()
        assert all(committed.get(p, -1) > o for p, o in last.items()), (committed, last)
    finally:
        producer.stopping.set()
        if coordinator is not None:
            cluster.start(coordinator)
        for m in members.values():
            m.cleanup()


def test_kafka_consumer_groups_lists_and_describes_the_group(cluster, java_classpath):
    topic = group = "kip848-tool"
    spawn = member(cluster, java_classpath, topic, group, "range")
    producer = NumberedProducer(cluster.bootstrap, topic, PARTITIONS)
    producer.start()
    members = {}
    try:
        wait_until(lambda: len({p for p, _ in dict(producer.acked)}) == PARTITIONS, timeout=60,
                   what="a record acknowledged on every partition")
        for name in "ab":
            members[name] = spawn(name)
        wait_covering(list(members.values()), PARTITIONS, "two members sharing the partitions")

        listed = kafka_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", cluster.bootstrap, "--list",
                            "--type", "consumer", "--state")
        assert listed.returncode == 0, listed.stderr
        line = next((l for l in listed.stdout.splitlines() if l.split()[:1] == [group]), None)
        assert line is not None, listed.stdout
        assert "Consumer" in line and "Stable" in line, line

        described = kafka_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", cluster.bootstrap,
                               "--describe", "--group", group, "--members", "--verbose")
        assert described.returncode == 0, described.stderr
        # GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS CURRENT-EPOCH CURRENT-ASSIGNMENT TARGET-EPOCH TARGET-ASSIGNMENT
        rows = [l.split() for l in described.stdout.splitlines() if l.startswith(group + " ")]
        assert len(rows) == 2, described.stdout
        owned = []
        for r in rows:
            assert r[4] == "3" and r[5] == r[7] and r[6] == r[8], described.stdout
            owned += [int(p) for p in r[6].split(":")[1].split(",")]
        assert sorted(owned) == list(range(PARTITIONS)), described.stdout
    finally:
        producer.stopping.set()
        for m in members.values():
            m.cleanup()


def write_one_record_per_partition(cluster, topic, partitions):
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap, acks="all")
    try:
        for p in range(partitions):
            producer.send(topic, value=f"{topic}/{p}".encode(), partition=p)
        producer.flush(timeout=60)
    finally:
        producer.close()


def pattern_member(client, cluster, java_classpath, franz_regex, group, pattern):
    if client == "java":
        return java_member(java_classpath, cluster.bootstrap, None, group, "pattern", "uniform",
                           group_protocol="consumer", topic_pattern=pattern)
    return MemberProcess("pattern", [franz_regex, cluster.bootstrap, group, pattern])


@pytest.mark.parametrize("client", ["java", "franz-go"])
def test_a_pattern_subscription_gets_the_matching_topics_and_those_created_later(cluster, java_classpath,
                                                                                franz_regex, client):
    prefix = f"rx-{client}"
    group = f"{prefix}-group"
    matching, other = [f"{prefix}-a", f"{prefix}-b"], f"{prefix}x-other"
    for topic in (*matching, other):
        create_spread_topic(cluster, topic, 2)
        write_one_record_per_partition(cluster, topic, 2)
    # __consumer_offsets matches by name, and holds records (this member's own commits), but internal topics are
    # never part of a pattern's topics. franz-go matches anywhere in a name and sends .*(?:PATTERN).*, which the
    # broker matches whole, as Kafka does; the Java client sends the pattern as it is.
    m = pattern_member(client, cluster, java_classpath, franz_regex, group, f"{prefix}-.*|__consumer_offsets")
    try:
        wait_until(lambda: m.topics >= set(matching), timeout=60, what=f"{client} reading {matching}", interval=0.2)
        # Only a group of the consumer protocol has a pattern the broker resolves (franz-go falls back to the
        # classic protocol, matching on the client, when the broker does not offer it).
        listed = kafka_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server",
                            cluster.bootstrap, "--list", "--type", "consumer")
        assert group in listed.stdout.split(), listed.stdout + listed.stderr

        later = f"{prefix}-c"
        create_spread_topic(cluster, later, 2)
        write_one_record_per_partition(cluster, later, 2)
        wait_until(lambda: later in m.topics, timeout=60, what=f"{client} reading {later}, created later",
                   interval=0.2)
        m.stop()
        assert m.topics == {*matching, later}, m.topics
        assert not m.errors, m.diagnostics()
    finally:
        m.cleanup()


def test_a_pattern_the_broker_cannot_compile_is_refused(cluster, java_classpath):
    # RE2 has no backreferences; Kafka (RE2/J) refuses them with INVALID_REGULAR_EXPRESSION, which the Java
    # consumer raises from poll as InvalidRegularExpression.
    m = pattern_member("java", cluster, java_classpath, None, "rx-invalid", r"(rx)-\1")
    try:
        wait_until(lambda: m.errors, timeout=60, what="the member's error")
        assert "InvalidRegularExpression" in m.errors[0], m.diagnostics()
        assert m.closed.wait(30) and not m.topics
    finally:
        m.cleanup()
