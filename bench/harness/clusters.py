"""Three-broker clusters for the replicated scenarios: Ferry (scripts/local-cluster --brokers 3, with its own
ZooKeeper), Apache Kafka 3.9 in ZooKeeper mode (three brokers on Ferry's ZooKeeper, under a chroot of their
own) and Apache Kafka 4.x in KRaft mode (three combined broker-and-controller nodes, a static three-voter
quorum). Each cluster is started once and kept up while the load alternates between them.

A cluster can SIGKILL one of its brokers, start it again, and name its active controller: the failover
scenario needs all three.
"""
import os
import json
import subprocess

from . import brokers, procs

BROKERS = 3

# Set the same on every cluster (Ferry's defaults and Kafka's agree on these; set so a change of default
# cannot skew the comparison): the ZooKeeper session that decides when a killed broker counts as gone, and
# the leader rebalance that moves leaders back to a restarted broker.
SAME_ON_CLUSTERS = {
    "zookeeper.session.timeout.ms": "18000",
    "auto.leader.rebalance.enable": "true",
    "leader.imbalance.check.interval.seconds": "300",
    "unclean.leader.election.enable": "false",
}
KRAFT_ONLY = {"zookeeper.session.timeout.ms"}


def _json(out):
    try:
        return json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {}


class FerryCluster:
    def __init__(self, root, run_dir, build_dir, label, base, zk_port, guardian, benchtool, key="ferry"):
        self.root, self.build_dir, self.label, self.key = root, build_dir, label, key
        self.data = os.path.join(run_dir, f"cluster3-{key}")
        self.base, self.zk_port = base, zk_port
        self.bootstrap = ",".join(f"127.0.0.1:{base + i}" for i in range(BROKERS))
        self.zookeeper = f"127.0.0.1:{zk_port}"
        self.guardian, self.benchtool = guardian, benchtool
        self.settings = {**brokers.SAME_ON_BOTH, **SAME_ON_CLUSTERS}
        self.log = os.path.join(self.data, "broker-0", "broker.log")
        self.short = self.describe = ""

    def _cluster(self, *args, timeout=900):
        argv = [os.path.join(self.root, "scripts", "local-cluster"), "--data", self.data, *args]
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise brokers.BrokerError(f"scripts/local-cluster {' '.join(args)} failed:\n{r.stdout[-2000:]}"
                                      f"{r.stderr[-3000:]}")
        return r

    def start(self):
        self.guardian.add_command([os.path.join(self.root, "scripts", "local-cluster"), "--data", self.data, "down"])
        args = ["up", "--brokers", str(BROKERS), "--base-port", str(self.base), "--zk-port", str(self.zk_port),
                "--build-dir", self.build_dir, "--timeout", "120"]
        for k, v in self.settings.items():
            args += ["--override", f"{k}={v}"]
        self._cluster(*args)

    def wait_ready(self):
        pass  # local-cluster up returns once every broker answers /v1/ready

    def addresses(self):
        return [f"127.0.0.1:{self.base + i}" for i in range(BROKERS)]

    def pid_of(self, broker):
        try:
            with open(os.path.join(self.data, f"broker-{broker}.pid")) as f:
                pid = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if procs.alive_with_marker(pid, self.data) else None

    def meter_pids(self):
        return [p for p in (self.pid_of(i) for i in range(BROKERS)) if p]

    def alive(self):
        return all(self.pid_of(i) for i in range(BROKERS))

    def kill(self, broker):
        self._cluster("kill", str(broker))

    def restart(self, broker):
        """Starts a killed broker again on its data and waits until it answers /v1/ready."""
        self._cluster("start", str(broker), "--timeout", "900")

    def controller(self):
        r = subprocess.run([self.benchtool, "controller", "-z", self.zookeeper, "-w", "60"], capture_output=True,
                           text=True, timeout=90)
        c = _json(r.stdout).get("controller")
        if c is None:
            raise brokers.BrokerError(f"no controller in {self.zookeeper}/controller: {r.stdout.strip()}")
        return c

    def stop(self):
        if os.path.exists(os.path.join(self.data, "cluster.env")):
            subprocess.run([os.path.join(self.root, "scripts", "local-cluster"), "--data", self.data, "down"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
        self.guardian.remove_command([os.path.join(self.root, "scripts", "local-cluster"), "--data", self.data,
                                      "down"])

    def data_dirs(self):
        return [os.path.join(self.data, f"broker-{i}", "data") for i in range(BROKERS)]

    def log_tail(self):
        return "".join(f"--- broker {i}\n{brokers._tail(os.path.join(self.data, f'broker-{i}', 'broker.log'), 15)}"
                       for i in range(BROKERS))


class KafkaCluster:
    """Three Apache Kafka nodes: ZooKeeper mode on the given ZooKeeper (a chroot per cluster), or KRaft with
    every node a broker and one of three static controller voters."""

    def __init__(self, key, label, version, lib, run_dir, ports, guardian, benchtool, kraft, zookeeper=None,
                 controller_ports=None, tools_lib=None):
        self.key, self.label, self.version, self.kraft = key, label, version, kraft
        self.guardian, self.benchtool, self.tools_lib = guardian, benchtool, tools_lib or lib
        self.home = os.path.join(run_dir, f"cluster3-{key}")
        self.bootstrap = ",".join(f"127.0.0.1:{p}" for p in ports)
        self.chroot = f"/{key}-cluster3"
        self.zookeeper = None if kraft else f"{zookeeper}{self.chroot}"
        cluster_id = brokers.new_cluster_id() if kraft else None
        self.nodes = []
        for i, port in enumerate(ports):
            s = {"listeners": f"PLAINTEXT://127.0.0.1:{port}", "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}"}
            if kraft:
                voters = ",".join(f"{j}@127.0.0.1:{cp}" for j, cp in enumerate(controller_ports))
                s.update({
                    "process.roles": "broker,controller", "node.id": str(i), "controller.quorum.voters": voters,
                    "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_ports[i]}",
                    "controller.listener.names": "CONTROLLER",
                    "listener.security.protocol.map": "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
                })
            else:
                s.update({"broker.id": str(i), "zookeeper.connect": self.zookeeper})
            s.update(brokers.SAME_ON_BOTH)
            s.update({k: v for k, v in SAME_ON_CLUSTERS.items() if not (kraft and k in KRAFT_ONLY)})
            self.nodes.append(brokers.Kafka(key, f"{label} node {i}", version, lib, run_dir, port, guardian, benchtool,
                                            kraft, home=os.path.join(self.home, f"node-{i}"), settings=s,
                                            cluster_id=cluster_id))
        self.settings = {k: v for k, v in self.nodes[0].settings.items()
                         if k not in ("listeners", "advertised.listeners", "node.id", "broker.id", "log.dirs")}
        self.log = self.nodes[0].log
        self.short = self.describe = ""

    def start(self):
        for n in self.nodes:
            os.makedirs(n.home, exist_ok=True)
            n.start()

    def wait_ready(self):
        for n in self.nodes:
            n.wait_ready()

    def addresses(self):
        return [n.bootstrap for n in self.nodes]

    def meter_pids(self):
        return [n.pid for n in self.nodes if n.alive()]

    def alive(self):
        return all(n.alive() for n in self.nodes)

    def kill(self, broker):
        self.nodes[broker].kill()

    def restart(self, broker):
        self.nodes[broker].restart()
        self.nodes[broker].wait_restarted(900)

    def controller(self):
        if not self.kraft:
            r = subprocess.run([self.benchtool, "controller", "-z", self.zookeeper, "-w", "60"], capture_output=True,
                               text=True, timeout=90)
            c = _json(r.stdout).get("controller")
        else:
            # The active controller of the quorum, as kafka-metadata-quorum.sh describe --status prints it.
            argv = self.nodes[0]._java("org.apache.kafka.tools.MetadataQuorumCommand", "--bootstrap-server",
                                       self.bootstrap, "describe", "--status", heap=["-Xmx256M"], log4j_level="WARN")
            r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
            c = next((int(line.split(":")[1]) for line in r.stdout.splitlines() if line.startswith("LeaderId:")),
                     None)
        if c is None:
            raise brokers.BrokerError(f"{self.label}: no active controller found: {r.stdout.strip()[-500:]}")
        return c

    def stop(self):
        for n in self.nodes:
            n.stop()

    def data_dirs(self):
        return [n.data_dir() for n in self.nodes]

    def log_tail(self):
        return "".join(f"--- node {i}\n{brokers._tail(n.log, 15)}" for i, n in enumerate(self.nodes))
