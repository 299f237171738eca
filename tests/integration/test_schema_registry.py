"""The built-in schema registry (docs/schema-registry.md) on three brokers, through confluent-kafka-python's
SchemaRegistryClient and its Avro, JSON Schema and Protobuf serializers (tests/integration/registry_clients.py,
run in the environment scripts/install-deps makes), and over plain HTTP for the error cases.

Every broker serves the registry from its own copy of `_schemas`; writes reach the broker leading that topic from
any broker. One cluster for the module; the leader kill runs last.
"""
import json
import os
import socket
import subprocess
import urllib.error
import urllib.request

import pytest

from conftest import kcat, started_cluster, wait_until
from group_members import CONFLUENT_PYTHON

CLIENTS = os.path.join(os.path.dirname(__file__), "registry_clients.py")
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"


@pytest.fixture(scope="module")
def cluster():
    with started_cluster(3, schema_registry=True) as c:
        wait_until(lambda: all(call(c, b, "GET", "/subjects")[0] == 200 for b in range(3)), timeout=60,
                   what="every broker's registry to have read _schemas")
        yield c


def call(cluster, broker, method, path, body=None):
    """(status, parsed JSON body) of one request to a broker's registry."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(cluster.registry_url(broker) + path, data=data, method=method,
                                     headers={"Content-Type": CONTENT_TYPE})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def clients(cluster, *args, broker=0):
    out = subprocess.run([CONFLUENT_PYTHON, CLIENTS, args[0], cluster.bootstrap, cluster.registry_url(broker),
                          *args[1:]], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def schemas_leader(cluster):
    return cluster.leader("_schemas", 0)


@pytest.mark.parametrize("fmt", ["avro", "json", "protobuf"])
def test_serializers_register_evolve_and_read_back_through_ferry(cluster, fmt):
    """Version 1 and a compatible version 2 are registered by the serializer itself, an incompatible version 3 is
    refused with 409, and every record carries the id its version got, which the deserializer resolves."""
    broker = {"avro": 0, "json": 1, "protobuf": 2}[fmt]  # each through another broker, leader or not
    seen = clients(cluster, "serde", fmt, f"users-{fmt}", broker=broker)
    assert seen["versions"] == [1, 2]
    assert seen["incompatible"]["http_status"] == 409
    ids = [r["id"] for r in seen["consumed"]]
    assert len(ids) == 10 and len(set(ids[:5])) == 1 and len(set(ids[5:])) == 1 and ids[0] != ids[5]
    assert ids[5] == seen["latest_id"]
    assert seen["consumed"][7]["value"]["age"] == 2
    for b in range(3):
        status, by_id = call(cluster, b, "GET", f"/schemas/ids/{ids[0]}")
        assert status == 200 and "schema" in by_id
        assert (by_id.get("schemaType") or "AVRO") == fmt.upper().replace("PROTOBUF", "PROTOBUF")


def test_compatibility_levels_decide_directions_and_transitivity(cluster):
    verdicts = clients(cluster, "levels", "levels", broker=1)
    refused = {level: sorted(chain for chain, v in chains.items() if v["registered"] != True)
               for level, chains in verdicts.items()}
    assert refused == {"NONE": [], "BACKWARD": [], "FORWARD": [], "FULL": [],
                       "BACKWARD_TRANSITIVE": ["backward_chain"], "FORWARD_TRANSITIVE": ["forward_chain"],
                       "FULL_TRANSITIVE": ["backward_chain", "forward_chain"]}
    for chains in verdicts.values():
        for v in chains.values():
            assert v["registered"] in (True, 409)
            assert v["checked"] is True  # /compatibility/.../versions/latest checks the latest version alone


def test_every_broker_serves_writes_and_reads_its_own_copy(cluster):
    leader = schemas_leader(cluster)
    ids = []
    for b in range(3):
        fields = [{"name": "x", "type": "long"}] + [{"name": f"f{i}", "type": "int", "default": i} for i in range(b)]
        schema = {"type": "record", "name": "Via", "fields": fields}
        status, reply = call(cluster, b, "POST", "/subjects/via-brokers/versions", {"schema": json.dumps(schema)})
        assert status == 200, (b, leader, reply)
        ids.append(reply["id"])
        for other in range(3):  # read back at once from every broker: the writer waited for its own copy only
            wait_until(lambda: call(cluster, other, "GET", f"/schemas/ids/{reply['id']}")[0] == 200, timeout=10,
                       what=f"broker {other} to read schema {reply['id']}")
    assert len(set(ids)) == 3 and ids == sorted(ids)
    assert call(cluster, (leader + 1) % 3, "GET", "/subjects/via-brokers/versions") == (200, [1, 2, 3])


def test_metrics_count_requests_refusals_and_each_copy(cluster):
    """After the serializer and level tests: 409s were counted, and every broker's copy holds as many schemas."""
    incompatible = sum(cluster.metric(b, "ferry_schema_registry_incompatible_schemas_total") for b in range(3))
    assert incompatible >= 3
    reads = sum(v for b in range(3) for (name, labels), v in cluster.metrics(b).items()
                if name == "ferry_schema_registry_requests_total" and ("kind", "read") in labels)
    assert reads > 0
    counts = wait_until(lambda: (lambda c: c if len(set(c)) == 1 else None)(
        [cluster.metric(b, "ferry_schema_registry_schemas") for b in range(3)]), timeout=10,
        what="every broker's copy to hold the same schemas")
    assert counts[0] >= 6


def test_the_topic_is_confluents_format_and_compacted(cluster):
    out = kcat("-b", cluster.bootstrap, "-C", "-t", "_schemas", "-e", "-f", "%k\t%s\n")
    keys = [json.loads(line.split("\t")[0]) for line in out.stdout.decode().splitlines() if line.strip()]
    schema_keys = [k for k in keys if k["keytype"] == "SCHEMA"]
    assert schema_keys and all(list(k) == ["keytype", "subject", "version", "magic"] for k in schema_keys)
    assert any(k["keytype"] == "CONFIG" for k in keys)
    status, topic = cluster.admin(0, "/v1/topics/_schemas")
    assert status == 200 and topic["config"]["cleanup.policy"] == "compact" and len(topic["partitions"]) == 1


def test_bad_input_gets_confluents_errors_and_leaves_the_broker_serving(cluster):
    assert call(cluster, 0, "POST", "/subjects/bad/versions", {"schema": "{not a schema"})[1]["error_code"] == 42201
    assert call(cluster, 0, "POST", "/subjects/bad/versions",
                {"schema": "\"string\"", "schemaType": "XML"})[1]["error_code"] == 42201
    assert call(cluster, 0, "GET", "/subjects/nope/versions")[1]["error_code"] == 40401
    call(cluster, 0, "POST", "/subjects/bad/versions", {"schema": "\"string\""})
    assert call(cluster, 1, "GET", "/subjects/bad/versions/7")[1]["error_code"] == 40402
    assert call(cluster, 1, "GET", "/subjects/bad/versions/zero")[1]["error_code"] == 42202
    assert call(cluster, 1, "GET", "/schemas/ids/999999")[1]["error_code"] == 40403
    missing_reference = {"schema": "\"string\"", "references": [{"name": "x", "subject": "none", "version": 1}]}
    assert call(cluster, 2, "POST", "/subjects/bad/versions", missing_reference)[1]["error_code"] == 42201
    # Nesting far past the parser's depth limit: refused with a message, not a crashed broker.
    deep = "\"int\""
    for _ in range(5000):
        deep = '{"type":"array","items":' + deep + "}"
    status, reply = call(cluster, 0, "POST", "/subjects/bad/versions", {"schema": deep})
    assert status == 422 and reply["error_code"] == 42201
    # A body over schema.registry.max.request.bytes is answered 413 from its head alone, before any of it is sent.
    port = int(cluster.registry_url(0).rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(b"POST /subjects/bad/versions HTTP/1.1\r\nHost: x\r\nContent-Type: " + CONTENT_TYPE.encode() +
                  b"\r\nContent-Length: " + str(9 << 20).encode() + b"\r\n\r\n")
        head = s.recv(4096).decode()
    assert head.startswith("HTTP/1.1 413") and '"error_code":413' in head
    assert call(cluster, 0, "GET", "/no/such/path")[0] == 404
    assert call(cluster, 0, "PUT", "/subjects")[0] == 405
    for b in range(3):
        assert cluster.ready(b)


def test_a_killed_leader_loses_nothing_and_hands_out_no_id_twice(cluster):
    before = clients(cluster, "serde", "avro", "before-kill", broker=0)
    highest = max(r["id"] for r in before["consumed"])
    leader = schemas_leader(cluster)
    cluster.kill(leader)
    survivor = (leader + 1) % 3
    wait_until(lambda: schemas_leader(cluster) != leader, timeout=60, what="a new leader of _schemas")
    schema = {"type": "record", "name": "AfterKill", "fields": [{"name": "y", "type": "string"}]}

    def registered():
        status, reply = call(cluster, survivor, "POST", "/subjects/after-kill/versions", {"schema": json.dumps(schema)})
        return reply["id"] if status == 200 else None
    new_id = wait_until(registered, timeout=60, what="a registration after the leader's death")
    assert new_id > highest
    cluster.start(leader)
    wait_until(lambda: call(cluster, leader, "GET", f"/schemas/ids/{new_id}")[0] == 200, timeout=60,
               what="the restarted broker to read what was written while it was down")
    again = clients(cluster, "consume", "avro", "before-kill", "10", broker=leader)
    assert [r["value"] for r in again["consumed"]] == [r["value"] for r in before["consumed"]]
