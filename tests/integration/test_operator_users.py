"""User resources and the operator's own login to a secured cluster (issue 33 §1), against one local-cluster --secure
broker whose listeners are SASL_SSL (INTERNAL), SSL and SASL_PLAINTEXT only, with Kafka's ACL authorizer on
(allow.everyone.if.no.acl.found false) and super.users naming the operator's user, and a real kube-apiserver with
its controller-manager (which deletes a User's Secret by owner reference). ZooKeeper's nodes are locked to the
brokers' digest identity (zookeeper.set.acl), which the operator logs in as too (--zookeeper-digest-*).

The operator logs in over SASL_SSL with SCRAM-SHA-512 (--kafka-* flags), checking the broker's certificate against
local-cluster's CA, as the user ferry-operator, whose credential it makes in ZooKeeper itself from its password file.
Applications log in with the password the operator wrote into their User's Secret: confluent-kafka (librdkafka)
over SASL_SSL, and SCRAM logins by hand over SASL_PLAINTEXT where only the login is the point. What the operator
stored is read back from ZooKeeper (/config/users/<user>) and with kafka-python's DescribeAcls as the brokers' own
user (confluent-kafka 1.7 has no ACL calls)."""
import base64
import json
import os
import uuid

import confluent_kafka
import pytest
from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient, NewTopic
from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType, KafkaAdminClient,
                         ResourcePattern, ResourcePatternFilter, ResourceType)

from conftest import started_cluster, wait_until
from kube_env import Operator
from security_clients import (LoginFailed, broker_config_command, describe_scram_users, librdkafka_config,
                              scram_login)

AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
OPERATOR_USER = "ferry-operator"
RESYNC_MS = 3000
STATUS_INTERVAL = 5


@pytest.fixture(scope="module")
def ferry():
    with started_cluster(1, overrides=[f"authorizer.class.name={AUTHORIZER}", f"super.users=User:{OPERATOR_USER}",
                                       "group.initial.rebalance.delay.ms=0", "offsets.topic.num.partitions=3",
                                       "offsets.topic.replication.factor=1"],
                         secure=True) as c:
        yield c


def secure_operator(kube, ferry, cluster_name, *, user=OPERATOR_USER, ca=None, protocol="SASL_SSL", args=()):
    """An operator for resources labelled `cluster_name`, logging in as `user` over the broker's SASL_SSL listener
    (or with `protocol`), trusting `ca` (default: local-cluster's CA), with a password of its own."""
    secrets = os.path.join(kube.dir, f"{cluster_name}-secrets")
    os.makedirs(secrets, exist_ok=True)
    password = "operator-pw-" + uuid.uuid4().hex
    password_file = os.path.join(secrets, "password")
    with open(password_file, "w") as f:
        f.write(password + "\n")
    extra = args
    args = ["--group-status-interval-seconds", str(STATUS_INTERVAL), "--full-reconciliation-interval-ms",
            str(RESYNC_MS), "--kafka-security-protocol", protocol,
            "--client-bootstrap-servers", ferry.sasl_ssl_bootstrap(), "--client-security-protocol", "SASL_SSL"]
    # The brokers' ZooKeeper identity: local-cluster --secure locks the nodes to it (zookeeper.set.acl).
    args += ["--zookeeper-digest-username", "ferry", "--zookeeper-set-acl", "true",
             "--zookeeper-digest-password-file", os.path.join(ferry.tls_dir, "zookeeper-password")]
    if protocol != "PLAINTEXT":
        args += ["--kafka-listener", "INTERNAL", "--kafka-sasl-username", user,
                 "--kafka-sasl-password-file", password_file,
                 "--kafka-ssl-ca-file", ca or os.path.join(ferry.tls_dir, "ca.pem")]
    op = Operator(kube, kube.user("ferry-operator"), ferry.zk_port, cluster_name=cluster_name,
                  identity=f"operator-{cluster_name}", args=[*args, *extra])
    op.password = password
    op.start()
    return op


CLIENTS_CA = "default/ferry-clients-ca"
CLUSTER_CA = "default/ferry-cluster-ca"


@pytest.fixture(scope="module")
def operator(kube, ferry):
    # Both CAs brought by the user: local-cluster's CA, which signed the brokers' certificate and which the brokers'
    # SSL listener trusts. The clients CA as cert-manager keeps a CA (a kubernetes.io/tls Secret: tls.crt, tls.key,
    # and its issuer's ca.crt), the cluster CA in the operator's own layout (ca.crt, ca.key).
    ca, key = os.path.join(ferry.tls_dir, "ca.pem"), os.path.join(ferry.tls_dir, "ca.key")
    kube.kubectl("create", "secret", "generic", CLIENTS_CA.split("/")[1], "-n", CLIENTS_CA.split("/")[0],
                 "--type", "kubernetes.io/tls", f"--from-file=tls.crt={ca}", f"--from-file=tls.key={key}",
                 f"--from-file=ca.crt={ca}")
    kube.kubectl("create", "secret", "generic", CLUSTER_CA.split("/")[1], "-n", CLUSTER_CA.split("/")[0],
                 f"--from-file=ca.crt={ca}", f"--from-file=ca.key={key}")
    brought = {s: kube.get("secret", s.split("/")[1])["metadata"]["resourceVersion"] for s in (CLIENTS_CA, CLUSTER_CA)}
    op = secure_operator(kube, ferry, "it", args=["--clients-ca-secret", CLIENTS_CA, "--cluster-ca-secret", CLUSTER_CA])
    yield op
    op.stop()
    assert not op.sanitizer_reports(), op.sanitizer_reports()
    assert op.password not in op.log(), "the operator's password reached its log"
    assert ferry.zookeeper_password() not in op.log(), "the ZooKeeper password reached the operator's log"
    assert {s: kube.get("secret", s.split("/")[1])["metadata"]["resourceVersion"] for s in brought} == brought, \
        "the operator wrote a CA Secret it did not make"


@pytest.fixture
def ns(kube):
    name = "u-" + uuid.uuid4().hex[:8]
    kube.kubectl("create", "namespace", name)
    return name


# --- helpers ------------------------------------------------------------------------------------------------------


def broker_login(ferry):
    """SASL_SSL settings of ferry-broker, the brokers' own login (a super user by design), for the test's own work."""
    return librdkafka_config(ferry, "sasl_ssl")


def create_topics(ferry, *names):
    admin = AdminClient(broker_login(ferry))
    for name, future in admin.create_topics([NewTopic(n, 1, 1) for n in names]).items():
        future.result(timeout=30)


def sasl_plaintext(ferry):
    return f"127.0.0.1:{ferry.base_port + 3000}"


def ready(kube, kind, name, ns):
    status = (kube.get(kind, name, ns) or {}).get("status", {})
    return next((c for c in status.get("conditions", []) if c["type"] == "Ready"), None)


def wait_ready(kube, name, ns, state="True", reason="UserReady", kind="users.ferry.dev", timeout=60):
    def met():
        c = ready(kube, kind, name, ns)
        return c if c and c["status"] == state and c["reason"] == reason else None
    try:
        return wait_until(met, timeout=timeout, interval=0.2, what=f"{kind} {ns}/{name}: Ready={state} {reason}")
    except AssertionError as timed_out:
        raise AssertionError(f"{timed_out}; status: {(kube.get(kind, name, ns) or {}).get('status')}") from None


def user(name, ns, spec, cluster="it"):
    return {"apiVersion": "ferry.dev/v1alpha1", "kind": "User",
            "metadata": {"name": name, "namespace": ns, "labels": {"ferry.dev/cluster": cluster}}, "spec": spec}


def scram_user(name, ns, acls=(), quotas=None, **authorization):
    spec = {"authentication": {"type": "scram-sha-512"}, "authorization": {"acls": list(acls), **authorization}}
    if quotas:
        spec["quotas"] = quotas
    return user(name, ns, spec)


def topic_acl(name, *operations, pattern="literal", kind="topic", permission="allow"):
    return {"resource": {"type": kind, "name": name, "patternType": pattern}, "operations": list(operations),
            "type": permission}


def secret(kube, name, ns):
    """The Secret's data, decoded; None when there is none."""
    found = kube.kubectl("get", "secret", name, "-n", ns, "-o", "json", check=False)
    if found.returncode != 0:
        return None
    return {k: base64.b64decode(v).decode() for k, v in json.loads(found.stdout).get("data", {}).items()}


def user_config(ferry, name):
    """/config/users/<name>'s "config" map as ZooKeeper holds it ({} when there is none)."""
    zk = ferry.zookeeper()
    try:
        if not zk.exists(f"/config/users/{name}"):
            return {}
        data, _ = zk.get(f"/config/users/{name}")
        return json.loads(data)["config"]
    finally:
        zk.stop()


def acl_admin(ferry):
    """kafka-python's admin client, logged in as ferry-broker over SASL_PLAINTEXT."""
    return KafkaAdminClient(bootstrap_servers=sasl_plaintext(ferry), security_protocol="SASL_PLAINTEXT",
                            sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="ferry-broker",
                            sasl_plain_password=ferry.broker_password())


def acls_of(ferry, principal):
    admin = acl_admin(ferry)
    try:
        found, error = admin.describe_acls(ACLFilter(principal, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                                     ResourcePatternFilter(ResourceType.ANY, None,
                                                                           ACLResourcePatternType.ANY)))
        assert error.errno == 0, error
    finally:
        admin.close()
    return sorted((a.resource_pattern.resource_type.name, a.resource_pattern.resource_name,
                   a.resource_pattern.pattern_type.name, a.operation.name, a.permission_type.name) for a in found)


def change_acl(ferry, principal, create, resource_type, resource_name, operation):
    """Creates or deletes one literal ALLOW ACL for any host, by hand."""
    admin = acl_admin(ferry)
    pattern = ResourcePattern(resource_type, resource_name, ACLResourcePatternType.LITERAL)
    try:
        if create:
            outcome = admin.create_acls([ACL(principal, "*", operation, ACLPermissionType.ALLOW, pattern)])
            assert not outcome["failed"], outcome
        else:
            outcome = admin.delete_acls([ACLFilter(principal, "*", operation, ACLPermissionType.ALLOW, pattern)])
            assert outcome and outcome[0][1] and outcome[0][2] is not None, outcome
    finally:
        admin.close()


def produce(ferry, topic, credentials):
    """Produces one record as the user; None when delivered, else the KafkaError."""
    user_name, password = credentials
    producer = confluent_kafka.Producer({**librdkafka_config(ferry, "sasl_ssl", user_name, password),
                                         "message.timeout.ms": 15000, "enable.idempotence": False})
    outcome = []
    producer.produce(topic, b"v", on_delivery=lambda err, msg: outcome.append(err))
    producer.flush(30)
    return outcome[0] if outcome else KafkaError(KafkaError._MSG_TIMED_OUT)


def can_log_in(ferry, name, password):
    try:
        scram_login(sasl_plaintext(ferry), name, password).close()
        return True
    except LoginFailed:
        return False


# --- the operator's own login -------------------------------------------------------------------------------------


def test_the_operator_logs_in_over_sasl_ssl_with_the_credential_it_made(kube, ferry, operator, ns):
    # Its own SCRAM credential, made in ZooKeeper from the password file before any login.
    users = describe_scram_users(sasl_plaintext(ferry), "ferry-broker", ferry.broker_password())
    assert users.get(OPERATOR_USER) == [("SCRAM-SHA-512", 4096)], users
    assert "created the SCRAM-SHA-512 credential of the operator's user ferry-operator" in operator.log()
    # A ConsumerGroup's status needs FindCoordinator, DescribeGroups, OffsetFetch and ListOffsets as a super user.
    topic, group = "secure-" + ns, "app-" + ns
    create_topics(ferry, topic)
    producer = confluent_kafka.Producer(broker_login(ferry))
    for i in range(12):
        producer.produce(topic, f"r{i}".encode())
    assert producer.flush(30) == 0
    consumer = confluent_kafka.Consumer({**broker_login(ferry), "group.id": group, "enable.auto.commit": False,
                                         "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    try:
        wait_until(lambda: consumer.poll(0.2) is not None and consumer.assignment(), timeout=60,
                   what="the consumer to join its group")
        consumer.commit(offsets=[confluent_kafka.TopicPartition(topic, 0, 4)], asynchronous=False)
        kube.apply({"apiVersion": "ferry.dev/v1alpha1", "kind": "ConsumerGroup",
                    "metadata": {"name": "app", "namespace": ns, "labels": {"ferry.dev/cluster": "it"}},
                    "spec": {"groupId": group}})
        status = wait_until(lambda: (s := kube.get("consumergroup", "app", ns).get("status", {})).get("state") == "Stable"
                            and s.get("lag", {}).get("total") == 8 and s, timeout=60, what="Stable with a lag of 8")
        assert status["members"] == 1, status
    finally:
        consumer.close()


def test_zookeeper_nodes_are_written_only_by_the_brokers_and_the_operator(kube, ferry, operator, ns):
    """local-cluster --secure locks ZooKeeper (zookeeper.set.acl); the operator logs in as the brokers' identity.
    Another client that reaches ZooKeeper reads the cluster's metadata but changes nothing and reads no credential."""
    from kazoo.exceptions import NoAuthError
    from kazoo.security import make_digest_acl_credential
    topic = "locked-" + ns
    create_topics(ferry, topic)
    name = "zk-" + ns
    kube.apply(scram_user(name, ns, [topic_acl(topic, "Read")]))
    wait_ready(kube, name, ns)
    identity = make_digest_acl_credential("ferry", ferry.zookeeper_password())
    zk = ferry.zookeeper()
    try:
        # Nodes the operator made (its own credential) and the brokers made (a topic, a User's credential).
        for path, world_readable in ((f"/config/users/{OPERATOR_USER}", False), (f"/config/users/{name}", False),
                                     (f"/brokers/topics/{topic}", True), ("/config/changes", True)):
            acls, _ = zk.get_acls(path)
            ids = sorted((a.id.scheme, a.id.id, a.perms) for a in acls)
            expected = [("digest", identity, 31)] + ([("world", "anyone", 1)] if world_readable else [])
            assert ids == sorted(expected), (path, ids)
    finally:
        zk.stop()
    anonymous = ferry.zookeeper(anonymous=True)
    try:
        assert json.loads(anonymous.get(f"/brokers/topics/{topic}")[0])["partitions"]
        for attempt in (lambda: anonymous.set(f"/brokers/topics/{topic}", b'{"version":2,"partitions":{}}'),
                        lambda: anonymous.delete(f"/brokers/topics/{topic}", recursive=True),
                        lambda: anonymous.create(f"/config/users/mallory", b"{}"),
                        lambda: anonymous.get(f"/config/users/{name}"),
                        lambda: anonymous.get_children("/config/users"),
                        lambda: anonymous.set("/cluster/id", b"{}")):
            with pytest.raises(NoAuthError):
                attempt()
    finally:
        anonymous.stop()
    assert user_config(ferry, name), "the cluster's identity still reads the credential"
    assert ferry.zookeeper_password() not in ferry.broker_log(0), "the ZooKeeper password reached the broker's log"


def test_settings_that_cannot_work_are_reported_and_never_fall_back_to_plaintext(kube, ferry, operator, ns):
    """Three operators, each for its own cluster label, whose Kafka settings cannot work: each resource says why."""
    other_ca = os.path.join(kube.dir, "other-ca.pem")
    with open(other_ca, "w") as out, open(os.path.join(ferry.tls_dir, "client.crt")) as leaf:
        out.write(leaf.read())  # a certificate that did not sign the broker's
    cases = {
        # Its own user: an operator owns its user's credential, so a second password for ferry-operator would
        # replace the first one's.
        "wrong-ca": (dict(ca=other_ca, user="wrong-ca-operator"), "certificate verify failed"),
        "plaintext": (dict(protocol="PLAINTEXT"), "does not use --kafka-security-protocol"),
        "not-super": (dict(user="not-super"), "GROUP_AUTHORIZATION_FAILED"),
    }
    operators = []
    try:
        for cluster, (settings, _) in cases.items():
            operators.append(secure_operator(kube, ferry, cluster, **settings))
            kube.apply({"apiVersion": "ferry.dev/v1alpha1", "kind": "ConsumerGroup",
                        "metadata": {"name": cluster, "namespace": ns, "labels": {"ferry.dev/cluster": cluster}},
                        "spec": {"groupId": "g-" + cluster}})
        for cluster, (_, why) in cases.items():
            refused = wait_ready(kube, cluster, ns, "False", "GroupUnavailable", kind="consumergroup")
            assert why in refused["message"], (cluster, refused)
        assert "has no listener of --kafka-security-protocol PLAINTEXT" in operators[1].log()
    finally:
        for op in operators:
            op.stop()
    for op in operators:
        assert not op.sanitizer_reports(), op.sanitizer_reports()
        assert op.password not in op.log()


# --- User resources -----------------------------------------------------------------------------------------------


def test_a_scram_user_gets_a_secret_a_credential_its_acls_and_quotas(kube, ferry, operator, ns):
    name = "orders-" + ns
    mine, other = f"orders-{ns}-in", f"payments-{ns}"
    create_topics(ferry, mine, other)
    kube.apply(scram_user(name, ns, [topic_acl(f"orders-{ns}-", "Write", "Describe", pattern="prefix")],
                          quotas={"producerByteRate": 1048576, "requestPercentage": 55}))
    ready_condition = wait_ready(kube, name, ns)
    assert f"User:{name} has 2 ACLs and 2 quotas" in ready_condition["message"], ready_condition
    status = kube.get("users.ferry.dev", name, ns)["status"]
    assert status["principal"] == f"User:{name}" and status["secret"] == name and status["unmanagedAcls"] == 0, status

    data = secret(kube, name, ns)
    assert len(data["password"]) == 32 and data["password"].isalnum(), "a generated password"
    assert data["sasl.mechanism"] == "SCRAM-SHA-512"
    assert data["sasl.jaas.config"] == ("org.apache.kafka.common.security.scram.ScramLoginModule required "
                                        f'username="{name}" password="{data["password"]}";')
    assert data["bootstrap.servers"] == ferry.sasl_ssl_bootstrap() and data["security.protocol"] == "SASL_SSL"
    with open(os.path.join(ferry.tls_dir, "ca.pem")) as f:
        assert data["ca.crt"] == f.read(), "the cluster CA's bundle, which checks the brokers' certificate"
    owner = json.loads(kube.kubectl("get", "secret", name, "-n", ns, "-o", "json").stdout)["metadata"]
    assert owner["ownerReferences"][0]["kind"] == "User" and owner["labels"]["ferry.dev/user"] == "true", owner

    # The credential, the quotas (in Kafka's ZooKeeper layout) and the ACLs are there.
    stored = user_config(ferry, name)
    assert stored["SCRAM-SHA-512"].startswith("salt=") and "iterations=4096" in stored["SCRAM-SHA-512"], stored
    assert stored["producer_byte_rate"] == "1048576" and stored["request_percentage"] == "55.0", stored
    assert acls_of(ferry, f"User:{name}") == [("TOPIC", f"orders-{ns}-", "PREFIXED", "DESCRIBE", "ALLOW"),
                                              ("TOPIC", f"orders-{ns}-", "PREFIXED", "WRITE", "ALLOW")]

    # An application with the Secret's password writes where the ACLs let it, and nowhere else.
    credentials = (name, data["password"])
    assert produce(ferry, mine, credentials) is None
    refused = produce(ferry, other, credentials)
    assert refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, refused
    assert data["password"] not in operator.log()

    # Editing the spec: ACLs the operator made and the spec dropped go; quotas not in the spec go.
    kube.apply(scram_user(name, ns, [topic_acl(f"orders-{ns}-", "Describe", pattern="prefix")]))
    wait_until(lambda: acls_of(ferry, f"User:{name}") == [("TOPIC", f"orders-{ns}-", "PREFIXED", "DESCRIBE",
                                                           "ALLOW")], timeout=30, what="Write to be revoked")
    wait_until(lambda: not {"producer_byte_rate", "request_percentage"} & set(user_config(ferry, name)), timeout=30,
               what="the quotas to go")
    assert "SCRAM-SHA-512" in user_config(ferry, name), "the credential stays beside removed quotas"


def test_what_is_changed_behind_the_operators_back_is_put_back_and_acls_it_did_not_make_are_only_reported(
        kube, ferry, operator, ns):
    name = "drift-" + ns
    kube.apply(scram_user(name, ns, [topic_acl("drift-topic", "Read")]))
    wait_ready(kube, name, ns)
    principal = f"User:{name}"
    change_acl(ferry, principal, False, ResourceType.TOPIC, "drift-topic", ACLOperation.READ)
    change_acl(ferry, principal, True, ResourceType.GROUP, "by-hand", ACLOperation.READ)
    # Within a resync (RESYNC_MS) the deleted ACL is created again, and the one made by hand stays and is reported.
    created = f"{ns}/{name}: created 1 and deleted 0 ACLs of {principal}"
    wait_until(lambda: operator.log().count(created) == 2, timeout=30, what="the deleted ACL to be created again")
    assert ("TOPIC", "drift-topic", "LITERAL", "READ", "ALLOW") in acls_of(ferry, principal)
    wait_until(lambda: kube.get("users.ferry.dev", name, ns).get("status", {}).get("unmanagedAcls") == 1, timeout=30,
               what="the ACL made by hand to be reported")
    assert "1 more ACLs of it were not made by the operator" in ready(kube, "users.ferry.dev", name, ns)["message"]
    assert ("GROUP", "by-hand", "LITERAL", "READ", "ALLOW") in acls_of(ferry, principal)
    # Asked to, the operator removes it.
    kube.apply(scram_user(name, ns, [topic_acl("drift-topic", "Read")], removeUnmanagedAcls=True))
    wait_until(lambda: acls_of(ferry, principal) == [("TOPIC", "drift-topic", "LITERAL", "READ", "ALLOW")],
               timeout=30, what="the unmanaged ACL to be removed when asked")
    # A credential deleted behind its back is stored again.
    password = secret(kube, name, ns)["password"]
    deleted = broker_config_command(ferry, "--alter", "--delete-config", "SCRAM-SHA-512", "--entity-type", "users",
                                    "--entity-name", name)
    assert deleted.returncode == 0, deleted.stderr
    wait_until(lambda: can_log_in(ferry, name, password), timeout=30, what="the credential to be stored again")


def test_deleting_the_secret_rolls_the_password_and_deleting_the_user_locks_it_out(kube, ferry, operator, ns):
    name = "roll-" + ns
    kube.apply(scram_user(name, ns, [topic_acl("roll-topic", "Read")], quotas={"consumerByteRate": 4096}))
    wait_ready(kube, name, ns)
    first = secret(kube, name, ns)["password"]
    assert can_log_in(ferry, name, first)
    kube.kubectl("delete", "secret", name, "-n", ns)
    second = wait_until(lambda: (s := secret(kube, name, ns)) and s["password"] != first and s["password"],
                        timeout=30, what="a new Secret with a new password")
    wait_until(lambda: can_log_in(ferry, name, second), timeout=30, what="the new password to log in")
    assert not can_log_in(ferry, name, first), "the old password still logs in"

    kube.kubectl("delete", "users.ferry.dev", name, "-n", ns, "--wait=true", timeout=60)
    assert not can_log_in(ferry, name, second), "a deleted User still logs in"
    assert acls_of(ferry, f"User:{name}") == []
    assert user_config(ferry, name) == {}, "credential and quotas gone"
    wait_until(lambda: secret(kube, name, ns) is None, timeout=60, what="the Secret to go with its User")


def test_a_password_from_the_users_own_secret(kube, ferry, operator, ns):
    name = "own-" + ns
    kube.kubectl("create", "secret", "generic", "own-password", "-n", ns, "--from-literal=pw=first-own-password")
    spec = {"authentication": {"type": "scram-sha-512",
                               "password": {"valueFrom": {"secretKeyRef": {"name": "own-password", "key": "pw"}}}}}
    kube.apply(user(name, ns, spec))
    wait_ready(kube, name, ns)
    assert secret(kube, name, ns)["password"] == "first-own-password"
    assert can_log_in(ferry, name, "first-own-password")
    # A change of that Secret is picked up at the next resync.
    kube.kubectl("patch", "secret", "own-password", "-n", ns, "--type", "merge", "-p",
                 json.dumps({"data": {"pw": base64.b64encode(b"second-own-password").decode()}}))
    wait_until(lambda: can_log_in(ferry, name, "second-own-password"), timeout=30, what="the changed password")
    assert secret(kube, name, ns)["password"] == "second-own-password"


def test_bad_specs_and_name_conflicts_are_refused_on_the_resource(kube, ferry, operator, ns):
    kube.apply(user("bad-" + ns, ns, {"authorization": {"acls": [topic_acl("kafka-cluster", "Write",
                                                                           kind="cluster")]}}), check=False)
    bad = wait_ready(kube, "bad-" + ns, ns, "False", "InvalidSpec")
    assert "operation Write does not apply to Clusters" in bad["message"], bad
    assert acls_of(ferry, f"User:bad-{ns}") == []

    # Two Users of one name in different namespaces: the one there first owns the Kafka user (both are created
    # within a second here, so creation times alone would not tell).
    name = "shared-" + ns
    other_ns = ns + "-b"
    kube.kubectl("create", "namespace", other_ns)
    kube.apply(scram_user(name, ns, [topic_acl("first", "Read")]))
    wait_ready(kube, name, ns)
    kube.apply(scram_user(name, other_ns, [topic_acl("second", "Read")]))
    conflict = wait_ready(kube, name, other_ns, "False", "ResourceConflict")
    assert f"is managed by User {ns}/{name}" in conflict["message"], conflict
    assert acls_of(ferry, f"User:{name}") == [("TOPIC", "first", "LITERAL", "READ", "ALLOW")]
    # Deleting the owner removes what it made and hands the name to the other.
    kube.kubectl("delete", "users.ferry.dev", name, "-n", ns, "--wait=true", timeout=60)
    wait_ready(kube, name, other_ns)
    assert acls_of(ferry, f"User:{name}") == [("TOPIC", "second", "LITERAL", "READ", "ALLOW")]
    # The new owner's password logs in: the first owner's credential went before the name changed hands.
    assert can_log_in(ferry, name, secret(kube, name, other_ns)["password"])


def test_existing_kafka_users_are_not_taken_over_unless_asked(kube, ferry, operator, ns):
    # The brokers' own user (a super user) exists with a credential no User stored.
    kube.apply(scram_user("ferry-broker", ns, [topic_acl("anything", "Read")]))
    refused = wait_ready(kube, "ferry-broker", ns, "False", "UserExists")
    assert "ferry.dev/adopt=true" in refused["message"], refused
    assert secret(kube, "ferry-broker", ns) is None, "no Secret with a new password for an existing user"
    assert can_log_in(ferry, "ferry-broker", ferry.broker_password()), "its credential is untouched"
    assert acls_of(ferry, "User:ferry-broker") == []
    kube.kubectl("delete", "users.ferry.dev", "ferry-broker", "-n", ns, "--wait=true", timeout=60)
    assert can_log_in(ferry, "ferry-broker", ferry.broker_password()), "deleting the refused User removed nothing"
    # The operator's own login cannot be a User at all.
    kube.apply(scram_user(OPERATOR_USER, ns))
    reserved = wait_ready(kube, OPERATOR_USER, ns, "False", "ReservedUser")
    assert "--kafka-sasl-username" in reserved["message"], reserved
    # A user made by hand is adopted when the User says so.
    name = "by-hand-" + ns
    made = broker_config_command(ferry, "--alter", "--add-config", "SCRAM-SHA-512=[password=old-hand-made]",
                                 "--entity-type", "users", "--entity-name", name)
    assert made.returncode == 0, made.stderr
    kube.apply(scram_user(name, ns))
    wait_ready(kube, name, ns, "False", "UserExists")
    adopted = scram_user(name, ns)
    adopted["metadata"]["annotations"] = {"ferry.dev/adopt": "true"}
    kube.apply(adopted)
    wait_ready(kube, name, ns)
    assert can_log_in(ferry, name, secret(kube, name, ns)["password"])
    assert not can_log_in(ferry, name, "old-hand-made")


def test_a_tls_user_gets_a_certificate_from_the_clients_ca_and_its_acls(kube, ferry, operator, ns):
    name = "cert-" + ns
    mine, other = f"cert-{ns}-in", f"cert-{ns}-other"
    create_topics(ferry, mine, other)
    kube.apply(user(name, ns, {"authentication": {"type": "tls"},
                               "authorization": {"acls": [topic_acl(mine, "Write", "Describe")]}}))
    wait_ready(kube, name, ns)
    status = kube.get("users.ferry.dev", name, ns)["status"]
    assert status["principal"] == f"User:CN={name}" and status["secret"] == name, status
    assert acls_of(ferry, f"User:CN={name}") == [("TOPIC", mine, "LITERAL", "DESCRIBE", "ALLOW"),
                                                 ("TOPIC", mine, "LITERAL", "WRITE", "ALLOW")]
    data = secret(kube, name, ns)
    with open(os.path.join(ferry.tls_dir, "ca.pem")) as f:
        assert data["ca.crt"] == f.read()
    first = data["tls.crt"]

    def produce_with_certificate(topic, data):
        files = os.path.join(kube.dir, f"{name}-{uuid.uuid4().hex[:6]}")
        os.makedirs(files)
        for key in ("tls.crt", "tls.key", "ca.crt"):
            with open(os.path.join(files, key), "w") as f:
                f.write(data[key])
        producer = confluent_kafka.Producer({
            "bootstrap.servers": ferry.ssl_bootstrap(), "security.protocol": "SSL",
            "ssl.ca.location": os.path.join(files, "ca.crt"),
            "ssl.certificate.location": os.path.join(files, "tls.crt"),
            "ssl.key.location": os.path.join(files, "tls.key"),
            "message.timeout.ms": 15000, "enable.idempotence": False})
        outcome = []
        producer.produce(topic, b"v", on_delivery=lambda err, msg: outcome.append(err))
        producer.flush(30)
        return outcome[0] if outcome else KafkaError(KafkaError._MSG_TIMED_OUT)

    # Its certificate logs in as User:CN=<name> on the SSL listener, and the ACLs apply to that principal.
    assert produce_with_certificate(mine, data) is None
    assert produce_with_certificate(other, data).code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    # A deleted Secret gets a new certificate; an intact one is kept (no new one at each resync).
    kube.kubectl("delete", "secret", name, "-n", ns)
    renewed = wait_until(lambda: (s := secret(kube, name, ns)) and s["tls.crt"] != first and s, timeout=30,
                         what="a new certificate")
    assert produce_with_certificate(mine, renewed) is None
    reconciles = operator.metric("ferry_operator_reconciles_total", controller="users")
    wait_until(lambda: operator.metric("ferry_operator_reconciles_total", controller="users") >= reconciles + 10,
               timeout=30, what="resyncs of the Users")
    assert secret(kube, name, ns)["tls.crt"] == renewed["tls.crt"], "a valid certificate was issued again"
    assert "CertificateIssued" in [e["reason"] for e in kube.events(ns, name)]
