"""A real single-node Kubernetes cluster for tests that run pods: scripts/kube-cluster (the control plane of
scripts/kube-env plus kube-scheduler, a kubelet on containerd, kube-proxy, a CNI bridge, CoreDNS and a default
StorageClass `local`), in a temporary directory. The binaries and base images are built once and cached outside
the repository (`scripts/kube-cluster build`); a cluster then comes up in about 15 s.

Images built with podman (`build_image`, which uses the script's containers.conf and `--pull=never`) go into the
cluster with `load_image`; pods use them with `imagePullPolicy: Never`. One cluster runs on a machine at a time
(its kube-proxy owns the host's KUBE-* iptables chains); it can run next to scripts/kube-env's control planes.

    with kube_cluster(request) as kube:
        kube.build_image("localhost/ferry:test", SOURCE_DIR)
        kube.load_image("localhost/ferry:test")
        kube.kubectl("apply", "-f", "manifest.yaml")
"""
import contextlib
import json
import os
import shutil
import subprocess
import tempfile

from conftest import SOURCE_DIR

KUBE_CLUSTER = os.path.join(SOURCE_DIR, "scripts", "kube-cluster")
KUBE_ENV = os.path.join(SOURCE_DIR, "scripts", "kube-env")


class KubeCluster:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="ferry-kube-cluster-")
        self.kubeconfig = None
        self.bin = subprocess.run([KUBE_ENV, "bin"], capture_output=True, text=True, check=True).stdout.strip()

    def _run(self, *args, timeout=600):
        cmd = [KUBE_CLUSTER, *args]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""

    def up(self):
        # The first run on a machine builds everything (15-40 minutes on 2 cores); later runs find it cached.
        self._run("build", timeout=3600)
        self.kubeconfig = self._run("up", "--dir", self.dir, timeout=600)

    def down(self, keep=False):
        """Stops the cluster and removes what it created on the host; the directory (logs) stays if `keep`."""
        subprocess.run([KUBE_CLUSTER, "down", "--dir", self.dir], capture_output=True, text=True, timeout=300)
        if not keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def kubectl(self, *args, input=None, check=True, timeout=120):
        cmd = [os.path.join(self.bin, "kubectl"), "--kubeconfig", self.kubeconfig, *args]
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

    def podman(self, *args, check=True, timeout=1800):
        """podman with the cluster script's containers.conf (runc, cgroupfs, the host's ulimits, host network)."""
        cmd = [KUBE_CLUSTER, "podman", *args]
        result = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if check and result.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        return result

    def build_image(self, tag, context, dockerfile=None, timeout=3600):
        """Builds an image with podman from local base images only (debian:bookworm and debian:bookworm-slim come
        from `scripts/kube-cluster build`)."""
        args = ["build", "--pull=never", "-t", tag]
        if dockerfile:
            args += ["-f", dockerfile]
        return self.podman(*args, context, timeout=timeout)

    def load_image(self, *names):
        """Copies podman images into the cluster's containerd (pods use them with imagePullPolicy: Never)."""
        self._run("load-image", "--dir", self.dir, *names, timeout=600)


@contextlib.contextmanager
def kube_cluster(request=None):
    """A cluster for one test module; its directory (with every component's log) stays when a test failed."""
    cluster = KubeCluster()
    failed = request.session.testsfailed if request is not None else 0
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down(keep=request is not None and request.session.testsfailed > failed)
