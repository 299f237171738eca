"""The HTTP admin API (docs/admin-api.md) against a running three-broker cluster."""
import urllib.request

from conftest import kcat, wait_until


def test_health_ready_and_brokers(cluster):
    for b in range(3):
        assert cluster.admin(b, "/v1/health") == (200, {"status": "ok", "broker_id": b})
        assert cluster.admin(b, "/v1/ready") == (200, {"ready": True, "broker_id": b, "reasons": []})
    status, body = cluster.admin(0, "/v1/brokers")
    assert status == 200
    assert sorted(b["id"] for b in body["brokers"]) == [0, 1, 2]
    assert sum(1 for b in body["brokers"] if b["controller"]) == 1
    assert body["controller"] in (0, 1, 2)
    assert body["cluster_id"]


def test_topics_and_one_topic(cluster):
    kcat("-b", cluster.bootstrap, "-P", "-t", "admin-api", input=b"a\nb\nc\n")
    status, body = cluster.admin(1, "/v1/topics")
    assert status == 200
    assert {"name": "admin-api", "partitions": 1, "replication_factor": 1, "marked_for_deletion": False} in body["topics"]
    status, topic = cluster.admin(2, "/v1/topics/admin-api")
    assert status == 200
    [partition] = topic["partitions"]
    leader = partition["leader"]
    assert partition["replicas"] == [leader] and partition["isr"] == [leader]
    # The leader reports its local log: three records were appended.
    status, local = cluster.admin(leader, "/v1/topics/admin-api")
    assert local["partitions"][0]["local"]["log_end_offset"] == 3
    assert cluster.admin(0, "/v1/topics/no-such-topic")[0] == 404


def test_errors_are_json(cluster):
    assert cluster.admin(0, "/v1/nothing-here") == (404, {"error": "no such endpoint: /v1/nothing-here"})
    request = urllib.request.Request(f"http://127.0.0.1:{cluster.base_port + 1000}/v1/topics", method="POST", data=b"{}")
    try:
        urllib.request.urlopen(request, timeout=10)
        raise AssertionError("POST should be refused")
    except urllib.error.HTTPError as e:
        assert e.code == 405


def test_metrics_count_requests_and_bytes(cluster):
    kcat("-b", cluster.address(0), "-P", "-t", "metrics-topic", "-p", "0", input=b"x" * 100 + b"\n")
    status, topic = cluster.admin(0, "/v1/topics/metrics-topic")
    leader = topic["partitions"][0]["leader"]

    def scrape():
        with urllib.request.urlopen(f"http://127.0.0.1:{cluster.base_port + 1000 + leader}/metrics", timeout=10) as r:
            return r.read().decode()

    text = wait_until(lambda: (t := scrape()) and 'ferry_topic_bytes_in_total{topic="metrics-topic"}' in t and t,
                      what="topic metrics on the leader")
    assert 'ferry_requests_total{api="produce"}' in text
    assert "ferry_request_duration_seconds_bucket" in text
    assert 'ferry_partition_log_end_offset{partition="0",topic="metrics-topic"} 1' in text
    assert "ferry_open_connections" in text
