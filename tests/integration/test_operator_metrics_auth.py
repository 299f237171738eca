"""--metrics-auth kubernetes against a real kube-apiserver: the operator's /metrics answers only a bearer token the
API server accepts (TokenReview) whose user may get /metrics (SubjectAccessReview), as controller-runtime's
authenticated metrics do; /healthz and /readyz stay open for the kubelet. The operator runs with exactly
operator/deploy/rbac.yaml's ferry-operator-metrics-auth ClusterRole for the reviews, and the scraper's
ServiceAccount is bound to its ferry-metrics-reader ClusterRole."""
import urllib.error
import urllib.request

import pytest

from conftest import wait_until
from kube_env import Operator, free_ports, grant_operator, kube_environment


@pytest.fixture(scope="module")
def kube(request):
    with kube_environment(request) as env:
        grant_operator(env, "ferry-operator")
        env.apply(cluster_role_binding("ferry-operator-metrics-auth-ferry-operator", "ferry-operator-metrics-auth",
                                       {"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                                        "name": "ferry-operator"}))
        yield env


@pytest.fixture(scope="module")
def operator(kube):
    # /metrics needs no cluster: ZooKeeper is never reached here, so only /healthz is waited for.
    op = Operator(kube, kube.user("ferry-operator"), free_ports(1), args=("--metrics-auth", "kubernetes"))
    op.start(wait_ready=False)
    wait_until(lambda: op.http("/healthz")[0] == 200, timeout=60, interval=0.1, what="the operator's /healthz")
    yield op
    op.stop()
    assert not op.sanitizer_reports(), op.sanitizer_reports()


def cluster_role_binding(name, role, subject):
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [subject]}


def service_account_token(kube, name, reader):
    """A token of a new ServiceAccount `name`, bound to ferry-metrics-reader when `reader`."""
    kube.kubectl("create", "serviceaccount", name, "-n", "default")
    if reader:
        kube.apply(cluster_role_binding(f"ferry-metrics-reader-{name}", "ferry-metrics-reader",
                                        {"kind": "ServiceAccount", "name": name, "namespace": "default"}))
    return kube.kubectl("create", "token", name, "-n", "default").stdout.strip()


def get(op, path, token=None):
    request = urllib.request.Request(f"http://127.0.0.1:{op.http_port}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_metrics_need_a_token_whose_user_may_get_them(kube, operator):
    reader = service_account_token(kube, "prometheus", reader=True)
    stranger = service_account_token(kube, "stranger", reader=False)

    status, body = get(operator, "/metrics")
    assert status == 401, body
    assert get(operator, "/metrics", "not-a-token")[0] == 401
    status, body = get(operator, "/metrics", stranger)
    assert status == 403, body
    status, body = get(operator, "/metrics", reader)
    assert status == 200, body
    assert "ferry_operator_leader" in body, body[:500]
    # The kubelet's probes carry no token.
    assert get(operator, "/healthz")[0] == 200
    assert get(operator, "/readyz")[0] in (200, 503)  # answered, not refused: 503 while ZooKeeper is unreachable

    # Verdicts are cached for a minute, so scrapes do not each cost two reviews: a withdrawn binding shows only then.
    kube.kubectl("delete", "clusterrolebinding", "ferry-metrics-reader-prometheus")
    assert get(operator, "/metrics", reader)[0] == 200
    assert reader not in operator.log() and stranger not in operator.log(), "a token was logged"
