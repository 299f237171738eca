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


def test_ready_in_sync_waits_for_a_restarted_broker_to_catch_up():
    """/v1/ready?in_sync=true, the readiness the chart's rolling restarts wait for: a restarted broker is ready
    (serving) before its replicas are back in sync, but in_sync only once they are."""
    import json
    import os
    import signal

    from kafka import KafkaProducer

    from conftest import started_cluster

    # A long ZooKeeper session, so that the paused leader stays registered (and leading) while it is paused.
    with started_cluster(3, overrides=["zookeeper.session.timeout.ms=60000"]) as c:
        for b in range(3):
            assert c.admin(b, "/v1/ready?in_sync=true") == (200, {"ready": True, "broker_id": b, "reasons": []})
        status, body = c.admin(0, "/v1/ready?verbose")
        assert status == 400 and "in_sync=true|false" in body["error"]

        zk = c.zookeeper()
        try:
            zk.create("/brokers/topics/in-sync", json.dumps({"version": 1, "partitions": {"0": [0, 2]}}).encode())
        finally:
            zk.stop()
        c.leader("in-sync", 0)
        producer = KafkaProducer(bootstrap_servers=c.bootstrap, acks=1)
        try:
            c.stop(2)  # a clean stop closes its ZooKeeper session: the controller takes it out of the ISR
            wait_until(lambda: c.admin(0, "/v1/topics/in-sync")[1]["partitions"][0]["isr"] == [0],
                       what="broker 2 to leave the ISR")
            for i in range(50):
                producer.send("in-sync", value=b"behind-%d" % i, partition=0)
            producer.flush(timeout=60)
        finally:
            producer.close(timeout=10)

        leader_pid = c.pid(0)
        os.kill(leader_pid, signal.SIGSTOP)
        try:
            c.start(2)  # returns once /v1/ready answers 200: serving, though it cannot fetch from the leader
            status, body = c.admin(2, "/v1/ready?in_sync=true")
            assert status == 503, body
            assert body["reasons"] == ["1 hosted partition(s) not yet back in sync, e.g. in-sync/0"], body
            assert c.admin(2, "/v1/ready")[0] == 200
        finally:
            os.kill(leader_pid, signal.SIGCONT)
        wait_until(lambda: c.admin(2, "/v1/ready?in_sync=true")[0] == 200, timeout=60,
                   what="broker 2 to be back in sync")


def test_https_and_basic_authentication():
    """admin.listener.protocol=https with admin.authentication=basic: the probes' paths stay open, the rest
    needs a user's SCRAM password (here the brokers' own user, which local-cluster --secure made)."""
    import base64
    import json
    import os
    import ssl

    from conftest import started_cluster

    overrides = ["admin.listener.protocol=https", "admin.authentication=basic"]
    with started_cluster(1, secure=True, overrides=overrides) as c:
        context = ssl.create_default_context(cafile=os.path.join(c.tls_dir, "ca.pem"))
        base = f"https://localhost:{c.base_port + 1000}"

        def get(path, user=None, password=None):
            request = urllib.request.Request(base + path)
            if user is not None:
                token = base64.b64encode(f"{user}:{password}".encode()).decode()
                request.add_header("Authorization", f"Basic {token}")
            try:
                with urllib.request.urlopen(request, timeout=10, context=context) as response:
                    return response.status, dict(response.headers), json.loads(response.read() or b"null")
            except urllib.error.HTTPError as e:
                return e.code, dict(e.headers), json.loads(e.read() or b"null")

        status, _, body = get("/v1/ready")
        assert (status, body["ready"]) == (200, True)
        status, headers, body = get("/v1/brokers")
        assert status == 401
        assert headers["WWW-Authenticate"].startswith('Basic realm="ferry"')
        assert "error" in body
        assert get("/v1/brokers", "ferry-broker", "not-the-password-42")[0] == 401
        status, _, body = get("/v1/brokers", "ferry-broker", c.broker_password())
        assert status == 200
        assert [b["id"] for b in body["brokers"]] == [0]
        with urllib.request.urlopen(base + "/metrics", timeout=10, context=context) as response:
            metrics = response.read().decode()
        assert 'ferry_admin_authentications_total{method="basic",result="success"} 1' in metrics
        assert 'ferry_admin_authentications_total{method="basic",result="failure"} 1' in metrics
        log = c.broker_log(0)
        assert "failed admin API authentication (basic) of user 'ferry-broker' from 127.0.0.1:" in log
        assert "not-the-password-42" not in log and c.broker_password() not in log
