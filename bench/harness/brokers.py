"""The systems under test: Ferry (through scripts/local-cluster, which also runs the ZooKeeper), Apache Kafka
3.9 in ZooKeeper mode against that same ZooKeeper, and Apache Kafka 4.x in KRaft mode (combined broker and
controller, one node). Each is started once per bench run and kept up while the load alternates.

Every setting that differs from the system's default is listed in SETTINGS_NOTES with the reason.
"""
import base64
import os
import signal
import subprocess
import time
import uuid

from . import procs

# Set the same on every side (on Ferry these equal its defaults too; set explicitly so a change of
# default cannot skew the comparison).
SAME_ON_BOTH = {
    "log.segment.bytes": "1073741824",                  # 1 GiB segments: Kafka's default
    "log.flush.interval.messages": "9223372036854775807",  # no fsync per message: the OS writes back
    "log.flush.interval.ms": "9223372036854775807",        # no time-based fsync either
    "num.partitions": "1",                              # topics are created with explicit counts anyway
}

# Set the same on every side, unlike both sides' default (3000). The delay holds back the first rebalance of
# a new group; ConsumerPerformance's timing excludes its join anyway, but the group scenarios form thousands
# of groups, each of which would wait it out. Kafka's config/server.properties of 3.x sets 0 as well.
SAME_FOR_GROUPS = {
    "group.initial.rebalance.delay.ms": "0",
}

# Kafka settings that differ from Kafka's defaults (besides ports, log.dirs, SAME_ON_BOTH and SAME_FOR_GROUPS).
KAFKA_SINGLE_NODE = {
    # Internal topics default to replication factor 3, which one broker cannot host; Kafka's own
    # config/server.properties sets these to 1 for a single node. Needed for __consumer_offsets. (Ferry's
    # scripts/local-cluster writes the same two factors, min(3, brokers), into a small cluster's configs.)
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
}
KAFKA4_SINGLE_NODE = {
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}

# As kafka-server-start.sh (KAFKA_HEAP_OPTS) and kafka-run-class.sh (KAFKA_JVM_PERFORMANCE_OPTS) run it.
KAFKA_HEAP = ["-Xms1G", "-Xmx1G"]
KAFKA_JVM_OPTS = ["-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35",
                  "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true"]

LOG4J1 = """# Written by bench/run: INFO to the console, which bench/run writes to kafka.log.
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
LOG4J2 = """# Written by bench/run: {level} to the console.
Configuration:
  Appenders:
    Console:
      name: STDOUT
      PatternLayout:
        pattern: "[%d] %p %m (%c)%n"
  Loggers:
    Root:
      level: {level}
      AppenderRef:
        - ref: STDOUT
"""


class BrokerError(RuntimeError):
    pass


def _tail(path, n=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


class Ferry:
    def __init__(self, root, run_dir, build_dir, label, port, zk_port, guardian, benchtool, key="ferry"):
        self.root, self.build_dir, self.label, self.key = root, build_dir, label, key
        self.data = os.path.join(run_dir, "cluster" if key == "ferry" else f"cluster-{key}")
        self.port, self.zk_port = port, zk_port
        self.bootstrap = f"127.0.0.1:{port}"
        self.guardian, self.benchtool = guardian, benchtool
        self.pid = None
        self.log = os.path.join(self.data, "broker-0", "broker.log")
        self.settings = {**SAME_ON_BOTH, **SAME_FOR_GROUPS}
        self.up_args = []  # more scripts/local-cluster up options (--secure)
        self.has_groups = True

    def _cluster(self, *args, timeout=300):
        argv = [os.path.join(self.root, "scripts", "local-cluster"), "--data", self.data, *args]
        return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)

    def _up(self):
        args = ["up", "--brokers", "1", "--base-port", str(self.port), "--zk-port", str(self.zk_port),
                "--build-dir", self.build_dir, "--timeout", "120", *self.up_args]
        for k, v in self.settings.items():
            args += ["--override", f"{k}={v}"]
        return self._cluster(*args)

    def start(self):
        down = [os.path.join(self.root, "scripts", "local-cluster"), "--data", self.data, "down"]
        self.guardian.add_command(down)
        r = self._up()
        _, refused, names = (r.stdout + r.stderr).partition("unknown setting(s): ")
        if r.returncode != 0 and refused and set(names.partition("\n")[0].split(", ")) <= set(SAME_FOR_GROUPS):
            # A build from before consumer groups (a --baseline of an earlier commit) knows no group settings;
            # it runs without them, and the scenarios that need groups skip it.
            for k in SAME_FOR_GROUPS:
                del self.settings[k]
            self.has_groups = False
            r = self._up()
        if r.returncode != 0:
            raise BrokerError(f"scripts/local-cluster up failed:\n{r.stdout[-2000:]}{r.stderr[-3000:]}")
        with open(os.path.join(self.data, "broker-0.pid")) as f:
            self.pid = int(f.read().split()[0])

    def kill(self):
        """SIGKILL, as a crash or an OOM kill would."""
        r = self._cluster("kill", "0")
        if r.returncode != 0:
            raise BrokerError(f"scripts/local-cluster kill 0 failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        self.pid = None

    def restart(self):
        """Starts the broker again on its data; returns at once (wait_restarted() waits for it)."""
        argv = [os.path.join(self.root, "scripts", "local-cluster"), "--data", self.data, "start", "0",
                "--timeout", "600"]
        self.starting = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.STDOUT, text=True)

    def wait_restarted(self, timeout=600):
        out, _ = self.starting.communicate(timeout=timeout)
        if self.starting.returncode != 0:
            raise BrokerError(f"scripts/local-cluster start 0 failed:\n{out[-3000:]}")
        with open(os.path.join(self.data, "broker-0.pid")) as f:
            self.pid = int(f.read().split()[0])

    def stop(self):
        if os.path.exists(os.path.join(self.data, "cluster.env")):
            self._cluster("down")
        self.guardian.remove_command([os.path.join(self.root, "scripts", "local-cluster"), "--data", self.data,
                                      "down"])

    def alive(self):
        return self.pid is not None and procs.alive_with_marker(self.pid, self.data)

    def meter_pids(self):
        return [self.pid]

    def data_dir(self):
        return os.path.join(self.data, "broker-0", "data")

    def log_tail(self):
        return _tail(self.log)


class Kafka:
    """Apache Kafka started from the jars alone: java -cp 'lib/*' kafka.Kafka server.properties."""

    def __init__(self, key, label, version, lib, run_dir, port, guardian, benchtool, kraft, zk_port=None,
                 controller_port=None, home=None, settings=None, cluster_id=None, format_args=()):
        """One node. `home`, `settings` and `cluster_id` are for a node of a cluster (clusters.py) or a node
        with other listeners (secure.py): its own directory, its whole server.properties but log.dirs, and
        the KRaft cluster id every node is formatted with (static voters); by default a single node of its
        own. `format_args`: more kafka-storage format options (--add-scram)."""
        self.format_args = list(format_args)
        self.ready_args = []  # benchtool ready's client settings (-X ...) when the bootstrap is not PLAINTEXT
        self.key, self.label, self.version, self.lib = key, label, version, lib
        self.home = home or os.path.join(run_dir, key)
        self.port, self.kraft = port, kraft
        self.bootstrap = f"127.0.0.1:{port}"
        self.guardian, self.benchtool = guardian, benchtool
        self.pid = None
        self.proc = None
        self.log = os.path.join(self.home, "kafka.log")
        self.config = os.path.join(self.home, "server.properties")
        self.cluster_id = cluster_id
        self.has_groups = True
        if settings is not None:
            self.settings = {**settings, "log.dirs": os.path.join(self.home, "data")}
            return
        s = {}
        if kraft:
            s.update({
                "process.roles": "broker,controller",
                "node.id": "1",
                "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}",
                "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
                "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
            })
        else:
            s.update({
                "broker.id": "0",
                "listeners": f"PLAINTEXT://127.0.0.1:{port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
                # The ZooKeeper Ferry uses, under a chroot of its own so the two never meet.
                "zookeeper.connect": f"127.0.0.1:{zk_port}/kafka{version.replace('.', '')[:2]}",
            })
        s["log.dirs"] = os.path.join(self.home, "data")
        s.update(SAME_ON_BOTH)
        s.update(SAME_FOR_GROUPS)
        s.update(KAFKA_SINGLE_NODE)
        if kraft:
            s.update(KAFKA4_SINGLE_NODE)
        self.settings = s

    def classpath(self):
        return os.path.join(self.lib, "*")

    def _java(self, main, *args, heap=None, log4j_level="INFO"):
        if self.version.startswith("3."):
            logcfg = os.path.join(self.home, "log4j.properties")
            logopt = f"-Dlog4j.configuration=file:{logcfg}"
        else:
            logcfg = os.path.join(self.home, f"log4j2-{log4j_level.lower()}.yaml")
            logopt = f"-Dlog4j2.configurationFile={logcfg}"
            with open(logcfg, "w") as f:
                f.write(LOG4J2.format(level=log4j_level))
        return ["java", *(heap or KAFKA_HEAP), *KAFKA_JVM_OPTS, logopt, "-cp", self.classpath(), main, *args]

    def start(self):
        os.makedirs(os.path.join(self.home, "data"), exist_ok=True)
        with open(self.config, "w") as f:
            f.write(f"# Written by bench/run for Apache Kafka {self.version}; see bench/README.md for why each\n"
                    "# setting that differs from Kafka's default does.\n")
            for k, v in self.settings.items():
                f.write(f"{k}={v}\n")
        if self.version.startswith("3."):
            with open(os.path.join(self.home, "log4j.properties"), "w") as f:
                f.write(LOG4J1)
        if self.kraft:
            # kafka-storage.sh format: alone, --standalone (a fresh cluster id, a single-voter quorum); in a
            # cluster, the cluster's id with the static voters of controller.quorum.voters.
            alone = self.cluster_id is None
            argv = self._java("kafka.tools.StorageTool", "format", "-t", self.cluster_id or new_cluster_id(), "-c",
                              self.config, *(["--standalone"] if alone else []), *self.format_args, heap=["-Xmx512M"],
                              log4j_level="WARN")
            r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
            if r.returncode != 0:
                raise BrokerError(f"kafka-storage format failed for {self.label}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        self._spawn()

    def _spawn(self):
        argv = self._java("kafka.Kafka", self.config)
        logf = open(self.log, "a")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                     start_new_session=True, cwd=self.home)
        logf.close()
        self.pid = self.proc.pid
        self.guardian.add_pid(self.pid, self.config)

    def kill(self):
        """SIGKILL, as a crash or an OOM kill would."""
        os.kill(self.pid, signal.SIGKILL)
        self.proc.wait()
        self.guardian.remove_pid(self.pid)

    def restart(self):
        """Starts Kafka again on its data (no format); returns at once."""
        self._spawn()

    def wait_restarted(self, timeout=600):
        self.wait_ready(timeout)

    def wait_ready(self, timeout=180):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise BrokerError(f"{self.label} exited during startup ({self.proc.returncode}); end of "
                                  f"{self.log}:\n{_tail(self.log)}")
            r = subprocess.run([self.benchtool, "ready", "-b", self.bootstrap, "-w", "2", *self.ready_args],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True)
            if r.returncode == 0:
                return
            time.sleep(0.5)
        raise BrokerError(f"{self.label} did not answer Metadata within {timeout} s; end of {self.log}:\n"
                          f"{_tail(self.log)}")

    def stop(self):
        if self.pid is not None:
            procs.stop_pid(self.pid, self.config, grace=60)
            if self.proc:
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            self.guardian.remove_pid(self.pid)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def meter_pids(self):
        return [self.pid]

    def data_dir(self):
        return os.path.join(self.home, "data")

    def log_tail(self):
        return _tail(self.log)


def new_cluster_id():
    """A Kafka cluster id: 16 random bytes in URL-safe base64 without padding, not starting with '-'."""
    while True:
        cid = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cid.startswith("-"):
            return cid


def log_bytes(path):
    """Bytes in the segment files (*.log) under path: the retained log, without preallocated indexes."""
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            if not name.endswith(".log"):
                continue
            try:
                total += os.path.getsize(os.path.join(dirpath, name))
            except OSError:
                pass
    return total
