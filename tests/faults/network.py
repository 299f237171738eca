"""Cutting one broker off ZooKeeper and its peers on the loopback, and nothing else on this machine.

Every broker runs in a cgroup of its own (cgroup v2), created here; an iptables chain of this run, jumped to
from OUTPUT, drops the TCP segments that the cut broker's sockets send to ZooKeeper's and the other brokers'
ports, and those the other brokers send to its port. Clients still reach it, so a broker that believes it
leads keeps getting produce requests, and must not acknowledge them. A segment that is dropped, not refused,
looks to both ends like a network that went silent: ZooKeeper's session times out, followers stop hearing.

cleanup() removes the chain and the cgroups; the caller runs it once every broker process has exited.
"""
import os
import subprocess


def _cgroup2_root():
    # The unified hierarchy is at /sys/fs/cgroup, or at /sys/fs/cgroup/unified beside v1 controllers; only its
    # directories have cgroup.subtree_control.
    for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if os.path.exists(os.path.join(root, "cgroup.subtree_control")):
            return root
    raise RuntimeError("no cgroup v2 hierarchy is mounted (looked at /sys/fs/cgroup and /sys/fs/cgroup/unified)")


def _iptables(*args, check=True):
    result = subprocess.run(["iptables", "-w", *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"iptables {' '.join(args)} failed: {result.stderr.strip()}")
    return result.returncode == 0


class LoopbackCut:
    def __init__(self, zk_port, broker_ports):
        if os.geteuid() != 0:
            raise RuntimeError("the network cut needs root (cgroups and iptables)")
        self.zk_port = zk_port
        self.broker_ports = broker_ports  # broker id -> Kafka port
        self.name = f"ferry-faults-{os.getpid()}"
        self.root = _cgroup2_root()
        self.chain = f"FERRY-FAULTS-{os.getpid()}"
        os.makedirs(os.path.join(self.root, self.name), exist_ok=True)
        for b in broker_ports:
            os.makedirs(self._dir(b), exist_ok=True)
        _iptables("-N", self.chain)
        _iptables("-I", "OUTPUT", "-j", self.chain)
        self.cut_broker = None

    def _dir(self, broker):
        return os.path.join(self.root, self.name, f"broker-{broker}")

    def _path(self, broker):
        return f"{self.name}/broker-{broker}"

    def enter(self, broker):
        """For preexec_fn: moves the calling (child) process into the broker's cgroup, so the broker it starts
        and every socket that broker opens belong to it."""
        with open(os.path.join(self._dir(broker), "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def members(self, broker):
        with open(os.path.join(self._dir(broker), "cgroup.procs")) as f:
            return [int(line) for line in f if line.strip()]

    def _drop(self, sender, port):
        _iptables("-A", self.chain, "-p", "tcp", "-m", "cgroup", "--path", self._path(sender), "--dport", str(port),
                  "-j", "DROP")

    def cut(self, broker):
        assert self.cut_broker is None, "one cut at a time"
        self._drop(broker, self.zk_port)
        for other, port in self.broker_ports.items():
            if other == broker:
                continue
            self._drop(broker, port)
            self._drop(other, self.broker_ports[broker])
        self.cut_broker = broker

    def dropped(self):
        """{(sending broker, destination port): TCP segments dropped} by the cut's rules so far."""
        listing = subprocess.run(["iptables", "-w", "-L", self.chain, "-v", "-x", "-n"], capture_output=True,
                                 text=True, check=True).stdout
        out = {}
        for line in listing.splitlines()[2:]:
            fields = line.split()
            prefix = f"{self.name}/broker-"
            sender = next((int(f[len(prefix):]) for f in fields if f.startswith(prefix)), None)
            port = next((int(f[len("dpt:"):]) for f in fields if f.startswith("dpt:")), None)
            if sender is not None and port is not None:
                out[(sender, port)] = out.get((sender, port), 0) + int(fields[0])
        return out

    def heal(self):
        _iptables("-F", self.chain)
        self.cut_broker = None

    def cleanup(self):
        _iptables("-D", "OUTPUT", "-j", self.chain, check=False)
        _iptables("-F", self.chain, check=False)
        _iptables("-X", self.chain, check=False)
        for b in self.broker_ports:
            try:
                os.rmdir(self._dir(b))
            except OSError:
                pass
        try:
            os.rmdir(os.path.join(self.root, self.name))
        except OSError:
            pass
