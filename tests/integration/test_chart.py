"""charts/ferry without a kubelet: helm lint and helm-unittest, the schema's refusals, the plain manifest being
current, the chart's RBAC and scale guard matching operator/deploy, and `helm install` / `helm upgrade` against a
real kube-apiserver (scripts/kube-env), which validates every object and runs the chart's lookups for real.

The chart running for real (pods, helm test, Prometheus, scaling) is tests/integration/test_chart_e2e.py.
"""
import copy
import json
import os
import subprocess

import pytest
import yaml

from conftest import SOURCE_DIR, wait_until
from kube_env import DEPLOY, kube_environment

CHART = os.path.join(SOURCE_DIR, "charts", "ferry")
HELM_TOOLS = os.path.join(SOURCE_DIR, "scripts", "helm-tools")


@pytest.fixture(scope="module")
def helm_bin():
    subprocess.run([HELM_TOOLS, "build"], check=True, capture_output=True, text=True, timeout=1800)
    return subprocess.run([HELM_TOOLS, "bin"], check=True, capture_output=True, text=True).stdout.strip()


def helm(helm_bin, *args, check=True, kubeconfig=None, timeout=300):
    env = dict(os.environ, HELM_CACHE_HOME="/tmp/ferry-helm-cache", HELM_CONFIG_HOME="/tmp/ferry-helm-config",
               HELM_DATA_HOME="/tmp/ferry-helm-data")
    if kubeconfig:
        env["KUBECONFIG"] = kubeconfig
    result = subprocess.run([os.path.join(helm_bin, "helm"), *args], capture_output=True, text=True, env=env,
                            timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def render(helm_bin, *sets):
    args = ["template", "ferry", CHART, "--namespace", "ferry", "--kube-version", "1.35.0"]
    for s in sets:
        args += ["--set", s]
    return [d for d in yaml.safe_load_all(helm(helm_bin, *args).stdout) if d]


def test_lint_and_unit_tests(helm_bin):
    lint = helm(helm_bin, "lint", "--strict", CHART, "--kube-version", "1.35.0")
    assert "1 chart(s) linted, 0 chart(s) failed" in lint.stdout
    assert "[WARNING]" not in lint.stdout and "[ERROR]" not in lint.stdout, lint.stdout
    unit = subprocess.run([os.path.join(helm_bin, "helm-unittest"), "--strict", CHART], capture_output=True,
                          text=True, timeout=300)
    assert unit.returncode == 0, unit.stdout + unit.stderr
    summary = next(line for line in unit.stdout.splitlines() if line.startswith("Tests:"))
    assert "failed" not in summary and " passed" in summary, summary


@pytest.mark.parametrize("setting, message", [
    ("zookeeper.replicas=2", "at '/zookeeper/replicas': value must be one of 1, 3, 5, 7"),
    ("broker.replicas=0", "at '/broker/replicas': minimum: got 0, want 1"),
    ("broker.external.type=ClusterIP", "at '/broker/external/type': value must be one of 'NodePort', 'LoadBalancer'"),
    ("broker.replica=3", "additional properties 'replica' not allowed"),
    ("operator.logFormat=xml", "at '/operator/logFormat': value must be one of 'json', 'text'"),
    ("broker.config.broker\\.id=7", "broker.config.broker.id is set by the chart"),
    ("zookeeper.enabled=false", "zookeeper.connect is required when zookeeper.enabled is false"),
    # Locked nodes need the identity they are locked to.
    ("zookeeper.acl.enabled=false", "at '/zookeeper/acl/enabled': value must be true"),
    ("zookeeper.acl.username=a:b", "at '/zookeeper/acl/username': 'a:b' does not match pattern"),
    # Certificates: lifetimes in the operator's units, and an operator to issue them.
    ("tls.caValidity=5y", "at '/tls/caValidity': '5y' does not match pattern"),
    ("tls.extraAddresses[0]=a\\,b", "at '/tls/extraAddresses/0'"),
    ("operator.enabled=false", "tls.enabled needs operator.enabled"),
    ("tls.certManager.enabled=true", "at '/tls/certManager/issuerRef': missing property 'name'"),
    ("broker.config.super\\.users=User:me", "broker.config.super.users is set by the chart"),
])
def test_bad_values_are_refused_with_a_message_naming_them(helm_bin, setting, message):
    result = helm(helm_bin, "template", "ferry", CHART, "--kube-version", "1.35.0", "--set", setting, check=False)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr


def test_plain_manifest_is_current(helm_bin):
    rendered = subprocess.run([os.path.join(SOURCE_DIR, "scripts", "render-manifest"), "--stdout"],
                              capture_output=True, text=True, check=True, timeout=600).stdout
    with open(os.path.join(SOURCE_DIR, "deploy", "ferry.yaml")) as f:
        assert f.read() == rendered, "deploy/ferry.yaml is stale: run scripts/render-manifest"


def test_rbac_and_scale_guard_match_operator_deploy(helm_bin):
    """operator/deploy holds what the operator's own tests run with; the chart must grant the same."""
    objects = render(helm_bin)
    with open(os.path.join(DEPLOY, "rbac.yaml")) as f:
        deploy = {d["metadata"]["name"]: d for d in yaml.safe_load_all(f) if d}
    by_name = {(d["kind"], d["metadata"]["name"]): d for d in objects}
    # The chart grants in each watched namespace (a Role) what operator/deploy grants with its ClusterRole, but
    # for reading the CRDs, which are cluster-scoped: a ClusterRole of its own.
    assert by_name[("Role", "ferry-operator-ferry")]["rules"] + \
        by_name[("ClusterRole", "ferry-operator-ferry-crds")]["rules"] == deploy["ferry-operator"]["rules"]
    assert by_name[("Role", "ferry-operator-leader-election")]["rules"] == \
        deploy["ferry-operator-leader-election"]["rules"]
    assert by_name[("Role", "ferry-operator-brokers")]["rules"] == deploy["ferry-operator-brokers"]["rules"]
    with open(os.path.join(DEPLOY, "broker-scale-guard.yaml")) as f:
        policy = next(d for d in yaml.safe_load_all(f) if d and d["kind"] == "ValidatingAdmissionPolicy")
    chart_policy = by_name[("ValidatingAdmissionPolicy", "ferry-broker-ferry-broker-scale-guard")]
    assert chart_policy["spec"] == policy["spec"]
    with open(os.path.join(DEPLOY, "cluster-binding-guard.yaml")) as f:
        guard = next(d for d in yaml.safe_load_all(f) if d and d["kind"] == "ValidatingAdmissionPolicy")
    chart_guard = copy.deepcopy(by_name[("ValidatingAdmissionPolicy", "ferry-ferry-cluster-binding")])
    # The chart's is narrowed to its own cluster's resources.
    assert chart_guard["spec"]["matchConstraints"].pop("objectSelector") == \
        {"matchLabels": {"ferry.dev/cluster": "ferry"}}
    assert chart_guard["spec"] == guard["spec"]


@pytest.fixture(scope="module")
def kube(request):
    with kube_environment(request) as env:
        yield env


def test_plain_manifest_applies(kube):
    """deploy/ferry.yaml as a user without Helm applies it (a server-side dry run: nothing is created)."""
    kube.kubectl("create", "namespace", "ferry")
    result = kube.kubectl("apply", "--server-side", "--dry-run=server", "-f",
                          os.path.join(SOURCE_DIR, "deploy", "ferry.yaml"))
    assert "statefulset.apps/ferry-broker serverside-applied (server dry run)" in result.stdout, result.stdout
    assert "validatingadmissionpolicy.admissionregistration.k8s.io/ferry-broker-ferry-broker-scale-guard" in \
        result.stdout, result.stdout


def test_install_and_upgrade_against_a_real_api_server(helm_bin, kube):
    """Every object is accepted by kube-apiserver 1.35 (CRDs, CEL in the scale guard, the PodMonitor-free
    defaults), the controllers create the pods with each broker's identity, and lowering broker.replicas keeps
    the StatefulSet's replicas and only asks the operator, through ferry.dev/brokers, to drain."""
    helm(helm_bin, "install", "ferry", CHART, "--namespace", "ferry", "--set", "broker.replicas=4",
         kubeconfig=kube.kubeconfig)
    for crd in ("topics.ferry.dev", "consumergroups.ferry.dev", "users.ferry.dev"):
        assert kube.get("crd", crd, namespace="") is not None, crd
    sts = kube.get("statefulset", "ferry-broker", namespace="ferry")
    assert sts["spec"]["replicas"] == 4 and sts["metadata"]["annotations"]["ferry.dev/brokers"] == "4"
    assert kube.get("validatingadmissionpolicy", "ferry-broker-ferry-broker-scale-guard", namespace="") is not None

    def pods():
        out = kube.kubectl("get", "pods", "-n", "ferry", "-l", "app.kubernetes.io/component=broker", "-o", "json")
        return json.loads(out.stdout)["items"]
    wait_until(lambda: len(pods()) == 4, timeout=60, what="the controller to create four broker pods")
    for pod in pods():
        index = pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"]
        assert pod["metadata"]["name"] == f"ferry-broker-{index}"
        env = {e["name"]: e for e in pod["spec"]["containers"][0]["env"]}
        assert env["FERRY_CONFIG_BROKER_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == \
            "metadata.labels['apps.kubernetes.io/pod-index']"

    # The operator holds broker 3's replicas: the floor is 4. helm upgrade to three brokers keeps four pods
    # (lookup of the live StatefulSet) and sets the annotation the operator drains by.
    kube.kubectl("annotate", "statefulset", "ferry-broker", "-n", "ferry", "ferry.dev/replica-floor=4")
    helm(helm_bin, "upgrade", "ferry", CHART, "--namespace", "ferry", "--set", "broker.replicas=3",
         kubeconfig=kube.kubeconfig)
    sts = kube.get("statefulset", "ferry-broker", namespace="ferry")
    assert sts["spec"]["replicas"] == 4 and sts["metadata"]["annotations"]["ferry.dev/brokers"] == "3"
    assert sts["metadata"]["annotations"]["ferry.dev/replica-floor"] == "4"
    refused = kube.kubectl("scale", "statefulset", "ferry-broker", "-n", "ferry", "--replicas=3", check=False)
    assert refused.returncode != 0 and "broker 3 still holds partition replicas" in refused.stderr, refused.stderr

    # Once the operator has drained broker 3 it lowers the floor and scales down; the next upgrade agrees.
    kube.kubectl("annotate", "--overwrite", "statefulset", "ferry-broker", "-n", "ferry",
                 "ferry.dev/replica-floor=3")
    kube.kubectl("scale", "statefulset", "ferry-broker", "-n", "ferry", "--replicas=3")
    helm(helm_bin, "upgrade", "ferry", CHART, "--namespace", "ferry", "--set", "broker.replicas=3",
         kubeconfig=kube.kubeconfig)
    assert kube.get("statefulset", "ferry-broker", namespace="ferry")["spec"]["replicas"] == 3

    # Scaling out is immediate.
    helm(helm_bin, "upgrade", "ferry", CHART, "--namespace", "ferry", "--set", "broker.replicas=5",
         kubeconfig=kube.kubeconfig)
    sts = kube.get("statefulset", "ferry-broker", namespace="ferry")
    assert sts["spec"]["replicas"] == 5 and sts["metadata"]["annotations"]["ferry.dev/brokers"] == "5"
