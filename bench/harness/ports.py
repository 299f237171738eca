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


def free_base(span=4):
    """P with P-1 (ZooKeeper), P..P+span-1 (single brokers: Ferry, Kafka 3.9, Kafka 4 and its controller; or
    the brokers and controllers of the three-broker clusters) and P+1000..P+1002 (Ferry's admin HTTP) all
    free; below the ephemeral range and apart from the integration tests' range."""
    for _ in range(200):
        base = random.randrange(12010, 19000, 20)
        if all(port_free(p) for p in (base - 1, *range(base, base + span), *range(base + 1000, base + 1003))):
            return base
    raise RuntimeError("no free port range on 127.0.0.1")
