"""Fixtures for integration tests: a real ZooKeeper and real ferry-broker processes started with
scripts/local-cluster (the same tool users run), on free loopback ports, in a temporary directory.

Every cluster is stopped at the end of its test module, and the broker logs are checked for sanitizer
reports: the debug build runs with AddressSanitizer and UndefinedBehaviorSanitizer.
"""
import json
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

import pytest

SOURCE_DIR = os.environ.get("FERRY_SOURCE_DIR", os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))
BUILD_DIR = os.environ.get("FERRY_BUILD_DIR", os.path.join(SOURCE_DIR, "build", "debug"))
LOCAL_CLUSTER = os.path.join(SOURCE_DIR, "scripts", "local-cluster")
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def _port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _free_base(brokers):
    """A base port P with P..P+n-1, P+1000..P+1000+n-1 and P-1 (ZooKeeper) all free."""
    for _ in range(200):
        base = random.randrange(21000, 39000, 10)
        ports = [base - 1] + [base + i for i in range(brokers)] + [base + 1000 + i for i in range(brokers)]
        if all(_port_free(p) for p in ports):
            return base
    raise RuntimeError("no free port range found on 127.0.0.1")


def wait_until(condition, timeout=30.0, interval=0.05, what="condition"):
    """Polls `condition` until it returns a truthy value, which is returned; fails the test on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


class Cluster:
    def __init__(self, brokers, overrides=()):
        self.brokers = brokers
        self.overrides = list(overrides)
        self.base_port = _free_base(brokers)
        self.zk_port = self.base_port - 1
        self.data = tempfile.mkdtemp(prefix="ferry-it-")
        self.bootstrap = ",".join(f"127.0.0.1:{self.base_port + i}" for i in range(brokers))

    def run(self, *args, timeout=180, check=True):
        cmd = [LOCAL_CLUSTER, "--data", self.data, *args]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def up(self):
        args = ["up", "--brokers", str(self.brokers), "--base-port", str(self.base_port), "--zk-port",
                str(self.zk_port), "--build-dir", BUILD_DIR, "--timeout", "120"]
        for o in self.overrides:
            args += ["--override", o]
        out = self.run(*args)
        assert out.stdout.strip().splitlines()[-1] == self.bootstrap

    def down(self):
        self.run("down", check=False)

    def kill(self, broker):
        self.run("kill", str(broker))

    def stop(self, broker):
        self.run("stop", str(broker))

    def start(self, broker):
        self.run("start", str(broker), "--timeout", "120")

    def address(self, broker):
        return f"127.0.0.1:{self.base_port + broker}"

    def admin(self, broker, path):
        url = f"http://127.0.0.1:{self.base_port + 1000 + broker}{path}"
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def broker_log(self, broker):
        with open(os.path.join(self.data, f"broker-{broker}", "broker.log"), errors="replace") as f:
            return f.read()

    def log_dir(self, broker):
        return os.path.join(self.data, f"broker-{broker}", "data")

    def sanitizer_reports(self):
        reports = []
        for b in range(self.brokers):
            try:
                text = self.broker_log(b)
            except FileNotFoundError:
                continue
            for marker in SANITIZER_MARKERS:
                if marker in text:
                    reports.append(f"broker {b}: {marker}")
        return reports

    def cleanup(self):
        self.down()
        reports = self.sanitizer_reports()
        if not reports:
            shutil.rmtree(self.data, ignore_errors=True)
        return reports


@pytest.fixture(scope="module")
def cluster():
    """Three brokers, as the local cluster runs them by default."""
    c = Cluster(3)
    c.up()
    yield c
    reports = c.cleanup()
    assert not reports, f"sanitizer reports in broker logs (kept in {c.data}): {reports}"


@pytest.fixture(scope="module")
def single_broker():
    c = Cluster(1)
    c.up()
    yield c
    reports = c.cleanup()
    assert not reports, f"sanitizer reports in broker logs (kept in {c.data}): {reports}"


def kcat(*args, input=None, timeout=120, check=True):
    """Runs kcat (librdkafka 2.0.2) and returns its completed process."""
    result = subprocess.run(["kcat", *args], input=input, capture_output=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"kcat {' '.join(args)} failed: {result.stderr.decode(errors='replace')}")
    return result
