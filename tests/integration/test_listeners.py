"""Named listeners: brokers with an INTERNAL listener on 127.0.0.1 (the inter-broker one) and an EXTERNAL one on
127.0.0.2, as a broker in Kubernetes has pod names inside the cluster and node addresses outside it. A client is
told every broker's address on the listener it connected to, in Metadata and FindCoordinator alike, while
replication keeps to the inter-broker listener."""
import json
import subprocess

import pytest

from conftest import started_cluster, wait_until

EXTERNAL = "127.0.0.2"
TOPIC = "listeners"


@pytest.fixture(scope="module")
def two_listeners():
    with started_cluster(3, overrides=["default.replication.factor=3"], external_host=EXTERNAL) as c:
        yield c


def kcat(*args, input=None, timeout=60):
    result = subprocess.run(["kcat", *args], input=input, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr
    return result.stdout


def brokers_named(bootstrap):
    metadata = json.loads(kcat("-L", "-J", "-b", bootstrap, "-m", "10"))
    return {b["id"]: b["name"] for b in metadata["brokers"]}


def port(cluster, broker):
    return int(cluster.address(broker).rsplit(":", 1)[1])


def test_each_listener_answers_with_its_own_addresses(two_listeners):
    c = two_listeners
    internal = brokers_named(c.address(0))
    external = brokers_named(f"{EXTERNAL}:{port(c, 1)}")
    assert internal == {i: f"127.0.0.1:{port(c, i)}" for i in range(3)}
    assert external == {i: f"{EXTERNAL}:{port(c, i)}" for i in range(3)}
    # The registration lists both, the inter-broker listener first (its host and port are the legacy fields).
    status, body = c.admin(2, "/v1/brokers")
    assert status == 200
    for b in body["brokers"]:
        assert [e["listener"] for e in b["endpoints"]] == ["INTERNAL", "EXTERNAL"], b
        assert (b["host"], b["port"]) == ("127.0.0.1", port(c, b["id"])), b


def test_clients_on_the_external_listener_produce_consume_and_commit(two_listeners):
    c = two_listeners
    bootstrap = f"{EXTERNAL}:{port(c, 0)}"
    kcat("-P", "-b", bootstrap, "-t", TOPIC, "-X", "acks=all", "-X", "topic.metadata.refresh.interval.ms=1000",
         input="".join(f"record-{i}\n" for i in range(300)))
    # Followers replicate over INTERNAL: every broker holds all the records.
    def replicated():
        for b in range(3):
            status, body = c.admin(b, f"/v1/topics/{TOPIC}")
            if status != 200 or body["partitions"][0].get("local", {}).get("log_end_offset") != 300:
                return False
        return True
    wait_until(replicated, timeout=30, what="every broker to hold the 300 records")
    out = kcat("-C", "-b", c.address(1), "-t", TOPIC, "-o", "beginning", "-e", "-q")
    assert sorted(out.split()) == sorted(f"record-{i}" for i in range(300))
    # A group on the external listener: FindCoordinator names the coordinator's external address.
    out = kcat("-b", bootstrap, "-G", "external-group", "-o", "beginning", "-e", "-q", "-X",
               "auto.offset.reset=earliest", "-X", "enable.auto.commit=true", "-X", "auto.commit.interval.ms=100",
               TOPIC)
    assert len(out.split()) == 300

    def committed():
        for b in range(3):  # the coordinator answers; the others say 404
            status, body = c.admin(b, "/v1/groups/external-group")
            if status == 200:
                return sum(p["committed_offset"] for p in body["offsets"]) == 300
        return False
    wait_until(committed, timeout=30, what="the external group's commits to reach the coordinator")
