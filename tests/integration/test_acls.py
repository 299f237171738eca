"""ACL authorization (issue 32, §1 and §3), against one local-cluster --secure of three brokers started with
Kafka's ZooKeeper-mode authorizer class name, super.users=User:admin and allow.everyone.if.no.acl.found left at
its default (false).

Every client logs in over the SASL_PLAINTEXT listeners with SCRAM-SHA-512, as a user made at module setup with
Kafka's kafka-configs (ConfigCommand) as ferry-broker, the brokers' own login (a super user by design):
- admin: the super user; it creates the topics and reads what was written.
- alice: the user the ACLs are granted to.
- bob: the user without grants, whose attempts must be refused (some tests grant him Describe only).
- carol: the principal of the DENY-beats-ALLOW-of-the-same-principal case and the CVE-2024-27309 case.
- dave: only the InitProducerId test grants him anything, so its "no Write on any topic" start holds.
No test grants Write or All to User:*, which would give every user Write on some topic, and so idempotence.

ACLs are managed with Kafka 4.4's kafka-acls (org.apache.kafka.tools.AclCommand) where the scenario is about the
tool, with Java's AdminClient (ferry.AclClients) for its round-trip, and otherwise with CreateAcls and DeleteAcls
sent by hand, which also pins the broker a change goes through. Since every broker applies a change within a
second (measured by test_acl_added_on_one_broker_applies_on_the_others_within_a_second and
test_removed_acl_stops_applying_everywhere_within_a_second), the other tests first wait for the change to show
at every broker and then assert.

Clients: confluent-kafka and kcat (librdkafka 2.0.2), Java kafka-clients (the newest of tests/java/versions.txt;
tests/java/src/main/java/ferry/AclClients.java), franz-go (tests/go/franz-acl) and kafkajs
(tests/js/kafkajs-secure/acl.js), plus requests by hand (Metadata v4, Produce v3, FindCoordinator v1,
InitProducerId v0, Create/Describe/DeleteAcls v1). The Java, Go and JavaScript programs are built while the
cluster starts, offline (scripts/install-deps fetched their dependencies).
"""
import collections
import concurrent.futures
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time
import uuid

import confluent_kafka
import pytest
from confluent_kafka import KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from conftest import (JAVA_CLIENT_VERSIONS, SOURCE_DIR, init_producer_id, java_checks_classpath, kafka_request,
                      kafka_tool, kcat, produce_v3, read_response, record_batch, started_cluster, wait_until)
from security_clients import (LoginFailed, java_properties, kcat_args, librdkafka_config, make_scram_user, scram_login)

AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
OVERRIDES = [f"authorizer.class.name={AUTHORIZER}", "super.users=User:admin", "group.initial.rebalance.delay.ms=0",
             "offsets.topic.num.partitions=5", "transaction.state.log.num.partitions=5"]
MECHANISM = "SCRAM-SHA-512"
USERS = {name: f"{name}-secret" for name in ("admin", "alice", "bob", "carol", "dave")}
JAVA_VERSION = JAVA_CLIENT_VERSIONS[-1]
GO = shutil.which("go") or "/usr/local/go/bin/go"
FRANZ_ACL = os.path.join(SOURCE_DIR, "tests", "go", "franz-acl")
KAFKAJS_PACKAGE = os.path.join(SOURCE_DIR, "tests", "js", "kafkajs-secure")
DENIALS_METRIC = "ferry_authorization_denials_total"

# Kafka's error codes (Errors.java).
NONE, UNKNOWN_TOPIC_OR_PARTITION = 0, 3
TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED = 29, 30, 31
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53

# Wire codes of the ACL model (security note §3).
RESOURCE_TYPES = {"Any": 1, "Topic": 2, "Group": 3, "Cluster": 4, "TransactionalId": 5}
PATTERN_TYPES = {"ANY": 1, "MATCH": 2, "LITERAL": 3, "PREFIXED": 4}
OPERATIONS = {"Any": 1, "All": 2, "Read": 3, "Write": 4, "Create": 5, "Delete": 6, "Alter": 7, "Describe": 8,
              "ClusterAction": 9, "DescribeConfigs": 10, "AlterConfigs": 11, "IdempotentWrite": 12}
PERMISSIONS = {"Any": 1, "Deny": 2, "Allow": 3}
CLUSTER = "kafka-cluster"

# One ACL (or, with None and "Any"/"ANY" fields, a filter), in the names ZooKeeper's nodes use.
Acl = collections.namedtuple("Acl", "resource_type name principal operation permission pattern host",
                             defaults=("Allow", "LITERAL", "*"))

# Each test's topics (one partition, three replicas), made by admin at module setup.
T_PRODUCE = "acl-produce"
T_GROUP = "acl-group"
T_TXN = "acl-txn"
T_PREFIXED = ("pfx-one", "pfx-two")
T_NOT_PREFIXED = "pfxother"
T_DENY_ALL_BUT = "acl-deny-wildcard"
T_DENY_SAME = "acl-deny-same"
T_PROPAGATE = "acl-propagate"
T_REMOVE = "acl-remove"
T_CVE = "acl-cve-2024-27309"
T_ALICE_ONLY = "acl-alice-only"
T_BOB_VISIBLE = "acl-bob-visible"
T_OPS = "ops-topic"
T_CLIENTS = "acl-clients"
T_METRIC = "acl-metric"
T_NO_ACLS = "acl-no-acls"
TOPICS = [T_PRODUCE, T_GROUP, T_TXN, *T_PREFIXED, T_NOT_PREFIXED, T_DENY_ALL_BUT, T_DENY_SAME, T_PROPAGATE,
          T_REMOVE, T_CVE, T_ALICE_ONLY, T_BOB_VISIBLE, T_OPS, T_CLIENTS, T_METRIC, T_NO_ACLS]

SETTLE_S = 15  # how long a test waits for an ACL change to show at every broker before it asserts


# --- requests by hand ---------------------------------------------------------------------------------------------


def _str(s):
    if s is None:
        return struct.pack(">h", -1)
    data = s.encode()
    return struct.pack(">h", len(data)) + data


class _Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def _take(self, fmt):
        value = struct.unpack_from(fmt, self.data, self.at)[0]
        self.at += struct.calcsize(fmt)
        return value

    def int8(self):
        return self._take(">b")

    def int16(self):
        return self._take(">h")

    def int32(self):
        return self._take(">i")

    def string(self):
        n = self.int16()
        if n < 0:
            return None
        value = self.data[self.at:self.at + n].decode()
        self.at += n
        return value

    def array(self, item):
        n = self.int32()
        return [item() for _ in range(max(n, 0))]


def _names(table):
    return {code: name for name, code in table.items()}


def _encode_acl(a):
    return (struct.pack(">b", RESOURCE_TYPES[a.resource_type]) + _str(a.name)
            + struct.pack(">b", PATTERN_TYPES[a.pattern]) + _str(a.principal) + _str(a.host)
            + struct.pack(">bb", OPERATIONS[a.operation], PERMISSIONS[a.permission]))


class Conn:
    """One connection by hand to a broker's SASL_PLAINTEXT listener, logged in as `user` with SCRAM-SHA-512."""

    def __init__(self, c, broker, user):
        self.broker, self.user = broker, user
        self.sasl = scram_login(c.sasl_plaintext_bootstrap().split(",")[broker], user, USERS[user])
        self.sock = self.sasl.sock

    def close(self):
        self.sasl.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def next_id(self):
        return self.sasl._next()

    def call(self, api_key, version, body):
        correlation = self.next_id()
        self.sock.sendall(kafka_request(api_key, version, correlation, body))
        got, response = read_response(self.sock)
        assert got == correlation, (got, correlation)
        return response

    def metadata(self, topics=None, auto_create=False):
        """{topic: error code} of Metadata v4: the named topics, or every topic the broker shows (None)."""
        if topics is None:
            listed = struct.pack(">i", -1)
        else:
            listed = struct.pack(">i", len(topics)) + b"".join(map(_str, topics))
        r = _Reader(self.call(3, 4, listed + struct.pack(">b", auto_create)))
        r.int32()  # throttle_time_ms
        r.array(lambda: (r.int32(), r.string(), r.int32(), r.string()))  # brokers
        r.string()  # cluster_id
        r.int32()  # controller_id

        def topic():
            error, name, _internal = r.int16(), r.string(), r.int8()
            r.array(lambda: (r.int16(), r.int32(), r.int32(), r.array(r.int32), r.array(r.int32)))
            return name, error
        return dict(r.array(topic))

    def describe_error(self, topic):
        return self.metadata([topic])[topic]

    def produce(self, topic, value=None, batch=None):
        """The error code of a Produce v3 (acks=1) without a transactional id of `batch` (default: one record)
        to partition 0 of `topic`."""
        batch = batch or record_batch([value or f"raw-{self.user}".encode()])
        return produce_v3(self.sock, topic, 0, batch, self.next_id(), acks=1)[0]

    def find_coordinator(self, key, key_type=0):
        """The error code of FindCoordinator v1 for a group (key_type 0) or a transactional id (1)."""
        r = _Reader(self.call(10, 1, _str(key) + struct.pack(">b", key_type)))
        r.int32()
        return r.int16()

    def init_producer_id(self):
        return init_producer_id(self.sock, self.next_id())[0]

    def create_acls(self, acls):
        """The error code of each creation of one CreateAcls v1."""
        r = _Reader(self.call(30, 1, struct.pack(">i", len(acls)) + b"".join(map(_encode_acl, acls))))
        r.int32()
        return [error for error, _ in r.array(lambda: (r.int16(), r.string()))]

    def _acl(self, r, resource_type, name, pattern):
        principal, host, operation, permission = r.string(), r.string(), r.int8(), r.int8()
        return Acl(_names(RESOURCE_TYPES)[resource_type], name, principal, _names(OPERATIONS)[operation],
                   _names(PERMISSIONS)[permission], _names(PATTERN_TYPES)[pattern], host)

    def delete_acls(self, filters):
        """[(error code, {matching ACLs})] of one DeleteAcls v1, a pair per filter."""
        r = _Reader(self.call(31, 1, struct.pack(">i", len(filters)) + b"".join(map(_encode_acl, filters))))
        r.int32()

        def matching():
            r.int16(), r.string()
            resource_type, name, pattern = r.int8(), r.string(), r.int8()
            return self._acl(r, resource_type, name, pattern)

        def result():
            error, _ = r.int16(), r.string()
            return error, set(r.array(matching))
        return r.array(result)

    def describe_acls(self, f):
        """(error code, {ACLs}) of one DescribeAcls v1."""
        r = _Reader(self.call(29, 1, _encode_acl(f)))
        r.int32()
        error, _ = r.int16(), r.string()
        out = set()

        def resource():
            resource_type, name, pattern = r.int8(), r.string(), r.int8()
            out.update(r.array(lambda: self._acl(r, resource_type, name, pattern)))
        r.array(resource)
        return error, out


def any_filter(resource_type="Any", name=None, pattern="ANY", principal=None, operation="Any", permission="Any"):
    return Acl(resource_type, name, principal, operation, permission, pattern, None)


def admin_create(c, acls, broker=0):
    with Conn(c, broker, "admin") as conn:
        assert conn.create_acls(acls) == [NONE] * len(acls), acls


def admin_delete(c, filters, broker=0):
    with Conn(c, broker, "admin") as conn:
        results = conn.delete_acls(filters)
    assert [error for error, _ in results] == [NONE] * len(filters), results
    return results


def probe(c, broker, user, action):
    """`action(conn)` on a fresh connection of `user` to `broker`."""
    with Conn(c, broker, user) as conn:
        return action(conn)


def everywhere(c, user, action, expected):
    return all(probe(c, b, user, action) == expected for b in range(c.brokers))


def settle(c, user, action, expected, what):
    """Waits until `action` run as `user` gives `expected` at every broker (an ACL change has reached them all)."""
    wait_until(lambda: everywhere(c, user, action, expected), timeout=SETTLE_S, interval=0.1, what=what)


def describe(topic):
    return lambda conn: conn.describe_error(topic)


def produce_at_leader(c, user, topic, value=None):
    with Conn(c, c.leader(topic, 0), user) as conn:
        return conn.produce(topic, value)


# --- clients --------------------------------------------------------------------------------------------------------


def client_config(c, user, **extra):
    return {**librdkafka_config(c, "sasl_plaintext", user, USERS[user], MECHANISM), **extra}


def confluent_produce(c, user, topic, values, idempotent=False, timeout_s=20):
    """(values delivered, delivery errors, client errors) of a confluent-kafka producer writing `values` to
    partition 0 of `topic`."""
    delivered, errors, client_errors = [], [], []
    producer = confluent_kafka.Producer(client_config(
        c, user, **{"acks": "all", "enable.idempotence": idempotent, "message.timeout.ms": timeout_s * 1000,
                    "error_cb": client_errors.append}))
    for v in values:
        producer.produce(topic, v, partition=0,
                         on_delivery=lambda err, msg: errors.append(err) if err else delivered.append(msg.value()))
    producer.flush(timeout_s + 10)
    return delivered, errors, client_errors


def confluent_consume(c, user, topic, group, count, timeout_s=20):
    """(values, errors) of a confluent-kafka consumer in `group` subscribed to `topic`, which polls until it has
    `count` records, an authorization error or the timeout; it commits nothing."""
    client_errors = []
    consumer = confluent_kafka.Consumer(client_config(
        c, user, **{"group.id": group, "auto.offset.reset": "earliest", "enable.auto.commit": False,
                    "error_cb": client_errors.append}))
    values, errors = [], []
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + timeout_s
        while len(values) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                if client_errors:
                    errors += client_errors
                    break
                continue
            if msg.error():
                errors.append(msg.error())
                if msg.error().code() in (KafkaError.GROUP_AUTHORIZATION_FAILED, KafkaError.TOPIC_AUTHORIZATION_FAILED):
                    break
                continue
            values.append(msg.value())
    finally:
        consumer.close()
    return values, errors + client_errors


def read_all(c, topic, isolation="read_uncommitted", expected=None, timeout_s=30):
    """Every record of partition 0 of `topic`, read by admin from the start, and the high watermark. With
    `expected`, reads until that many records arrive (read_committed skips the markers the watermark counts)."""
    consumer = confluent_kafka.Consumer(client_config(
        c, "admin", **{"group.id": f"acl-reader-{uuid.uuid4()}", "enable.auto.commit": False,
                       "isolation.level": isolation}))
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)
        consumer.assign([TopicPartition(topic, 0, 0)])
        values = []
        deadline = time.monotonic() + timeout_s
        want = high if expected is None else expected
        while len(values) < want and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                values.append(msg.value())
        return values, high
    finally:
        consumer.close()


def acl_tool(c, *args, broker=None):
    """Kafka's kafka-acls.sh (AclCommand) as admin, bootstrapped to every broker or to `broker` only."""
    bootstrap = c.sasl_plaintext_bootstrap() if broker is None else c.sasl_plaintext_bootstrap().split(",")[broker]
    run = kafka_tool("org.apache.kafka.tools.AclCommand", "--bootstrap-server", bootstrap, "--command-config",
                     os.path.join(c.data, "acl-admin.properties"), *args)
    assert run.returncode == 0, f"kafka-acls {' '.join(args)} failed:\n{run.stdout}\n{run.stderr}"
    return run.stdout


_RESOURCE = re.compile(r"ResourcePattern\(resourceType=(\w+), name=(.*?), patternType=(\w+)\)")
_ENTRY = re.compile(r"\(principal=([^,]+), host=([^,]+), operation=(\w+), permissionType=(\w+)\)")


def listed_acls(text):
    """{(resource type, name, pattern type, principal, host, operation, permission)} of kafka-acls --list output."""
    out, resource = set(), None
    for line in text.splitlines():
        m = _RESOURCE.search(line)
        if m:
            resource = m.groups()
            continue
        m = _ENTRY.search(line)
        if m and resource:
            out.add((*resource, *m.groups()))
    return out


def zk_acls(c, path):
    """{(principal, host, operation, permissionType)} of a ZooKeeper ACL node, or None when it does not exist."""
    zk = c.zookeeper()
    try:
        if not zk.exists(path):
            return None
        data, _ = zk.get(path)
    finally:
        zk.stop()
    node = json.loads(data)
    assert node["version"] == 1, node
    return {(a["principal"], a["host"], a["operation"], a["permissionType"]) for a in node["acls"]}


def zk_exists(c, path):
    zk = c.zookeeper()
    try:
        return zk.exists(path) is not None
    finally:
        zk.stop()


def zk_changes(c, path):
    """The data of every change notification under `path`."""
    zk = c.zookeeper()
    try:
        return [zk.get(f"{path}/{child}")[0].decode() for child in zk.get_children(path)
                if child.startswith("acl_changes_")]
    finally:
        zk.stop()


# --- the client programs, built while the cluster starts -------------------------------------------------------------


def _build_franz(out_dir):
    binary = os.path.join(out_dir, "franz-acl")
    built = subprocess.run([GO, "build", "-o", binary, "."], cwd=FRANZ_ACL, capture_output=True, text=True,
                           timeout=600, env={**os.environ, "GOPROXY": "off"})
    if built.returncode != 0:
        pytest.fail(f"building tests/go/franz-acl failed (run scripts/install-deps):\n{built.stderr}")
    return binary


def _install_kafkajs(out_dir):
    """tests/js/kafkajs-secure's locked kafkajs, installed from npm's cache into `out_dir` beside acl.js."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm are not installed; run scripts/install-deps")
    for name in ("package.json", "package-lock.json", "acl.js"):
        shutil.copy(os.path.join(KAFKAJS_PACKAGE, name), out_dir)
    installed = subprocess.run(["npm", "ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=out_dir,
                               capture_output=True, text=True, timeout=300)
    if installed.returncode != 0:
        pytest.fail(f"npm ci of tests/js/kafkajs-secure failed (run scripts/install-deps):\n{installed.stderr}")
    return os.path.join(out_dir, "acl.js")


@pytest.fixture(scope="module")
def programs():
    """{"java": class path, "franz": binary, "kafkajs": script} as futures, started before the cluster."""
    scratch = tempfile.mkdtemp(prefix="ferry-acl-programs-")
    builds = {"java": lambda d: java_checks_classpath(JAVA_VERSION, d), "franz": _build_franz,
              "kafkajs": _install_kafkajs}
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(builds))
    futures = {}
    for name, build in builds.items():
        os.makedirs(os.path.join(scratch, name))
        futures[name] = pool.submit(build, os.path.join(scratch, name))
    try:
        yield futures
    finally:
        pool.shutdown(wait=True)
        shutil.rmtree(scratch, ignore_errors=True)


def _built(programs, name):
    return programs[name].result(timeout=600)


def run_java(c, programs, steps, timeout=180):
    """Runs ferry.AclClients with one properties file per step and returns {step name: its JSON line}. A step is a
    dict: "user", then the ferry.* keys without the prefix ("name", "step", "topic", ...)."""
    classpath = _built(programs, "java")
    with tempfile.TemporaryDirectory() as scratch:
        files = []
        for i, step in enumerate(steps):
            path = os.path.join(scratch, f"step-{i}.properties")
            config = client_config(c, step["user"])
            java_properties(path, config)
            lines = [f"bootstrap.servers={config['bootstrap.servers']}"]
            lines += [f"ferry.{key}={value}" for key, value in step.items() if key != "user"]
            with open(path, "a") as f:
                f.write("\n".join(lines) + "\n")
            files.append(path)
        cmd = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
               "-cp", classpath, "ferry.AclClients", *files]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    out = {}
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            parsed = json.loads(line)
            if parsed.get("check") == "step":
                out[parsed["name"]] = parsed
    assert run.returncode == 0 and len(out) == len(steps), \
        f"ferry.AclClients: exit status {run.returncode}\n{run.stdout}\n{run.stderr[-6000:]}"
    return out


def _run_cases(cmd, cases, timeout=120, cwd=None):
    """Runs a franz-acl or acl.js program on `cases` and returns {case: its JSON line}."""
    with tempfile.TemporaryDirectory() as scratch:
        spec = os.path.join(scratch, "cases.json")
        with open(spec, "w") as f:
            json.dump(cases, f)
        run = subprocess.run([*cmd, spec], capture_output=True, text=True, timeout=timeout, cwd=cwd)
    out = {}
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            parsed = json.loads(line)
            out[parsed["case"]] = parsed
    assert run.returncode == 0 and len(out) == len(cases), \
        f"{' '.join(cmd)}: exit status {run.returncode}\n{run.stdout}\n{run.stderr[-6000:]}"
    return out


def program_case(c, name, user, topic, count=1, **extra):
    return {"name": name, "bootstrap": c.sasl_plaintext_bootstrap(), "mechanism": MECHANISM, "username": user,
            "password": USERS[user], "action": "produce", "topic": topic, "count": count, "timeout_ms": 30000,
            **extra}


# --- the cluster --------------------------------------------------------------------------------------------------


def _logs_in(c, broker, user):
    try:
        probe(c, broker, user, lambda conn: None)
        return True
    except (LoginFailed, OSError):
        return False


@pytest.fixture(scope="module")
def acls(programs):
    with started_cluster(3, secure=True, overrides=OVERRIDES) as c:
        java_properties(os.path.join(c.data, "acl-admin.properties"), client_config(c, "admin"))
        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
            list(pool.map(lambda user: make_scram_user(c, user, USERS[user]), USERS))
        for user in USERS:
            for b in range(c.brokers):
                wait_until(lambda: _logs_in(c, b, user), timeout=30, what=f"{user}'s login at broker {b}")
        admin = AdminClient(client_config(c, "admin"))
        for name, future in admin.create_topics([NewTopic(t, 1, 3) for t in TOPICS]).items():
            future.result(60)
        for t in TOPICS:
            c.leader(t, 0)
        yield c


# --- the tests ----------------------------------------------------------------------------------------------------


def test_kafka_acls_producer_grant_lets_alice_write_and_refuses_bob(acls, programs):
    c = acls
    acl_tool(c, "--add", "--allow-principal", "User:alice", "--producer", "--topic", T_PRODUCE)
    settle(c, "alice", describe(T_PRODUCE), NONE, "alice's grant at every broker")
    assert listed_acls(acl_tool(c, "--list", "--topic", T_PRODUCE)) == {
        ("TOPIC", T_PRODUCE, "LITERAL", "User:alice", "*", op, "ALLOW") for op in ("WRITE", "DESCRIBE", "CREATE")}
    # Kafka's ZooKeeper layout: a literal topic ACL lives at /kafka-acl/Topic/<name>.
    assert zk_acls(c, f"/kafka-acl/Topic/{T_PRODUCE}") == {
        ("User:alice", "*", op, "Allow") for op in ("Write", "Describe", "Create")}
    # ... and its change notification is "Topic:<name>" (Kafka writes the type in capitals, reads any case).
    changes = zk_changes(c, "/kafka-acl-changes")
    assert any(d.partition(":")[0].upper() == "TOPIC" and d.partition(":")[2] == T_PRODUCE for d in changes), changes

    # alice writes: confluent-kafka (idempotent: Write on a topic is enough for InitProducerId) and Java.
    alice_confluent = [b"alice-confluent-%d" % i for i in range(10)]
    delivered, errors, client_errors = confluent_produce(c, "alice", T_PRODUCE, alice_confluent, idempotent=True)
    assert (delivered, errors, client_errors) == (alice_confluent, [], []), (errors, client_errors)
    steps = run_java(c, programs, [
        {"user": "alice", "name": "alice", "step": "produce", "topic": T_PRODUCE, "count": 10, "prefix": "alice-java",
         "idempotent": "true"},
        {"user": "bob", "name": "bob", "step": "produce", "topic": T_PRODUCE, "count": 1, "prefix": "bob-java"}])
    assert steps["alice"]["ok"] and steps["alice"]["sent"] == 10, steps["alice"]
    assert not steps["bob"]["ok"] and steps["bob"]["sent"] == 0, steps["bob"]
    assert "org.apache.kafka.common.errors.TopicAuthorizationException" in steps["bob"]["error_classes"], steps["bob"]

    # bob is refused: by confluent-kafka's producer, and by the broker at the partition's leader.
    delivered, errors, _ = confluent_produce(c, "bob", T_PRODUCE, [b"bob-confluent-%d" % i for i in range(3)])
    assert delivered == [] and len(errors) == 3, errors
    assert {e.code() for e in errors} == {KafkaError.TOPIC_AUTHORIZATION_FAILED}, errors
    assert produce_at_leader(c, "bob", T_PRODUCE, b"bob-raw") == TOPIC_AUTHORIZATION_FAILED

    # Nothing of bob's was written: the log holds alice's 20 records and nothing else.
    values, high = read_all(c, T_PRODUCE)
    assert high == 20, high
    assert sorted(values) == sorted(alice_confluent + [b"alice-java-%d" % i for i in range(10)]), values


def test_consumer_needs_read_on_its_group(acls, programs):
    c = acls
    values = [b"group-%d" % i for i in range(5)]
    assert confluent_produce(c, "admin", T_GROUP, values)[0] == values
    acl_tool(c, "--add", "--allow-principal", "User:alice", "--consumer", "--topic", T_GROUP, "--group",
             "acl-g-allowed")
    settle(c, "alice", describe(T_GROUP), NONE, "alice's topic grant at every broker")
    settle(c, "alice", lambda conn: conn.find_coordinator("acl-g-allowed") != GROUP_AUTHORIZATION_FAILED, True,
           "alice's group grant at every broker")

    # confluent-kafka: refused in a group without READ, served in the granted one (it commits nothing).
    got, errors = confluent_consume(c, "alice", T_GROUP, "acl-g-denied", 5)
    assert got == [] and KafkaError.GROUP_AUTHORIZATION_FAILED in {e.code() for e in errors}, errors
    got, errors = confluent_consume(c, "alice", T_GROUP, "acl-g-allowed", 5)
    assert sorted(got) == values, errors

    steps = run_java(c, programs, [
        {"user": "alice", "name": "denied", "step": "consume", "topic": T_GROUP, "group": "acl-g-denied", "count": 5,
         "timeout.ms": 20000},
        {"user": "alice", "name": "allowed", "step": "consume", "topic": T_GROUP, "group": "acl-g-allowed",
         "count": 5, "timeout.ms": 30000}])
    assert not steps["denied"]["ok"] and steps["denied"]["consumed"] == [], steps["denied"]
    assert "org.apache.kafka.common.errors.GroupAuthorizationException" in steps["denied"]["error_classes"], \
        steps["denied"]
    assert steps["allowed"]["ok"] and sorted(steps["allowed"]["consumed"]) == [v.decode() for v in values], \
        steps["allowed"]
    # bob, with no ACL on the group, may not even look up its coordinator (group Describe).
    with Conn(c, 0, "bob") as conn:
        assert conn.find_coordinator("acl-g-allowed") == GROUP_AUTHORIZATION_FAILED


def test_transactional_producer_needs_write_on_its_transactional_id(acls, programs):
    c = acls
    acl_tool(c, "--add", "--allow-principal", "User:alice", "--producer", "--topic", T_TXN, "--transactional-id",
             "acl-txn-ok")
    settle(c, "alice", describe(T_TXN), NONE, "alice's topic grant at every broker")
    settle(c, "alice", lambda conn: conn.find_coordinator("acl-txn-ok", 1) != TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
           True, "alice's transactional id grant at every broker")
    assert listed_acls(acl_tool(c, "--list", "--transactional-id", "acl-txn-ok")) == {
        ("TRANSACTIONAL_ID", "acl-txn-ok", "LITERAL", "User:alice", "*", op, "ALLOW") for op in ("WRITE", "DESCRIBE")}

    steps = run_java(c, programs, [
        {"user": "alice", "name": "denied", "step": "transaction", "topic": T_TXN,
         "transactional.id": "acl-txn-denied", "count": 5, "prefix": "denied"},
        {"user": "alice", "name": "granted", "step": "transaction", "topic": T_TXN, "transactional.id": "acl-txn-ok",
         "count": 10, "prefix": "committed"}])
    denied = steps["denied"]
    assert not denied["ok"] and denied["stage"] == "initTransactions", denied
    assert "org.apache.kafka.common.errors.TransactionalIdAuthorizationException" in denied["error_classes"], denied
    assert steps["granted"]["ok"] and steps["granted"]["stage"] == "committed", steps["granted"]

    producer = confluent_kafka.Producer(client_config(c, "alice", **{"transactional.id": "acl-txn-denied"}))
    with pytest.raises(confluent_kafka.KafkaException) as refused:
        producer.init_transactions(30)
    assert refused.value.args[0].code() == KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, refused.value

    # The committed transaction is readable; the refused producers wrote nothing.
    values, _ = read_all(c, T_TXN, isolation="read_committed", expected=10)
    assert sorted(values) == sorted(b"committed-%d" % i for i in range(10)), values
    wait_until(lambda: read_all(c, T_TXN, expected=0)[1] == 11, timeout=SETTLE_S,
               what="a high watermark of 11: the ten records and the commit marker")


def test_prefixed_acls(acls):
    c = acls
    acl_tool(c, "--add", "--allow-principal", "User:alice", "--producer", "--topic", "pfx-",
             "--resource-pattern-type", "prefixed")
    settle(c, "alice", describe(T_PREFIXED[0]), NONE, "alice's prefixed grant at every broker")
    assert listed_acls(acl_tool(c, "--list", "--topic", "pfx-", "--resource-pattern-type", "prefixed")) == {
        ("TOPIC", "pfx-", "PREFIXED", "User:alice", "*", op, "ALLOW") for op in ("WRITE", "DESCRIBE", "CREATE")}
    # Kafka's ZooKeeper layout for PREFIXED patterns, and the change notification in the extended form.
    assert zk_acls(c, "/kafka-acl-extended/prefixed/Topic/pfx-") == {
        ("User:alice", "*", op, "Allow") for op in ("Write", "Describe", "Create")}
    assert zk_acls(c, "/kafka-acl/Topic/pfx-") is None
    changes = [json.loads(d) for d in zk_changes(c, "/kafka-acl-extended-changes")]
    assert any(ch.get("name") == "pfx-" and str(ch.get("patternType")).upper() == "PREFIXED"
               and str(ch.get("resourceType")).upper() == "TOPIC" for ch in changes), changes

    for topic in T_PREFIXED:
        assert produce_at_leader(c, "alice", topic) == NONE, topic
    assert produce_at_leader(c, "alice", T_NOT_PREFIXED) == TOPIC_AUTHORIZATION_FAILED
    delivered, errors, _ = confluent_produce(c, "alice", T_PREFIXED[1], [b"prefixed"], idempotent=True)
    assert delivered == [b"prefixed"], errors
    # The prefixed CREATE lets alice's Metadata create a topic under the prefix.
    with Conn(c, 0, "alice") as conn:
        assert conn.metadata(["pfx-created"], auto_create=True)["pfx-created"] != TOPIC_AUTHORIZATION_FAILED
        assert conn.metadata(["pfxnot-created"], auto_create=True)["pfxnot-created"] == TOPIC_AUTHORIZATION_FAILED
    admin = AdminClient(client_config(c, "admin"))
    wait_until(lambda: "pfx-created" in admin.list_topics(timeout=10).topics, what="pfx-created, auto-created")


def test_deny_beats_allow(acls):
    c = acls
    # User:* may Describe, alice may not: the DENY wins over the wildcard ALLOW that also names her.
    acl_tool(c, "--add", "--allow-principal", "User:*", "--deny-principal", "User:alice", "--operation", "Describe",
             "--topic", T_DENY_ALL_BUT)
    settle(c, "bob", describe(T_DENY_ALL_BUT), NONE, "the wildcard grant at every broker")
    settle(c, "alice", describe(T_DENY_ALL_BUT), TOPIC_AUTHORIZATION_FAILED, "alice's DENY at every broker")
    assert listed_acls(acl_tool(c, "--list", "--topic", T_DENY_ALL_BUT)) == {
        ("TOPIC", T_DENY_ALL_BUT, "LITERAL", "User:*", "*", "DESCRIBE", "ALLOW"),
        ("TOPIC", T_DENY_ALL_BUT, "LITERAL", "User:alice", "*", "DESCRIBE", "DENY")}
    listing = AdminClient(client_config(c, "alice")).list_topics(T_DENY_ALL_BUT, timeout=10)
    assert listing.topics[T_DENY_ALL_BUT].error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, listing.topics

    # The same principal: ALLOW All and DENY Write for carol; she may describe the topic but not write to it.
    admin_create(c, [Acl("Topic", T_DENY_SAME, "User:carol", "All"),
                     Acl("Topic", T_DENY_SAME, "User:carol", "Write", "Deny")], broker=1)
    # Both ACLs are in the resource's one node: once the ALLOW shows, so does the DENY.
    settle(c, "carol", describe(T_DENY_SAME), NONE, "carol's grant at every broker")
    assert produce_at_leader(c, "carol", T_DENY_SAME) == TOPIC_AUTHORIZATION_FAILED
    delivered, errors, _ = confluent_produce(c, "carol", T_DENY_SAME, [b"carol"])
    assert delivered == [] and [e.code() for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED], errors


def test_super_user_needs_no_acls(acls):
    c = acls
    topic = "acl-super"
    with Conn(c, 0, "admin") as conn:
        error, found = conn.describe_acls(any_filter(name=topic))
    assert (error, found) == (NONE, set())
    admin = AdminClient(client_config(c, "admin"))
    admin.create_topics([NewTopic(topic, 1, 3)])[topic].result(60)
    c.leader(topic, 0)
    values = [b"super-%d" % i for i in range(10)]
    assert confluent_produce(c, "admin", topic, values, idempotent=True)[0] == values
    producer = confluent_kafka.Producer(client_config(c, "admin", **{"transactional.id": "acl-super-txn"}))
    producer.init_transactions(60)
    producer.begin_transaction()
    producer.produce(topic, b"super-txn", partition=0)
    producer.commit_transaction(60)
    got, errors = confluent_consume(c, "admin", topic, "acl-super-group", 11)
    assert sorted(got) == sorted(values + [b"super-txn"]), errors
    config = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, topic)])
    assert "retention.ms" in list(config.values())[0].result(30)
    # The brokers' own principal is a super user too: the replicas follow (a follower's Fetch needs ClusterAction).
    wait_until(lambda: len(admin.list_topics(topic, timeout=10).topics[topic].partitions[0].isrs) == 3,
               what=f"{topic}'s three replicas in sync")
    # The same requests from a user without ACLs are refused, so the authorizer is on.
    with Conn(c, c.leader(topic, 0), "carol") as conn:
        assert conn.describe_error(topic) == TOPIC_AUTHORIZATION_FAILED
        assert conn.produce(topic) == TOPIC_AUTHORIZATION_FAILED
    admin.delete_topics([topic])[topic].result(60)
    wait_until(lambda: topic not in admin.list_topics(timeout=10).topics, what=f"{topic} deleted")


def test_acl_added_on_one_broker_applies_on_the_others_within_a_second(acls):
    c = acls
    # alice's connections to every broker stay open: a broker's decisions cached per connection must follow too.
    conns = [Conn(c, b, "alice") for b in range(c.brokers)]
    try:
        assert [conn.describe_error(T_PROPAGATE) for conn in conns] == [TOPIC_AUTHORIZATION_FAILED] * c.brokers
        with Conn(c, 0, "admin") as admin:  # only broker 0 hears of the change
            assert admin.create_acls([Acl("Topic", T_PROPAGATE, "User:alice", "Describe")]) == [NONE]
            added = time.monotonic()
        seen = {}
        while len(seen) < c.brokers and time.monotonic() < added + 10:
            for b, conn in enumerate(conns):
                if b not in seen and conn.describe_error(T_PROPAGATE) == NONE:
                    seen[b] = time.monotonic() - added
            time.sleep(0.01)
    finally:
        for conn in conns:
            conn.close()
    print(f"the ACL applied after {seen} s (broker: seconds)")
    assert sorted(seen) == list(range(c.brokers)), f"applied only at {seen} after 10 s"
    assert max(seen.values()) < 1.0, f"seconds until the ACL applied, per broker: {seen}"


def test_removed_acl_stops_applying_everywhere_within_a_second(acls):
    c = acls
    acl_tool(c, "--add", "--allow-principal", "User:alice", "--producer", "--topic", T_REMOVE, broker=0)
    settle(c, "alice", describe(T_REMOVE), NONE, "alice's grant at every broker")
    leader = c.leader(T_REMOVE, 0)
    conns = [Conn(c, b, "alice") for b in range(c.brokers)]
    try:
        assert conns[leader].produce(T_REMOVE) == NONE
        acl_tool(c, "--remove", "--force", "--allow-principal", "User:alice", "--producer", "--topic", T_REMOVE,
                 broker=0)
        removed = time.monotonic()  # the tool has had DeleteAcls' answer: an upper bound of when it happened
        gone = {}
        while len(gone) < c.brokers and time.monotonic() < removed + 10:
            for b, conn in enumerate(conns):
                if b not in gone and conn.describe_error(T_REMOVE) == TOPIC_AUTHORIZATION_FAILED:
                    gone[b] = time.monotonic() - removed
            time.sleep(0.01)
        assert conns[leader].produce(T_REMOVE) == TOPIC_AUTHORIZATION_FAILED
    finally:
        for conn in conns:
            conn.close()
    assert sorted(gone) == list(range(c.brokers)), f"removed only at {gone} after 10 s"
    assert max(gone.values()) < 1.0, f"seconds until the removal applied, per broker: {gone}"
    assert listed_acls(acl_tool(c, "--list", "--topic", T_REMOVE)) == set()
    assert zk_acls(c, f"/kafka-acl/Topic/{T_REMOVE}") is None, "an empty ACL node is deleted"


def test_deleting_one_of_three_acls_keeps_the_other_two(acls):
    """CVE-2024-27309: after one of a resource's ACLs was deleted, only one of the remaining ones was enforced."""
    c = acls
    admin_create(c, [Acl("Topic", T_CVE, "User:*", "Describe"),
                     Acl("Topic", T_CVE, "User:bob", "Describe", "Deny"),
                     Acl("Topic", T_CVE, "User:alice", "Write")], broker=1)
    settle(c, "carol", describe(T_CVE), NONE, "the wildcard grant at every broker")
    settle(c, "bob", describe(T_CVE), TOPIC_AUTHORIZATION_FAILED, "bob's DENY at every broker")
    wait_until(lambda: produce_at_leader(c, "alice", T_CVE) == NONE, timeout=SETTLE_S, what="alice's Write")

    acl_tool(c, "--remove", "--force", "--allow-principal", "User:alice", "--operation", "Write", "--topic", T_CVE)
    wait_until(lambda: produce_at_leader(c, "alice", T_CVE) == TOPIC_AUTHORIZATION_FAILED, timeout=SETTLE_S,
               what="alice's Write gone")
    # Every broker holds the two that remain (DescribeAcls answers from the broker's own view), and enforces both.
    remaining = {Acl("Topic", T_CVE, "User:*", "Describe"), Acl("Topic", T_CVE, "User:bob", "Describe", "Deny")}
    settle(c, "admin", lambda conn: conn.describe_acls(any_filter("Topic", T_CVE, "LITERAL")), (NONE, remaining),
           "the deletion at every broker")
    for b in range(c.brokers):
        assert probe(c, b, "carol", describe(T_CVE)) == NONE, f"broker {b} lost the wildcard ALLOW"
        assert probe(c, b, "alice", describe(T_CVE)) == NONE, f"broker {b} lost the wildcard ALLOW"
        assert probe(c, b, "bob", describe(T_CVE)) == TOPIC_AUTHORIZATION_FAILED, f"broker {b} lost the DENY"
    assert zk_acls(c, f"/kafka-acl/Topic/{T_CVE}") == {("User:*", "*", "Describe", "Allow"),
                                                       ("User:bob", "*", "Describe", "Deny")}
    assert listed_acls(acl_tool(c, "--list", "--topic", T_CVE)) == {
        ("TOPIC", T_CVE, "LITERAL", "User:*", "*", "DESCRIBE", "ALLOW"),
        ("TOPIC", T_CVE, "LITERAL", "User:bob", "*", "DESCRIBE", "DENY")}


def test_metadata_hides_topics_and_refuses_auto_creation(acls):
    c = acls
    admin_create(c, [Acl("Topic", T_ALICE_ONLY, "User:alice", "Write"),
                     Acl("Topic", T_BOB_VISIBLE, "User:bob", "Describe"),
                     Acl("Topic", "acl-auto-refused", "User:bob", "Describe")], broker=2)
    settle(c, "alice", describe(T_ALICE_ONLY), NONE, "alice's grant at every broker")
    settle(c, "bob", describe(T_BOB_VISIBLE), NONE, "bob's grant at every broker")
    settle(c, "bob", describe("acl-auto-refused"), UNKNOWN_TOPIC_OR_PARTITION, "bob's Describe of a missing topic")

    # All topics: bob sees his topic and none of those he may not describe.
    for b in range(c.brokers):
        with Conn(c, b, "bob") as conn:
            shown = conn.metadata(None)
        assert shown.get(T_BOB_VISIBLE) == NONE, shown
        assert not {T_ALICE_ONLY, T_NO_ACLS, T_PRODUCE} & set(shown), f"broker {b} showed bob {sorted(shown)}"
    listing = AdminClient(client_config(c, "bob")).list_topics(timeout=10).topics
    assert T_BOB_VISIBLE in listing and T_ALICE_ONLY not in listing, sorted(listing)

    with Conn(c, 1, "bob") as conn:
        # Named: refused whether the topic exists or not (no existence leak).
        assert conn.metadata([T_ALICE_ONLY, "acl-never-made"]) == {
            T_ALICE_ONLY: TOPIC_AUTHORIZATION_FAILED, "acl-never-made": TOPIC_AUTHORIZATION_FAILED}
        # Auto-creation needs CREATE (on the cluster or the topic): Describe is not enough.
        assert conn.metadata(["acl-auto-refused"], auto_create=True) == {"acl-auto-refused": TOPIC_AUTHORIZATION_FAILED}
    assert not zk_exists(c, "/brokers/topics/acl-auto-refused")
    assert not zk_exists(c, "/brokers/topics/acl-never-made")


def _acls_of(conn, principal, *names):
    """{formatted binding} of `principal`'s ACLs on resources `names` in one broker's answer to DescribeAcls."""
    error, found = conn.describe_acls(any_filter(principal=principal))
    assert error == NONE, error
    return {f"{a.resource_type},{a.pattern},{a.name},{a.principal},{a.host},{a.operation},{a.permission}"
            for a in found if a.name in names}


def _java_binding(acl):
    """A binding of DescribeAcls by hand (wire names) in ferry.AclClients' format (Java's enum names)."""
    resource_type, pattern, name, principal, host, operation, permission = acl.split(",")
    java_operation = re.sub(r"(?<!^)(?=[A-Z])", "_", operation).upper()
    return ",".join([re.sub(r"(?<!^)(?=[A-Z])", "_", resource_type).upper(), pattern, name, principal, host,
                     java_operation, permission.upper()])


def test_java_admin_client_manages_acls_and_reports_authorized_operations(acls, programs):
    c = acls
    created = ["TOPIC,LITERAL,ops-topic,User:alice,*,READ,ALLOW",
               "TOPIC,PREFIXED,ops-,User:alice,*,WRITE,ALLOW",
               f"CLUSTER,LITERAL,{CLUSTER},User:alice,*,DESCRIBE,ALLOW",
               f"CLUSTER,LITERAL,{CLUSTER},User:alice,*,IDEMPOTENT_WRITE,ALLOW",
               "GROUP,LITERAL,ops-group,User:alice,*,READ,ALLOW",
               "GROUP,LITERAL,ops-denied,User:alice,*,READ,DENY"]
    names = ("ops-topic", "ops-", CLUSTER, "ops-group", "ops-denied")

    def held_everywhere():
        """The test's ACLs as every broker answers DescribeAcls, once they all agree (each call of the Java
        AdminClient may go to any broker)."""
        views = [probe(c, b, "admin", lambda conn: _acls_of(conn, "User:alice", *names)) for b in range(c.brokers)]
        return {_java_binding(a) for a in views[0]} if all(v == views[0] for v in views) else None

    created_step = run_java(c, programs, [
        {"user": "admin", "name": "create", "step": "create-acls", "acls": ";".join(created)}])["create"]
    assert created_step["ok"] and created_step["created"] == sorted(created), created_step
    wait_until(lambda: held_everywhere() == set(created), timeout=SETTLE_S, what="the created ACLs at every broker")

    steps = run_java(c, programs, [
        {"user": "admin", "name": "describe", "step": "describe-acls",
         "filter": "ANY,ANY,null,User:alice,null,ANY,ANY"},
        {"user": "admin", "name": "match", "step": "describe-acls",
         "filter": "TOPIC,MATCH,ops-topic,null,null,ANY,ANY"},
        {"user": "bob", "name": "bob-describe", "step": "describe-acls", "filter": "ANY,ANY,null,null,null,ANY,ANY"},
        {"user": "admin", "name": "delete", "step": "delete-acls",
         "filters": "GROUP,ANY,ops-denied,null,null,ANY,DENY"}])
    for name in ("describe", "match", "delete"):
        assert steps[name]["ok"], steps[name]
    assert set(created) <= set(steps["describe"]["bindings"]), steps["describe"]
    assert all(",User:alice," in b for b in steps["describe"]["bindings"]), steps["describe"]
    # MATCH: the literal and the prefixed pattern that apply to ops-topic.
    assert steps["match"]["bindings"] == sorted(created[:2]), steps["match"]
    assert not steps["bob-describe"]["ok"], steps["bob-describe"]
    assert "org.apache.kafka.common.errors.ClusterAuthorizationException" in steps["bob-describe"]["error_classes"]
    assert steps["delete"]["deleted"] == ["GROUP,LITERAL,ops-denied,User:alice,*,READ,DENY"], steps["delete"]
    wait_until(lambda: held_everywhere() == set(created[:-1]), timeout=SETTLE_S,
               what="the deletion at every broker")

    settle(c, "alice", describe(T_OPS), NONE, "alice's topic grant at every broker")
    settle(c, "alice", lambda conn: conn.describe_acls(any_filter())[0], NONE, "alice's cluster grant at every broker")
    settle(c, "alice", lambda conn: conn.find_coordinator("ops-group") != GROUP_AUTHORIZATION_FAILED, True,
           "alice's group grant at every broker")
    # The group exists once alice has committed an offset in it.
    consumer = confluent_kafka.Consumer(client_config(c, "alice", **{"group.id": "ops-group",
                                                                     "enable.auto.commit": False}))
    try:
        consumer.commit(offsets=[TopicPartition(T_OPS, 0, 0)], asynchronous=False)
    finally:
        consumer.close()

    steps = run_java(c, programs, [
        {"user": "admin", "name": "after", "step": "describe-acls", "filter": "GROUP,ANY,ops-denied,null,null,ANY,ANY"},
        {"user": "alice", "name": "alice", "step": "authorized-operations", "topic": T_OPS, "group": "ops-group"},
        {"user": "bob", "name": "bob", "step": "authorized-operations"},
        {"user": "admin", "name": "admin", "step": "authorized-operations", "topic": T_OPS}])
    assert steps["after"]["ok"] and steps["after"]["bindings"] == [], steps["after"]
    alice = steps["alice"]
    assert alice["ok"], alice
    assert alice["cluster"]["operations"] == ["DESCRIBE", "IDEMPOTENT_WRITE"], alice
    assert alice["topic"]["operations"] == ["DESCRIBE", "READ", "WRITE"], alice
    assert alice["group"]["operations"] == ["DESCRIBE", "READ"], alice
    # Without Cluster DESCRIBE the cluster's set is empty (KIP-430 sends 0).
    assert steps["bob"]["ok"] and steps["bob"]["cluster"]["operations"] == [], steps["bob"]
    admin = steps["admin"]
    assert admin["ok"], admin
    assert admin["cluster"]["operations"] == ["ALTER", "ALTER_CONFIGS", "CLUSTER_ACTION", "CREATE", "DESCRIBE",
                                              "DESCRIBE_CONFIGS", "IDEMPOTENT_WRITE"], admin
    assert admin["topic"]["operations"] == ["ALTER", "ALTER_CONFIGS", "CREATE", "DELETE", "DESCRIBE",
                                            "DESCRIBE_CONFIGS", "READ", "WRITE"], admin


def test_acl_apis_need_cluster_describe_and_alter(acls):
    c = acls
    with Conn(c, 2, "bob") as conn:
        assert conn.describe_acls(any_filter())[0] == CLUSTER_AUTHORIZATION_FAILED
        assert conn.create_acls([Acl("Topic", "acl-by-bob", "User:bob", "All")]) == [CLUSTER_AUTHORIZATION_FAILED]
        assert [error for error, _ in conn.delete_acls([any_filter()])] == [CLUSTER_AUTHORIZATION_FAILED]
    # Any broker answers the ACL APIs (broker 2 here), and bob's attempts changed nothing.
    with Conn(c, 2, "admin") as conn:
        error, found = conn.describe_acls(any_filter(principal="User:bob"))
    assert error == NONE and not any(a.name == "acl-by-bob" for a in found), found


def test_init_producer_id_needs_idempotent_write_or_write_on_some_topic(acls):
    c = acls
    idempotent = lambda conn: conn.init_producer_id()  # noqa: E731
    assert everywhere(c, "dave", idempotent, CLUSTER_AUTHORIZATION_FAILED)
    write = Acl("Topic", "acl-dave-anything", "User:dave", "Write")
    admin_create(c, [write])
    settle(c, "dave", idempotent, NONE, "Write on a topic allowing dave's InitProducerId")
    admin_delete(c, [write])
    settle(c, "dave", idempotent, CLUSTER_AUTHORIZATION_FAILED, "dave's Write removed")
    admin_create(c, [Acl("Cluster", CLUSTER, "User:dave", "IdempotentWrite")])
    settle(c, "dave", idempotent, NONE, "IdempotentWrite on the cluster allowing dave's InitProducerId")


def test_clients_see_the_topic_refusal_in_their_own_error_types(acls, programs):
    c = acls
    admin_create(c, [Acl("Topic", T_CLIENTS, "User:alice", "Write")])
    settle(c, "alice", describe(T_CLIENTS), NONE, "alice's grant at every broker")
    cases = [program_case(c, "alice-ok", "alice", T_CLIENTS, count=3, idempotent=True),
             program_case(c, "bob-refused", "bob", T_CLIENTS)]
    # franz-go and kafkajs run in the background meanwhile (each takes a few seconds to start).
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        franz = pool.submit(_run_cases, [_built(programs, "franz")], cases)
        script = _built(programs, "kafkajs")
        kafkajs = pool.submit(_run_cases, ["node", script], cases, cwd=os.path.dirname(script))

        # kcat (librdkafka): the produce fails with librdkafka's TOPIC_AUTHORIZATION_FAILED string.
        bob = kcat_args(client_config(c, "bob"))
        run = kcat(*bob, "-P", "-t", T_CLIENTS, "-p", "0", input=b"bob-kcat\n", check=False, timeout=60)
        stderr = run.stderr.decode(errors="replace")
        assert run.returncode != 0 and "Topic authorization failed" in stderr, stderr
        run = kcat(*bob, "-L", "-t", T_CLIENTS, check=False, timeout=60)
        assert "Topic authorization failed" in (run.stdout + run.stderr).decode(errors="replace"), run
        # confluent-kafka: delivery reports and the topic's metadata carry KafkaError.TOPIC_AUTHORIZATION_FAILED.
        delivered, errors, _ = confluent_produce(c, "bob", T_CLIENTS, [b"bob-confluent"])
        assert delivered == [] and [e.code() for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED], errors
        listing = AdminClient(client_config(c, "bob")).list_topics(T_CLIENTS, timeout=10)
        assert listing.topics[T_CLIENTS].error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, listing.topics

        franz, kafkajs = franz.result(), kafkajs.result()
    # franz-go: kerr.TopicAuthorizationFailed; alice's idempotent producer is served (Write on the topic).
    assert franz["alice-ok"]["ok"] and franz["alice-ok"]["done"] == 3, franz["alice-ok"]
    bob_franz = franz["bob-refused"]
    assert not bob_franz["ok"] and bob_franz["done"] == 0, bob_franz
    assert bob_franz["is_topic_authorization_failed"], bob_franz
    assert (bob_franz["kerr_code"], bob_franz["kerr_message"]) == (29, "TOPIC_AUTHORIZATION_FAILED"), bob_franz
    # kafkajs: a KafkaJSProtocolError of type TOPIC_AUTHORIZATION_FAILED (possibly under a retry wrapper).
    assert kafkajs["alice-ok"]["ok"] and kafkajs["alice-ok"]["done"] == 3, kafkajs["alice-ok"]
    bob_js = kafkajs["bob-refused"]
    assert not bob_js["ok"] and bob_js["done"] == 0, bob_js
    assert any(e["name"] == "KafkaJSProtocolError" and e["type"] == "TOPIC_AUTHORIZATION_FAILED" and e["code"] == 29
               for e in bob_js["errors"]), bob_js
    # Only alice's records were written.
    values, _ = read_all(c, T_CLIENTS)
    assert sorted(values) == sorted(b"%s-alice-ok-%d" % (program, i) for program in (b"franz", b"kafkajs")
                                    for i in range(3)), values


def test_denials_are_counted_and_logged(acls):
    c = acls
    leader = c.leader(T_METRIC, 0)
    before = c.metric(leader, DENIALS_METRIC, operation="Write", resource_type="Topic") or 0
    with Conn(c, leader, "bob") as conn:
        assert conn.produce(T_METRIC) == TOPIC_AUTHORIZATION_FAILED
    wait_until(lambda: (c.metric(leader, DENIALS_METRIC, operation="Write", resource_type="Topic") or 0) > before,
               timeout=10, what=f'{DENIALS_METRIC}{{operation="Write",resource_type="Topic"}} to count the denial')

    def logged():
        if any("User:bob" in line and T_METRIC in line for line in c.broker_log(leader).splitlines()):
            return True
        with Conn(c, leader, "bob") as conn:  # the log is rate-limited: deny again until a line shows
            conn.produce(T_METRIC)
        return False
    wait_until(logged, timeout=20, interval=0.5, what="a log line naming bob and the topic")


def test_no_acl_means_no_access_by_default(acls):
    c = acls
    with Conn(c, 0, "admin") as conn:
        error, found = conn.describe_acls(any_filter("Topic", T_NO_ACLS, "MATCH"))
        assert (error, found) == (NONE, set())
        assert conn.describe_error(T_NO_ACLS) == NONE
    for b in range(c.brokers):
        assert probe(c, b, "alice", describe(T_NO_ACLS)) == TOPIC_AUTHORIZATION_FAILED, f"broker {b}"
    assert produce_at_leader(c, "alice", T_NO_ACLS) == TOPIC_AUTHORIZATION_FAILED
    delivered, errors, _ = confluent_produce(c, "alice", T_NO_ACLS, [b"alice-default"])
    assert delivered == [] and [e.code() for e in errors] == [KafkaError.TOPIC_AUTHORIZATION_FAILED], errors
    assert read_all(c, T_NO_ACLS)[1] == 0



def test_the_admin_calls_of_strimzis_user_operator_round_trip(acls, programs):
    """What Strimzi's User Operator does for a KafkaUser, with Java's AdminClient: its SCRAM credential
    (alterUserScramCredentials), its quotas (alterClientQuotas, describeClientQuotas) and its ACLs (createAcls,
    describeAcls, deleteAcls), each read back; only a principal with Alter on the cluster may make them."""
    c = acls
    user, password = "erin", "erin-secret"
    entity, client_entity = f"user={user}", f"user={user},client-id=<default>"
    acl = f"TOPIC,PREFIXED,erin-,User:{user},*,WRITE,ALLOW"
    acl_filter = f"ANY,ANY,null,User:{user},null,ANY,ANY"
    scram = {"step": "alter-scram", "scram.user": user, "password": password}
    refused = run_java(c, programs, [
        {"user": "bob", "name": "bob-scram", **scram},
        {"user": "bob", "name": "bob-quotas", "step": "alter-quotas", "entity": entity, "ops": "producer_byte_rate=1"},
    ])
    assert not refused["bob-scram"]["ok"] and not refused["bob-quotas"]["ok"], refused
    assert all("org.apache.kafka.common.errors.ClusterAuthorizationException" in step["error_classes"]
               for step in refused.values()), refused

    steps = run_java(c, programs, [
        {"user": "admin", "name": "scram", **scram},
        {"user": "admin", "name": "scram-read", "step": "describe-scram", "scram.user": user},
        {"user": "admin", "name": "quotas", "step": "alter-quotas", "entity": entity,
         "ops": "producer_byte_rate=1048576,consumer_byte_rate=2097152,request_percentage=55,"
                "controller_mutation_rate=10"},
        {"user": "admin", "name": "client-quotas", "step": "alter-quotas", "entity": client_entity,
         "ops": "consumer_byte_rate=4096"},
        {"user": "admin", "name": "quota-removed", "step": "alter-quotas", "entity": entity,
         "ops": "consumer_byte_rate="},
        {"user": "admin", "name": "quotas-read", "step": "describe-quotas", "entity": entity},
        {"user": "admin", "name": "client-quotas-read", "step": "describe-quotas", "entity": client_entity},
        {"user": "admin", "name": "acls", "step": "create-acls", "acls": acl},
        {"user": "admin", "name": "acls-read", "step": "describe-acls", "filter": acl_filter},
        {"user": "admin", "name": "acls-deleted", "step": "delete-acls", "filters": acl_filter},
        {"user": "admin", "name": "acls-gone", "step": "describe-acls", "filter": acl_filter},
    ])
    assert all(step["ok"] for step in steps.values()), steps
    assert steps["scram-read"]["credentials"] == [{"mechanism": "SCRAM-SHA-512", "iterations": 4096}], steps
    assert steps["quotas-read"]["entities"] == [
        {"entity": {"user": user}, "quotas": {"producer_byte_rate": 1048576.0, "request_percentage": 55.0,
                                              "controller_mutation_rate": 10.0}}], steps
    assert steps["client-quotas-read"]["entities"] == [
        {"entity": {"user": user, "client-id": "<default>"}, "quotas": {"consumer_byte_rate": 4096.0}}], steps
    assert steps["acls-read"]["bindings"] == [acl] and steps["acls-deleted"]["deleted"] == [acl], steps
    assert steps["acls-gone"]["bindings"] == [], steps

    # Kafka's layout, so ZooKeeper-mode tools read the same: the credential and the quota in /config/users/erin.
    zk = c.zookeeper()
    try:
        data, _ = zk.get(f"/config/users/{user}")
        client_data, _ = zk.get(f"/config/users/{user}/clients/<default>")
    finally:
        zk.stop()
    config = json.loads(data)["config"]
    assert config["producer_byte_rate"] == "1048576" and "consumer_byte_rate" not in config, config
    assert config["request_percentage"] == "55.0" and config["controller_mutation_rate"] == "10.0", config
    assert "SCRAM-SHA-512" in config and password not in data.decode(), config
    assert json.loads(client_data)["config"] == {"consumer_byte_rate": "4096"}
    # ... and the credential logs in at every broker.
    for b in range(c.brokers):
        login = librdkafka_config(c, "sasl_plaintext", user, password, MECHANISM)
        login["bootstrap.servers"] = c.sasl_plaintext_bootstrap().split(",")[b]
        wait_until(lambda: _lists_topics(login), timeout=SETTLE_S, what=f"{user}'s login at broker {b}")


def _lists_topics(config):
    try:
        AdminClient(config).list_topics(timeout=5)
        return True
    except confluent_kafka.KafkaException:
        return False


def test_a_transactional_batch_without_a_transactional_id_is_refused(acls):
    """CVE-2018-17196: Write on a topic does not let a producer write transactional batches without naming (and
    being allowed Write on) a transactional id; Kafka refuses the whole request, even a super user's."""
    c = acls
    leader = c.leader(T_PRODUCE, 0)
    batch = record_batch([b"cve-2018-17196"], producer_id=4242, producer_epoch=0, base_sequence=0, transactional=True)
    with Conn(c, leader, "admin") as conn:
        assert conn.produce(T_PRODUCE, batch=batch) == TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        # Written as a plain batch instead, the same record is accepted: only the transactional flag was refused.
        assert conn.produce(T_PRODUCE, batch=record_batch([b"cve-2018-17196-plain"])) == NONE
    consumer = confluent_kafka.Consumer(client_config(c, "admin", **{
        "group.id": f"cve-{uuid.uuid4()}", "auto.offset.reset": "earliest", "enable.auto.commit": False}))
    try:
        consumer.assign([TopicPartition(T_PRODUCE, 0, 0)])
        seen = []
        deadline = time.monotonic() + 30
        while b"cve-2018-17196-plain" not in seen and time.monotonic() < deadline:
            seen += [m.value() for m in consumer.consume(100, 1) if not m.error()]
    finally:
        consumer.close()
    assert b"cve-2018-17196-plain" in seen and b"cve-2018-17196" not in seen, seen
