"""The operator's Kafka connections to a secured cluster (issue 33, §1: "the operator talks to the brokers as a super
user whose credential it owns, never through an open listener"), against one local-cluster --secure broker whose only
listeners are SASL_SSL (INTERNAL), SSL and SASL_PLAINTEXT, with Kafka's ACL authorizer on and super.users naming
the operator's user, and a real kube-apiserver.

The operator logs in over SASL_SSL with SCRAM-SHA-512 (--kafka-* flags), checking the brokers' certificates against
local-cluster's CA, as the user ferry-operator, whose credential it makes in ZooKeeper itself from its password file.
ConsumerGroup resources, whose status needs DescribeGroups, OffsetFetch and ListOffsets, show that its requests get
through. Operators with settings that cannot work (another CA, the plaintext default against a SASL_SSL listener, a
user the authorizer does not know as a super user) report why on the resource and never fall back to plaintext."""
import os
import uuid

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from conftest import started_cluster, wait_until
from kube_env import Operator, grant_operator, kube_environment
from security_clients import describe_scram_users, librdkafka_config

AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
OPERATOR_USER = "ferry-operator"
STATUS_INTERVAL = 5


@pytest.fixture(scope="module")
def ferry():
    with started_cluster(1, overrides=[f"authorizer.class.name={AUTHORIZER}", f"super.users=User:{OPERATOR_USER}",
                                       "group.initial.rebalance.delay.ms=0", "offsets.topic.num.partitions=3",
                                       "offsets.topic.replication.factor=1"],
                         secure=True) as c:
        yield c


@pytest.fixture(scope="module")
def kube(request):
    with kube_environment(request) as env:
        grant_operator(env, "ferry-operator")
        yield env


def secure_operator(kube, ferry, cluster_name, *, user=OPERATOR_USER, password="operator-pw-" + uuid.uuid4().hex,
                    ca=None, protocol="SASL_SSL"):
    """An operator for ConsumerGroups labelled `cluster_name`, logging in as `user` over the broker's SASL_SSL
    listener (or with `protocol`), trusting `ca` (default: local-cluster's CA)."""
    secrets = os.path.join(kube.dir, f"{cluster_name}-secrets")
    os.makedirs(secrets, exist_ok=True)
    password_file = os.path.join(secrets, "password")
    with open(password_file, "w") as f:
        f.write(password + "\n")
    args = ["--group-status-interval-seconds", str(STATUS_INTERVAL), "--kafka-security-protocol", protocol]
    if protocol != "PLAINTEXT":
        args += ["--kafka-listener", "INTERNAL", "--kafka-sasl-username", user,
                 "--kafka-sasl-password-file", password_file,
                 "--kafka-ssl-ca-file", ca or os.path.join(ferry.tls_dir, "ca.pem")]
    op = Operator(kube, kube.user("ferry-operator"), ferry.zk_port, cluster_name=cluster_name,
                  identity=f"operator-{cluster_name}", args=args)
    op.password = password
    op.start()
    return op


@pytest.fixture(scope="module")
def operator(kube, ferry):
    op = secure_operator(kube, ferry, "it")
    yield op
    op.stop()
    assert not op.sanitizer_reports(), op.sanitizer_reports()
    assert op.password not in op.log(), "the operator's password reached its log"


@pytest.fixture
def ns(kube):
    name = "s-" + uuid.uuid4().hex[:8]
    kube.kubectl("create", "namespace", name)
    return name


def consumer_group(name, ns, group_id, cluster="it"):
    return {"apiVersion": "ferry.dev/v1alpha1", "kind": "ConsumerGroup",
            "metadata": {"name": name, "namespace": ns, "labels": {"ferry.dev/cluster": cluster}},
            "spec": {"groupId": group_id}}


def ready(kube, name, ns):
    status = (kube.get("consumergroup", name, ns) or {}).get("status", {})
    return next((c for c in status.get("conditions", []) if c["type"] == "Ready"), None)


def wait_ready(kube, name, ns, state, reason, timeout=60):
    def met():
        c = ready(kube, name, ns)
        return c if c and c["status"] == state and c["reason"] == reason else None
    return wait_until(met, timeout=timeout, interval=0.2, what=f"Ready={state} {reason} on {ns}/{name}")


def broker_login(ferry):
    """SASL_SSL settings of ferry-broker, the brokers' own login (a super user by design), for the test's clients."""
    return librdkafka_config(ferry, "sasl_ssl")


def joined_member(ferry, topic, group):
    """A consumer of `group` over SASL_SSL on a new one-partition topic with 12 records, 4 of them committed."""
    admin = AdminClient(broker_login(ferry))
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    producer = confluent_kafka.Producer(broker_login(ferry))
    for i in range(12):
        producer.produce(topic, f"r{i}".encode())
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer({**broker_login(ferry), "group.id": group, "enable.auto.commit": False,
                                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    wait_until(lambda: consumer.poll(0.2) is not None and consumer.assignment(), timeout=60,
               what="the consumer to join its group")
    consumer.commit(offsets=[confluent_kafka.TopicPartition(topic, 0, 4)], asynchronous=False)
    return consumer


def test_the_operator_logs_in_over_sasl_ssl_with_the_credential_it_made(kube, ferry, operator, ns):
    # Its own SCRAM credential, made in ZooKeeper from the password file before any login.
    users = describe_scram_users(f"127.0.0.1:{ferry.base_port + 3000}", "ferry-broker", ferry.broker_password())
    assert users.get(OPERATOR_USER) == [("SCRAM-SHA-512", 4096)], users
    topic, group = "secure-" + ns, "app-" + ns
    consumer = joined_member(ferry, topic, group)
    try:
        kube.apply(consumer_group("app", ns, group))
        wait_ready(kube, "app", ns, "True", "GroupObserved")
        status = wait_until(lambda: (s := kube.get("consumergroup", "app", ns)["status"]).get("state") == "Stable"
                            and s.get("lag", {}).get("total") == 8 and s, timeout=60, what="Stable with a lag of 8")
        assert status["members"] == 1, status
    finally:
        consumer.close()
    assert "created the SCRAM-SHA-512 credential of the operator's user ferry-operator" in operator.log()


def test_settings_that_cannot_work_are_reported_and_never_fall_back_to_plaintext(kube, ferry, operator, ns):
    """Three operators, each for its own cluster label, whose Kafka settings cannot work: each resource says why."""
    other_ca = os.path.join(kube.dir, "other-ca.pem")
    with open(other_ca, "w") as out, open(os.path.join(ferry.tls_dir, "client.crt")) as leaf:
        out.write(leaf.read())  # a certificate that did not sign the broker's
    cases = {
        "wrong-ca": (dict(ca=other_ca), "certificate verify failed"),
        "plaintext": (dict(protocol="PLAINTEXT"), "does not use --kafka-security-protocol"),
        "not-super": (dict(user="not-super"), "GROUP_AUTHORIZATION_FAILED"),
    }
    operators = []
    try:
        for cluster, (settings, _) in cases.items():
            operators.append(secure_operator(kube, ferry, cluster, **settings))
            kube.apply(consumer_group(cluster, ns, "g-" + cluster, cluster=cluster))
        for cluster, (_, why) in cases.items():
            refused = wait_ready(kube, cluster, ns, "False", "GroupUnavailable")
            assert why in refused["message"], (cluster, refused)
        plaintext = operators[1]
        assert "listener INTERNAL is SASL_SSL, not --kafka-security-protocol PLAINTEXT" in plaintext.log()
    finally:
        for op in operators:
            op.stop()
    for op in operators:
        assert not op.sanitizer_reports(), op.sanitizer_reports()
        assert op.password not in op.log()
