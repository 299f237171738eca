"""Kafka Connect (connect-runtime from Maven Central, unmodified: tests/connect) on Ferry, with the file source and sink
connectors Kafka ships: a standalone worker moves a file through a topic exactly; a distributed worker creates its
config, offset and status topics, compacted, joins its group through Ferry's group coordinator, and runs the same
pipeline submitted through its REST API."""
import json
import os
import socket
import subprocess
import tempfile
import urllib.request

from conftest import create_spread_topic, kafka_tool, maven_classpath, wait_until

LINES = 2000
STRINGS = "org.apache.kafka.connect.storage.StringConverter"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_properties(path, settings):
    path.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
    return str(path)


class Worker:
    """A Connect worker process (ConnectStandalone or ConnectDistributed), its output in a file."""

    def __init__(self, main_class, *config_files):
        self.out = tempfile.NamedTemporaryFile(prefix="ferry-connect-", suffix=".log", delete=False)
        self.process = subprocess.Popen(["java", "-cp", maven_classpath("connect"), main_class, *config_files],
                                        stdout=self.out, stderr=subprocess.STDOUT)

    def log(self):
        with open(self.out.name, errors="replace") as f:
            return f.read()[-8000:]

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        os.unlink(self.out.name)


def source_file(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("".join(f"line-{i}\n" for i in range(LINES)))
    return path


def wait_for_copy(worker, source, sink):
    """Waits for the sink file to hold as many lines as the source (the sink flushes at each offset commit) and
    checks it holds exactly the source's lines in order."""
    def copied():
        assert worker.process.poll() is None, f"the worker exited:\n{worker.log()}"
        return sink.exists() and sink.read_text().count("\n") >= LINES
    wait_until(copied, timeout=180, interval=0.5, what=f"{LINES} lines in {sink}")
    assert sink.read_text() == source.read_text()


def connectors(topic, source, sink):
    return {
        "file-source": {"connector.class": "FileStreamSource", "tasks.max": "1", "file": str(source),
                        "topic": topic},
        "file-sink": {"connector.class": "FileStreamSink", "tasks.max": "1", "file": str(sink), "topics": topic},
    }


def worker_settings(cluster, port):
    return {"bootstrap.servers": cluster.bootstrap, "key.converter": STRINGS, "value.converter": STRINGS,
            "offset.flush.interval.ms": "1000", "listeners": f"http://127.0.0.1:{port}",
            "rest.advertised.host.name": "127.0.0.1"}


def test_standalone_worker_moves_a_file_through_a_topic(cluster, tmp_path):
    topic = "connect-standalone-lines"
    create_spread_topic(cluster, topic, 1)  # one partition: the sink sees the source's order
    source, sink = source_file(tmp_path), tmp_path / "out.txt"
    settings = worker_settings(cluster, free_port())
    settings["offset.storage.file.filename"] = str(tmp_path / "offsets")
    files = [write_properties(tmp_path / "worker.properties", settings)]
    for name, config in connectors(topic, source, sink).items():
        files.append(write_properties(tmp_path / f"{name}.properties", {"name": name, **config}))
    worker = Worker("org.apache.kafka.connect.cli.ConnectStandalone", *files)
    try:
        wait_for_copy(worker, source, sink)
    finally:
        worker.close()


def rest(port, path, body=None):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method="POST" if body else "GET",
                                     data=json.dumps(body).encode() if body else None,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def reachable(port):
    try:
        return rest(port, "/")
    except OSError:
        return None


def test_distributed_worker_creates_compacted_topics_and_runs_the_pipeline(cluster, tmp_path):
    topic = "connect-distributed-lines"
    create_spread_topic(cluster, topic, 1)
    source, sink = source_file(tmp_path), tmp_path / "out.txt"
    port = free_port()
    settings = worker_settings(cluster, port)
    internal = {"config": "connect-configs", "offset": "connect-offsets", "status": "connect-status"}
    settings["group.id"] = "ferry-connect"
    for kind, name in internal.items():
        settings[f"{kind}.storage.topic"] = name
        settings[f"{kind}.storage.replication.factor"] = "3"
    worker = Worker("org.apache.kafka.connect.cli.ConnectDistributed",
                    write_properties(tmp_path / "worker.properties", settings))
    try:
        # The REST server answers once the worker has read its config topic, which it created.
        wait_until(lambda: worker.process.poll() is not None or reachable(port), timeout=180, interval=0.5,
                   what="the distributed worker's REST API")
        assert worker.process.poll() is None, worker.log()
        for name, config in connectors(topic, source, sink).items():
            rest(port, "/connectors", {"name": name, "config": config})
        wait_for_copy(worker, source, sink)
        for name in ("file-source", "file-sink"):
            status = rest(port, f"/connectors/{name}/status")
            assert status["connector"]["state"] == "RUNNING", status
            assert [t["state"] for t in status["tasks"]] == ["RUNNING"], status
    finally:
        worker.close()
    for name in internal.values():
        described = kafka_tool("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", cluster.bootstrap,
                               "--describe", "--topic", name)
        assert described.returncode == 0, described.stderr
        assert "cleanup.policy=compact" in described.stdout and "ReplicationFactor: 3" in described.stdout, \
            described.stdout
