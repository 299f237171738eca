"""Free loopback ports for the brokers a run starts."""
import random
import socket


def port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_base():
    """P with P-1 (ZooKeeper), P..P+3 (Ferry, Kafka 3.9, Kafka 4 and its controller) and P+1000 (Ferry's
    admin HTTP) all free; below the ephemeral range and apart from the integration tests' range."""
    for _ in range(200):
        base = random.randrange(12010, 19000, 10)
        if all(port_free(p) for p in (base - 1, base, base + 1, base + 2, base + 3, base + 1000)):
            return base
    raise RuntimeError("no free port range on 127.0.0.1")
