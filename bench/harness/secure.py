"""The TLS scenarios, on single brokers with TLS and SASL listeners, started after the plaintext phases:

- tls-produce, tls-consume: 100 B and 1 KiB records, one partition, over an SSL listener with client
  certificates (rdkafka_performance, ProducerPerformance, ConsumerPerformance), with the broker's CPU per GB.
- connect: connection set-up (bench/tools/connbench.c): full TLS handshakes per second on the SSL listener,
  and SCRAM-SHA-512 logins per second over SASL_PLAINTEXT and over SASL_SSL.

Ferry runs as scripts/local-cluster --secure makes it (its certificates, made with openssl, and its SCRAM user
ferry-broker); Kafka 4 gets the same certificates, the same user and password (kafka-storage format
--add-scram) and the same kinds of listeners.
"""
import json
import os
import shutil

from . import brokers, loads, ports, procs
from .scenarios import Bench

# (id, title, record size, records per run in the full run for rdkafka_performance and for
# ProducerPerformance, records in the quick run); one partition each, read back afterwards.
TLS_PRODUCE = [
    ("s100-1", "100 B, 1 partition, SSL", 100, (3_000_000, 1_000_000), 20_000),
    ("s1k-1", "1 KiB, 1 partition, SSL", 1024, (600_000, 200_000), 5_000),
]
# (id, title, connbench mode, listener): what a new connection costs before its first request.
CONNECT = [
    ("tls-handshakes", "full TLS handshakes (client certificate) and one ApiVersions", "handshakes", "ssl"),
    ("scram-logins", "SCRAM-SHA-512 logins over SASL_PLAINTEXT", "logins", "sasl_plaintext"),
    ("scram-tls-logins", "TLS handshake and SCRAM-SHA-512 login over SASL_SSL", "logins", "sasl_ssl"),
]
CONNECT_PROFILE = {"full": {"seconds": 10, "threads": 4}, "quick": {"seconds": 2, "threads": 2}}
SCRAM_USER = "ferry-broker"  # the user scripts/local-cluster --secure makes; Kafka gets it too
JAAS_SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


def _inline_pem(path):
    """A PEM file as one properties value (\\n for each line break, which java.util.Properties reads back)."""
    with open(path) as f:
        return f.read().strip().replace("\n", "\\n")


class Certificates:
    """The files scripts/local-cluster --secure made in DIR/tls, and the client settings that use them."""

    def __init__(self, tls_dir):
        self.dir = tls_dir
        self.ca = os.path.join(tls_dir, "ca.pem")
        self.password_file = os.path.join(tls_dir, "broker-password")

    def path(self, name):
        return os.path.join(self.dir, name)

    def password(self):
        with open(self.password_file) as f:
            return f.read().strip()

    def rdkafka_ssl(self):
        return {"security.protocol": "ssl", "ssl.ca.location": self.ca,
                "ssl.certificate.location": self.path("client.crt"), "ssl.key.location": self.path("client.key")}

    def java_ssl(self):
        # The client's key inline: a PEM key store file needs a key password in Kafka's client, this does not.
        return {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": self.ca,
                "ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": _inline_pem(self.path("client.crt")),
                "ssl.keystore.key": _inline_pem(self.path("client.key"))}


class FerryTls(brokers.Ferry):
    """Ferry with scripts/local-cluster --secure: SASL_SSL on P (its inter-broker listener), SSL with client
    certificates on P+2000, SASL_PLAINTEXT on P+3000."""

    def __init__(self, root, run_dir, build_dir, label, port, zk_port, guardian, benchtool, key="ferry"):
        super().__init__(root, run_dir, build_dir, label, port, zk_port, guardian, benchtool, key=key)
        self.data = os.path.join(run_dir, "tls-cluster" if key == "ferry" else f"tls-cluster-{key}")
        self.log = os.path.join(self.data, "broker-0", "broker.log")
        self.up_args = ["--secure"]
        self.bootstrap = f"127.0.0.1:{port + 2000}"
        self.listeners = {"ssl": self.bootstrap, "sasl_ssl": f"127.0.0.1:{port}",
                          "sasl_plaintext": f"127.0.0.1:{port + 3000}"}
        self.certificates = Certificates(os.path.join(self.data, "tls"))

    def wait_ready(self):
        pass  # scripts/local-cluster up returns once the broker is ready


class KafkaTls(brokers.Kafka):
    """Kafka 4 (KRaft, one combined node) with PLAINTEXT (its inter-broker listener), SSL with client
    certificates, SASL_SSL and SASL_PLAINTEXT (SCRAM-SHA-512) listeners and Ferry's certificates."""

    def __init__(self, key, label, version, lib, run_dir, port, controller_port, guardian, benchtool, certificates):
        names = {"PLAINTEXT": port, "SSL": port + 1, "SASL_SSL": port + 2, "SASL_PLAINTEXT": port + 3}
        listeners = ",".join(f"{n}://127.0.0.1:{p}" for n, p in names.items())
        s = {
            "process.roles": "broker,controller",
            "node.id": "1",
            "controller.quorum.bootstrap.servers": f"127.0.0.1:{controller_port}",
            "listeners": f"{listeners},CONTROLLER://127.0.0.1:{controller_port}",
            "advertised.listeners": listeners,
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "listener.security.protocol.map": "CONTROLLER:PLAINTEXT," + ",".join(f"{n}:{n}" for n in names),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.certificate.chain": _inline_pem(certificates.path("broker.crt")),
            "ssl.keystore.key": _inline_pem(certificates.path("broker.key")),
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": certificates.ca,
            "listener.name.ssl.ssl.client.auth": "required",
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": JAAS_SCRAM,
            "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": JAAS_SCRAM,
            **brokers.SAME_ON_BOTH, **brokers.SAME_FOR_GROUPS, **brokers.KAFKA_SINGLE_NODE,
            **brokers.KAFKA4_SINGLE_NODE,
        }
        scram = f"SCRAM-SHA-512=[name={SCRAM_USER},password={certificates.password()}]"
        super().__init__(key, label, version, lib, run_dir, port, guardian, benchtool, True,
                         home=os.path.join(run_dir, f"{key}-tls"), settings=s, format_args=["--add-scram", scram])
        self.bootstrap = f"127.0.0.1:{names['SSL']}"
        self.listeners = {"ssl": self.bootstrap, "sasl_ssl": f"127.0.0.1:{names['SASL_SSL']}",
                          "sasl_plaintext": f"127.0.0.1:{names['SASL_PLAINTEXT']}"}
        self.certificates = certificates
        self.ready_args = [a for k, v in certificates.rdkafka_ssl().items() for a in ("-X", f"{k}={v}")]


def free_tls_base():
    """P with P-1 (ZooKeeper), P..P+5 (Ferry, Kafka's four listeners and its controller), P+1000 (Ferry's admin
    HTTP), P+2000 and P+3000 (Ferry's SSL and SASL_PLAINTEXT listeners) free."""
    for _ in range(10):
        base = ports.free_base(span=6)
        if all(ports.port_free(p) for p in (base + 2000, base + 3000)):
            return base
    raise RuntimeError("no free port range on 127.0.0.1 for the TLS systems")


def start_systems(root, run_dir, build_dir, ferry_label, ferry_describe, kafka, guardian, benchtool, say, started,
                  baseline=None):
    """Ferry (first: its certificates are Kafka's too), when given as (key, spec, lib) Kafka 4, and when given as
    (build_dir, label, describe) the --baseline Ferry with the same certificates; each is added to `started`
    before it starts, so that whatever started is stopped even when the next one fails."""
    base = free_tls_base()
    ferry = FerryTls(root, run_dir, build_dir, ferry_label, base, base - 1, guardian, benchtool)
    ferry.short, ferry.describe = "Ferry", f"scripts/local-cluster up --secure, {ferry_describe}"
    say(f"starting {ferry.label} with TLS and SASL listeners (scripts/local-cluster --secure, "
        f"SSL on {ferry.bootstrap})")
    started.append(ferry)
    ferry.start()
    if kafka:
        key, spec, lib = kafka
        k = KafkaTls(key, spec["label"], spec["version"], lib, run_dir, base + 1, base + 5, guardian, benchtool,
                     ferry.certificates)
        k.short = spec["short"]
        k.describe = ("the same node as above with PLAINTEXT (inter-broker), SSL (client certificates), SASL_SSL and "
                      "SASL_PLAINTEXT (SCRAM-SHA-512) listeners, Ferry's certificates and SCRAM user")
        say(f"starting {k.label} with TLS and SASL listeners (SSL on {k.bootstrap})")
        started.append(k)
        k.start()
        k.wait_ready()
    if baseline:
        bdir, blabel, bdescribe = baseline
        bbase = free_tls_base()
        b = FerryTls(root, run_dir, bdir, blabel, bbase, bbase - 1, guardian, benchtool, key="ferry-base")
        b.short, b.describe = "Ferry base", f"scripts/local-cluster up --secure, {bdescribe}"
        # scripts/local-cluster makes certificates only where there are none: the load generators trust one CA.
        shutil.copytree(ferry.certificates.dir, b.certificates.dir)
        say(f"starting {b.label} with TLS and SASL listeners (SSL on {b.bootstrap})")
        started.append(b)
        b.start()


class TlsBench(Bench):
    """Throughput over SSL and the cost of connection set-up; shares the bookkeeping of every measured run."""

    cells = TLS_PRODUCE  # the produce scenarios, each read back

    def __init__(self, mode, systems, tools, connbench, run_dir, say, reps=None, scale=1.0):
        super().__init__(mode, systems, tools.secured(systems[0].certificates.rdkafka_ssl(),
                                                      systems[0].certificates.java_ssl()),
                         run_dir, say, reps=reps, scale=scale)
        self.connbench = connbench
        self.connect_profile = CONNECT_PROFILE[mode]

    def scenarios(self):
        out = []
        for sid, title, size, full_n, quick_n in self.cells:
            n = full_n if self.mode == "full" else (quick_n, quick_n)
            out.append({"id": sid, "title": title, "size": size, "partitions": 1, "batched": True,
                        "records": {"rdkafka_performance": max(1, int(n[0] * self.scale)),
                                    "ProducerPerformance": max(1, int(n[1] * self.scale))},
                        "consumed": True, "configs": {}})
        return out

    def count_runs(self):
        reps, nsys = self.profile["reps"], len(self.systems)
        return len(self.cells) * reps * nsys * 4 + len(CONNECT) * reps * nsys

    def run(self):
        self.total = self.count_runs()
        self.warmup()
        self.say(f"TLS: {self.total} measured runs ({', '.join(s.label for s in self.systems)})")
        scenarios = self.scenarios()
        self.produce(scenarios, kind="tls-produce")
        self.consume(scenarios, kind="tls-consume", modes=("warm",))
        self.connect()

    def connect(self):
        p = self.connect_profile
        for sid, title, mode, listener in CONNECT:
            for rep in range(self.profile["reps"]):
                for system in self.order(rep):
                    log = os.path.join(self.logs, f"{system.key}-{sid}-{rep}.log")

                    def go(system=system, mode=mode, listener=listener, log=log):
                        return self.connections(system, mode, listener, p["seconds"], p["threads"], log)

                    rec = self.measure("connect", sid, title, "connbench", system, rep, go,
                                       lambda m: f"{m['per_s']:.0f}/s, p99 {m['p99_ms']:.1f} ms",
                                       {"threads": p["threads"], "seconds": p["seconds"]})
                    if rec.get("ok") and rec["metrics"]["done"]:
                        rec["metrics"]["broker_cpu_ms_each"] = rec["broker_cpu_s"] * 1000 / rec["metrics"]["done"]

    def connections(self, system, mode, listener, seconds, threads, log):
        certs = system.certificates
        argv = [self.connbench, mode, "-b", system.listeners[listener], "-s", str(seconds), "-t", str(threads)]
        if listener != "sasl_plaintext":
            argv += ["--ca", certs.ca]
        if mode == "handshakes":
            argv += ["--cert", certs.path("client.crt"), "--key", certs.path("client.key")]
        else:
            argv += ["-u", SCRAM_USER, "-w", certs.password_file]
        code, out, wall, cpu = procs.run_tool(argv, log, seconds + 120, self.say, f"connbench {mode}")
        if code != 0:
            raise loads.ToolFailed(f"connbench {mode} exited {code}: {out.strip()[-300:]}")
        try:
            r = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError) as e:
            raise loads.ToolFailed(f"connbench {mode} printed no result: {out.strip()[-300:]}") from e
        r.update(client_cpu_s=round(cpu, 2), wall_s=round(wall, 2))
        return r

