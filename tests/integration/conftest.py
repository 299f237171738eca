"""Fixtures for integration tests: a real ZooKeeper and real ferry-broker processes started with
scripts/local-cluster (the same tool users run), on free loopback ports, in a temporary directory.

Every cluster is stopped at the end of its test module, and the broker logs are checked for sanitizer
reports: the debug build runs with AddressSanitizer and UndefinedBehaviorSanitizer, the tsan build
(FERRY_BUILD_DIR=build/tsan) with ThreadSanitizer, whose brokers read the project's suppressions file.
"""
import contextlib
import glob
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.request

import pytest

SOURCE_DIR = os.environ.get("FERRY_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD_DIR = os.environ.get("FERRY_BUILD_DIR", os.path.join(SOURCE_DIR, "build", "debug"))
LOCAL_CLUSTER = os.path.join(SOURCE_DIR, "scripts", "local-cluster")
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:", "WARNING: ThreadSanitizer",
                     "FATAL: ThreadSanitizer")

# Brokers inherit this environment (through scripts/local-cluster). A ThreadSanitizer build reads the project's
# suppressions for third-party code unless the caller named a suppressions file; other builds ignore it.
_TSAN_SUPPRESSIONS = os.path.join(SOURCE_DIR, "cmake", "tsan_suppressions.txt")
if "suppressions=" not in os.environ.get("TSAN_OPTIONS", ""):
    os.environ["TSAN_OPTIONS"] = f"suppressions={_TSAN_SUPPRESSIONS} {os.environ.get('TSAN_OPTIONS', '')}".strip()


def _port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _free_base(brokers, secure=False, schema_registry=False):
    """A base port P with P..P+n-1, P+1000..P+1000+n-1 and P-1 (ZooKeeper) all free; with `secure`, also
    P+2000.. and P+3000.. (local-cluster --secure's SSL and SASL_PLAINTEXT listeners); with `schema_registry`,
    P+4000.. (the brokers' schema registry listeners)."""
    offsets = (0, 1000) + ((2000, 3000) if secure else ()) + ((4000,) if schema_registry else ())
    for _ in range(200):
        # Below the kernel's ephemeral range (32768 and up here), so no client socket takes a broker's port
        # while the broker restarts.
        base = random.randrange(20000, 31500 - max(offsets), 10)
        ports = [base - 1] + [base + o + i for o in offsets for i in range(brokers)]
        if all(_port_free(p) for p in ports):
            return base
    raise RuntimeError("no free port range found on 127.0.0.1")


def wait_until(condition, timeout=30.0, interval=0.05, what="condition"):
    """Polls `condition` until it returns a truthy value, which is returned; fails the test on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class BackgroundLoop:
    """A load that runs on a thread for the life of a with block: run(), which by default repeats step() until the
    block ends (stopping()), then the thread is joined (within join_seconds) and close() runs."""

    join_seconds = 30

    def __init__(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self.run, daemon=True)

    def step(self):
        raise NotImplementedError

    def close(self):
        """Releases what the loop used, after its thread has ended."""

    def stopping(self):
        return self._stop.is_set()

    def run(self):
        while not self._stop.is_set():
            self.step()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(self.join_seconds)
        self.close()


class Cluster:
    def __init__(self, brokers, overrides=(), racks=(), external_host=None, log_dirs=1, secure=False,
                 schema_registry=False):
        self.brokers = brokers
        self.overrides = list(overrides)
        self.racks = list(racks)  # broker i gets broker.rack racks[i % len(racks)]
        self.external_host = external_host  # a second listener, EXTERNAL, on this address (same ports)
        self.log_dirs = log_dirs  # per broker: broker-<i>/data, data1, ...
        # local-cluster --secure: INTERNAL (SASL_SSL) on the base ports, SSL on +2000, SASL_PLAINTEXT on +3000
        self.secure = secure
        self.schema_registry = schema_registry  # broker i's registry on P+4000+i
        self.base_port = _free_base(brokers, secure, schema_registry)
        self.zk_port = self.base_port - 1
        self.data = tempfile.mkdtemp(prefix="ferry-it-")
        self.bootstrap = ",".join(f"127.0.0.1:{self.base_port + i}" for i in range(brokers))

    def run(self, *args, timeout=180, check=True):
        cmd = [LOCAL_CLUSTER, "--data", self.data, *args]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def up(self):
        args = ["up", "--brokers", str(self.brokers), "--base-port", str(self.base_port), "--zk-port",
                str(self.zk_port), "--build-dir", BUILD_DIR, "--timeout", "120"]
        for o in self.overrides:
            args += ["--override", o]
        if self.racks:
            args += ["--racks", ",".join(self.racks)]
        if self.external_host:
            args += ["--external-host", self.external_host]
        if self.log_dirs != 1:
            args += ["--log-dirs", str(self.log_dirs)]
        if self.secure:
            args += ["--secure"]
        if self.schema_registry:
            args += ["--registry-port", str(self.base_port + 4000)]
        out = self.run(*args)
        assert out.stdout.strip().splitlines()[-1] == self.bootstrap

    def down(self):
        self.run("down", check=False)

    def kill(self, broker):
        self.run("kill", str(broker))
        self._wait_ports_released(broker)

    def stop(self, broker):
        self.run("stop", str(broker))
        self._wait_ports_released(broker)

    def _wait_ports_released(self, broker):
        """local-cluster returns once the broker's main thread has exited; its other threads may still be
        unmapping memory (slow for a large ASan process on a busy machine) and holding the listening
        sockets, which a `start` right after would find in use."""
        def released(port):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return False
            except OSError:
                return True
        ports = (self.base_port + broker, self.base_port + 1000 + broker)
        wait_until(lambda: all(released(p) for p in ports), timeout=60, interval=0.05,
                   what=f"broker {broker}'s ports to be released")

    def start(self, broker):
        self.run("start", str(broker), "--timeout", "120")

    def address(self, broker):
        return f"127.0.0.1:{self.base_port + broker}"

    def registry_url(self, broker):
        return f"{'https' if self.secure else 'http'}://127.0.0.1:{self.base_port + 4000 + broker}"

    @property
    def tls_dir(self):
        """local-cluster --secure's certificates: ca.pem, broker.pem, client.{key,crt,pem}, broker-password."""
        return os.path.join(self.data, "tls")

    def ssl_bootstrap(self):
        return ",".join(f"localhost:{self.base_port + 2000 + i}" for i in range(self.brokers))

    def sasl_plaintext_bootstrap(self):
        return ",".join(f"127.0.0.1:{self.base_port + 3000 + i}" for i in range(self.brokers))

    def sasl_ssl_bootstrap(self):
        return ",".join(f"localhost:{self.base_port + i}" for i in range(self.brokers))

    def broker_password(self):
        """The password of user ferry-broker, the brokers' own login, which local-cluster --secure made."""
        with open(os.path.join(self.tls_dir, "broker-password")) as f:
            return f.read().strip()

    def admin(self, broker, path):
        url = f"http://127.0.0.1:{self.base_port + 1000 + broker}{path}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def broker_log(self, broker):
        with open(os.path.join(self.data, f"broker-{broker}", "broker.log"), errors="replace") as f:
            return f.read()

    def log_dir(self, broker):
        return os.path.join(self.data, f"broker-{broker}", "data")

    def metrics(self, broker):
        """{(name, frozenset of label pairs): value} of the broker's /metrics."""
        url = f"http://127.0.0.1:{self.base_port + 1000 + broker}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
        out = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            series, value = line.rsplit(" ", 1)
            name, _, labels = series.partition("{")
            pairs = frozenset(tuple(kv.split("=", 1)) for kv in labels.rstrip("}").split(",") if kv) if labels else frozenset()
            out[(name, frozenset((k, v.strip('"')) for k, v in pairs))] = float(value)
        return out

    def metric(self, broker, name, **labels):
        """One series' value, or None when the broker does not export it."""
        return self.metrics(broker).get((name, frozenset(labels.items())))

    def zookeeper_password(self):
        """local-cluster --secure's password of the brokers' ZooKeeper identity (digest user ferry)."""
        with open(os.path.join(self.tls_dir, "zookeeper-password")) as f:
            return f.read().strip()

    def zookeeper(self, anonymous=False):
        """A kazoo client connected to the cluster's ZooKeeper, logged in as the brokers' identity when the cluster
        is secure (its nodes are locked to it) unless `anonymous`; the caller stops it."""
        from kazoo.client import KazooClient
        auth = [("digest", f"ferry:{self.zookeeper_password()}")] if self.secure and not anonymous else None
        client = KazooClient(hosts=f"127.0.0.1:{self.zk_port}", timeout=10, auth_data=auth)
        client.start(timeout=30)
        return client

    def zk_stop(self):
        self.run("zk-stop")

    def zk_start(self):
        self.run("zk-start")

    def pid(self, broker):
        """The running broker's pid, from local-cluster's pid file; None when it is not running."""
        try:
            with open(os.path.join(self.data, f"broker-{broker}.pid")) as f:
                pid = int(f.read().strip())
        except (FileNotFoundError, ValueError):
            return None
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return None
        return None if state in ("Z", "X") else pid

    def ready(self, broker):
        try:
            return self.admin(broker, "/v1/ready")[0] == 200
        except OSError:
            return False

    def leader(self, topic, partition, timeout=30.0):
        """The leader of a partition according to a running broker's admin API, once it has one and that leader
        serves it: ZooKeeper names the leader before the broker has opened the partition, and a request in
        between is answered UNKNOWN_TOPIC_OR_PARTITION (a window that a slow build, such as tsan's, widens)."""
        def find():
            for b in range(self.brokers):
                if self.pid(b) is None:
                    continue
                status, body = self.admin(b, f"/v1/topics/{topic}")
                if status != 200:
                    return None
                for p in body["partitions"]:
                    if p["partition"] == partition and p["leader"] >= 0:
                        return (p["leader"],) if self._serves_as_leader(p["leader"], topic, partition) else None
                return None
            return None
        return wait_until(find, timeout=timeout, what=f"a leader for {topic}/{partition}")[0]

    def _serves_as_leader(self, broker, topic, partition):
        if broker >= self.brokers or self.pid(broker) is None:
            return False
        status, body = self.admin(broker, f"/v1/topics/{topic}")
        if status != 200:
            return False
        return any(p["partition"] == partition and p.get("local", {}).get("leader") for p in body["partitions"])

    def partition_dir(self, broker, topic, partition):
        return os.path.join(self.log_dir(broker), f"{topic}-{partition}")

    def segment_files(self, broker, topic, partition):
        """The partition's .log files on that broker, in offset order."""
        return sorted(glob.glob(os.path.join(self.partition_dir(broker, topic, partition), "*.log")))

    def segment_bytes(self, broker, topic, partition):
        """The partition's segments on that broker, concatenated: replicas compare equal byte for byte."""
        out = b""
        for path in self.segment_files(broker, topic, partition):
            with open(path, "rb") as f:
                out += f.read()
        return out

    def sanitizer_reports(self):
        reports = []
        for b in range(self.brokers):
            try:
                text = self.broker_log(b)
            except FileNotFoundError:
                continue
            for marker in SANITIZER_MARKERS:
                if marker in text:
                    reports.append(f"broker {b}: {marker}")
        return reports

    def cleanup(self):
        self.down()
        reports = self.sanitizer_reports()
        if not reports:
            shutil.rmtree(self.data, ignore_errors=True)
        return reports


@contextlib.contextmanager
def started_cluster(brokers, overrides=(), racks=(), external_host=None, log_dirs=1, secure=False,
                    schema_registry=False):
    """A cluster for one module's own fixture (other sizes or settings than `cluster`): started, yielded,
    stopped, and checked for sanitizer reports."""
    c = Cluster(brokers, overrides, racks, external_host, log_dirs, secure, schema_registry)
    try:
        c.up()
    except BaseException:
        c.cleanup()
        raise
    try:
        yield c
    finally:
        reports = c.cleanup()
    assert not reports, f"sanitizer reports in broker logs (kept in {c.data}): {reports}"


@pytest.fixture(scope="module")
def kube(request):
    """A Kubernetes control plane for the module (kube_env.py) with the Ferry CRDs installed and
    operator/deploy/rbac.yaml's roles granted to the user ferry-operator, as the operator's tests run it. A module
    that needs another control plane defines its own."""
    from kube_env import grant_operator, kube_environment
    with kube_environment(request) as env:
        grant_operator(env, "ferry-operator")
        yield env


@pytest.fixture(scope="module")
def cluster():
    """Three brokers, as the local cluster runs them by default."""
    c = Cluster(3)
    c.up()
    yield c
    reports = c.cleanup()
    assert not reports, f"sanitizer reports in broker logs (kept in {c.data}): {reports}"


@pytest.fixture(scope="module")
def single_broker():
    c = Cluster(1)
    c.up()
    yield c
    reports = c.cleanup()
    assert not reports, f"sanitizer reports in broker logs (kept in {c.data}): {reports}"


@pytest.fixture
def broker(one):
    """The module's one-broker cluster (its `one` fixture) with the broker running: a test that kills it, and
    fails before starting it again, leaves it down."""
    if one.pid(0) is None:
        one.start(0)
    return one


def create_spread_topic(cluster, topic, partitions):
    """A topic of three replicas per partition on a three-broker cluster, written to ZooKeeper as a tool would:
    partition p has replicas [p, p+1, p+2] (mod 3), so broker p is its preferred leader. Returns once every
    partition's leader serves it."""
    assignment = {str(p): [(p + i) % 3 for i in range(3)] for p in range(partitions)}
    zk = cluster.zookeeper()
    try:
        zk.create(f"/brokers/topics/{topic}", json.dumps({"version": 1, "partitions": assignment}).encode())
    finally:
        zk.stop()
    for p in range(partitions):
        cluster.leader(topic, p)


def offsets_partition(group, partitions):
    """Kafka's choice of a group's __consumer_offsets partition: Java's String.hashCode of the id (over UTF-16
    units), sign bit cleared, modulo the partition count."""
    h = 0
    for unit in group.encode("utf-16-be").hex(" ", 2).split():
        h = (h * 31 + int(unit, 16)) & 0xFFFFFFFF
    return (h & 0x7FFFFFFF) % partitions


def kcat(*args, input=None, timeout=120, check=True):
    """Runs kcat (librdkafka 2.0.2) and returns its completed process."""
    result = subprocess.run(["kcat", *args], input=input, capture_output=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"kcat {' '.join(args)} failed: {result.stderr.decode(errors='replace')}")
    return result


JAVA_PROJECT = os.path.join(SOURCE_DIR, "tests", "java")


def _java_client_versions():
    with open(os.path.join(JAVA_PROJECT, "versions.txt")) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


# The kafka-clients versions the Java programs of tests/java run with, oldest first.
JAVA_CLIENT_VERSIONS = _java_client_versions()


def java_project_classpath(project, out_dir, *maven_args):
    """Compiles the Maven project in directory `project` (offline; scripts/install-deps fetched its dependencies)
    into `out_dir` and returns the class path of its classes and dependencies."""
    for tool in ("mvn", "java"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed; run scripts/install-deps")
    classpath_file = os.path.join(out_dir, "classpath.txt")
    cmd = ["mvn", "-o", "-q", "-B", "-f", os.path.join(project, "pom.xml"), *maven_args, f"-Dferry.out={out_dir}",
           "compile", "dependency:build-classpath", f"-Dmdep.outputFile={classpath_file}"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if result.returncode != 0:
        pytest.fail(f"building {project} failed (are its Maven dependencies fetched? run scripts/install-deps):\n"
                    f"{' '.join(cmd)}\n{result.stdout}\n{result.stderr}")
    with open(classpath_file) as f:
        return os.path.join(out_dir, "classes") + os.pathsep + f.read().strip()


def java_checks_classpath(version, out_dir):
    """Compiles the Java programs of tests/java against kafka-clients `version` into `out_dir` and returns their
    class path."""
    return java_project_classpath(JAVA_PROJECT, out_dir, f"-Dkafka.version={version}")


_MAVEN_CLASSPATHS = {}


def maven_classpath(project):
    """The class path of the dependencies of the Maven project tests/`project` (scripts/install-deps fetches
    them), built offline once per run."""
    if project not in _MAVEN_CLASSPATHS:
        with tempfile.TemporaryDirectory() as scratch:
            out = os.path.join(scratch, "classpath.txt")
            cmd = ["mvn", "-o", "-q", "-B", "-f", os.path.join(SOURCE_DIR, "tests", project, "pom.xml"),
                   "dependency:build-classpath", f"-Dmdep.outputFile={out}"]
            built = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if built.returncode != 0:
                pytest.fail(f"cannot build the class path of tests/{project} (run scripts/install-deps):\n"
                            f"{built.stdout}\n{built.stderr}")
            with open(out) as f:
                _MAVEN_CLASSPATHS[project] = f.read().strip()
    return _MAVEN_CLASSPATHS[project]


def kafka_tools_classpath():
    """The class path of Apache Kafka's command-line tools and their clients (tests/kafka-tools), for tools a
    test runs as long-lived processes."""
    return maven_classpath("kafka-tools")


def kafka_tool(main_class, *args, timeout=120):
    """Runs one of Apache Kafka's command-line tools (the class behind a bin/kafka-*.sh script) and returns its
    completed process."""
    return subprocess.run(["java", "-cp", kafka_tools_classpath(), main_class, *args], capture_output=True,
                          text=True, timeout=timeout)


# RecordBatch v2 header fields (see broker/src/model/record_batch.h).
BATCH_HEADER = struct.Struct(">qiibIhiqqqhii")
BATCH_HEADER_SIZE = 61


class BatchHeader:
    def __init__(self, raw, position):
        (self.base_offset, self.length, self.leader_epoch, self.magic, self.crc, self.attributes,
         self.last_offset_delta, self.base_timestamp, self.max_timestamp, self.producer_id, self.producer_epoch,
         self.base_sequence, self.records_count) = BATCH_HEADER.unpack_from(raw, 0)
        self.position = position
        self.size = self.length + 12
        self.codec = self.attributes & 0x07

    @property
    def last_offset(self):
        return self.base_offset + self.last_offset_delta


def log_batches(path):
    """The batch headers of a segment file, in order; stops at the first incomplete batch."""
    with open(path, "rb") as f:
        data = f.read()
    out = []
    position = 0
    while position + BATCH_HEADER_SIZE <= len(data):
        header = BatchHeader(data[position:position + BATCH_HEADER_SIZE], position)
        if header.length <= 0 or position + header.size > len(data):
            break
        out.append(header)
        position += header.size
    return out


# Kafka requests by hand, for tests that need exact bytes on the wire.

def kafka_request(api_key, version, correlation_id, body=b"", client_id=b"ferry-it", flexible=False):
    """A size-prefixed request: header v1 (v2 when flexible: an empty tag buffer after the client id)."""
    header = struct.pack(">hhih", api_key, version, correlation_id, len(client_id)) + client_id
    if flexible:
        header += b"\x00"
    payload = header + body
    return struct.pack(">i", len(payload)) + payload


def recv_exactly(sock, n):
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError(f"connection closed after {len(out)} of {n} bytes")
        out += chunk
    return out


def read_response(sock):
    """(correlation id, rest of the frame) of the next response (response header v0)."""
    size = struct.unpack(">i", recv_exactly(sock, 4))[0]
    frame = recv_exactly(sock, size)
    return struct.unpack(">i", frame[:4])[0], frame[4:]


def record_batch(values, base_ts=1_700_000_000_000, producer_id=-1, producer_epoch=-1, base_sequence=-1,
                 transactional=False):
    """RecordBatch v2 bytes as a client sends them (kafka-python's builder), key b"k", no headers."""
    from kafka.record.default_records import DefaultRecordBatchBuilder
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=transactional,
                                        producer_id=producer_id,
                                        producer_epoch=producer_epoch, base_sequence=base_sequence,
                                        batch_size=1 << 20)
    for i, value in enumerate(values):
        builder.append(i, timestamp=base_ts + i, key=b"k", value=value, headers=[])
    return bytes(builder.build())


def produce_v3(sock, topic, partition, batch, correlation_id, acks=1):
    """(error code, base offset) of a Produce v3 of one batch to one partition."""
    body = struct.pack(">hhi", -1, acks, 10000) + struct.pack(">i", 1) + struct.pack(">h", len(topic)) + topic.encode()
    body += struct.pack(">i", 1) + struct.pack(">ii", partition, len(batch)) + batch
    sock.sendall(kafka_request(0, 3, correlation_id, body))
    got, response = read_response(sock)
    assert got == correlation_id
    topics, name_len = struct.unpack(">ih", response[:6])
    assert topics == 1 and response[6:6 + name_len] == topic.encode()
    at = 6 + name_len
    partitions, index, error, base_offset = struct.unpack(">iihq", response[at:at + 18])
    assert partitions == 1 and index == partition
    return error, base_offset


def init_producer_id(sock, correlation_id):
    """(error code, producer id, epoch) from InitProducerId v0 for an idempotent (non-transactional) producer."""
    sock.sendall(kafka_request(22, 0, correlation_id, struct.pack(">hi", -1, 60000)))
    got, response = read_response(sock)
    assert got == correlation_id
    _, error, producer_id, epoch = struct.unpack(">ihqh", response[:16])
    return error, producer_id, epoch
