"""A real Kubernetes control plane for the operator's tests, and ferry-operator processes.

The control plane is etcd, kube-apiserver and kube-controller-manager from scripts/kube-env (built once from the
Go module proxy and cached outside the repository), on free loopback ports, in a temporary directory. The
operator runs out of the cluster with a kubeconfig whose user has exactly the permissions of
operator/deploy/rbac.yaml.
"""
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from conftest import BUILD_DIR, SANITIZER_MARKERS, SOURCE_DIR, _port_free, wait_until

KUBE_ENV = os.path.join(SOURCE_DIR, "scripts", "kube-env")
OPERATOR = os.path.join(BUILD_DIR, "operator", "ferry-operator")
DEPLOY = os.path.join(SOURCE_DIR, "operator", "deploy")


def free_ports(count):
    """A base port P with P..P+count-1 free on 127.0.0.1."""
    for _ in range(200):
        base = random.randrange(20000, 31500, 10)
        if all(_port_free(base + i) for i in range(count)):
            return base
    raise RuntimeError("no free port range found on 127.0.0.1")


class KubeEnv:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="ferry-kube-")
        self.port = free_ports(2)
        self.etcd_port = free_ports(2)
        self.kubeconfig = None
        self.bin = subprocess.run([KUBE_ENV, "bin"], capture_output=True, text=True, check=True).stdout.strip()

    def _run(self, *args, timeout=1800):
        cmd = [KUBE_ENV, *args, "--dir", self.dir]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result.stdout.strip().splitlines()[-1]

    def up(self):
        self.kubeconfig = self._run("up", "--port", str(self.port), "--etcd-port", str(self.etcd_port))
        self.wait_default_namespace()

    def down(self, keep=False):
        subprocess.run([KUBE_ENV, "down", "--dir", self.dir], capture_output=True, text=True, timeout=120)
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def user(self, name):
        """A kubeconfig for a user with no permissions until RBAC grants some."""
        return self._run("user", name, "--port", str(self.port))

    def pid(self, component):
        try:
            with open(os.path.join(self.dir, f"{component}.pid")) as f:
                return int(f.read())
        except (OSError, ValueError):
            return None

    def restart_apiserver(self):
        """Kills the API server (a graceful stop waits out open watches for minutes) and starts it again."""
        pid = self.pid("kube-apiserver")
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not _alive(pid), timeout=60, what="kube-apiserver to exit")
        self.up()

    def wait_default_namespace(self):
        wait_until(lambda: self.kubectl("get", "serviceaccount", "default", "-n", "default", check=False).returncode == 0,
                   timeout=60, interval=0.2, what="the default service account")

    def kubectl(self, *args, input=None, check=True, kubeconfig=None, timeout=60):
        cmd = [os.path.join(self.bin, "kubectl"), "--kubeconfig", kubeconfig or self.kubeconfig, *args]
        result = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def apply(self, *objects, check=True):
        return self.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(o) for o in objects), check=check)

    def get(self, kind, name, namespace="default"):
        """The object as JSON, or None when it does not exist."""
        result = self.kubectl("get", kind, name, "-n", namespace, "-o", "json", check=False)
        if result.returncode != 0:
            if "NotFound" in result.stderr:
                return None
            raise AssertionError(result.stderr)
        return json.loads(result.stdout)

    def events(self, namespace, name):
        out = self.kubectl("get", "events.events.k8s.io", "-n", namespace, "-o", "json").stdout
        return [e for e in json.loads(out)["items"] if e.get("regarding", {}).get("name") == name]


@contextlib.contextmanager
def kube_environment(request):
    """A control plane for one test module; its directory (with the operators' logs) stays when a test failed."""
    env = KubeEnv()
    failed = request.session.testsfailed
    try:
        env.up()
        yield env
    finally:
        env.down(keep=request.session.testsfailed > failed)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie child counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def grant_operator(kube, user, lease_namespace="default"):
    """Installs the CRDs and binds operator/deploy/rbac.yaml's roles to `user` (the namespaced ones in
    `lease_namespace`, where the tests' brokers StatefulSet lives too)."""
    kube.kubectl("apply", "-f", os.path.join(DEPLOY, "topics.ferry.dev.yaml"),
                 "-f", os.path.join(DEPLOY, "consumergroups.ferry.dev.yaml"),
                 "-f", os.path.join(DEPLOY, "users.ferry.dev.yaml"))
    kube.kubectl("wait", "--for=condition=Established", "crd/topics.ferry.dev", "crd/consumergroups.ferry.dev",
                 "crd/users.ferry.dev", "--timeout=60s")
    kube.kubectl("apply", "-n", lease_namespace, "-f", os.path.join(DEPLOY, "rbac.yaml"))
    kube.apply(
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": f"ferry-operator-{user}"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "ferry-operator"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": f"ferry-operator-{user}", "namespace": lease_namespace},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                     "name": "ferry-operator-leader-election"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": f"ferry-operator-brokers-{user}", "namespace": lease_namespace},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ferry-operator-brokers"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})


def install_cluster_binding_guard(kube):
    """operator/deploy/cluster-binding-guard.yaml: the ferry.dev/cluster label cannot change once set."""
    kube.kubectl("apply", "-f", os.path.join(DEPLOY, "cluster-binding-guard.yaml"))


class Operator:
    """One ferry-operator process."""

    def __init__(self, kube, kubeconfig, zk_port, cluster_name="it", identity="operator-0", args=()):
        self.kube = kube
        self.http_port = free_ports(1)
        self.log_path = os.path.join(kube.dir, f"{identity}.log")
        self.cmd = [OPERATOR, "--kubeconfig", kubeconfig, "--cluster-name", cluster_name,
                    "--zookeeper-connect", f"127.0.0.1:{zk_port}", "--http-address", "127.0.0.1",
                    "--http-port", str(self.http_port), "--identity", identity, "--lease-namespace", "default",
                    "--log-level", "debug", *args]
        self.process = None

    def start(self, wait_ready=True):
        log = open(self.log_path, "a")
        self.process = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        if wait_ready:
            wait_until(lambda: self.http("/readyz")[0] == 200, timeout=60, interval=0.1, what="the operator's /readyz")

    def http(self, path):
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"the operator exited ({self.process.returncode}):\n{self.log()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError:
            return None, ""

    def metric(self, name, **labels):
        status, text = self.http("/metrics")
        assert status == 200, text
        total = None
        for line in text.splitlines():
            if not line.startswith(name + "{") and not line.startswith(name + " "):
                continue
            if all(f'{k}="{v}"' in line for k, v in labels.items()):
                total = (total or 0) + float(line.rsplit(" ", 1)[1])
        return total

    def stop(self, sig=signal.SIGTERM):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def sanitizer_reports(self):
        return [line for line in self.log().splitlines() if any(m in line for m in SANITIZER_MARKERS)]


# Topic resources

def topic(name, ns, partitions, replication_factor, config=None, topic_name=None, annotations=None, cluster="it"):
    spec = {"partitions": partitions, "replicationFactor": replication_factor}
    if config is not None:
        spec["config"] = config
    if topic_name is not None:
        spec["topicName"] = topic_name
    meta = {"name": name, "namespace": ns, "labels": {"ferry.dev/cluster": cluster}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "ferry.dev/v1alpha1", "kind": "Topic", "metadata": meta, "spec": spec}


def ready_condition(kube, name, ns):
    obj = kube.get("topic", name, ns)
    if obj is None:
        return None
    for c in obj.get("status", {}).get("conditions", []):
        if c["type"] == "Ready":
            return c
    return None


def wait_ready(kube, name, ns, status="True", reason=None, timeout=60):
    def check():
        c = ready_condition(kube, name, ns)
        return c if c and c["status"] == status and (reason is None or c["reason"] == reason) else None
    return wait_until(check, timeout=timeout, interval=0.2, what=f"{ns}/{name} Ready={status} {reason or ''}")


def zk_partitions(ferry, topic_name):
    zk = ferry.zookeeper()
    try:
        if not zk.exists(f"/brokers/topics/{topic_name}"):
            return None
        data, _ = zk.get(f"/brokers/topics/{topic_name}")
        return {int(p): r for p, r in json.loads(data)["partitions"].items()}
    finally:
        zk.stop()
