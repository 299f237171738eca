"""Acceptance with the official Java client (kafka-clients), in each version listed in tests/java/versions.txt.

One Java program (tests/java, ferry.JavaClients) runs once per client version against the three-broker cluster:
a producer with the Java defaults (idempotent, acks=all), a consumer with assign + seek and no group, and the
admin client. It prints one JSON line per check; the tests below assert on those lines and on the brokers'
own view (admin HTTP API, log files). Maven resolves nothing from the network here: scripts/install-deps
fetches the dependencies of every listed version beforehand.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import time

import pytest

from conftest import JAVA_CLIENT_VERSIONS as VERSIONS, java_checks_classpath

RECORDS = 10_000
PARTITIONS = 6  # of the records topic, as JavaClients creates it




class JavaRun:
    """One run of ferry.JavaClients: its exit status, output, and the JSON lines by check name."""

    def __init__(self, version, prefix, process, elapsed):
        self.version = version
        self.prefix = prefix
        self.returncode = process.returncode
        self.stdout = process.stdout
        self.stderr = process.stderr
        self.elapsed = elapsed
        self.lines = [json.loads(line) for line in process.stdout.splitlines() if line.startswith("{")]

    def check(self, name):
        found = [line for line in self.lines if line["check"] == name]
        assert found, f"kafka-clients {self.version} printed no '{name}' line\n{self.diagnostics()}"
        return found[-1]

    def diagnostics(self):
        errors = [line for line in self.lines if line["check"] == "error"]
        # The client's DEBUG lines (each request it sends, with its version) would bury what went wrong.
        stderr = "\n".join(line for line in self.stderr.splitlines() if " DEBUG " not in line)
        return f"exit status {self.returncode}; errors: {errors}\n--- stderr (end) ---\n{stderr[-6000:]}"

    def request_versions(self, api):
        """The versions of `api` (FETCH, PRODUCE, ...) the client sent, from its NetworkClient DEBUG lines."""
        return {int(v) for v in re.findall(rf"apiKey={api}, apiVersion=(\d+)", self.stderr)}


@pytest.fixture(scope="module", params=VERSIONS)
def java(request, cluster):
    """Runs the Java program once per client version; every test of that version reads its output."""
    version = request.param
    out_dir = tempfile.mkdtemp(prefix=f"ferry-java-{version}-")
    try:
        classpath = java_checks_classpath(version, out_dir)
        prefix = "java-" + version.replace(".", "-")
        cmd = ["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
               "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient=debug", "-cp", classpath,
               "ferry.JavaClients",
               "--bootstrap", cluster.bootstrap, "--prefix", prefix, "--records", str(RECORDS)]
        started = time.monotonic()
        process = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        run = JavaRun(version, prefix, process, time.monotonic() - started)
        print(f"kafka-clients {version}: {run.elapsed:.1f}s; sections: "
              + ", ".join(f"{s['name']} {s['elapsed_ms']} ms" for s in run.lines if s["check"] == "section"))
        yield run
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


def test_program_ran_every_section(java):
    start = java.check("start")
    assert start["client_version"] == java.version
    assert start["records"] == RECORDS
    sections = {s["name"]: s["ok"] for s in java.lines if s["check"] == "section"}
    assert sections == {"produce": True, "consume": True, "admin": True, "validate": True}, java.diagnostics()
    assert java.check("done")["ok"] is True
    assert java.returncode == 0, java.diagnostics()


# --- 1. The producer with the Java defaults -------------------------------------------------------------------


def _produced(java):
    produce = java.check("produce")
    return produce, {int(p): v["count"] for p, v in produce["per_partition"].items()}


def test_default_producer_gets_every_record_acknowledged(java):
    produce, counts = _produced(java)
    assert produce["topic"] == f"{java.prefix}-records"
    assert (produce["acked"], produce["failed"], produce["first_error"]) == (RECORDS, 0, None)
    # murmur2 placement by key and the record's own timestamp (CreateTime) come back in RecordMetadata.
    assert produce["wrong_partition"] == 0, produce["examples"]
    assert produce["wrong_timestamp"] == 0, produce["examples"]
    assert produce["examples"] == []
    assert sorted(counts) == list(range(PARTITIONS)) and sum(counts.values()) == RECORDS
    for p, info in produce["per_partition"].items():
        # Offsets 0..count-1, each once, handed out in send order.
        assert info["count"] > 0, f"partition {p} got no records"
        assert info["distinct_offsets"] == info["count"], info
        assert (info["min_offset"], info["max_offset"]) == (0, info["count"] - 1), info
        assert info["consecutive_in_send_order"] == info["count"], info


def _batches(path):
    """(producer id, producer epoch, base sequence, record count, attributes, magic) of each batch in a segment."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos + 61 <= len(data):
        (length,) = struct.unpack_from(">i", data, pos + 8)
        if length <= 0:
            break  # zero fill past the last batch
        magic = data[pos + 16]
        (attributes,) = struct.unpack_from(">h", data, pos + 21)
        producer_id, epoch, base_sequence, count = struct.unpack_from(">qhii", data, pos + 43)
        out.append((producer_id, epoch, base_sequence, count, attributes, magic))
        pos += 12 + length
    return out


def test_default_producer_is_idempotent_on_the_wire(java, cluster):
    """The batches the leaders stored carry a producer id and gap-free sequence numbers: the Java default
    producer got a producer id (InitProducerId) and sent idempotent batches."""
    _, counts = _produced(java)
    topic = f"{java.prefix}-records"
    status, description = cluster.admin(0, f"/v1/topics/{topic}")
    assert status == 200
    for partition in description["partitions"]:
        p, leader = partition["partition"], partition["leader"]
        directory = os.path.join(cluster.log_dir(leader), f"{topic}-{p}")
        segments = sorted(name for name in os.listdir(directory) if name.endswith(".log"))
        batches = [b for name in segments for b in _batches(os.path.join(directory, name))]
        assert batches, f"no batches in {directory}"
        producer_ids = {b[0] for b in batches}
        assert len(producer_ids) == 1 and min(producer_ids) >= 0, f"partition {p}: producer ids {producer_ids}"
        assert all(b[5] == 2 for b in batches), f"partition {p}: not all batches are magic 2"
        assert all(b[4] & 0x10 == 0 for b in batches), f"partition {p}: transactional batches"
        expected_sequence = 0
        for producer_id, epoch, base_sequence, count, _, _ in batches:
            assert epoch >= 0
            assert base_sequence == expected_sequence, f"partition {p}: sequence gap or repeat at {base_sequence}"
            expected_sequence += count
        assert expected_sequence == counts[p], f"partition {p}: {expected_sequence} records stored, {counts[p]} acked"


def test_acks_all_records_are_on_every_in_sync_replica(java, cluster):
    """acks=all (the Java default) acknowledges a record once every in-sync replica has it, so each broker the
    leader lists in the ISR holds at least every acknowledged offset."""
    _, counts = _produced(java)
    topic = f"{java.prefix}-records"
    status, description = cluster.admin(0, f"/v1/topics/{topic}")
    assert status == 200
    behind = []
    for partition in description["partitions"]:
        p = partition["partition"]
        assert len(partition["replicas"]) == 3
        for replica in partition["isr"]:
            status, local_view = cluster.admin(replica, f"/v1/topics/{topic}")
            assert status == 200
            [local] = [x["local"] for x in local_view["partitions"] if x["partition"] == p]
            if local["log_end_offset"] < counts[p]:
                behind.append(f"{topic}/{p}: in-sync replica {replica} has log end offset {local['log_end_offset']}, "
                              f"{counts[p]} records were acknowledged with acks=all")
    assert not behind, "\n".join(behind)


def test_a_healthy_cluster_keeps_every_replica_in_sync(java, cluster):
    """The check above means something only when the ISR is every replica, as on a healthy Kafka cluster:
    followers replicate and join the ISR, so acks=all waited for all three."""
    _produced(java)
    status, description = cluster.admin(0, f"/v1/topics/{java.prefix}-records")
    assert status == 200
    for partition in description["partitions"]:
        assert sorted(partition["isr"]) == sorted(partition["replicas"]), partition


# --- 2. The consumer: assign + seek, no group -----------------------------------------------------------------


def _assert_clean(result):
    assert result["mismatched"] == 0, result["examples"]
    assert result["duplicates"] == 0, result["examples"]
    assert result["out_of_order"] == 0, result["examples"]
    assert result["extra"] == 0
    assert result["examples"] == []


def test_consumer_reads_everything_from_the_beginning(java):
    _, counts = _produced(java)
    consumed = java.check("consume_all")
    assert consumed["partitions_for"] == PARTITIONS
    result = consumed["result"]
    # Every record, with the key, value, headers (repeated, null and empty ones included) and timestamp it was
    # sent with, at the partition and offset the producer was given.
    assert result["received"] == RECORDS
    _assert_clean(result)
    expected_first = {str(p): 0 for p in counts}
    expected_last = {str(p): n - 1 for p, n in counts.items()}
    expected_end = {str(p): n for p, n in counts.items()}
    assert result["first_offset"] == expected_first
    assert result["last_offset"] == expected_last
    assert consumed["positions"] == expected_end
    assert consumed["beginning_offsets"] == expected_first
    assert consumed["end_offsets"] == expected_end


def test_consumer_seek_to_the_middle_rereads_from_there(java):
    _, counts = _produced(java)
    again = java.check("consume_from_middle")
    seek_to = {int(p): o for p, o in again["seek_to"].items()}
    assert seek_to == {p: n // 2 + 1 for p, n in counts.items()}
    result = again["result"]
    assert again["expected"] == sum(n - seek_to[p] for p, n in counts.items())
    assert result["received"] == again["expected"]
    _assert_clean(result)
    # The seek lands inside a stored batch: the first record handed out is exactly the one sought.
    assert result["first_offset"] == {str(p): o for p, o in seek_to.items()}
    assert result["last_offset"] == {str(p): n - 1 for p, n in counts.items()}


def test_offsets_for_times(java):
    _, counts = _produced(java)
    lookups = java.check("offsets_for_times")["partitions"]
    assert sorted(int(p) for p in lookups) == sorted(counts)
    for p, found in lookups.items():
        expected = {"offset": found["expected_offset"], "timestamp": found["expected_timestamp"]}
        assert found["expected_offset"] == counts[int(p)] // 2 + 1
        # A target between two records' timestamps, and one equal to a record's: that record, not the start of
        # its batch.
        assert found["between"] == expected, f"partition {p}: {found}"
        assert found["exact"] == expected, f"partition {p}: {found}"
        assert found["before_all"] == {"offset": 0, "timestamp": found["first_timestamp"]}, f"partition {p}: {found}"
        assert found["after_all"] is None, f"partition {p}: {found}"


def test_consumer_validates_its_position_against_the_leader_epoch(java, cluster):
    """KIP-320: a position given with the leader epoch it was read in is checked with OffsetForLeaderEpoch
    before the consumer fetches from it. One past where that epoch ends in the leader's log means the log was
    truncated under it: LogTruncationException, naming the epoch's end. A client that cannot ask fetches
    blindly and gets OffsetOutOfRangeException instead."""
    checked = java.check("position_validation")
    assert checked["first_offset"] == 0
    assert checked["epoch"] >= 0, checked
    status, description = cluster.admin(0, f"/v1/topics/{java.prefix}-validation")
    assert status == 200
    assert checked["epoch"] == description["partitions"][0]["leader_epoch"], description
    # A position inside the epoch validates, and the consumer reads on from exactly there.
    assert checked["resumed_at"] == 4
    assert checked["raised"] == "LogTruncationException", checked
    assert (checked["divergent_offset"], checked["divergent_epoch"]) == (checked["records"], checked["epoch"])
    assert java.request_versions("OFFSET_FOR_LEADER_EPOCH"), "the consumer never asked"


# --- 3. The admin client --------------------------------------------------------------------------------------


def test_describe_cluster_and_broker_configs(java, cluster):
    described = java.check("describe_cluster")
    status, brokers = cluster.admin(0, "/v1/brokers")
    assert status == 200
    assert described["nodes"] == [0, 1, 2]
    assert described["controller"] == brokers["controller"]
    assert described["cluster_id"] == brokers["cluster_id"]
    broker = java.check("broker_config")
    configs = broker["configs"]
    assert configs["broker.id"]["value"] == str(broker["broker"])
    for name in ("num.partitions", "default.replication.factor", "log.retention.ms", "zookeeper.connect"):
        assert name in configs, name
    assert configs["zookeeper.connect"]["value"] == f"127.0.0.1:{cluster.zk_port}"


def _config(configs, name):
    entry = configs[name]
    return entry["value"], entry["source"]


def test_create_topic_with_partitions_replicas_and_config(java):
    created = java.check("create_topic")
    assert created["topic"] == f"{java.prefix}-admin"
    assert (created["num_partitions"], created["replication_factor"]) == (4, 2)
    # CreateTopics v5+ echoes the effective configs.
    assert _config(created["configs"], "retention.ms") == ("3600000", "DYNAMIC_TOPIC_CONFIG")
    assert _config(created["configs"], "segment.bytes") == ("1048576", "DYNAMIC_TOPIC_CONFIG")
    assert _config(created["configs"], "cleanup.policy") == ("delete", "DEFAULT_CONFIG")


def test_create_topic_with_broker_defaults_and_validate_only(java):
    broker = java.check("broker_config")["configs"]
    by_default = java.check("create_topic_defaults")
    assert by_default["num_partitions"] == int(broker["num.partitions"]["value"])
    assert by_default["replication_factor"] == int(broker["default.replication.factor"]["value"])
    assert java.check("create_validate_only")["error"] == "none"
    listed = java.check("list_topics")
    assert listed == {"check": "list_topics", "has_admin_topic": True, "has_defaults_topic": True,
                      "has_validate_only_topic": False, "has_records_topic": True}


def _assert_layout(description, partitions, replication_factor):
    assert description["internal"] is False
    assert [p["partition"] for p in description["partitions"]] == list(range(partitions))
    for p in description["partitions"]:
        replicas = p["replicas"]
        assert len(replicas) == replication_factor and len(set(replicas)) == replication_factor, p
        assert set(replicas) <= {0, 1, 2}, p
        assert p["leader"] in replicas, p
        assert p["leader"] in p["isr"] and set(p["isr"]) <= set(replicas), p


def test_describe_topic(java):
    described = java.check("describe_topic")
    assert described["description"]["name"] == f"{java.prefix}-admin"
    _assert_layout(described["description"], 4, 2)
    # Leadership is spread: placement starts each partition on a different broker.
    assert len({p["leader"] for p in described["description"]["partitions"]}) == 3


def test_create_topic_and_partitions_with_explicit_assignment(java):
    assigned = java.check("create_assigned")
    placement = [[2, 1], [0, 2], [1, 0]]
    assert [p["replicas"] for p in assigned["created"]["partitions"]] == placement
    assert [p["leader"] for p in assigned["created"]["partitions"]] == [2, 0, 1]  # the first replica leads
    assert [p["replicas"] for p in assigned["grown"]["partitions"]] == placement + [[2, 0]]
    assert assigned["grown"]["partitions"][3]["leader"] == 2


def test_describe_configs_shows_overrides_and_defaults(java):
    broker = java.check("broker_config")["configs"]
    configs = java.check("describe_configs")["configs"]
    assert _config(configs, "retention.ms") == ("3600000", "DYNAMIC_TOPIC_CONFIG")
    assert configs["retention.ms"]["default"] is False
    assert _config(configs, "segment.bytes") == ("1048576", "DYNAMIC_TOPIC_CONFIG")
    assert _config(configs, "cleanup.policy") == ("delete", "DEFAULT_CONFIG")
    assert _config(configs, "max.message.bytes") == (broker["message.max.bytes"]["value"], "DEFAULT_CONFIG")
    assert _config(configs, "retention.bytes") == ("-1", "DEFAULT_CONFIG")
    assert configs["min.insync.replicas"]["default"] is True
    overridden = sorted(name for name, e in configs.items() if e["source"] != "DEFAULT_CONFIG")
    assert overridden == ["retention.ms", "segment.bytes"]
    assert all(not e["read_only"] and not e["sensitive"] for e in configs.values())


def types_of(configs):
    return {name: entry["type"] for name, entry in configs.items()}


def test_describe_configs_with_synonyms_and_types(java):
    configs = java.check("describe_configs_synonyms")["configs"]
    broker = java.check("broker_config")["configs"]
    # The override comes first, then the broker setting that gives the default, with its value.
    assert configs["retention.ms"]["synonyms"] == [["retention.ms", "3600000", "DYNAMIC_TOPIC_CONFIG"],
                                                   ["log.retention.ms", broker["log.retention.ms"]["value"], "DEFAULT_CONFIG"]]
    assert configs["cleanup.policy"]["synonyms"] == [["log.cleanup.policy", "delete", "DEFAULT_CONFIG"]]
    # The throttled-replica lists have no broker setting behind them, so, not overridden, no synonym (as in Kafka).
    without_broker_setting = {"leader.replication.throttled.replicas", "follower.replication.throttled.replicas"}
    for name, entry in configs.items():
        if name in without_broker_setting:
            assert entry["synonyms"] == [], name
            continue
        assert entry["synonyms"], name
        assert entry["synonyms"][-1][1] != "null", f"{name}: the default synonym has no value"
    assert types_of(configs)["leader.replication.throttled.replicas"] == "LIST"
    types = types_of(configs)
    assert types["retention.ms"] == "LONG" and types["segment.bytes"] == "INT"
    assert types["cleanup.policy"] == "LIST" and types["compression.type"] == "STRING"
    assert types["unclean.leader.election.enable"] == "BOOLEAN"
    assert "UNKNOWN" not in types.values(), types


def test_incremental_alter_configs_set_and_delete(java):
    broker = java.check("broker_config")["configs"]
    validate_only = java.check("incremental_validate_only")
    assert (validate_only["error"], validate_only["retention.ms"]) == ("none", "3600000")  # checked, not applied
    after_set = java.check("incremental_set")["configs"]
    assert _config(after_set, "retention.ms") == ("7200000", "DYNAMIC_TOPIC_CONFIG")
    assert _config(after_set, "max.message.bytes") == ("2000000", "DYNAMIC_TOPIC_CONFIG")
    assert _config(after_set, "segment.bytes") == ("1048576", "DYNAMIC_TOPIC_CONFIG")  # untouched
    after_delete = java.check("incremental_delete")["configs"]
    # DELETE returns retention.ms to the broker's log.retention.ms and keeps the other overrides.
    assert _config(after_delete, "retention.ms") == (broker["log.retention.ms"]["value"], "DEFAULT_CONFIG")
    assert _config(after_delete, "max.message.bytes") == ("2000000", "DYNAMIC_TOPIC_CONFIG")
    assert _config(after_delete, "segment.bytes") == ("1048576", "DYNAMIC_TOPIC_CONFIG")


def test_incremental_alter_configs_append_and_subtract(java):
    lists = java.check("incremental_lists")["results"]
    assert lists == {
        "append_present_value": "none",
        "cleanup.policy": ["delete", "DYNAMIC_TOPIC_CONFIG"],
        "append_invalid_value": "InvalidConfigurationException",
        "append_compact": "none",
        "cleanup.policy_after_compact": "delete,compact",
        "append_to_non_list": "InvalidRequestException",
        "subtract_from_non_list": "InvalidRequestException",
    }


def test_alter_configs_replaces_all_overrides(java):
    altered = java.check("alter_configs")
    if int(java.version.split(".")[0]) >= 4:
        # Admin.alterConfigs was removed from the 4.x client; nothing to drive.
        assert altered["available"] is False
        return
    assert altered["available"] is True
    configs = altered["configs"]
    assert _config(configs, "segment.ms") == ("600000", "DYNAMIC_TOPIC_CONFIG")
    assert _config(configs, "cleanup.policy") == ("delete", "DYNAMIC_TOPIC_CONFIG")
    # Overrides left out of the request are gone.
    assert configs["max.message.bytes"]["source"] == "DEFAULT_CONFIG"
    assert _config(configs, "segment.bytes") == ("1073741824", "DEFAULT_CONFIG")
    assert sorted(n for n, e in configs.items() if e["source"] != "DEFAULT_CONFIG") == ["cleanup.policy", "segment.ms"]


def test_create_partitions(java):
    before = java.check("describe_topic")["description"]["partitions"]
    grown = java.check("create_partitions")["description"]
    _assert_layout(grown, 6, 2)
    # The existing partitions keep their replicas.
    assert [p["replicas"] for p in grown["partitions"][:4]] == [p["replicas"] for p in before]


def test_admin_errors(java):
    errors = java.check("errors")
    assert errors["errors"] == {
        "create_existing": "TopicExistsException",
        "replication_factor_4": "InvalidReplicationFactorException",
        "invalid_config_value": "InvalidConfigurationException",
        "unknown_config": "InvalidConfigurationException",
        "zero_partitions": "InvalidPartitionsException",
        "invalid_name": "InvalidTopicException",
        "describe_missing": "UnknownTopicOrPartitionException",
        "describe_configs_missing": "UnknownTopicOrPartitionException",
        "incremental_invalid_value": "InvalidConfigurationException",
        "shrink_partitions": "InvalidPartitionsException",
        "delete_missing": "UnknownTopicOrPartitionException",
        "assign_unknown_broker": "InvalidReplicaAssignmentException",
        "grow_onto_unknown_broker": "InvalidReplicaAssignmentException",
    }
    # None of the refused topics exists afterwards.
    assert errors["created_by_errors"] == [False] * 5


def test_topics_have_ids_and_are_found_and_deleted_by_them(java, cluster):
    """Metadata gives every topic the id the cluster keeps in ZooKeeper, so the Java client fetches by topic id
    (Fetch v13+, which it uses only when every topic it reads has one: the consume tests above ran that way).
    A topic is described and deleted by its id; an unknown id gets UNKNOWN_TOPIC_ID, echoed so the client can
    match it up."""
    ids = java.check("topic_ids")
    fetches = java.request_versions("FETCH")
    assert fetches and min(fetches) >= 13, f"Fetch versions sent: {sorted(fetches)}"
    assert "AAAAAAAAAAAAAAAAAAAAAA" not in (ids["id"], ids["records_topic_id"]), ids
    status, records = cluster.admin(0, f"/v1/topics/{java.prefix}-records")
    assert status == 200 and records["topic_id"] == ids["records_topic_id"], records
    # The admin topic was deleted and created again under its name after this check: a new topic, a new id.
    status, again = cluster.admin(0, f"/v1/topics/{ids['topic']}")
    assert status == 200 and again["topic_id"] not in ("", ids["id"]), (ids, again)
    assert ids["described_by_id"] == ids["topic"]
    assert ids["deleted_listed"] is False
    status, _ = cluster.admin(0, f"/v1/topics/{ids['deleted_by_id']}")
    assert status == 404
    assert ids["delete_by_unknown_id"].startswith("UnknownTopicIdException"), ids
    assert ids["describe_by_unknown_id"].startswith("UnknownTopicIdException"), ids


def test_delete_topics_and_recreate_the_name(java, cluster):
    deleted = java.check("delete_topics")
    assert deleted["still_listed"] is False
    assert deleted["describe_deleted"] == "UnknownTopicOrPartitionException"
    assert deleted["records_topic_kept"] is True
    # The same name again is a new topic: only the 10 new records, from offset 0; none of the 100 old ones.
    again = java.check("recreate")
    assert (again["old_records_acked"], again["new_records_acked"]) == (100, 10)
    records = again["read"]["records"]
    assert [(r["partition"], r["offset"], r["key"]) for r in records] == [(0, i, f"new-{i}") for i in range(10)]
    assert again["read"]["end_offsets"] == {"0": 10, "1": 0}
    status, topic = cluster.admin(0, f"/v1/topics/{java.prefix}-admin")
    assert status == 200 and len(topic["partitions"]) == 2


def test_brokers_understood_every_request(java, cluster):
    """The client negotiated versions through ApiVersions: no broker closed a connection over a request it
    could not serve or parse."""
    assert java.check("done")
    problems = []
    for b in range(cluster.brokers):
        for line in cluster.broker_log(b).splitlines():
            if any(m in line for m in ("is not supported", "does not parse", "unknown API key")):
                problems.append(f"broker {b}: {line}")
    assert not problems, "\n".join(problems[:20])
