"""The operator against a real kube-apiserver (and etcd, kube-controller-manager) and a real Ferry cluster:
Topic resources become topics with rack-aware placement in ZooKeeper, grow, keep their configs (reverting
changes made with Kafka's CLI), refuse what Kafka cannot do, and are deleted through a finalizer with escape
hatches. The operator runs with exactly the permissions of operator/deploy/rbac.yaml."""
import datetime
import json
import os
import time
import uuid

import pytest
import yaml
from kafka import KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic

from conftest import kafka_tool, started_cluster, wait_until
from kube_env import (DEPLOY, Operator, grant_operator, install_cluster_binding_guard, kube_environment,
                      ready_condition, topic, wait_ready, zk_partitions)

CONFIG_TOOL = "org.apache.kafka.tools.ConfigCommand"
FINALIZER_TIMEOUT = 15
MOVE_BUDGET = 4


@pytest.fixture(scope="module")
def ferry():
    with started_cluster(3, racks=("zone-a", "zone-b", "zone-c")) as c:
        yield c


@pytest.fixture(scope="module")
def kube(request):
    with kube_environment(request) as env:
        yield env


@pytest.fixture(scope="module")
def operator(kube, ferry):
    grant_operator(kube, "ferry-operator")
    # Without rebalancing, which would move replicas while these tests check placements (test_operator_brokers.py
    # tests it).
    op = Operator(kube, kube.user("ferry-operator"), ferry.zk_port,
                  args=("--finalizer-timeout-seconds", str(FINALIZER_TIMEOUT), "--workers", "2",
                        "--max-concurrent-moves", str(MOVE_BUDGET), "--rebalance", "false"))
    op.start()
    yield op
    op.stop()
    reports = op.sanitizer_reports()
    assert not reports, f"sanitizer reports in {op.log_path}: {reports}"


@pytest.fixture
def ns(kube, operator):
    name = "t-" + uuid.uuid4().hex[:8]
    kube.kubectl("create", "namespace", name)
    return name


def patch(kube, name, ns, body, check=True):
    return kube.kubectl("patch", "topic", name, "-n", ns, "--type", "merge", "-p", json.dumps(body), check=check)


def describe_configs(ferry, topic_name):
    run = kafka_tool(CONFIG_TOOL, "--bootstrap-server", ferry.bootstrap, "--entity-type", "topics", "--entity-name",
                     topic_name, "--describe")
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_a_topic_becomes_ready_with_rack_aware_placement(kube, ferry, ns):
    kube.apply(topic("orders", ns, 6, 3, config={"retention.ms": "3600000"}))
    wait_ready(kube, "orders", ns)
    obj = kube.get("topic", "orders", ns)
    assert "ferry.dev/topic" in obj["metadata"]["finalizers"]
    status = obj["status"]
    assert status["topicName"] == "orders" and len(status["topicId"]) == 22
    assert status["partitions"]["count"] == 6 and status["partitions"]["offline"] == 0
    assert status["observedGeneration"] == obj["metadata"]["generation"]

    # Placement: three replicas on three racks (one broker each), preferred leaders spread evenly.
    assignment = zk_partitions(ferry, "orders")
    assert sorted(assignment) == list(range(6))
    leaders = {}
    for replicas in assignment.values():
        assert sorted(replicas) == [0, 1, 2]
        leaders[replicas[0]] = leaders.get(replicas[0], 0) + 1
    assert leaders == {0: 2, 1: 2, 2: 2}

    # What a client sees.
    admin = KafkaAdminClient(bootstrap_servers=ferry.bootstrap)
    try:
        described = admin.describe_topics(["orders"])[0]
        assert described["error_code"] == 0 and len(described["partitions"]) == 6
    finally:
        admin.close()
    assert "retention.ms=3600000" in describe_configs(ferry, "orders")

    # kubectl's short name and printer columns.
    table = kube.kubectl("get", "ft", "-n", ns).stdout
    assert "PARTITIONS" in table and "REPLICATION FACTOR" in table and "READY" in table
    assert "orders" in table and "True" in table


def test_partitions_grow_and_configs_follow_the_resource(kube, ferry, ns):
    kube.apply(topic("grow", ns, 2, 2, config={"retention.ms": "600000"}))
    wait_ready(kube, "grow", ns)
    patch(kube, "grow", ns, {"spec": {"partitions": 5, "config": {"retention.ms": "700000", "cleanup.policy": "compact"}}})
    wait_until(lambda: len(zk_partitions(ferry, "grow") or {}) == 5, timeout=60, what="5 partitions in ZooKeeper")
    wait_until(lambda: kube.get("topic", "grow", ns)["status"].get("partitions", {}).get("count") == 5
               and ready_condition(kube, "grow", ns)["status"] == "True", timeout=60, what="status with 5 partitions")
    assignment = zk_partitions(ferry, "grow")
    assert all(len(set(r)) == 2 for r in assignment.values())
    configs = describe_configs(ferry, "grow")
    assert "retention.ms=700000" in configs and "cleanup.policy=compact" in configs

    # A change made behind the operator's back with Kafka's CLI is reverted.
    run = kafka_tool(CONFIG_TOOL, "--bootstrap-server", ferry.bootstrap, "--entity-type", "topics", "--entity-name",
                     "grow", "--alter", "--add-config", "retention.ms=1000,segment.ms=100000")
    assert run.returncode == 0, run.stderr
    wait_until(lambda: "retention.ms=700000" in (c := describe_configs(ferry, "grow")) and "segment.ms" not in c,
               timeout=60, interval=0.5, what="the operator to revert the CLI's change")


def test_decreasing_partitions_is_refused(kube, ferry, ns):
    kube.apply(topic("fixed", ns, 3, 1))
    wait_ready(kube, "fixed", ns)
    refused = patch(kube, "fixed", ns, {"spec": {"partitions": 2}}, check=False)
    assert refused.returncode != 0 and "partitions cannot be decreased" in refused.stderr

    # A resource asking for fewer partitions than an existing topic has: NotSupported, nothing changed.
    admin = KafkaAdminClient(bootstrap_servers=ferry.bootstrap)
    try:
        admin.create_topics([NewTopic("existing-" + ns, num_partitions=5, replication_factor=1)])
    finally:
        admin.close()
    wait_until(lambda: zk_partitions(ferry, "existing-" + ns), what="the CLI-created topic")
    kube.apply(topic("existing", ns, 3, 1, topic_name="existing-" + ns))
    # The resource did not create the topic: adopting it takes an annotation.
    condition = wait_ready(kube, "existing", ns, status="False", reason="AdoptionRequired")
    assert "ferry.dev/adopt=true" in condition["message"]
    kube.kubectl("annotate", "topic", "existing", "-n", ns, "ferry.dev/adopt=true")
    condition = wait_ready(kube, "existing", ns, status="False", reason="NotSupported")
    assert "at least 5" in condition["message"]
    assert len(zk_partitions(ferry, "existing-" + ns)) == 5
    wait_until(lambda: any(e["reason"] == "NotSupported" and e["type"] == "Warning" for e in kube.events(ns, "existing")),
               what="a NotSupported warning event")
    # Fixing the spec adopts the topic.
    patch(kube, "existing", ns, {"spec": {"partitions": 5}})
    wait_ready(kube, "existing", ns)


def test_a_topic_the_resource_did_not_create_is_neither_changed_nor_deleted(kube, ferry, ns):
    name = "foreign-" + ns
    admin = KafkaAdminClient(bootstrap_servers=ferry.bootstrap)
    try:
        admin.create_topics([NewTopic(name, num_partitions=2, replication_factor=1,
                                      topic_configs={"retention.ms": "3600000"})])
    finally:
        admin.close()
    wait_until(lambda: zk_partitions(ferry, name), what="the application's topic")
    kube.apply(topic("foreign", ns, 4, 1, topic_name=name, config={"retention.ms": "60000"}))
    wait_ready(kube, "foreign", ns, status="False", reason="AdoptionRequired")
    assert len(zk_partitions(ferry, name)) == 2
    assert "retention.ms=3600000" in describe_configs(ferry, name)
    kube.kubectl("delete", "topic", "foreign", "-n", ns, "--timeout=60s")
    assert zk_partitions(ferry, name) is not None, "deleting a resource that never adopted the topic keeps it"


def test_internal_topics_cannot_be_managed(kube, ferry, ns):
    # __consumer_offsets exists once a group has looked for its coordinator (the group need not exist).
    kafka_tool("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand", "--bootstrap-server", ferry.bootstrap,
               "--describe", "--group", "probe-" + ns)
    wait_until(lambda: zk_partitions(ferry, "__consumer_offsets"), what="__consumer_offsets")
    before = describe_configs(ferry, "__consumer_offsets")
    kube.apply(topic("offsets", ns, 50, 1, topic_name="__consumer_offsets", config={"cleanup.policy": "delete"}))
    condition = wait_ready(kube, "offsets", ns, status="False", reason="NotSupported")
    assert "internal" in condition["message"]
    assert "ferry.dev/topic" not in kube.get("topic", "offsets", ns)["metadata"].get("finalizers", [])
    assert describe_configs(ferry, "__consumer_offsets") == before
    kube.kubectl("delete", "topic", "offsets", "-n", ns, "--timeout=60s")
    assert zk_partitions(ferry, "__consumer_offsets") is not None


def test_an_invalid_config_changes_nothing(kube, ferry, ns):
    kube.apply(topic("bad", ns, 1, 1, config={"retention.ms": "soon"}))
    condition = wait_ready(kube, "bad", ns, status="False", reason="InvalidConfig")
    assert "retention.ms" in condition["message"]
    assert zk_partitions(ferry, "bad") is None
    kube.apply(topic("toomany", ns, 1, 4))
    condition = wait_ready(kube, "toomany", ns, status="False", reason="InsufficientBrokers")
    assert "3 are registered" in condition["message"]


def test_config_values_may_be_numbers_and_booleans(kube, ferry, ns):
    kube.apply(topic("scalars", ns, 1, 1, config={"retention.ms": 604800000, "cleanup.policy": "compact",
                                                   "unclean.leader.election.enable": True,
                                                   "min.cleanable.dirty.ratio": 0.25}))
    wait_ready(kube, "scalars", ns)
    configs = describe_configs(ferry, "scalars")
    for expected in ("retention.ms=604800000", "cleanup.policy=compact", "unclean.leader.election.enable=true",
                     "min.cleanable.dirty.ratio=0.25"):
        assert expected in configs, configs
    # The schema keeps any value (it cannot say "a scalar"); the operator refuses a list and creates nothing.
    kube.apply(topic("listed", ns, 1, 1, config={"cleanup.policy": ["compact", "delete"]}))
    condition = wait_ready(kube, "listed", ns, status="False", reason="InvalidConfig")
    assert condition["message"] == "spec.config.cleanup.policy must be a string, a number or a boolean, not a list"
    assert zk_partitions(ferry, "listed") is None


def test_the_older_of_two_resources_owns_a_topic(kube, ferry, ns):
    kube.apply(topic("first", ns, 2, 1, topic_name="shared-" + ns))
    wait_ready(kube, "first", ns)
    kube.apply(topic("second", ns, 4, 1, topic_name="shared-" + ns))
    condition = wait_ready(kube, "second", ns, status="False", reason="ResourceConflict")
    assert f"{ns}/first" in condition["message"]
    assert len(zk_partitions(ferry, "shared-" + ns)) == 2
    # Deleting the loser leaves the topic alone.
    kube.kubectl("delete", "topic", "second", "-n", ns, "--timeout=60s")
    assert zk_partitions(ferry, "shared-" + ns) is not None
    assert ready_condition(kube, "first", ns)["status"] == "True"


def test_a_restarted_operator_never_lets_a_deleted_duplicate_delete_the_owners_topic(kube, ferry, ns, operator):
    """Workers start on a full cache: the duplicate, listed before its older twin, is never taken for the owner."""
    shared = "twins-" + ns
    kube.apply(topic("zz-owner", ns, 2, 1, topic_name=shared))
    wait_ready(kube, "zz-owner", ns)
    # creationTimestamp has whole seconds: the duplicate must be younger, not a tie (broken by name).
    owner_created = datetime.datetime.fromisoformat(
        kube.get("topic", "zz-owner", ns)["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    wait_until(lambda: datetime.datetime.now(datetime.timezone.utc) >= owner_created + datetime.timedelta(seconds=1),
               what="the next second")
    kube.apply(topic("aa-duplicate", ns, 2, 1, topic_name=shared))
    wait_ready(kube, "aa-duplicate", ns, status="False", reason="ResourceConflict")
    # Resources listed between the two keep the index incomplete for longer while the first list is applied.
    kube.apply(*[topic(f"ab-filler-{i}", ns, 1, 1, config={"retention.ms": "never"}) for i in range(40)])
    operator.stop()
    try:
        kube.kubectl("delete", "topic", "aa-duplicate", "-n", ns, "--wait=false")
    finally:
        operator.start()
    wait_until(lambda: kube.get("topic", "aa-duplicate", ns) is None, timeout=60, what="the duplicate to go")
    assert zk_partitions(ferry, shared) is not None
    assert ready_condition(kube, "zz-owner", ns)["status"] == "True"


def test_the_cluster_label_cannot_change_and_a_relabelled_resource_is_let_go(kube, ferry, ns):
    install_cluster_binding_guard(kube)
    kube.apply(topic("bound", ns, 1, 1))
    wait_ready(kube, "bound", ns)
    wait_until(lambda: kube.kubectl("label", "topic", "bound", "-n", ns, "ferry.dev/cluster=other", "--overwrite",
                                    "--dry-run=server", check=False).returncode != 0,
               what="the cluster binding policy to take effect")
    for change in (["ferry.dev/cluster=other", "--overwrite"], ["ferry.dev/cluster-"]):
        refused = kube.kubectl("label", "topic", "bound", "-n", ns, *change, check=False)
        assert refused.returncode != 0 and "cannot change once set" in refused.stderr, refused.stderr
    # Without the policy, a resource that loses its label is let go: finalizer removed, topic kept, never stuck.
    kube.kubectl("delete", "validatingadmissionpolicybinding", "ferry-cluster-binding")
    try:
        wait_until(lambda: kube.kubectl("label", "topic", "bound", "-n", ns, "ferry.dev/cluster-",
                                        check=False).returncode == 0, what="the label to be removable")
        wait_until(lambda: "ferry.dev/topic" not in kube.get("topic", "bound", ns)["metadata"].get("finalizers", []),
                   what="the finalizer to be removed")
        assert any(e["reason"] == "ClusterChanged" for e in kube.events(ns, "bound"))
        kube.kubectl("delete", "topic", "bound", "-n", ns, "--timeout=60s")
        assert zk_partitions(ferry, "bound") is not None
    finally:
        install_cluster_binding_guard(kube)


def test_replication_factor_changes_by_reassignment(kube, ferry, ns):
    kube.apply(topic("rf", ns, 3, 1))
    wait_ready(kube, "rf", ns)
    patch(kube, "rf", ns, {"spec": {"replicationFactor": 3}})
    wait_until(lambda: all(len(r) == 3 for r in zk_partitions(ferry, "rf").values()), timeout=90,
               what="three replicas per partition")
    wait_until(lambda: (c := ready_condition(kube, "rf", ns)) and c["status"] == "True"
               and kube.get("topic", "rf", ns)["status"]["partitions"]["reassigning"] == 0, timeout=90,
               what="the reassignment to complete")
    for replicas in zk_partitions(ferry, "rf").values():
        assert sorted(replicas) == [0, 1, 2]


def test_replication_factor_changes_wait_for_the_move_budget(kube, ferry, ns):
    blocker = "blocker-" + ns
    admin = KafkaAdminClient(bootstrap_servers=ferry.bootstrap)
    try:
        admin.create_topics([NewTopic(blocker, num_partitions=MOVE_BUDGET, replication_factor=1)])
        wait_until(lambda: zk_partitions(ferry, blocker), what="the blocking topic")
        # Reassignments that cannot finish (their new replica is a broker that does not exist) fill the budget.
        zk = ferry.zookeeper()
        try:
            data, _ = zk.get(f"/brokers/topics/{blocker}")
            stuck = json.loads(data)
            for p, replicas in stuck["partitions"].items():
                stuck["partitions"][p] = replicas + [7]
                stuck.setdefault("adding_replicas", {})[p] = [7]
            zk.set(f"/brokers/topics/{blocker}", json.dumps(stuck).encode())
        finally:
            zk.stop()
        kube.apply(topic("wide", ns, 3, 1))
        wait_ready(kube, "wide", ns)
        patch(kube, "wide", ns, {"spec": {"replicationFactor": 2}})
        condition = wait_ready(kube, "wide", ns, status="False", reason="ReplicasChangePending")
        assert f"{MOVE_BUDGET} reassignments are in flight" in condition["message"]
        assert kube.get("topic", "wide", ns)["status"]["replicasChange"] == \
            {"targetReplicationFactor": 2, "pending": 3, "moving": 0}
        assert all(len(r) == 1 for r in zk_partitions(ferry, "wide").values())
        admin.delete_topics([blocker])
    finally:
        admin.close()
    # The budget frees: the change proceeds, and its progress leaves the status once done.
    wait_until(lambda: all(len(r) == 2 for r in zk_partitions(ferry, "wide").values()), timeout=90,
               what="two replicas per partition")
    wait_until(lambda: (c := ready_condition(kube, "wide", ns)) and c["status"] == "True"
               and "replicasChange" not in kube.get("topic", "wide", ns)["status"], timeout=90,
               what="the change to complete")


def broker_configs(ferry, broker):
    run = kafka_tool(CONFIG_TOOL, "--bootstrap-server", ferry.bootstrap, "--entity-type", "brokers", "--entity-name",
                     str(broker), "--describe")
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_operator_moves_are_throttled_until_done(kube, ferry, ns):
    """The operator's moves carry Kafka's replication throttles (the lists on the topic, the rates on the brokers),
    which it removes once nothing moves."""
    rate = 4000
    name = "slow-" + ns
    mover = Operator(kube, kube.user("ferry-operator"), ferry.zk_port, cluster_name="mover", identity="mover-0",
                     args=("--watch-namespaces", ns, "--replication-throttle-bytes", str(rate), "--rebalance", "false"))
    mover.start()
    try:
        kube.apply(topic("slow", ns, 1, 1, topic_name=name, cluster="mover"))
        wait_ready(kube, "slow", ns)
        # About ten seconds' worth of bytes copies at once; the rest at the rate, for some twenty seconds.
        producer = KafkaProducer(bootstrap_servers=ferry.bootstrap, acks=1)
        try:
            for _ in range(120):
                producer.send(name, b"x" * 1000)
            producer.flush(timeout=60)
        finally:
            producer.close()
        # The module's operator has removed the rates of its own finished moves (an admin's would be kept).
        wait_until(lambda: all("throttled" not in broker_configs(ferry, b) for b in range(3)), timeout=60,
                   interval=0.5, what="no throttle rates on the brokers")
        patch(kube, "slow", ns, {"spec": {"replicationFactor": 2}})
        configs = wait_until(lambda: (c := describe_configs(ferry, name)) and "follower.replication.throttled" in c
                             and c, timeout=30, interval=0.3, what="the throttle lists on the topic")
        assert "leader.replication.throttled.replicas=0:" in configs, configs
        assert f"follower.replication.throttled.rate={rate}" in broker_configs(ferry, 0)
        wait_until(lambda: all(len(r) == 2 for r in zk_partitions(ferry, name).values()), timeout=120,
                   what="the throttled move to complete")
        wait_until(lambda: "throttled" not in describe_configs(ferry, name)
                   and all("throttled" not in broker_configs(ferry, b) for b in range(3)), timeout=60, interval=0.5,
                   what="the operator to remove its throttles")
    finally:
        mover.stop()
    assert not mover.sanitizer_reports()


def test_throttles_and_unmanaged_keys_are_left_alone(kube, ferry, ns):
    kube.apply(topic("throttled", ns, 1, 1, config={"retention.ms": "700000"}))
    wait_ready(kube, "throttled", ns)
    patch(kube, "throttled", ns, {"spec": {"unmanagedConfigKeys": ["segment.ms"]}})
    wait_until(lambda: kube.get("topic", "throttled", ns)["status"]["observedGeneration"] == 2, what="the patch")
    run = kafka_tool(CONFIG_TOOL, "--bootstrap-server", ferry.bootstrap, "--entity-type", "topics", "--entity-name",
                     "throttled", "--alter", "--add-config",
                     "leader.replication.throttled.replicas=0:0,segment.ms=100000,retention.ms=1000")
    assert run.returncode == 0, run.stderr
    # retention.ms is managed and reverted; the throttle list and segment.ms stay.
    wait_until(lambda: "retention.ms=700000" in describe_configs(ferry, "throttled"), timeout=60,
               what="the operator to revert retention.ms")
    configs = describe_configs(ferry, "throttled")
    assert "leader.replication.throttled.replicas=0:0" in configs and "segment.ms=100000" in configs, configs


def test_pause_and_unmanaged_annotations(kube, ferry, ns):
    kube.apply(topic("paused", ns, 1, 1))
    wait_ready(kube, "paused", ns)
    kube.kubectl("annotate", "topic", "paused", "-n", ns, "ferry.dev/pause-reconciliation=true")
    patch(kube, "paused", ns, {"spec": {"partitions": 3}})
    wait_until(lambda: any(c["type"] == "ReconciliationPaused"
                           for c in kube.get("topic", "paused", ns)["status"]["conditions"]), what="the paused condition")
    assert len(zk_partitions(ferry, "paused")) == 1
    kube.kubectl("annotate", "topic", "paused", "-n", ns, "ferry.dev/pause-reconciliation-")
    wait_until(lambda: len(zk_partitions(ferry, "paused")) == 3, timeout=60, what="growth after unpausing")

    kube.kubectl("annotate", "topic", "paused", "-n", ns, "ferry.dev/managed=false")
    wait_until(lambda: "ferry.dev/topic" not in kube.get("topic", "paused", ns)["metadata"].get("finalizers", []),
               what="the finalizer to go")
    kube.kubectl("delete", "topic", "paused", "-n", ns, "--timeout=60s")
    assert zk_partitions(ferry, "paused") is not None, "an unmanaged topic stays when its resource goes"


def test_deleting_a_resource_deletes_its_topic(kube, ferry, ns):
    kube.apply(topic("doomed", ns, 2, 2))
    wait_ready(kube, "doomed", ns)
    kube.kubectl("delete", "topic", "doomed", "-n", ns, "--timeout=60s")
    assert kube.get("topic", "doomed", ns) is None
    wait_until(lambda: zk_partitions(ferry, "doomed") is None, timeout=60, what="the topic to be deleted")

    kube.apply(topic("kept", ns, 1, 1, annotations={"ferry.dev/deletion-policy": "retain"}))
    wait_ready(kube, "kept", ns)
    kube.kubectl("delete", "topic", "kept", "-n", ns, "--timeout=60s")
    assert zk_partitions(ferry, "kept") is not None


def test_a_scoped_operator_manages_only_its_namespaces_and_retains_by_default(kube, ferry, operator):
    watched, unwatched = "w-" + uuid.uuid4().hex[:8], "u-" + uuid.uuid4().hex[:8]
    for name in (watched, unwatched):
        kube.kubectl("create", "namespace", name)
    kept, gone, ignored = (f"{name}-{watched}" for name in ("kept", "gone", "ignored"))
    scoped = Operator(kube, kube.user("ferry-operator"), ferry.zk_port, cluster_name="scoped", identity="scoped-0",
                      args=("--watch-namespaces", watched, "--default-deletion-policy", "retain",
                            "--finalizer-timeout-seconds", "1", "--max-concurrent-moves", "0"))
    scoped.start()
    try:
        kube.apply(topic("kept", watched, 1, 1, topic_name=kept, cluster="scoped"),
                   topic("gone", watched, 1, 1, topic_name=gone, cluster="scoped",
                         annotations={"ferry.dev/deletion-policy": "delete"}),
                   topic("ignored", unwatched, 1, 1, topic_name=ignored, cluster="scoped"))
        wait_ready(kube, "kept", watched)
        wait_ready(kube, "gone", watched)
        outside = kube.get("topic", "ignored", unwatched)
        assert "status" not in outside and not outside["metadata"].get("finalizers")
        assert zk_partitions(ferry, ignored) is None

        kube.kubectl("delete", "topic", "kept", "-n", watched, "--timeout=60s")
        assert zk_partitions(ferry, kept) is not None, "--default-deletion-policy retain keeps the topic"

        # Deleted while the operator is down, longer ago than --finalizer-timeout-seconds, with ZooKeeper up: the
        # timeout counts only from this process's own failed attempts, so the topic is deleted, not left behind.
        scoped.stop()
        kube.kubectl("delete", "topic", "gone", "-n", watched, "--wait=false")
        time.sleep(2)  # the deletion is now older than the timeout; nothing else to wait for
        scoped.start()
        wait_until(lambda: kube.get("topic", "gone", watched) is None, timeout=60, what="the finalizer to run")
        wait_until(lambda: zk_partitions(ferry, gone) is None, timeout=60, what="the topic to be deleted")
        assert not any(e["reason"] == "TopicLeftBehind" for e in kube.events(watched, "gone"))
    finally:
        scoped.stop()
    assert not scoped.sanitizer_reports()


def test_the_operator_refuses_to_start_on_older_crds(kube, ferry, ns):
    """A CRD older than the operator would silently prune the fields it writes: a new operator exits, naming the CRD,
    both revisions and the fix; a newer CRD only draws a warning. The annotation is restored for the other tests."""
    with open(os.path.join(DEPLOY, "consumergroups.ferry.dev.yaml")) as f:
        needed = int(yaml.safe_load(f)["metadata"]["annotations"]["ferry.dev/crd-version"])

    def stamp(revision, crd="consumergroups.ferry.dev"):
        change = f"ferry.dev/crd-version={revision}" if revision is not None else "ferry.dev/crd-version-"
        kube.kubectl("annotate", "--overwrite", "crd", crd, change)

    upgrade = "kubectl apply --server-side --force-conflicts -f charts/ferry/crds/"
    try:
        for crd, identity, revision, message in (
                ("consumergroups.ferry.dev", "older-0", needed - 1,
                 f"CustomResourceDefinition consumergroups.ferry.dev is at revision {needed - 1} "
                 f"(ferry.dev/crd-version) and this operator needs revision {needed}"),
                ("consumergroups.ferry.dev", "unstamped-0", None,
                 "CustomResourceDefinition consumergroups.ferry.dev has no ferry.dev/crd-version "
                 f"annotation: it predates revision {needed}"),
                ("users.ferry.dev", "older-users-0", needed - 1,
                 f"CustomResourceDefinition users.ferry.dev is at revision {needed - 1} "
                 f"(ferry.dev/crd-version) and this operator needs revision {needed}")):
            for other in ("consumergroups.ferry.dev", "users.ferry.dev"):
                stamp(revision if other == crd else needed, other)
            stale = Operator(kube, kube.user("ferry-operator"), ferry.zk_port, cluster_name="stale", identity=identity)
            stale.start(wait_ready=False)
            wait_until(lambda: stale.process.poll() is not None, timeout=30, what="the operator to refuse to start")
            assert stale.process.returncode != 0
            log = stale.log()
            assert message in log and upgrade in log, log

        stamp(needed, "users.ferry.dev")
        stamp(needed + 1)
        newer = Operator(kube, kube.user("ferry-operator"), ferry.zk_port, cluster_name="newer", identity="newer-0",
                         args=("--watch-namespaces", ns, "--max-concurrent-moves", "0"))
        newer.start()
        newer.stop()
        assert f"consumergroups.ferry.dev is at revision {needed + 1}, newer than this operator's {needed}" in newer.log()
    finally:
        stamp(needed)
        stamp(needed, "users.ferry.dev")


def test_operator_metrics_and_health(operator):
    assert operator.http("/healthz") == (200, "ok\n")
    assert operator.http("/readyz")[0] == 200
    assert operator.metric("ferry_operator_reconciles_total", controller="topics", result="success") > 0
    assert operator.metric("ferry_operator_reconcile_duration_seconds_count", controller="topics") > 0
    assert operator.metric("ferry_operator_leader") == 1
    # Every Topic's Ready state, by reason: the earlier tests left Ready ones and refused ones.
    assert operator.metric("ferry_operator_resources", kind="topics", ready="true", reason="TopicReady") > 0
    assert operator.metric("ferry_operator_resources", kind="topics", ready="false", reason="InvalidConfig") > 0
    assert operator.metric("ferry_operator_reconciles_total", controller="topics", result="refused") > 0


def test_the_operator_has_only_its_rbac_permissions(kube):
    kubeconfig = kube.user("ferry-operator")
    # Secrets: it writes each User's and reads the ones Users name, but never deletes one.
    for verb, resource in (("delete", "secrets"), ("list", "configmaps"), ("delete", "topics.ferry.dev"),
                           ("create", "topics.ferry.dev"), ("update", "topics.ferry.dev"),
                           ("delete", "users.ferry.dev")):
        answer = kube.kubectl("auth", "can-i", verb, resource, "-A", kubeconfig=kubeconfig, check=False)
        assert answer.stdout.strip() == "no", f"{verb} {resource}: {answer.stdout}"
    assert kube.kubectl("auth", "can-i", "watch", "topics.ferry.dev", "-A", kubeconfig=kubeconfig).stdout.strip() == "yes"


def test_a_namespace_never_sticks_when_the_cluster_is_gone(kube, ferry, ns):
    """Last: it stops ZooKeeper. The finalizer goes after --finalizer-timeout-seconds without the cluster."""
    kube.apply(topic("orphan", ns, 1, 1))
    wait_ready(kube, "orphan", ns)
    ferry.zk_stop()
    try:
        kube.kubectl("delete", "topic", "orphan", "-n", ns, "--wait=false")
        wait_until(lambda: kube.get("topic", "orphan", ns) is None, timeout=FINALIZER_TIMEOUT + 60, interval=0.5,
                   what="the finalizer to be removed after its timeout")
        assert any(e["reason"] == "TopicLeftBehind" for e in kube.events(ns, "orphan"))
    finally:
        ferry.zk_start()
