"""The ACL scenarios (issue 32): what Kafka's authorizer costs as the ACLs grow. Two Ferry brokers started as
scripts/local-cluster --secure makes them, both with authorizer.class.name set: one holds only the grants the load
needs, the other those and ACL_COUNT more (10,000; 1,000 in a quick run), as a multi-tenant cluster would have them:
literal topics, prefixed topics and groups of other principals. The loads of the TLS phase (acls-produce,
acls-consume: 100 B and 1 KiB records, one partition, acks=1) run on both over the SSL listener as User:client (the
client certificate, through local-cluster's principal mapping rule), so every request is authorized against the
ACLs; the TLS phase's Ferry is the same broker without an authorizer. The claim: "10,000 ACLs / grants only" stays
within 5% (a decision searches an index by resource, whatever the number of ACLs).

The ACLs are made with Kafka's kafka-acls (AclCommand) as ferry-broker, the brokers' own login (a super user), over
SASL_PLAINTEXT; each broker's ferry_acls gauge says when it has them all.
"""
import os
import shutil
import time
import urllib.request

from . import loads, procs
from .secure import SCRAM_USER, FerryTls, TlsBench, free_tls_base

ACL_PRODUCE = [
    ("a100-1", "100 B, 1 partition, SSL, authorized", 100, (3_000_000, 1_000_000), 20_000),
    ("a1k-1", "1 KiB, 1 partition, SSL, authorized", 1024, (600_000, 200_000), 5_000),
]
ACL_COUNT = {"full": 10_000, "quick": 1_000}
AUTHORIZER = "kafka.security.authorizer.AclAuthorizer"
CLIENT = "User:client"  # local-cluster --secure's client certificate, through its principal mapping rule
GRANTS = 3  # All on Topic:*, Group:* and the cluster, for CLIENT
TIMEOUTS = {"request.timeout.ms": "600000", "default.api.timeout.ms": "600000"}


class FerryAcls(FerryTls):
    def __init__(self, root, run_dir, build_dir, label, port, zk_port, guardian, benchtool, key):
        super().__init__(root, run_dir, build_dir, label, port, zk_port, guardian, benchtool, key=key)
        self.settings["authorizer.class.name"] = AUTHORIZER
        self.admin = f"http://127.0.0.1:{port + 1000}/metrics"

    def acls(self):
        """The ferry_acls gauge: the ACLs this broker holds."""
        with urllib.request.urlopen(self.admin, timeout=10) as r:
            for line in r.read().decode().splitlines():
                if line.startswith("ferry_acls "):
                    return int(float(line.split()[1]))
        raise loads.ToolFailed(f"{self.label}: no ferry_acls on {self.admin}")


def start_systems(root, run_dir, build_dir, ferry_label, ferry_describe, guardian, benchtool, say, started, mode):
    """The two brokers, each added to `started` before it starts (so whatever started is stopped)."""
    count = ACL_COUNT[mode]
    certificates = None
    for key, label, short in (("ferry-acl-grants", f"{ferry_label}, grants only", "grants only"),
                              ("ferry-acl-many", f"{ferry_label}, {count:,} more ACLs", f"{count:,} ACLs")):
        base = free_tls_base()
        ferry = FerryAcls(root, run_dir, build_dir, label, base, base - 1, guardian, benchtool, key)
        ferry.short = short
        ferry.describe = (f"scripts/local-cluster up --secure, authorizer.class.name={AUTHORIZER}, "
                          f"{ferry_describe}")
        if certificates:
            # scripts/local-cluster makes certificates only where there are none: the load generators trust one CA.
            shutil.copytree(certificates, ferry.certificates.dir)
        say(f"starting {ferry.label} (scripts/local-cluster --secure, SSL on {ferry.bootstrap})")
        started.append(ferry)
        ferry.start()
        certificates = ferry.certificates.dir


class AclBench(TlsBench):
    """The TLS phase's throughput scenarios on the two brokers, once their ACLs are in place."""

    cells = ACL_PRODUCE

    def __init__(self, mode, systems, tools, run_dir, say, reps=None, scale=1.0):
        super().__init__(mode, systems, tools, None, run_dir, say, reps=reps, scale=scale)
        self.count = ACL_COUNT[mode]

    def count_runs(self):
        return len(self.cells) * self.profile["reps"] * len(self.systems) * 4

    def run(self):
        grants, many = self.systems
        self.say("ACLs: granting User:client what the load needs on both brokers")
        for system in self.systems:
            self.acl_tool(system, "--allow-principal", CLIENT, "--operation", "All", "--topic", "*", "--group", "*",
                          "--cluster")
        self.say(f"ACLs: {self.count:,} more on {many.label} (other principals' topics, prefixes and groups)")
        started = time.monotonic()
        literal, prefixed = self.count // 2, self.count // 4
        groups = self.count - literal - prefixed
        self.acl_tool(many, "--allow-principal", "User:tenant", "--operation", "Read",
                      *[a for i in range(literal) for a in ("--topic", f"tenant-topic-{i:05d}")])
        self.acl_tool(many, "--allow-principal", "User:tenant", "--operation", "Write", "--resource-pattern-type",
                      "prefixed", *[a for i in range(prefixed) for a in ("--topic", f"tenant-{i:05d}-")])
        self.acl_tool(many, "--allow-principal", "User:tenant", "--operation", "Read",
                      *[a for i in range(groups) for a in ("--group", f"tenant-group-{i:05d}")])
        for system, want in ((grants, GRANTS), (many, GRANTS + self.count)):
            self.await_acls(system, want)
        self.say(f"ACLs: in place in {time.monotonic() - started:.0f} s")
        self.total = self.count_runs()
        self.warmup()
        self.say(f"ACLs: {self.total} measured runs ({', '.join(s.label for s in self.systems)})")
        scenarios = self.scenarios()
        self.produce(scenarios, kind="acls-produce")
        self.consume(scenarios, kind="acls-consume", modes=("warm",))

    def acl_tool(self, system, *args):
        """kafka-acls --add as ferry-broker on the broker's SASL_PLAINTEXT listener."""
        certs = system.certificates
        props = os.path.join(self.tools.tmp, f"acl-admin-{system.key}.properties")
        jaas = (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{SCRAM_USER}" '
                f'password="{certs.password()}";')
        loads._props_file(props, {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
                                  "sasl.jaas.config": jaas, **TIMEOUTS})
        argv = loads.java_tool_argv(self.tools.kafka_lib, self.tools.log4j, "org.apache.kafka.tools.AclCommand",
                                    "--bootstrap-server", system.listeners["sasl_plaintext"], "--command-config",
                                    props, "--add", "--force", *args)
        log = os.path.join(self.logs, f"{system.key}-acls.log")
        code, out, _, _ = procs.run_tool(argv, log, 900, self.say, "kafka-acls")
        if code != 0:
            raise loads.ToolFailed(f"kafka-acls on {system.label} exited {code}: {out.strip()[-500:]}")

    def await_acls(self, system, want):
        deadline = time.monotonic() + 300
        while (have := system.acls()) != want:
            if time.monotonic() > deadline:
                raise loads.ToolFailed(f"{system.label} holds {have} ACLs, not the {want} made")
            time.sleep(0.5)
