"""Consumer groups of the classic protocol from the Java consumer (kafka-clients, newest tested version: range and
cooperative-sticky assignors, static members) and confluent-kafka-python (the librdkafka its PyPI wheel bundles),
each going through the membership scenario of group_members.py with an at-least-once check. kafka-python and kcat
go through theirs in test_consumer_groups.py.
"""
import os
import shutil
import tempfile

import pytest

from conftest import JAVA_CLIENT_VERSIONS, java_checks_classpath, started_cluster, wait_until
from group_members import (CONFLUENT_PYTHON, check_membership, confluent_member, java_member, wait_covering)

PARTITIONS = 6


@pytest.fixture(scope="module")
def group_cluster():
    with started_cluster(3, overrides=[f"num.partitions={PARTITIONS}", "group.initial.rebalance.delay.ms=200",
                                       "offsets.topic.num.partitions=10"]) as c:
        yield c


@pytest.fixture(scope="module")
def java_classpath():
    out_dir = tempfile.mkdtemp(prefix="ferry-java-groups-")
    try:
        yield java_checks_classpath(JAVA_CLIENT_VERSIONS[-1], out_dir)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


@pytest.mark.parametrize("assignor", ["range", "cooperative-sticky"])
def test_java_members(group_cluster, java_classpath, assignor):
    c = group_cluster
    topic = group = f"java-{assignor}"
    acked, seen = check_membership(
        c.bootstrap, topic, PARTITIONS,
        lambda name: java_member(java_classpath, c.bootstrap, topic, group, name, assignor))
    print(f"java {assignor}: {acked} records acknowledged, {seen} distinct records read")


@pytest.mark.parametrize("assignor", ["range", "cooperative-sticky"])
def test_confluent_kafka_members(group_cluster, assignor):
    if not os.path.exists(CONFLUENT_PYTHON):
        pytest.fail(f"{CONFLUENT_PYTHON} is missing; run scripts/install-deps")
    c = group_cluster
    topic = group = f"confluent-{assignor}"
    acked, seen = check_membership(c.bootstrap, topic, PARTITIONS,
                                   lambda name: confluent_member(c.bootstrap, topic, group, name, assignor))
    print(f"confluent-kafka {assignor}: {acked} records acknowledged, {seen} distinct records read")


def test_java_static_members_keep_their_partitions_across_a_restart(group_cluster, java_classpath):
    c = group_cluster
    topic = group = "java-static"
    # A session long enough for a JVM to start again within it.
    spawn = lambda name: java_member(java_classpath, c.bootstrap, topic, group, name, "range",  # noqa: E731
                                     instance_id=f"static-{name}", session_timeout_ms=45000)
    members = {}
    try:
        for name in "abc":
            members[name] = spawn(name)
        wait_covering(list(members.values()), PARTITIONS, "three static members sharing the partitions")
        before = {n: m.assigned for n, m in members.items()}
        reports = {n: len(m.assignments) for n, m in members.items()}

        members["b"].kill()
        members["b"] = spawn("b")
        wait_until(lambda: members["b"].assigned is not None, timeout=60, what="the restarted static member's assignment")
        assert members["b"].assigned == before["b"], "a restarted static member gets its partitions back"
        for n in "ac":
            assert len(members[n].assignments) == reports[n], f"member {n} went through a rebalance"

        # A second process with b's group.instance.id takes its place; the first is fenced.
        intruder = spawn("b")
        members["b2"] = intruder
        wait_until(lambda: members["b"].errors, timeout=60, what="the older static member fenced")
        assert any("FencedInstanceId" in e for e in members["b"].errors), members["b"].errors
        members["b"].errors.clear()
        wait_until(lambda: intruder.assigned == before["b"], timeout=60, what="the newer member holding b's partitions")
    finally:
        for m in members.values():
            m.cleanup()
