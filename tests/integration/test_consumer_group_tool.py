"""Apache Kafka's kafka-consumer-groups.sh (ConsumerGroupCommand of kafka-tools 4.4) against a three-broker
cluster, as an operator runs it: --list, --describe (offsets, members, state), --reset-offsets --to-earliest
--execute and --delete print what they print for Kafka and change what they say they change.
"""
import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from conftest import kafka_tool, started_cluster, wait_until

TOOL = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
PARTITIONS = 3
RECORDS = 90


@pytest.fixture(scope="module")
def tool_cluster():
    with started_cluster(3, overrides=[f"num.partitions={PARTITIONS}", "group.initial.rebalance.delay.ms=200",
                                       "offsets.topic.num.partitions=10"]) as c:
        yield c


def groups_tool(cluster, *args):
    run = kafka_tool(TOOL, "--bootstrap-server", cluster.bootstrap, *args)
    assert run.returncode == 0, f"kafka-consumer-groups {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}"
    return run.stdout


def table(output):
    """The rows of a table the tool printed, as dicts by its header's columns."""
    lines = [line.split() for line in output.splitlines() if line.strip()]
    header = next(i for i, cols in enumerate(lines) if cols and cols[0] == "GROUP")
    columns = lines[header]
    return [dict(zip(columns, cols)) for cols in lines[header + 1:] if len(cols) == len(columns)]


def produce(bootstrap, topic):
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    try:
        for i in range(RECORDS):
            producer.send(topic, value=b"%d" % i, partition=i % PARTITIONS)
        producer.flush(timeout=60)
    finally:
        producer.close(timeout=10)


def consume_all(consumer):
    read = 0
    deadline_polls = 600
    while read < RECORDS and deadline_polls > 0:
        read += sum(len(r) for r in consumer.poll(timeout_ms=100).values())
        deadline_polls -= 1
    assert read == RECORDS, f"read {read} of {RECORDS}"
    consumer.commit()


def test_list_describe_reset_and_delete(tool_cluster):
    c = tool_cluster
    topic, group = "tool-orders", "tool-app"
    produce(c.bootstrap, topic)
    consumer = KafkaConsumer(topic, bootstrap_servers=c.bootstrap, group_id=group, client_id="tool-client",
                             auto_offset_reset="earliest", enable_auto_commit=False)
    try:
        consume_all(consumer)
        assert group in groups_tool(c, "--list").split()

        # A live member: offsets at the log end, no lag, the member's id, host and client id.
        def described():
            consumer.poll(timeout_ms=50)
            rows = table(groups_tool(c, "--describe", "--group", group))
            return rows if len(rows) == PARTITIONS and all(r["CONSUMER-ID"] != "-" for r in rows) else None
        rows = wait_until(described, timeout=60, interval=0.5, what="the group described with its member")
        for r in rows:
            assert r["GROUP"] == group and r["TOPIC"] == topic
            assert r["CURRENT-OFFSET"] == r["LOG-END-OFFSET"] == str(RECORDS // PARTITIONS), r
            assert r["LAG"] == "0" and r["CLIENT-ID"] == "tool-client" and r["HOST"].startswith("/127.0.0.1"), r
        assert sorted(int(r["PARTITION"]) for r in rows) == list(range(PARTITIONS))

        state = table(groups_tool(c, "--describe", "--group", group, "--state"))
        assert state[0]["STATE"] == "Stable" and state[0]["#MEMBERS"] == "1", state
        members = table(groups_tool(c, "--describe", "--group", group, "--members"))
        assert members[0]["CLIENT-ID"] == "tool-client" and members[0]["#PARTITIONS"] == str(PARTITIONS), members

        # Offsets of a group with members cannot be reset.
        refused = kafka_tool(TOOL, "--bootstrap-server", c.bootstrap, "--reset-offsets", "--to-earliest",
                             "--execute", "--group", group, "--topic", topic)
        assert "can only be reset if the group 'tool-app' is inactive" in refused.stdout + refused.stderr, refused
    finally:
        consumer.close(autocommit=False)

    def inactive():
        run = kafka_tool(TOOL, "--bootstrap-server", c.bootstrap, "--describe", "--group", group)
        return run.stdout if f"Consumer group '{group}' has no active members." in run.stderr else None
    out = wait_until(inactive, timeout=30, interval=0.5, what="the group without members")
    assert all(r["CONSUMER-ID"] == "-" and r["LAG"] == "0" for r in table(out))

    reset = table(groups_tool(c, "--reset-offsets", "--to-earliest", "--execute", "--group", group, "--topic", topic))
    assert sorted((int(r["PARTITION"]), r["NEW-OFFSET"]) for r in reset) == [(p, "0") for p in range(PARTITIONS)]
    rows = table(groups_tool(c, "--describe", "--group", group))
    assert all(r["CURRENT-OFFSET"] == "0" and r["LAG"] == str(RECORDS // PARTITIONS) for r in rows), rows
    checker = KafkaConsumer(bootstrap_servers=c.bootstrap, group_id=group, enable_auto_commit=False)
    try:
        assert all(checker.committed(TopicPartition(topic, p)) == 0 for p in range(PARTITIONS))
    finally:
        checker.close(autocommit=False)

    deleted = groups_tool(c, "--delete", "--group", group)
    assert f"Deletion of requested consumer groups ('{group}') was successful." in deleted, deleted
    assert group not in groups_tool(c, "--list").split()
    missing = kafka_tool(TOOL, "--bootstrap-server", c.bootstrap, "--describe", "--group", group)
    assert f"Consumer group '{group}' does not exist." in missing.stdout + missing.stderr, missing
