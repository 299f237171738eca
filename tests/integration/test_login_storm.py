"""A login storm does not stall an authenticated client (issue 31's acceptance point).

Two hundred connections at a time fail to log in to the SASL_PLAINTEXT listener, in waves: PLAIN with a wrong
password for a real user (each one a PBKDF2 of 16384 iterations on the broker's one-thread password checker pool,
or a refusal when its bounded queue is full) and SCRAM-SHA-256/512 exchanges with a bogus proof. Each failure is
answered SASL_AUTHENTICATION_FAILED only after connection.failed.authentication.delay.ms, on a timer. Meanwhile an
authenticated confluent-kafka producer (acks=all, one record at a time) and consumer on the same listener, on the
broker's only network thread, must keep going: every record is acknowledged and read, and no produce round trip
nor produce-to-fetch time comes near what a blocked network thread costs (were the delay slept on that thread, or
the PBKDF2 run there, a request behind a wave would wait for seconds). Afterwards the right password gets in.
"""
import base64
import collections
import hashlib
import os
import struct
import threading
import time

import confluent_kafka
import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from conftest import BackgroundLoop, kafka_request, read_response, started_cluster, wait_until
from security_clients import (SASL_AUTHENTICATION_FAILED, RawSasl, compact, connection_closed, librdkafka_config,
                              read_uvarint, scram_client_final, uvarint)

DELAY_MS = 500  # connection.failed.authentication.delay.ms
VICTIM, VICTIM_PASSWORD = "storm-victim", "the-right-password"
ITERATIONS = 16384  # Kafka's maximum: the costliest PBKDF2 a wrong PLAIN password can make the broker run
# Storm threads by mechanism, one connection each per wave (see Storm). The PLAIN ones outnumber the password
# checker pool's 1 thread + 64 waiting, so each wave fills its queue and has the rest refused as busy.
STORM_THREADS = {"PLAIN": 160, "SCRAM-SHA-512": 20, "SCRAM-SHA-256": 20}
STORM_SECONDS = 10
MIN_WAVES, MAX_WAVES = 2, 40  # waves go on for STORM_SECONDS, at least MIN_WAVES, at most MAX_WAVES
# The worst acceptable produce round trip (acks=all, one record in flight) and produce-to-fetch time during the
# storm. The broker runs one network thread, which every connection shares, so that whatever a failed login does
# on it shows in the clients' latency. Measured on two cores: tens of milliseconds unloaded, under 0.9 s with other
# tests and a compiler running beside it (produce-to-fetch has outliers near 450 ms even unloaded: the consumer's).
# Against a broker changed on purpose (not kept): with PLAIN's PBKDF2 run on the network thread, a wave's 160
# checks held a produce for 2.8 s and a fetched record for 4.3-5.2 s; with the delay slept on the network thread,
# a produce was not acknowledged within 30 s.
WORST_LATENCY_S = 2.0

SCRAM_MECHANISM_TYPE = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
SCRAM_HASH = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
SCRAM_PROOF_BYTES = {"SCRAM-SHA-256": 32, "SCRAM-SHA-512": 64}


@pytest.fixture(scope="module")
def secure():
    overrides = [f"connection.failed.authentication.delay.ms={DELAY_MS}", "num.network.threads=1"]
    with started_cluster(1, secure=True, overrides=overrides) as c:
        yield c


def set_scram_credentials(address, admin_password, user, password, iterations):
    """Gives `user` SCRAM-SHA-256 and SCRAM-SHA-512 credentials for `password` with AlterUserScramCredentials v0
    (API 51), sent by hand after a PLAIN login as ferry-broker (Debian's librdkafka predates the admin call). The
    broker answers once its own logins see the change."""
    upsertions = b""
    for mechanism, type_ in SCRAM_MECHANISM_TYPE.items():
        salt = os.urandom(32)
        salted = hashlib.pbkdf2_hmac(SCRAM_HASH[mechanism], password.encode(), salt, iterations)
        upsertions += (compact(user.encode()) + struct.pack(">bi", type_, iterations) + compact(salt)
                       + compact(salted) + b"\x00")
    body = uvarint(1) + uvarint(len(SCRAM_MECHANISM_TYPE) + 1) + upsertions + b"\x00"  # no deletions; no tags
    sasl = RawSasl(address, "PLAIN")
    try:
        assert sasl.handshake_error == 0
        error, _ = sasl.authenticate(b"\0ferry-broker\0" + admin_password.encode())
        assert error == 0, error
        sasl.sock.sendall(kafka_request(51, 0, 77, body, flexible=True))
        correlation, frame = read_response(sasl.sock)
        assert correlation == 77
        _, at = read_uvarint(frame, 0)  # response header tags
        at += 4  # throttle_time_ms
        count, at = read_uvarint(frame, at)
        assert count - 1 == 1, count  # one result per user
        for _ in range(count - 1):
            length, at = read_uvarint(frame, at)
            name = frame[at:at + length - 1].decode()
            at += length - 1
            error = struct.unpack(">h", frame[at:at + 2])[0]
            length, at = read_uvarint(frame, at + 2)
            message = frame[at:at + length - 1].decode() if length else None
            at += max(length - 1, 0)
            _, at = read_uvarint(frame, at)  # tags
            assert name == user and error == 0, (name, error, message)
    finally:
        sasl.close()


# One failed login: the error of its last SaslAuthenticate, how long after sending it the answer came (seconds),
# and whether the broker then closed the connection.
Attempt = collections.namedtuple("Attempt", "mechanism error answered_after closed")


def prepare_login(address, mechanism):
    """A new connection brought up to its last, failing SaslAuthenticate: (RawSasl, the token to send), a wrong
    password for PLAIN, a client-final with a random proof for SCRAM (after a real client-first)."""
    sasl = RawSasl(address, mechanism)
    try:
        assert sasl.handshake_error == 0, (mechanism, sasl.handshake_error)
        if mechanism == "PLAIN":
            return sasl, b"\0" + VICTIM.encode() + b"\0wrong-password-" + os.urandom(4).hex().encode()
        client_nonce = base64.b64encode(os.urandom(18)).decode()
        error, server_first = sasl.authenticate(f"n,,n={VICTIM},r={client_nonce}".encode())
        assert error == 0, (mechanism, error)
        fields = dict(item.split("=", 1) for item in server_first.decode().split(","))
        assert fields["r"].startswith(client_nonce) and int(fields["i"]) == ITERATIONS, fields
        proof = base64.b64encode(os.urandom(SCRAM_PROOF_BYTES[mechanism])).decode()
        return sasl, f"c=biws,r={fields['r']},p={proof}".encode()
    except BaseException:
        sasl.close()
        raise


def fail_login(sasl, mechanism, token):
    """Sends the failing SaslAuthenticate and returns its Attempt."""
    # A PLAIN login waits its turn on the password checker pool (up to 64 others' PBKDF2 before it, several
    # seconds on two busy cores): more than RawSasl's 10 s is no stall of the broker's, so allow a minute.
    sasl.sock.settimeout(60)
    sent = time.monotonic()
    error, _ = sasl.authenticate(token)
    answered_after = time.monotonic() - sent
    return Attempt(mechanism, error, answered_after, connection_closed(sasl.sock))


class Storm:
    """STORM_THREADS threads failing to log in, in waves: in each wave every thread opens a connection and brings it
    up to its last SaslAuthenticate, then all of them send it at once, so that the broker has them all to answer at
    the same moment (new connections alone would arrive only as fast as the broker accepts them). Waves go on until
    `stop` is set, or STORM_SECONDS pass (after MIN_WAVES at least), or MAX_WAVES were made. `attempts` collects
    every completed attempt, `errors` whatever went wrong (which ends the storm)."""

    def __init__(self, address):
        self.address = address
        self.attempts, self.errors = [], []
        self.stop = threading.Event()
        self.waves = 0
        self.threads = [threading.Thread(target=self._run, args=(mechanism,), daemon=True)
                        for mechanism, count in STORM_THREADS.items() for _ in range(count)]
        self._deadline = None
        self._go_on = False
        self._next_wave = threading.Barrier(len(self.threads), action=self._decide)
        self._fire = threading.Barrier(len(self.threads))

    def _decide(self):  # run by one thread while all wait: every thread sees the same decision
        more = self.waves < MIN_WAVES or time.monotonic() < self._deadline
        self._go_on = not self.stop.is_set() and more and self.waves < MAX_WAVES
        self.waves += self._go_on

    def _run(self, mechanism):
        try:
            while True:
                self._next_wave.wait(120)
                if not self._go_on:
                    return
                sasl, token = prepare_login(self.address, mechanism)
                try:
                    self._fire.wait(120)
                    self.attempts.append(fail_login(sasl, mechanism, token))
                finally:
                    sasl.close()
        except threading.BrokenBarrierError:
            # Another thread failed (its error is recorded too), or a wave took more than two minutes.
            self.errors.append(f"{mechanism}: the wave was broken off")
        except Exception as e:  # pylint: disable=broad-except
            self.errors.append(f"{mechanism}: {e!r}")
            self._next_wave.abort()
            self._fire.abort()

    def start(self):
        self._deadline = time.monotonic() + STORM_SECONDS
        for t in self.threads:
            t.start()

    def running(self):
        return any(t.is_alive() for t in self.threads)

    def join(self):
        # Each thread stops within STORM_SECONDS plus a wave or two (bounded by the sockets' and barriers' timeouts).
        deadline = time.monotonic() + STORM_SECONDS + 300
        for t in self.threads:
            t.join(max(deadline - time.monotonic(), 0))
        assert not self.running(), "storm threads still running"


class Reader(BackgroundLoop):
    """A consumer of partition 0 of `topic` from the start, on a thread: `seen` maps each value read to when."""

    def __init__(self, config, topic):
        super().__init__()
        self.consumer = confluent_kafka.Consumer({**config, "group.id": "storm-reader", "enable.auto.commit": False,
                                                  "fetch.wait.max.ms": 100})
        self.consumer.assign([confluent_kafka.TopicPartition(topic, 0, confluent_kafka.OFFSET_BEGINNING)])
        self.seen, self.errors = {}, []

    def step(self):
        msg = self.consumer.poll(0.1)
        if msg is None:
            return
        if msg.error():
            self.errors.append(msg.error())
        else:
            self.seen.setdefault(msg.value(), time.monotonic())

    def close(self):
        self.consumer.close()


def produce_one(producer, topic, value):
    """Produces one record and waits for its acknowledgement: (error or None, seconds it took)."""
    outcome = []
    started = time.monotonic()
    producer.produce(topic, value, on_delivery=lambda err, _msg: outcome.append((err, time.monotonic())))
    producer.flush(30)
    assert outcome, f"no delivery report for {value!r} within 30 s"
    err, delivered = outcome[0]
    return err, delivered - started, started


def broker_cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def failures(c, mechanism):
    return c.metric(0, "ferry_sasl_authentication_failures_total", listener="SASL_PLAINTEXT", mechanism=mechanism) or 0


def successes(c, mechanism):
    return c.metric(0, "ferry_sasl_authentication_successes_total", listener="SASL_PLAINTEXT",
                    mechanism=mechanism) or 0


def test_a_login_storm_does_not_stall_an_authenticated_producer_and_consumer(secure):
    address = secure.sasl_plaintext_bootstrap()
    set_scram_credentials(address, secure.broker_password(), VICTIM, VICTIM_PASSWORD, ITERATIONS)

    config = librdkafka_config(secure, "sasl_plaintext")  # SCRAM-SHA-512 as ferry-broker
    topic = "storm-survivor"
    admin = AdminClient(config)
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(30)
    wait_until(lambda: topic in admin.list_topics(timeout=10).topics, what=f"topic {topic}")
    producer = confluent_kafka.Producer({**config, "acks": "all", "linger.ms": 0, "enable.idempotence": True})

    sent = {}  # value -> when its produce started
    before_storm, during_storm, after_storm = [], [], []  # (value, error, latency)

    def produce_into(bucket, i):
        value = b"v-%d" % i
        err, latency, started = produce_one(producer, topic, value)
        sent[value] = started
        bucket.append((value, err, latency))

    with Reader(config, topic) as reader:
        i = 0
        for _ in range(20):  # warm up: connections made, metadata known
            produce_into(before_storm, i)
            i += 1
        failed_before = {m: failures(secure, m) for m in STORM_THREADS}
        cpu_before = broker_cpu_seconds(secure.pid(0))

        storm = Storm(address)
        storm_started = time.monotonic()
        storm.start()
        try:
            while storm.running():
                produce_into(during_storm, i)
                i += 1
        finally:
            storm.stop.set()
            storm.join()
        storm_seconds = time.monotonic() - storm_started
        cpu_during = broker_cpu_seconds(secure.pid(0)) - cpu_before

        for _ in range(20):
            produce_into(after_storm, i)
            i += 1
        wait_until(lambda: len(reader.seen) >= len(sent), timeout=30, what="the consumer to read every record")

    assert not storm.errors, sorted(storm.errors, key=lambda e: "broken off" in e)[:10]
    by_mechanism = {m: [a for a in storm.attempts if a.mechanism == m] for m in STORM_THREADS}
    made = {m: len(by_mechanism[m]) for m in STORM_THREADS}
    latencies = [latency for _, _, latency in during_storm]
    worst = max(latencies)
    reads = sorted(reader.seen[v] - sent[v] for v, _, _ in during_storm)
    slowest_read = reads[-1]
    print(f"storm: {storm.waves} waves, {len(storm.attempts)} failed logins {made} in {storm_seconds:.1f} s, "
          f"broker CPU {cpu_during:.1f} s, slowest refusal {max(a.answered_after for a in storm.attempts):.2f} s; "
          f"{len(during_storm)} produces during it, worst round trip {worst * 1000:.0f} ms (before it "
          f"{max(lat for _, _, lat in before_storm) * 1000:.0f} ms), produce-to-fetch median "
          f"{reads[len(reads) // 2] * 1000:.0f} ms, slowest {slowest_read * 1000:.0f} ms")
    # (1) The authenticated clients kept going through it: every record acknowledged and read, none slowly.
    assert not [e for _, e, _ in before_storm + during_storm + after_storm if e], "a produce failed"
    assert not reader.errors, reader.errors[:5]
    assert set(reader.seen) == set(sent)
    # Progress all along: a steady stream of acknowledged records, not a trickle.
    assert len(during_storm) >= 10 * STORM_SECONDS, len(during_storm)
    assert worst < WORST_LATENCY_S, f"a produce took {worst:.2f} s during the storm"
    assert slowest_read < WORST_LATENCY_S, f"a record took {slowest_read:.2f} s from produce to fetch"

    # (2) The storm was real: every attempt was refused, no sooner than the delay, and counted.
    # Every thread took part in every wave, and the storm was not cut short.
    assert storm.waves >= MIN_WAVES, storm.waves
    for mechanism, threads in STORM_THREADS.items():
        assert len(by_mechanism[mechanism]) == storm.waves * threads, (mechanism, len(by_mechanism[mechanism]))
    wrong = [(a.mechanism, a.error) for a in storm.attempts if a.error != SASL_AUTHENTICATION_FAILED]
    assert not wrong, wrong[:10]
    early = [(a.mechanism, round(a.answered_after, 3)) for a in storm.attempts if a.answered_after < DELAY_MS / 1000]
    assert not early, early[:10]
    assert all(a.closed for a in storm.attempts), "a failed login's connection was left open"
    counted = {m: failures(secure, m) - failed_before[m] for m in STORM_THREADS}
    # Every attempt counts once, and nothing else failed (the clients' own logins, say).
    assert counted == made, (counted, made)

    # (3) The broker is up and lets the right password in at once, with PLAIN and with SCRAM.
    assert secure.pid(0) is not None and secure.ready(0)
    succeeded_before = {m: successes(secure, m) for m in STORM_THREADS}
    sasl = RawSasl(address, "PLAIN")
    try:
        started = time.monotonic()
        error, _ = sasl.authenticate(b"\0" + VICTIM.encode() + b"\0" + VICTIM_PASSWORD.encode())
        assert error == 0, error
        assert time.monotonic() - started < 1.0, "the right password waited"
    finally:
        sasl.close()
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        sasl = RawSasl(address, mechanism)
        try:
            client_first_bare = f"n={VICTIM},r=" + base64.b64encode(os.urandom(18)).decode()
            error, server_first = sasl.authenticate(b"n,," + client_first_bare.encode())
            assert error == 0, error
            error, server_final = sasl.authenticate(scram_client_final(
                VICTIM_PASSWORD, client_first_bare, server_first.decode(), hash_name=SCRAM_HASH[mechanism]).encode())
            assert error == 0 and server_final.startswith(b"v="), (mechanism, error, server_final)
        finally:
            sasl.close()
    succeeded = {m: successes(secure, m) - succeeded_before[m] for m in STORM_THREADS}
    # The clients' own logins are SCRAM-SHA-512 too: only that one may have counted more.
    assert succeeded["PLAIN"] == 1 and succeeded["SCRAM-SHA-256"] == 1 and succeeded["SCRAM-SHA-512"] >= 1, succeeded
    assert {m: failures(secure, m) - failed_before[m] for m in STORM_THREADS} == made, "a right password was refused"
    err, _, _ = produce_one(producer, topic, b"after the storm")
    assert err is None, err
