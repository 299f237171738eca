"""TLS and SASL on every listener (issue 31), against local-cluster --secure: three brokers whose INTERNAL
listener (the inter-broker one) is SASL_SSL with SCRAM-SHA-512, an SSL listener that requires client certificates
(principal mapped by a rule), and a SASL_PLAINTEXT listener with PLAIN and SCRAM. The brokers log in to each other
as ferry-broker; the tests make other users with Kafka's own kafka-configs tool.
"""
import os
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import threading
import time

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from conftest import kafka_request, kafka_tool, kcat, read_response, started_cluster, wait_until
from security_clients import (SASL_AUTHENTICATION_FAILED, RawSasl, connection_closed, describe_scram_users,
                              java_properties, kcat_args, librdkafka_config, scram_client_final)


@pytest.fixture(scope="module")
def secure():
    with started_cluster(3, secure=True, overrides=["num.partitions=3"]) as c:
        yield c


def create_topic(c, name, partitions=3, replicas=3):
    admin = AdminClient(librdkafka_config(c, "sasl_plaintext"))
    admin.create_topics([NewTopic(name, partitions, replicas)])[name].result(30)
    wait_until(lambda: name in admin.list_topics(timeout=10).topics, what=f"topic {name}")


def produce(config, topic, values, **extra):
    producer = confluent_kafka.Producer({**config, "acks": "all", "enable.idempotence": True, **extra})
    failures = []
    for v in values:
        producer.produce(topic, v, on_delivery=lambda err, _msg: err and failures.append(err))
    assert producer.flush(60) == 0
    assert not failures, failures


def consume(config, topic, count, group):
    consumer = confluent_kafka.Consumer({**config, "group.id": group, "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    got = []
    deadline = time.monotonic() + 60
    while len(got) < count and time.monotonic() < deadline:
        msg = consumer.poll(1)
        if msg is not None and not msg.error():
            got.append(msg.value())
    consumer.commit(asynchronous=False)
    consumer.close()
    return got


class BackgroundProducer:
    """Produces numbered records to `topic` on a thread until the block ends; `delivered` and `errors` collect the
    delivery reports."""

    def __init__(self, config, topic):
        self.config, self.topic = config, topic
        self.delivered, self.errors = [], []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _report(self, err, msg):
        (self.errors if err else self.delivered).append(err or msg.value())

    def _run(self):
        producer = confluent_kafka.Producer({**self.config, "acks": "all", "enable.idempotence": True,
                                             "linger.ms": 5})
        i = 0
        while not self._stop.is_set():
            producer.produce(self.topic, b"r-%d" % i, on_delivery=self._report)
            producer.poll(0.01)
            i += 1
        producer.flush(60)

    def wait_for_more(self, count=100):
        before = len(self.delivered)
        wait_until(lambda: len(self.delivered) > before + count, timeout=30, what="the producer to be served")

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(90)


def run_configs_tool(c, *args):
    """Kafka's kafka-configs.sh (ConfigCommand) against one broker's SASL_PLAINTEXT listener, as ferry-broker."""
    with tempfile.TemporaryDirectory() as scratch:
        properties = java_properties(os.path.join(scratch, "admin.properties"), librdkafka_config(c, "sasl_plaintext"))
        return kafka_tool("org.apache.kafka.tools.ConfigCommand", "--bootstrap-server",
                          c.sasl_plaintext_bootstrap().split(",")[0], "--command-config", properties, *args)


def configs_tool(c, *args):
    run = run_configs_tool(c, *args)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def can_log_in(c, broker, user, password, mechanism):
    config = librdkafka_config(c, "sasl_plaintext", user, password, mechanism)
    config["bootstrap.servers"] = c.sasl_plaintext_bootstrap().split(",")[broker]
    run = kcat(*kcat_args(config), "-L", "-m", "5", check=False, timeout=30)
    return run.returncode == 0


def test_replication_runs_over_the_sasl_ssl_inter_broker_listener(secure):
    create_topic(secure, "replicated")
    values = [b"record-%d" % i for i in range(3000)]
    produce(librdkafka_config(secure, "sasl_ssl"), "replicated", values)
    admin = AdminClient(librdkafka_config(secure, "sasl_ssl"))
    partitions = admin.list_topics("replicated", timeout=10).topics["replicated"].partitions.values()
    assert all(len(p.isrs) == 3 for p in partitions), [p.isrs for p in partitions]
    assert sorted(consume(librdkafka_config(secure, "sasl_ssl"), "replicated", 3000, "g-replicated")) == sorted(values)


@pytest.mark.parametrize("kind,mechanism", [("sasl_ssl", "SCRAM-SHA-512"), ("sasl_plaintext", "PLAIN"),
                                            ("sasl_plaintext", "SCRAM-SHA-256"), ("ssl", None)])
def test_kcat_produces_and_consumes(secure, kind, mechanism):
    if mechanism == "SCRAM-SHA-256":
        configs_tool(secure, "--alter", "--add-config", "SCRAM-SHA-256=[password=kcat-secret]", "--entity-type",
                     "users", "--entity-name", "kcat-user")
        config = librdkafka_config(secure, kind, "kcat-user", "kcat-secret", mechanism)
        wait_until(lambda: can_log_in(secure, 0, "kcat-user", "kcat-secret", mechanism), timeout=30,
                   what="kcat-user's credential")
    else:
        config = librdkafka_config(secure, kind, mechanism=mechanism)
    topic = f"kcat-{kind}-{mechanism or 'mtls'}".lower()
    create_topic(secure, topic)
    lines = b"".join(b"%s line %d\n" % (kind.encode(), i) for i in range(500))
    kcat(*kcat_args(config), "-P", "-t", topic, input=lines)
    out = kcat(*kcat_args(config), "-C", "-t", topic, "-e", "-q", "-f", "%s\\n").stdout
    assert sorted(out.splitlines()) == sorted(lines.splitlines())


def test_kafka_python_over_plain_scram_and_mtls(secure):
    from kafka import KafkaConsumer, KafkaProducer
    tls = secure.tls_dir
    settings = [
        {"bootstrap_servers": secure.sasl_plaintext_bootstrap(), "security_protocol": "SASL_PLAINTEXT",
         "sasl_mechanism": "PLAIN", "sasl_plain_username": "ferry-broker",
         "sasl_plain_password": secure.broker_password()},
        {"bootstrap_servers": secure.sasl_ssl_bootstrap(), "security_protocol": "SASL_SSL",
         "sasl_mechanism": "SCRAM-SHA-512", "sasl_plain_username": "ferry-broker",
         "sasl_plain_password": secure.broker_password(), "ssl_cafile": os.path.join(tls, "ca.pem")},
        {"bootstrap_servers": secure.ssl_bootstrap(), "security_protocol": "SSL",
         "ssl_cafile": os.path.join(tls, "ca.pem"), "ssl_certfile": os.path.join(tls, "client.crt"),
         "ssl_keyfile": os.path.join(tls, "client.key")},
    ]
    for n, s in enumerate(settings):
        topic = f"kafka-python-{n}"
        create_topic(secure, topic)
        producer = KafkaProducer(acks="all", **s)
        for i in range(200):
            producer.send(topic, b"kp-%d" % i)
        producer.flush(60)
        producer.close()
        consumer = KafkaConsumer(topic, group_id=f"kp-group-{n}", auto_offset_reset="earliest",
                                 consumer_timeout_ms=20000, **s)
        got = set()
        for msg in consumer:
            got.add(msg.value)
            if len(got) == 200:
                break
        consumer.close()
        assert got == {b"kp-%d" % i for i in range(200)}, s["security_protocol"]


def test_confluent_kafka_runs_a_transaction_over_sasl_ssl(secure):
    config = librdkafka_config(secure, "sasl_ssl")
    create_topic(secure, "txn-secure")
    producer = confluent_kafka.Producer({**config, "transactional.id": "secure-txn"})
    producer.init_transactions(60)
    producer.begin_transaction()
    for i in range(100):
        producer.produce("txn-secure", b"committed-%d" % i)
    producer.commit_transaction(60)
    producer.begin_transaction()
    producer.produce("txn-secure", b"aborted")
    # Delivered first, so the abort ends a transaction the coordinator has. Right after a commit, while its markers
    # are still being written, the coordinator answers AddPartitionsToTxn with CONCURRENT_TRANSACTIONS; librdkafka
    # 2.0.2 then still sends EndTxn(abort) for a transaction the coordinator never opened, which Kafka's coordinator
    # and Ferry's both refuse with INVALID_TXN_STATE.
    producer.flush(60)
    producer.abort_transaction(60)
    consumer = confluent_kafka.Consumer({**config, "group.id": "txn-reader", "auto.offset.reset": "earliest",
                                         "isolation.level": "read_committed"})
    consumer.subscribe(["txn-secure"])
    got = []
    deadline = time.monotonic() + 60
    while len(got) < 100 and time.monotonic() < deadline:
        msg = consumer.poll(1)
        if msg is not None and not msg.error():
            got.append(msg.value())
    consumer.close()
    assert sorted(got) == sorted(b"committed-%d" % i for i in range(100))


def test_users_made_with_kafka_configs_log_in_at_every_broker_until_deleted(secure):
    configs_tool(secure, "--alter", "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret]",
                 "--entity-type", "users", "--entity-name", "alice")
    for broker in range(3):
        wait_until(lambda: can_log_in(secure, broker, "alice", "alice-secret", "SCRAM-SHA-256"), timeout=30,
                   what=f"alice's login at broker {broker}")
    assert not can_log_in(secure, 0, "alice", "wrong-secret", "SCRAM-SHA-256")
    users = describe_scram_users(secure.sasl_plaintext_bootstrap().split(",")[1], "ferry-broker",
                                 secure.broker_password())
    assert users["alice"] == [("SCRAM-SHA-256", 8192)], users
    assert ("SCRAM-SHA-512", 4096) in users["ferry-broker"], users
    configs_tool(secure, "--alter", "--delete-config", "SCRAM-SHA-256", "--entity-type", "users", "--entity-name",
                 "alice")
    for broker in range(3):
        wait_until(lambda: not can_log_in(secure, broker, "alice", "alice-secret", "SCRAM-SHA-256"), timeout=30,
                   what=f"alice locked out at broker {broker}")


def test_bad_logins_are_refused_while_others_are_served(secure):
    address = secure.sasl_plaintext_bootstrap().split(",")[0]
    create_topic(secure, "served-meanwhile")
    with BackgroundProducer(librdkafka_config(secure, "sasl_plaintext"), "served-meanwhile") as producer:
        # A wrong password and an unknown user.
        assert not can_log_in(secure, 0, "ferry-broker", "not-the-password", "SCRAM-SHA-512")
        assert not can_log_in(secure, 0, "nobody", "x", "PLAIN")
        # A tampered client-final nonce (CVE-2024-56128): the proof is right, the nonce is not the server's.
        sasl = RawSasl(address, "SCRAM-SHA-512")
        assert sasl.handshake_error == 0
        client_first_bare = "n=ferry-broker,r=abcdefghijklmnop"
        error, server_first = sasl.authenticate(b"n,," + client_first_bare.encode())
        assert error == 0
        tampered = scram_client_final(secure.broker_password(), client_first_bare, server_first.decode(),
                                      nonce_override="abcdefghijklmnop" + "x" * 24)
        error, _ = sasl.authenticate(tampered.encode())
        assert error == SASL_AUTHENTICATION_FAILED
        assert connection_closed(sasl.sock)
        sasl.close()
        # The same exchange with the right nonce succeeds.
        sasl = RawSasl(address, "SCRAM-SHA-512")
        _, server_first = sasl.authenticate(b"n,," + client_first_bare.encode())
        error, server_final = sasl.authenticate(
            scram_client_final(secure.broker_password(), client_first_bare, server_first.decode()).encode())
        assert error == 0 and server_final.startswith(b"v=")
        sasl.close()
        # A request before authentication is not answered: the connection closes.
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(kafka_request(3, 1, 1, struct.pack(">i", -1)))  # Metadata v1, all topics
            assert connection_closed(sock)
        # A 2 GiB frame announced before authentication closes the connection before any of it is read.
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(struct.pack(">i", 2**31 - 1) + b"\x00" * 64)
            assert connection_closed(sock)
        # An untrusted client certificate on the SSL listener fails the handshake.
        scratch = tempfile.mkdtemp()
        try:
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                            os.path.join(scratch, "k.pem"), "-out", os.path.join(scratch, "c.pem"), "-days", "1",
                            "-subj", "/CN=stranger"], check=True, capture_output=True)
            context = ssl.create_default_context(cafile=os.path.join(secure.tls_dir, "ca.pem"))
            context.load_cert_chain(os.path.join(scratch, "c.pem"), os.path.join(scratch, "k.pem"))
            ssl_host, ssl_port = secure.ssl_bootstrap().split(",")[0].rsplit(":", 1)
            with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
                with socket.create_connection((ssl_host, int(ssl_port)), timeout=10) as raw:
                    with context.wrap_socket(raw, server_hostname=ssl_host) as tls:
                        tls.sendall(kafka_request(18, 0, 1))  # ApiVersions: TLS 1.3 reports the refusal here
                        read_response(tls)
        finally:
            shutil.rmtree(scratch)
        producer.wait_for_more()
    assert not producer.errors, producer.errors[:5]


def test_authentication_is_visible_in_metrics(secure):
    assert can_log_in(secure, 0, "ferry-broker", secure.broker_password(), "SCRAM-SHA-512")
    assert not can_log_in(secure, 0, "ferry-broker", "wrong", "SCRAM-SHA-512")
    wait_until(lambda: secure.metric(0, "ferry_sasl_authentication_successes_total", listener="SASL_PLAINTEXT",
                                     mechanism="SCRAM-SHA-512") > 0, what="a success counted")
    wait_until(lambda: secure.metric(0, "ferry_sasl_authentication_failures_total", listener="SASL_PLAINTEXT",
                                     mechanism="SCRAM-SHA-512") > 0, what="a failure counted")
    log = secure.broker_log(0)
    assert "ferry-broker" in log and secure.broker_password() not in log
    # Connections by listener and protocol: one held open here, and the other brokers' on the inter-broker one.
    host, port = secure.sasl_plaintext_bootstrap().split(",")[0].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10):
        wait_until(lambda: (secure.metric(0, "ferry_listener_connections", listener="SASL_PLAINTEXT",
                                          security_protocol="SASL_PLAINTEXT") or 0) >= 1,
                   what="the held connection counted on its listener")
    create_topic(secure, "connections")  # each broker leads one of its partitions: the others fetch from it
    wait_until(lambda: (secure.metric(0, "ferry_listener_connections", listener="INTERNAL",
                                      security_protocol="SASL_SSL") or 0) >= 1,
               what="the other brokers' connections counted on the inter-broker listener")


def serial_seen(c):
    host, port = c.ssl_bootstrap().split(",")[0].rsplit(":", 1)
    context = ssl.create_default_context(cafile=os.path.join(c.tls_dir, "ca.pem"))
    context.load_cert_chain(os.path.join(c.tls_dir, "client.crt"), os.path.join(c.tls_dir, "client.key"))
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            der = tls.getpeercert(binary_form=True)
    out = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-serial"], input=der, capture_output=True,
                         check=True)
    return out.stdout.decode().strip()


def test_a_reconnecting_client_resumes_its_tls_session_with_the_one_ticket_it_got(secure):
    """A client that reconnects resumes its TLS 1.3 session with the ticket of its last connection (no signature
    for the broker to make; the client certificate kept), and the broker sends one ticket per full handshake, not
    OpenSSL's default two: making a ticket costs the broker a fifth of a full handshake."""
    host, port = secure.ssl_bootstrap().split(",")[0].rsplit(":", 1)
    context = ssl.create_default_context(cafile=os.path.join(secure.tls_dir, "ca.pem"))
    context.load_cert_chain(os.path.join(secure.tls_dir, "client.crt"), os.path.join(secure.tls_dir, "client.key"))
    tickets = []
    # CPython's hook for each TLS message (what its own test suite uses): the NewSessionTicket messages received.
    context._msg_callback = lambda _conn, direction, _version, _type, message, _data: (
        direction == "read" and message == ssl._TLSMessageType.NEWSESSION_TICKET and tickets.append(message))

    def connect(session=None):
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            with context.wrap_socket(raw, server_hostname="localhost", session=session) as tls:
                # ApiVersions v0 and its answer: the tickets come before it, and the principal is served.
                tls.sendall(kafka_request(18, 0, 7))
                correlation, body = read_response(tls)
                assert correlation == 7 and struct.unpack(">h", body[:2])[0] == 0
                return tls.session, tls.session_reused

    first, reused = connect()
    assert not reused
    assert len(tickets) == 1, f"the broker sent {len(tickets)} tickets for one handshake"
    _, reused = connect(first)
    assert reused, "the ticket did not resume the session"


def issue_broker_keystore(tls, scratch):
    """A new key and certificate for the brokers, signed by local-cluster's CA, as one PEM file in `scratch`."""
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{scratch}/new.key", "-out",
                    f"{scratch}/new.csr", "-subj", "/OU=brokers/CN=localhost"], check=True, capture_output=True)
    with open(f"{scratch}/ext", "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    subprocess.run(["openssl", "x509", "-req", "-in", f"{scratch}/new.csr", "-CA", f"{tls}/ca.pem", "-CAkey",
                    f"{tls}/ca.key", "-CAcreateserial", "-out", f"{scratch}/new.crt", "-days", "30", "-extfile",
                    f"{scratch}/ext"], check=True, capture_output=True)
    with open(f"{scratch}/broker.pem", "wb") as out:
        for part in ("new.key", "new.crt"):
            out.write(open(f"{scratch}/{part}", "rb").read())
    return f"{scratch}/broker.pem"


def serial_of(pem):
    out = subprocess.run(["openssl", "x509", "-in", pem, "-noout", "-serial"], capture_output=True, check=True)
    return out.stdout.decode().strip()


def test_a_rotated_certificate_is_served_to_new_connections_without_a_restart(secure):
    tls = secure.tls_dir
    old = serial_seen(secure)
    config = librdkafka_config(secure, "sasl_ssl")
    create_topic(secure, "rotation")
    with BackgroundProducer(config, "rotation") as producer:
        scratch = tempfile.mkdtemp()
        os.replace(issue_broker_keystore(tls, scratch), f"{tls}/broker.pem")  # as a Secret's update swaps the file
        shutil.rmtree(scratch)
        wait_until(lambda: serial_seen(secure) != old, timeout=30, what="the new certificate on new connections")
        # The brokers' own connections to each other follow the inter-broker listener's files too.
        wait_until(lambda: "connections to other brokers use listener INTERNAL's new TLS files" in secure.broker_log(0),
                   timeout=30, what="the inter-broker client context rebuilt")
        producer.wait_for_more()
    assert not producer.errors, producer.errors[:5]
    got = consume(config, "rotation", len(producer.delivered), "rotation-reader")
    assert set(got) >= set(producer.delivered)


def test_kafka_configs_moves_a_listeners_keystore_on_one_broker(secure):
    """Per-broker dynamic listener settings, as Kafka's: the broker checks the file before it keeps the setting,
    serves the new certificate to new connections, and goes back to its own file when the setting is deleted. A
    file that cannot be used, the setting for every broker, and a key password (which ZooKeeper would hold in the
    clear) are refused by name."""
    setting = "listener.name.ssl.ssl.keystore.location"
    own = serial_seen(secure)
    with tempfile.TemporaryDirectory() as scratch:
        keystore = issue_broker_keystore(secure.tls_dir, scratch)
        with open(f"{scratch}/half.pem", "wb") as half:
            whole = open(keystore, "rb").read()
            half.write(whole[:len(whole) // 2])
        for value in (f"{scratch}/missing.pem", f"{scratch}/half.pem"):
            refused = run_configs_tool(secure, "--entity-type", "brokers", "--entity-name", "0", "--alter",
                                       "--add-config", f"{setting}={value}")
            assert refused.returncode != 0 and setting in refused.stdout + refused.stderr, refused.stdout + refused.stderr
        for args, why in (([ "--entity-default"], "can only be set for one broker"),
                          (["--entity-name", "0"], "in the clear")):
            name = setting if why != "in the clear" else "listener.name.ssl.ssl.key.password"
            refused = run_configs_tool(secure, "--entity-type", "brokers", *args, "--alter", "--add-config",
                                       f"{name}={keystore}")
            assert refused.returncode != 0 and why in refused.stdout + refused.stderr, refused.stdout + refused.stderr
        assert serial_seen(secure) == own

        configs_tool(secure, "--entity-type", "brokers", "--entity-name", "0", "--alter", "--add-config",
                     f"{setting}={keystore}")
        wait_until(lambda: serial_seen(secure) == serial_of(keystore), timeout=30,
                   what="the keystore kafka-configs named on new connections")
        described = configs_tool(secure, "--entity-type", "brokers", "--entity-name", "0", "--describe")
        assert f"{setting}={keystore}" in described, described
        # Clients still get in over the listener, with the new certificate.
        ssl_config = librdkafka_config(secure, "ssl")
        ssl_config["bootstrap.servers"] = secure.ssl_bootstrap().split(",")[0]
        assert kcat(*kcat_args(ssl_config), "-L", "-m", "10", check=False, timeout=30).returncode == 0

        configs_tool(secure, "--entity-type", "brokers", "--entity-name", "0", "--alter", "--delete-config", setting)
        wait_until(lambda: serial_seen(secure) != serial_of(keystore), timeout=30,
                   what="the listener's own keystore once the setting is deleted")
