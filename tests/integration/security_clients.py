"""Client settings and hand-made SASL exchanges for the security tests (test_security.py)."""
import base64
import hashlib
import hmac
import os
import socket
import struct

from conftest import kafka_request, kafka_tool, read_response, recv_exactly

SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36
SASL_AUTHENTICATION_FAILED = 58


def librdkafka_config(cluster, kind, user=None, password=None, mechanism=None):
    """confluent-kafka/kcat settings for one of local-cluster --secure's listeners: "sasl_ssl", "sasl_plaintext"
    or "ssl" (the client certificate CN=client)."""
    tls = cluster.tls_dir
    if kind == "ssl":
        return {"bootstrap.servers": cluster.ssl_bootstrap(), "security.protocol": "SSL",
                "ssl.ca.location": os.path.join(tls, "ca.pem"),
                "ssl.certificate.location": os.path.join(tls, "client.crt"),
                "ssl.key.location": os.path.join(tls, "client.key")}
    config = {"sasl.mechanism": mechanism or "SCRAM-SHA-512", "sasl.username": user or "ferry-broker",
              "sasl.password": password if password is not None else cluster.broker_password()}
    if kind == "sasl_ssl":
        config.update({"bootstrap.servers": cluster.sasl_ssl_bootstrap(), "security.protocol": "SASL_SSL",
                       "ssl.ca.location": os.path.join(tls, "ca.pem")})
    else:
        config.update({"bootstrap.servers": cluster.sasl_plaintext_bootstrap(), "security.protocol": "SASL_PLAINTEXT"})
    return config


def kcat_args(config):
    args = []
    for key, value in config.items():
        args += ["-b", value] if key == "bootstrap.servers" else ["-X", f"{key}={value}"]
    return args


def java_properties(path, config):
    """A client .properties file (for Kafka's CLI tools' --command-config) from librdkafka-style settings."""
    lines = [f"security.protocol={config['security.protocol']}"]
    if "sasl.mechanism" in config:
        module = ("org.apache.kafka.common.security.plain.PlainLoginModule" if config["sasl.mechanism"] == "PLAIN"
                  else "org.apache.kafka.common.security.scram.ScramLoginModule")
        lines += [f"sasl.mechanism={config['sasl.mechanism']}",
                  f'sasl.jaas.config={module} required username="{config["sasl.username"]}" '
                  f'password="{config["sasl.password"]}";']
    if "ssl.ca.location" in config:
        lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={config['ssl.ca.location']}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def broker_config_command(c, *args):
    """Kafka's kafka-configs (ConfigCommand) against local-cluster --secure's first SASL_PLAINTEXT listener, logged in
    as ferry-broker (the brokers' own login, a super user by design); the finished process."""
    properties = java_properties(os.path.join(c.data, "ferry-broker.properties"), librdkafka_config(c, "sasl_plaintext"))
    return kafka_tool("org.apache.kafka.tools.ConfigCommand", "--bootstrap-server",
                      c.sasl_plaintext_bootstrap().split(",")[0], "--command-config", properties, *args)


def make_scram_user(c, user, password):
    """`user` with a SCRAM-SHA-512 credential, made with kafka-configs as ferry-broker."""
    run = broker_config_command(c, "--alter", "--add-config", f"SCRAM-SHA-512=[password={password}]",
                                "--entity-type", "users", "--entity-name", user)
    assert run.returncode == 0, f"kafka-configs for {user} failed:\n{run.stdout}\n{run.stderr}"


def _string(s):
    data = s.encode()
    return struct.pack(">h", len(data)) + data


def _bytes(b):
    return struct.pack(">i", len(b)) + b


class RawSasl:
    """A SASL login by hand over plaintext: SaslHandshake v1, then SaslAuthenticate v1 frames."""

    def __init__(self, address, mechanism):
        host, port = address.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        self.correlation = 0
        self.sock.sendall(kafka_request(SASL_HANDSHAKE, 1, self._next(), _string(mechanism)))
        _, body = read_response(self.sock)
        self.handshake_error = struct.unpack(">h", body[:2])[0]

    def _next(self):
        self.correlation += 1
        return self.correlation

    def authenticate(self, token):
        """(error code, server token) of one SaslAuthenticate v1."""
        self.sock.sendall(kafka_request(SASL_AUTHENTICATE, 1, self._next(), _bytes(token)))
        _, body = read_response(self.sock)
        error = struct.unpack(">h", body[:2])[0]
        at = 2
        message_len = struct.unpack(">h", body[at:at + 2])[0]
        at += 2 + max(message_len, 0)
        token_len = struct.unpack(">i", body[at:at + 4])[0]
        return error, body[at + 4:at + 4 + token_len]

    def close(self):
        self.sock.close()


def scram_client_final(password, client_first_bare, server_first, nonce_override=None, hash_name="sha512"):
    """RFC 5802's client-final message for `server_first`; `nonce_override` sends another nonce (the tampering
    CVE-2024-56128 is about)."""
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    nonce, salt, iterations = fields["r"], base64.b64decode(fields["s"]), int(fields["i"])
    salted = hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hash_name).digest()
    stored_key = hashlib.new(hash_name, client_key).digest()
    without_proof = f"c=biws,r={nonce_override or nonce}"
    auth_message = f"{client_first_bare},{server_first},{without_proof}".encode()
    signature = hmac.new(stored_key, auth_message, hash_name).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    return f"{without_proof},p={base64.b64encode(proof).decode()}"


def connection_closed(sock, timeout=10):
    """Whether the peer closes `sock` (EOF or reset) without sending anything."""
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True




def uvarint(n):
    """An unsigned varint, as flexible versions write lengths and counts."""
    out = b""
    while n >= 0x80:
        out += bytes([n & 0x7F | 0x80])
        n >>= 7
    return out + bytes([n])


def compact(data):
    """Compact bytes or string: the length plus one as a varint, then the data."""
    return uvarint(len(data) + 1) + data


def read_uvarint(data, at):
    """The unsigned varint at `at`, and where the next field starts."""
    value, shift = 0, 0
    while True:
        b = data[at]
        at += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, at
        shift += 7


def _compact_string(data, at):
    length, at = read_uvarint(data, at)
    if length == 0:
        return None, at
    return data[at:at + length - 1].decode(), at + length - 1


def describe_scram_users(address, user, password):
    """{user: [(mechanism, iterations)]} from DescribeUserScramCredentials v0 (API 50) for every user, sent by hand
    after a PLAIN login (Kafka 4's kafka-configs --describe also asks for client quotas, issue 32's API)."""
    sasl = RawSasl(address, "PLAIN")
    try:
        error, _ = sasl.authenticate(b"\0" + user.encode() + b"\0" + password.encode())
        assert error == 0, error
        sasl.sock.sendall(kafka_request(50, 0, 99, b"\x00\x00", flexible=True))  # users: null; no tags
        size = struct.unpack(">i", recv_exactly(sasl.sock, 4))[0]
        frame = recv_exactly(sasl.sock, size)
        at = 4
        _, at = read_uvarint(frame, at)  # response header tags
        at += 4  # throttle_time_ms
        error = struct.unpack(">h", frame[at:at + 2])[0]
        assert error == 0, error
        _, at = _compact_string(frame, at + 2)
        count, at = read_uvarint(frame, at)
        out = {}
        for _ in range(count - 1):
            name, at = _compact_string(frame, at)
            at += 2  # error code
            _, at = _compact_string(frame, at)
            infos, at = read_uvarint(frame, at)
            credentials = []
            for _ in range(infos - 1):
                mechanism, iterations = struct.unpack(">bi", frame[at:at + 5])
                _, at = read_uvarint(frame, at + 5)
                credentials.append(({1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}[mechanism], iterations))
            _, at = read_uvarint(frame, at)
            out[name] = credentials
        return out
    finally:
        sasl.close()


class LoginFailed(Exception):
    pass


def scram_login(address, user, password):
    """A connection by hand to a SASL_PLAINTEXT listener at `address`, logged in as `user` with SCRAM-SHA-512: the
    RawSasl, ready for requests (LoginFailed when the broker refused)."""
    sasl = RawSasl(address, "SCRAM-SHA-512")
    try:
        if sasl.handshake_error != 0:
            raise LoginFailed(f"SaslHandshake: error {sasl.handshake_error}")
        bare = f"n={user},r={base64.b64encode(os.urandom(18)).decode()}"
        error, server_first = sasl.authenticate(b"n,," + bare.encode())
        if error != 0:
            raise LoginFailed(f"{user} at {address}: client-first got error {error}")
        error, _ = sasl.authenticate(scram_client_final(password, bare, server_first.decode()).encode())
        if error != 0:
            raise LoginFailed(f"{user} at {address}: client-final got error {error}")
    except BaseException:
        sasl.close()
        raise
    return sasl
