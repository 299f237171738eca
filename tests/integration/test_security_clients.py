"""Other clients over the secure listeners (issue 31): Java kafka-clients (the 3.9 and 4.x of
tests/java/versions.txt, ferry.SecureClients), franz-go (tests/go/franz-secure) and kafkajs
(tests/js/kafkajs-secure), each over SASL_SSL with SCRAM-SHA-512, SASL_PLAINTEXT with PLAIN, and SSL with a client
certificate (mTLS), against one local-cluster --secure of three brokers.

In every case the client runs a transactional producer that commits 30 records, aborts 15 and commits 30 more
(every transaction touches every partition of the case's own topic), then a consumer in a group with
isolation.level=read_committed that reads until it has every committed record and commits its offsets. The test
asserts the records read (exactly the committed ones, once each), the group's committed offsets as the brokers
keep them (past the last committed record of every partition, so past the aborted ones) and the log's end (every
record and the three transaction markers of each partition are there, so the aborted records were written and
filtered out, not lost). The SASL cases log in as a SCRAM user made with Kafka's kafka-configs; PLAIN checks the
password against that SCRAM credential.

Each client program runs its three cases at once, and the four programs run at the same time (one JVM per Java
version); the tests of a client wait for its program. Nothing is fetched here: scripts/install-deps fetched the
Maven, Go and npm dependencies.
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import tempfile
import time

import confluent_kafka
import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from conftest import (JAVA_CLIENT_VERSIONS, SOURCE_DIR, java_checks_classpath, kcat, started_cluster,
                      wait_until)
from security_clients import java_properties, kcat_args, librdkafka_config, make_scram_user

GO = shutil.which("go") or "/usr/local/go/bin/go"  # scripts/install-deps fetched the program's modules
FRANZ_SECURE = os.path.join(SOURCE_DIR, "tests", "go", "franz-secure")
KAFKAJS_SECURE = os.path.join(SOURCE_DIR, "tests", "js", "kafkajs-secure")

USER, PASSWORD = "secure-clients", "secure-clients-secret"
PARTITIONS, PER_TXN, ABORTED = 3, 30, 15
CASE_TIMEOUT_S = 60  # each case, inside its program
PROGRAM_TIMEOUT_S = 150  # each program, its cases running at once

# mode: (local-cluster --secure listener, SASL mechanism)
MODES = {"sasl_ssl-scram-sha-512": ("sasl_ssl", "SCRAM-SHA-512"),
         "sasl_plaintext-plain": ("sasl_plaintext", "PLAIN"),
         "ssl-mtls": ("ssl", None)}
CLIENTS = [f"java-{v}" for v in JAVA_CLIENT_VERSIONS] + ["franz-go", "kafkajs"]


def case_names(client, mode):
    base = f"sec-{client}-{mode}".replace(".", "-").lower()
    return {"topic": base, "group": f"{base}-group", "transactional_id": f"{base}-txn"}


def expected_committed():
    return sorted(f"c-{i}" for i in range(2 * PER_TXN))


# --- building the programs (while the cluster starts) -----------------------------------------------------------


def _build_java(version, out_dir):
    return java_checks_classpath(version, out_dir)


def _build_franz(out_dir):
    binary = os.path.join(out_dir, "franz-secure")
    built = subprocess.run([GO, "build", "-o", binary, "."], cwd=FRANZ_SECURE, capture_output=True, text=True,
                           timeout=600, env={**os.environ, "GOPROXY": "off"})
    if built.returncode != 0:
        pytest.fail(f"building tests/go/franz-secure failed (run scripts/install-deps):\n{built.stderr}")
    return binary


def _install_kafkajs(out_dir):
    """tests/js/kafkajs-secure with its locked kafkajs, installed from npm's cache (scripts/install-deps filled it)
    into `out_dir`, outside the source tree."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.fail("node and npm are not installed; run scripts/install-deps")
    for name in ("package.json", "package-lock.json", "index.js"):
        shutil.copy(os.path.join(KAFKAJS_SECURE, name), out_dir)
    installed = subprocess.run(["npm", "ci", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], cwd=out_dir,
                               capture_output=True, text=True, timeout=300)
    if installed.returncode != 0:
        pytest.fail(f"npm ci of tests/js/kafkajs-secure failed (run scripts/install-deps):\n{installed.stderr}")
    return os.path.join(out_dir, "index.js")


def _selected_clients(request):
    """The clients of the tests this session runs (all of them, unless -k picked some)."""
    return [client for client in CLIENTS
            if any(getattr(item, "callspec", None) and item.callspec.params.get("client") == client
                   for item in request.session.items)]


@pytest.fixture(scope="module")
def programs(request):
    """{client: future of what runs it} for the selected clients, started before the cluster so the builds overlap
    its start."""
    scratch = tempfile.mkdtemp(prefix="ferry-secure-clients-")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=len(CLIENTS))
    futures = {}
    for client in _selected_clients(request):
        out_dir = os.path.join(scratch, client)
        os.makedirs(out_dir)
        if client.startswith("java-"):
            futures[client] = pool.submit(_build_java, client[len("java-"):], out_dir)
        else:
            futures[client] = pool.submit(_build_franz if client == "franz-go" else _install_kafkajs, out_dir)
    try:
        yield futures
    finally:
        pool.shutdown(wait=True)
        shutil.rmtree(scratch, ignore_errors=True)


# --- the cluster, the user and the topics -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def secure(programs):
    with started_cluster(3, secure=True, overrides=["num.partitions=3", "group.initial.rebalance.delay.ms=0"]) as c:
        yield c


def _logs_in(c, broker, mechanism):
    config = librdkafka_config(c, "sasl_plaintext", USER, PASSWORD, mechanism)
    config["bootstrap.servers"] = c.sasl_plaintext_bootstrap().split(",")[broker]
    return kcat(*kcat_args(config), "-L", "-m", "5", check=False, timeout=30).returncode == 0


@pytest.fixture(scope="module")
def scram_user(secure):
    """USER with a SCRAM-SHA-512 credential, made once with Kafka's kafka-configs (ConfigCommand) as ferry-broker,
    and accepted by every broker."""
    make_scram_user(secure, USER, PASSWORD)
    for broker in range(3):
        wait_until(lambda: _logs_in(secure, broker, "SCRAM-SHA-512"), timeout=30, what=f"{USER}'s login at {broker}")
    return USER, PASSWORD


def _create_topics(c, names):
    admin = AdminClient(librdkafka_config(c, "sasl_plaintext"))
    for name, future in admin.create_topics([NewTopic(n, PARTITIONS, 3) for n in names]).items():
        future.result(30)
    wait_until(lambda: set(names) <= set(admin.list_topics(timeout=10).topics), what="the cases' topics")


# --- running the programs -----------------------------------------------------------------------------------------


def _case_spec(c, client, mode):
    """The case in the JSON form of franz-secure and kafkajs-secure."""
    kind, mechanism = MODES[mode]
    config = librdkafka_config(c, kind, USER, PASSWORD, mechanism)
    spec = {"name": mode, "bootstrap": config["bootstrap.servers"], "security_protocol": config["security.protocol"],
            "mechanism": mechanism or "", "username": USER if mechanism else "",
            "password": PASSWORD if mechanism else "",
            "ca": config.get("ssl.ca.location", ""), "cert": config.get("ssl.certificate.location", ""),
            "key": config.get("ssl.key.location", ""), "partitions": PARTITIONS, "committed_per_txn": PER_TXN,
            "aborted": ABORTED, "timeout_ms": CASE_TIMEOUT_S * 1000}
    spec.update(case_names(client, mode))
    return spec


def _java_case_properties(path, c, client, mode):
    """A properties file for ferry.SecureClients: the Java client's settings for the listener, then the case's."""
    kind, mechanism = MODES[mode]
    config = librdkafka_config(c, kind, USER, PASSWORD, mechanism)
    java_properties(path, config)
    lines = [f"bootstrap.servers={config['bootstrap.servers']}"]
    if kind == "ssl":
        # The client certificate and its key inline (PEM), which needs no key password; \n is a newline to
        # java.util.Properties.
        for key, source in (("ssl.keystore.certificate.chain", "ssl.certificate.location"),
                            ("ssl.keystore.key", "ssl.key.location")):
            with open(config[source]) as f:
                lines.append(f"{key}=" + f.read().strip().replace("\n", "\\n"))
        lines.append("ssl.keystore.type=PEM")
    names = case_names(client, mode)
    lines += [f"ferry.case={mode}", f"ferry.topic={names['topic']}", f"ferry.group={names['group']}",
              f"ferry.transactional.id={names['transactional_id']}", f"ferry.partitions={PARTITIONS}",
              f"ferry.committed.per.txn={PER_TXN}", f"ferry.aborted={ABORTED}",
              f"ferry.timeout.ms={CASE_TIMEOUT_S * 1000}"]
    with open(path, "a") as f:
        f.write("\n".join(lines) + "\n")
    return path


class ProgramRun:
    """One client program running all three cases; `result()` waits for it (bounded) and parses its lines."""

    def __init__(self, client, cmd, out_dir, cwd=None):
        self.client = client
        self.cmd = cmd
        # Files, not pipes: a program is not read from until its tests run, and a full pipe would stall it.
        self.stdout_path = os.path.join(out_dir, f"{client}.stdout")
        self.stderr_path = os.path.join(out_dir, f"{client}.stderr")
        self.started = time.monotonic()
        with open(self.stdout_path, "w") as stdout, open(self.stderr_path, "w") as stderr:
            self.process = subprocess.Popen(cmd, cwd=cwd, stdout=stdout, stderr=stderr)
        self._done = None

    def result(self):
        if self._done is None:
            try:
                self.process.wait(timeout=max(PROGRAM_TIMEOUT_S - (time.monotonic() - self.started), 1))
                timed_out = False
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                timed_out = True
            elapsed = time.monotonic() - self.started
            with open(self.stdout_path, errors="replace") as f:
                stdout = f.read()
            with open(self.stderr_path, errors="replace") as f:
                stderr = f.read()
            lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
            cases = {line["case"]: line for line in lines if "case" in line}
            print(f"{self.client}: {elapsed:.1f}s, exit status {self.process.returncode}; cases: "
                  + ", ".join(f"{name} {line.get('elapsed_ms')} ms" for name, line in cases.items()))
            self._done = (timed_out, cases, stderr, elapsed)
        return self._done

    def diagnostics(self):
        timed_out, cases, stderr, elapsed = self.result()
        # Java's and kafkajs's DEBUG/INFO chatter would bury what went wrong.
        tail = "\n".join(line for line in stderr.splitlines() if " DEBUG " not in line)[-6000:]
        return (f"{self.client}: {'timed out after' if timed_out else 'ran'} {elapsed:.0f}s, exit status "
                f"{self.process.returncode}\n--- stderr (end) ---\n{tail}")

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def runs(programs, secure, scram_user):
    """{client: ProgramRun}: every selected client program started at once, each with its three cases."""
    _create_topics(secure, [case_names(client, mode)["topic"] for client in programs for mode in MODES])
    scratch = tempfile.mkdtemp(prefix="ferry-secure-cases-")
    started = {}
    try:
        for client in programs:
            try:
                built = programs[client].result(timeout=600)
            except BaseException as e:  # a build's pytest.fail: that client's tests fail with its message
                started[client] = e
                continue
            if client.startswith("java-"):
                files = [_java_case_properties(os.path.join(scratch, f"{client}-{mode}.properties"), secure, client,
                                               mode) for mode in MODES]
                cmd = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                       "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", built, "ferry.SecureClients", *files]
                started[client] = ProgramRun(client, cmd, scratch)
                continue
            spec = os.path.join(scratch, f"{client}.json")
            with open(spec, "w") as f:
                json.dump([_case_spec(secure, client, mode) for mode in MODES], f)
            if client == "franz-go":
                started[client] = ProgramRun(client, [built, spec], scratch)
            else:
                started[client] = ProgramRun(client, ["node", built, spec], scratch, cwd=os.path.dirname(built))
        yield started
    finally:
        for run in started.values():
            if isinstance(run, ProgramRun):
                run.stop()
        shutil.rmtree(scratch, ignore_errors=True)


# --- the tests ----------------------------------------------------------------------------------------------------


def test_java_versions_cover_3_9_and_4():
    assert any(v.startswith("3.9.") for v in JAVA_CLIENT_VERSIONS), JAVA_CLIENT_VERSIONS
    assert any(v.startswith("4.") for v in JAVA_CLIENT_VERSIONS), JAVA_CLIENT_VERSIONS


def _group_view(c, topic, group):
    """(committed offset, high watermark) per partition, as the brokers see them, read as ferry-broker."""
    consumer = confluent_kafka.Consumer({**librdkafka_config(c, "sasl_plaintext"), "group.id": group,
                                         "enable.auto.commit": False, "isolation.level": "read_uncommitted"})
    try:
        committed = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=30)
        offsets = {tp.partition: tp.offset for tp in committed}
        marks = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=30)[1] for p in range(PARTITIONS)}
        return offsets, marks
    finally:
        consumer.close()


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("client", CLIENTS)
def test_transaction_and_read_committed_group(runs, secure, client, mode):
    run = runs[client]
    if isinstance(run, BaseException):
        raise run
    _, cases, _, _ = run.result()
    assert mode in cases, f"{client} printed no line for {mode}\n{run.diagnostics()}"
    case = cases[mode]
    assert case["ok"], f"{client} {mode} failed in {case.get('stage')}: {case.get('error')}\n{run.diagnostics()}"
    assert (case["sent_committed"], case["sent_aborted"]) == (2 * PER_TXN, ABORTED), case
    consumed = case["consumed"]
    assert not [v for v in consumed if not v.startswith("c-")], f"aborted records read under read_committed: {consumed}"
    assert sorted(consumed) == expected_committed(), consumed

    # Per partition: PER_TXN/PARTITIONS committed records, ABORTED/PARTITIONS aborted ones and the same number
    # committed again, each transaction ended by a marker.
    committed_p, aborted_p = 2 * PER_TXN // PARTITIONS, ABORTED // PARTITIONS
    log_end = committed_p + aborted_p + 3
    names = case_names(client, mode)
    offsets, marks = _group_view(secure, names["topic"], names["group"])
    assert marks == {p: log_end for p in range(PARTITIONS)}, f"high watermarks {marks}, expected {log_end} each"
    # The group's position is past the last committed record (log_end - 2), or also past its marker.
    for p, offset in offsets.items():
        assert offset in (log_end - 1, log_end), f"{names['group']} committed {offsets}; the log ends at {log_end}"
