"""Certificates the operator issues and renews (issue 33 §2), against a real kube-apiserver and one local-cluster
--secure broker whose TLS listeners serve the brokers' certificate from the operator's Secret.

The operator keeps a cluster CA and a clients CA in Secrets, made by itself, and the brokers' certificate in a third;
the test copies that Secret's keys into files as the kubelet does for a mounted Secret (each file replaced whole),
and the broker takes changed files without a restart. Lifetimes are seconds here, so the whole renewal is seen in
a minute and a half: the brokers' and the User's certificates are issued again every 15 s (valid 40 s, renewed
25 s before their end), and the CAs (valid 90 s) get a successor 40 s before their end that every bundle trusts,
which signs 15 s later, after which the old CA stays trusted until it ends.

Through it all a confluent-kafka producer and consumer run over the SSL listener with a TLS User's certificate and
the bundle as it was when they started (trusting both CAs), and every second a new TLS connection made with the
Secrets' current contents must verify. Nothing acknowledged may be lost."""
import base64
import os
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time
import uuid

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from conftest import BackgroundLoop, started_cluster, wait_until
from test_operator_users import AUTHORIZER, OPERATOR_USER, secure_operator, user, wait_ready

NS = "default"
CLUSTER_CA = "certs-cluster-ca"
CLIENTS_CA = "certs-clients-ca"
BROKER_TLS = "certs-broker-tls"
LIFETIMES = ["--certificate-validity", "40s", "--certificate-renewal", "25s", "--ca-validity", "90s",
             "--ca-renewal", "40s", "--ca-trust-propagation", "15s"]


def secret_data(kube, name):
    secret = kube.get("secret", name, NS)
    return {k: base64.b64decode(v).decode() for k, v in (secret or {}).get("data", {}).items()}


def write_whole(path, text):
    """Replaces `path` in one step (a rename), as the kubelet swaps a Secret volume's files."""
    temporary = f"{path}.{uuid.uuid4().hex}"
    with open(temporary, "w") as f:
        f.write(text)
    os.replace(temporary, path)


class SecretFiles(BackgroundLoop):
    """Copies Secrets' keys into files every second: {secret name: {key: path}}; a tuple of keys is written
    joined into one file (a key with its certificate, which must not be read half-renewed)."""

    def __init__(self, kube, files):
        super().__init__()
        self.kube = kube
        self.files = files
        self.sync()

    def sync(self):
        for name, keys in self.files.items():
            data = secret_data(self.kube, name)
            for key, path in keys.items():
                parts = key if isinstance(key, tuple) else (key,)
                if not all(part in data for part in parts):
                    continue
                text = "".join(data[part] for part in parts)
                if not os.path.exists(path) or open(path).read() != text:
                    write_whole(path, text)

    def step(self):
        self.sync()
        self._stop.wait(1)


@pytest.fixture(scope="module")
def files():
    with tempfile.TemporaryDirectory(prefix="ferry-certs-") as d:
        yield d


@pytest.fixture(scope="module")
def ferry(files):
    """The broker, its TLS listeners reading `files`: a stand-in certificate until the operator's Secret is copied
    there (the broker must start before the operator, which reaches it through ZooKeeper)."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", f"{files}/stand-in.key", "-out", f"{files}/stand-in.crt", "-subj", "/CN=stand-in",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-days", "1"],
                   check=True, capture_output=True)
    stand_in = open(f"{files}/stand-in.crt").read()
    write_whole(f"{files}/keystore.pem", open(f"{files}/stand-in.key").read() + stand_in)
    write_whole(f"{files}/truststore.pem", stand_in)
    # Kafka's authorizer, which the operator's User reconcile needs; applications need no ACLs here.
    with started_cluster(1, overrides=[f"ssl.keystore.location={files}/keystore.pem",
                                       f"ssl.truststore.location={files}/truststore.pem",
                                       f"authorizer.class.name={AUTHORIZER}", "allow.everyone.if.no.acl.found=true",
                                       f"super.users=User:{OPERATOR_USER}"], secure=True) as c:
        yield c


@pytest.fixture(scope="module")
def operator(kube, ferry, files):
    op = secure_operator(
        kube, ferry, "it", ca=os.path.join(files, "cluster-ca.crt"),
        args=["--cluster-ca-secret", f"{NS}/{CLUSTER_CA}", "--clients-ca-secret", f"{NS}/{CLIENTS_CA}",
              "--broker-certificate-secret", f"{NS}/{BROKER_TLS}",
              "--broker-certificate-addresses", "localhost,127.0.0.1", *LIFETIMES])
    wait_until(lambda: secret_data(kube, BROKER_TLS).get("keystore.pem"), timeout=60,
               what="the brokers' certificate Secret")
    yield op
    op.stop()
    assert not op.sanitizer_reports(), op.sanitizer_reports()
    assert "BEGIN PRIVATE KEY" not in op.log(), "a private key reached the operator's log"


def certificates_in(pem):
    return pem.count("BEGIN CERTIFICATE")


def served_certificate(port, ca_file, identity_file):
    """The broker's certificate as a new TLS connection verifies it (an ssl error when it does not), presenting
    the client key and certificate in `identity_file`."""
    context = ssl.create_default_context(cafile=ca_file)
    context.load_cert_chain(identity_file)
    with socket.create_connection(("localhost", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname="localhost") as tls:
            return tls.getpeercert()


def refused_by_broker(port, ca_file, identity_file):
    """Whether the broker ends a TLS connection presenting `identity_file` instead of reading from it."""
    context = ssl.create_default_context(cafile=ca_file)
    context.load_cert_chain(identity_file)
    try:
        with socket.create_connection(("localhost", port), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as tls:
                # An ApiVersions request: a broker that accepted the certificate answers it.
                request = struct.pack(">hhih", 18, 0, 1, 1) + b"t"
                tls.sendall(struct.pack(">i", len(request)) + request)
                return tls.recv(1) == b""
    except (ssl.SSLError, ConnectionError):
        return True


def test_the_operator_renews_certificates_and_its_ca_under_a_running_producer_and_consumer(kube, ferry, operator,
                                                                                          files):
    broker = secret_data(kube, BROKER_TLS)
    assert certificates_in(broker["ca.crt"]) == 1 and certificates_in(broker["truststore.pem"]) == 2, \
        "the brokers trust the cluster CA and the clients CA"
    assert secret_data(kube, f"{CLUSTER_CA}-cert")["ca.crt"] == broker["ca.crt"], "the public bundle is the CA's"
    assert "ca.key" not in secret_data(kube, f"{CLUSTER_CA}-cert"), "the public bundle holds no key"
    original_ca = secret_data(kube, CLUSTER_CA)["ca.crt"]

    app = os.path.join(files, "app")
    os.makedirs(app)
    paths = {"tls.crt": f"{app}/tls.crt", "tls.key": f"{app}/tls.key", "ca.crt": f"{app}/ca.crt",
             ("tls.key", "tls.crt"): f"{app}/identity.pem"}
    sync = SecretFiles(kube, {BROKER_TLS: {"keystore.pem": f"{files}/keystore.pem",
                                          "truststore.pem": f"{files}/truststore.pem"},
                              f"{CLUSTER_CA}-cert": {"ca.crt": f"{files}/cluster-ca.crt"}})
    with sync:
        ssl_port = ferry.base_port + 2000
        # The broker takes the operator's certificate without a restart.
        wait_until(lambda: certificates_in(open(f"{files}/truststore.pem").read()) == 2, timeout=30,
                   what="the brokers' Secret copied")
        name = "app-" + uuid.uuid4().hex[:6]
        kube.apply(user(name, NS, {"authentication": {"type": "tls"}}))
        wait_ready(kube, name, NS)
        sync.files[name] = paths
        sync.sync()
        assert certificates_in(open(paths["ca.crt"]).read()) == 1, "a TLS User's Secret carries the cluster CA"

        def verified():
            try:
                return served_certificate(ssl_port, f"{files}/cluster-ca.crt", f"{app}/identity.pem")
            except (ssl.SSLError, OSError):
                return None
        wait_until(verified, timeout=30, interval=0.5, what="the broker serving the operator's certificate")
        client = {"bootstrap.servers": f"localhost:{ssl_port}", "security.protocol": "SSL",
                  "ssl.ca.location": paths["ca.crt"], "ssl.certificate.location": paths["tls.crt"],
                  "ssl.key.location": paths["tls.key"]}
        topic = "renewals"
        admin = AdminClient(client)
        admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)

        # Phase 1 comes first: the bundle trusts the successor too. Long-lived clients start with that bundle.
        wait_until(lambda: certificates_in(secret_data(kube, f"{CLUSTER_CA}-cert").get("ca.crt", "")) == 2,
                   timeout=90, interval=0.5, what="the cluster CA's successor in the trust bundle")
        wait_until(lambda: certificates_in(open(paths["ca.crt"]).read()) == 2, timeout=30, interval=0.5,
                   what="the User's Secret trusting both CAs")
        for key in ("ca.crt", "tls.crt", "tls.key"):
            write_whole(os.path.join(files, "started-" + key), secret_data(kube, name)[key])
        long_lived = {**client, "ssl.ca.location": os.path.join(files, "started-ca.crt"),
                      "ssl.certificate.location": os.path.join(files, "started-tls.crt"),
                      "ssl.key.location": os.path.join(files, "started-tls.key")}
        acked, failed, consumed = [], [], set()
        producer = confluent_kafka.Producer({**long_lived, "acks": "all", "enable.idempotence": True})
        consumer = confluent_kafka.Consumer({**long_lived, "group.id": "renewals", "auto.offset.reset": "earliest"})
        consumer.subscribe([topic])
        stop, flushed = threading.Event(), threading.Event()

        def produce():
            n = 0
            while not stop.is_set():
                producer.produce(topic, str(n).encode(),
                                 on_delivery=lambda err, m: (failed if err else acked).append(err or m.value()))
                producer.poll(0)
                n += 1
                stop.wait(0.05)
            producer.flush(30)
            flushed.set()

        def consume():
            # Once the producer has flushed: until every acknowledged message is in, or 30 s.
            deadline = None
            while True:
                if flushed.is_set():
                    deadline = deadline or time.monotonic() + 30
                    if set(acked) <= consumed or time.monotonic() > deadline:
                        return
                m = consumer.poll(0.5)
                if m is not None and not m.error():
                    consumed.add(m.value())

        threads = [threading.Thread(target=produce), threading.Thread(target=consume)]
        for t in threads:
            t.start()
        serials, handshake_failures = set(), []
        try:
            # Until the old CA has ended and left the bundle (90 s after the operator made it).
            def old_ca_gone():
                try:
                    served = served_certificate(ssl_port, f"{files}/cluster-ca.crt", f"{app}/identity.pem")
                    serials.add(served["serialNumber"])
                except (ssl.SSLError, OSError) as e:
                    handshake_failures.append(repr(e))
                bundle = secret_data(kube, f"{CLUSTER_CA}-cert").get("ca.crt", "")
                return original_ca not in bundle
            wait_until(old_ca_gone, timeout=120, interval=1, what="the old cluster CA leaving the bundle")
        finally:
            stop.set()
            for t in threads:
                t.join(60)
            consumer.close()

        assert not handshake_failures, handshake_failures
        assert not failed, f"deliveries failed: {failed[:5]}"
        assert len(acked) > 100, len(acked)
        assert set(acked) <= consumed, f"{len(set(acked) - consumed)} acknowledged messages were not consumed"
        assert len(serials) >= 3, f"the broker served {len(serials)} certificates; it should have been renewed"
        signing = secret_data(kube, CLUSTER_CA)["ca.crt"]
        assert signing != original_ca, "the successor signs now"
        reloads = {result: sum(value for (metric, labels), value in ferry.metrics(0).items()
                               if metric == "ferry_tls_certificate_reloads_total" and ("result", result) in labels)
                   for result in ("success", "refused")}
        assert reloads["success"] >= 3 and reloads["refused"] == 0, reloads

        # A client that trusts only the old CA is refused now: the broker's certificate comes from the successor.
        write_whole(os.path.join(files, "old-ca.crt"), original_ca)
        with pytest.raises(ssl.SSLCertVerificationError):
            served_certificate(ssl_port, os.path.join(files, "old-ca.crt"), f"{app}/identity.pem")
        # The User's certificate comes from the clients CA, which the broker trusts; a self-made one is refused.
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                        "-keyout", f"{files}/self.key", "-out", f"{files}/self.crt", "-subj", f"/CN={name}",
                        "-days", "1"], check=True, capture_output=True)
        write_whole(f"{files}/self.pem", open(f"{files}/self.key").read() + open(f"{files}/self.crt").read())
        assert refused_by_broker(ssl_port, f"{files}/cluster-ca.crt", f"{files}/self.pem")
        assert not refused_by_broker(ssl_port, f"{files}/cluster-ca.crt", f"{app}/identity.pem")
