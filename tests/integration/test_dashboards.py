"""The Grafana dashboards and Prometheus alert rules of dashboards/, against a real cluster and a real Prometheus.

A three-broker cluster runs a producer, a consumer group that keeps up and one that falls behind (committing after
every poll); Prometheus (Debian's) scrapes the brokers with the labels the Helm chart's scrape configuration adds
(job="ferry-broker", namespace, cluster, pod, broker; docs/metrics.md) and loads dashboards/ferry-alerts.yaml.
Then every template variable query, every panel query of every broker dashboard and every broker alert expression
must parse and return data, and the rules must be loaded and healthy. promtool checks the rules and runs their unit
tests. The operator's dashboard and alerts get the same checks against a real ferry-operator (a real kube-apiserver,
scripts/kube-env) managing Topics and ConsumerGroups of that cluster, scraped as job="ferry-operator" with the token
of a ServiceAccount bound to ferry-metrics-reader (--metrics-auth kubernetes, as the chart runs it).
"""
import importlib.machinery
import importlib.util
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request

import pytest
import yaml

from conftest import SOURCE_DIR, started_cluster, wait_until
from kube_env import Operator, grant_operator, kube_environment, topic, wait_ready

DASHBOARDS = os.path.join(SOURCE_DIR, "dashboards")


def _load_render_previews():
    path = os.path.join(DASHBOARDS, "render-previews")
    loader = importlib.machinery.SourceFileLoader("render_previews", path)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("render_previews", loader))
    loader.exec_module(module)
    return module


rp = _load_render_previews()

# The values a reader would pick: one broker, the lagging group and its topic.
CHOSEN = {"namespace": "test", "cluster": "test", "broker": "0", "topic": "orders", "group": rp.Load.LAGGING_GROUP}
# What Grafana substitutes for its own variables; rate windows hold 60 one-second scrapes.
INTERVALS = {"rate_interval": "1m", "interval": "15s", "range_": "5m"}


# The scrape job of each dashboard's series: the brokers', or the operator's (ferry-operator.json).
OPERATOR_JOB = "ferry-operator"
OPERATOR_DASHBOARDS = {"ferry-operator.json"}


def job_of(dashboard_name):
    return OPERATOR_JOB if dashboard_name in OPERATOR_DASHBOARDS else rp.JOB


def broker_dashboards():
    return {n: d for n, d in rp.load_dashboards().items() if n not in OPERATOR_DASHBOARDS}


def operator_dashboards():
    return {n: d for n, d in rp.load_dashboards().items() if n in OPERATOR_DASHBOARDS}


def promtool(*args):
    binary = shutil.which("promtool")
    if binary is None:
        pytest.fail("promtool is not installed; run scripts/install-deps")
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120, cwd=DASHBOARDS)


def test_promtool_accepts_the_rules_and_their_unit_tests_pass():
    checked = promtool("check", "rules", rp.ALERTS)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = promtool("test", "rules", rp.ALERT_TESTS)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def alert_rules():
    with open(rp.ALERTS) as f:
        return [r for g in yaml.safe_load(f)["groups"] for r in g["rules"]]


def test_every_alert_is_unit_tested_firing_and_has_the_contract_annotations():
    with open(rp.ALERT_TESTS) as f:
        tests = yaml.safe_load(f)["tests"]
    fired = {case["alertname"] for t in tests for case in t["alert_rule_test"] if case.get("exp_alerts")}
    quiet = {case["alertname"] for t in tests for case in t["alert_rule_test"] if not case.get("exp_alerts")}
    for rule in alert_rules():
        name = rule["alert"]
        assert name in fired, f"{name} has no unit test in which it fires"
        assert "for" in rule and rule["labels"].get("severity") in ("warning", "critical"), name
        assert {"summary", "description"} <= set(rule["annotations"]), name
        assert "$labels.cluster" in rule["annotations"]["summary"], name
        assert 'job="ferry-broker"' in rule["expr"] or f'job="{OPERATOR_JOB}"' in rule["expr"], name
    for name in ("FerryUnderReplicatedPartitions", "FerryOfflinePartitions", "FerryUnderMinIsrPartitions",
                 "FerryConsumerLagGrowing", "FerryBrokerDown", "FerryLogDirAlmostFull", "FerryLogDirOffline",
                 "FerryOperatorDown", "FerryOperatorNoLeader", "FerryTopicNotReady", "FerryReconcileErrors"):
        assert name in fired and name in quiet, f"{name} should be tested both firing and not firing"


def selectors(expr):
    """[(metric name, label matchers)] of every series selector in a PromQL expression."""
    return re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^{}]*)\}", expr)


# Series without a label that a dashboard variable filters on: their selectors cannot apply it.
WITHOUT_LABEL = {"topic": {"up", "kafka_consumergroup_members", "ferry_consumergroup_state",
                           "ferry_consumergroup_offset_commits_total"}}
PROMETHEUS_DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}


def datasources(node):
    """Every "datasource" value anywhere in a dashboard."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "datasource":
                yield value
            yield from datasources(value)
    elif isinstance(node, list):
        for value in node:
            yield from datasources(value)


def test_dashboards_are_well_formed():
    dashboards = rp.load_dashboards()
    assert set(dashboards) == {"ferry-cluster.json", "ferry-topics.json", "ferry-consumer-groups.json",
                               "ferry-operator.json"}
    uids = set()
    for name, d in dashboards.items():
        assert d["uid"] and d["uid"] not in uids, name
        uids.add(d["uid"])
        assert 36 <= d["schemaVersion"] <= 41, name
        variables = {v["name"]: v for v in d["templating"]["list"]}
        assert variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
        for needed in ("namespace", "cluster"):
            assert needed in variables, f"{name} lacks the ${needed} variable"
        for var, query in rp.query_variables(d):
            rp.parse_label_values(query)
            assert variables[var]["definition"] == query, f"{name}: ${var}'s definition is not its query"
        # No hard-coded datasource: panels, queries and variables use the $datasource variable (the built-in
        # annotation query is Grafana's own).
        for ds in datasources(d):
            assert ds == PROMETHEUS_DATASOURCE or ds == {"type": "grafana", "uid": "-- Grafana --"}, (name, ds)
        filtered = {var: ("consumergroup" if var == "group" else var) for var in ("broker", "topic", "group")
                    if var in variables}
        targets = 0
        for panel in rp.panels(d):
            if panel["type"] == "row":
                continue
            where = f"{name} / {panel['title']}"
            assert panel["datasource"] == PROMETHEUS_DATASOURCE, where
            assert panel["targets"], f"{where} has no query"
            for target in panel["targets"]:
                targets += 1
                expr = target["expr"]
                used = set(re.findall(r"\$\{?([a-zA-Z_]\w*)", expr)) - {"__rate_interval", "__interval", "__range"}
                assert used <= set(variables), f"{where}: undefined variables {used - set(variables)}"
                assert selectors(expr), f"{where}: no series selector in {expr}"
                for metric, matchers in selectors(expr):
                    assert f'job="{job_of(name)}"' in matchers, f"{where}: a selector ignores the job: {expr}"
                    for label in ("namespace", "cluster"):
                        assert f'{label}=~"${label}"' in matchers, f"{where}: {metric} ignores ${label}: {expr}"
                    for var, label in filtered.items():
                        if metric not in WITHOUT_LABEL.get(label, ()):
                            assert f'{label}=~"${var}"' in matchers, f"{where}: {metric} ignores ${var}: {expr}"
        assert targets >= 10, name


@pytest.fixture(scope="module")
def monitored():
    with started_cluster(3, overrides=["group.initial.rebalance.delay.ms=200", "default.replication.factor=3",
                                       "offsets.topic.num.partitions=6"]) as c:
        prometheus = rp.Prometheus({b: c.base_port + 1000 + b for b in range(c.brokers)})
        load = None
        try:
            wait_until(lambda: prometheus.value(f'sum(up{{job="{rp.JOB}"}})') == c.brokers, timeout=60,
                       interval=0.5, what="Prometheus scraping every broker")
            load = rp.Load(c.bootstrap)
            lagging = f'{{job="{rp.JOB}", consumergroup="{rp.Load.LAGGING_GROUP}"}}'
            # Rates need two scrapes in their window, and lag and commits need the groups running.
            wait_until(lambda: (prometheus.value(f"sum(rate(ferry_consumergroup_offset_commits_total{lagging}[1m]))")
                                or 0) > 0, timeout=120, interval=1, what="the lagging group's commits in Prometheus")
            wait_until(lambda: (prometheus.value(f"sum(kafka_consumergroup_lag_sum{lagging})") or 0) > 100,
                       timeout=120, interval=1, what="the lagging group falling behind")
            yield c, prometheus, load
        finally:
            errors = load.stop() if load else []
            prometheus.stop()
        assert not errors, f"the load failed: {errors}"


def test_the_new_metrics_are_exported(monitored):
    """ferry_broker_info, ferry_log_dir_total_bytes and ferry_consumergroup_offset_commits_total."""
    c, prometheus, _ = monitored
    for b in range(c.brokers):
        metrics = c.metrics(b)
        info = [dict(labels) for (name, labels) in metrics if name == "ferry_broker_info"]
        assert len(info) == 1, info
        assert info[0]["broker_id"] == str(b) and info[0]["rack"] == "", info
        assert re.fullmatch(r"\d+\.\d+\.\d+", info[0]["version"]), info
        fs = os.statvfs(c.log_dir(b))
        totals = {dict(labels)["dir"]: value for (name, labels), value in metrics.items()
                  if name == "ferry_log_dir_total_bytes"}
        assert totals == {c.log_dir(b): fs.f_blocks * fs.f_frsize}, totals
        free = metrics[("ferry_log_dir_free_bytes", frozenset({("dir", c.log_dir(b))}))]
        assert 0 < free < totals[c.log_dir(b)]
    commits = f'sum(ferry_consumergroup_offset_commits_total{{consumergroup="{rp.Load.LAGGING_GROUP}"}})'
    first = prometheus.value(commits)
    wait_until(lambda: (prometheus.value(commits) or 0) > first, timeout=30, interval=0.5,
               what="the commit counter to grow")


def check_variables(prometheus, dashboards, chosen=CHOSEN):
    """Failures of the template variable queries, each run with the variables before it at "All"; each must
    offer the value `chosen` names for it."""
    failures = []
    for name, d in dashboards.items():
        values = rp.all_values(d)
        for var, query in rp.query_variables(d):
            match, label = rp.parse_label_values(rp.substitute(query, values, **INTERVALS))
            found = prometheus.label_values(label, match)
            if not found:
                failures.append(f"{name} / variable ${var}: {query} -> {found}")
            elif var in chosen and chosen[var] not in found:
                failures.append(f"{name} / variable ${var}: {query} lacks {chosen[var]!r}: {found}")
    return failures


def test_every_variable_query_returns_values(monitored):
    _, prometheus, _ = monitored
    dashboards = broker_dashboards()
    failures = []

    def all_pass():
        failures[:] = check_variables(prometheus, dashboards)
        return not failures
    try:
        wait_until(all_pass, timeout=60, interval=1, what="every variable query to return values")
    except AssertionError:
        pytest.fail(f"{len(failures)} variable queries fail:\n" + "\n".join(failures))


def check_panels(prometheus, dashboards, values_of):
    """Failures (dashboard / panel / expr: why) of every panel query, the variables set by values_of(dashboard)."""
    failures = []
    for name, d in dashboards.items():
        values = values_of(d)
        for panel in rp.panels(d):
            for target in panel.get("targets", []):
                expr = rp.substitute(target["expr"], values, **INTERVALS)
                body = prometheus.query(expr)
                where = f"{name} / {panel['title']} / {expr}"
                if body is None:
                    failures.append(f"{where}: no answer")
                elif body.get("status") != "success":
                    failures.append(f"{where}: {body.get('errorType')}: {body.get('error')}")
                elif not body["data"]["result"]:
                    failures.append(f"{where}: empty result")
    return failures


@pytest.mark.parametrize("variables", ["all", "chosen"])
def test_every_panel_query_returns_data(monitored, variables):
    _, prometheus, _ = monitored
    dashboards = broker_dashboards()
    values_of = rp.all_values if variables == "all" else (lambda d: {v: CHOSEN[v] for v in rp.all_values(d)})
    failures = []

    def all_pass():
        failures[:] = check_panels(prometheus, dashboards, values_of)
        return not failures
    try:
        wait_until(all_pass, timeout=90, interval=2, what="every panel query to return data")
    except AssertionError:
        pytest.fail(f"{len(failures)} panel queries fail, variables {variables}:\n" + "\n".join(failures))


def metric_names(expr):
    """The metric names an expression selects (a name directly followed by a selector's braces)."""
    return set(re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{", expr))


def test_alert_expressions_parse_their_series_exist_and_the_rules_are_loaded(monitored):
    _, prometheus, _ = monitored
    rules = alert_rules()
    failures = []
    for rule in rules:
        if f'job="{OPERATOR_JOB}"' in rule["expr"]:
            continue  # test_operator_dashboard_and_alerts
        body = prometheus.query(rule["expr"])
        if not body or body.get("status") != "success":
            failures.append(f"{rule['alert']}: {rule['expr']}: {body and body.get('error')}")
            continue
        # A healthy cluster fires nothing: what must exist is every series the alert compares.
        for metric in metric_names(rule["expr"]):
            if not prometheus.value(f'count({metric}{{job="{rp.JOB}", namespace="test", cluster="test"}})'):
                failures.append(f"{rule['alert']}: no {metric} series for {rule['expr']}")
    assert not failures, "\n".join(failures)

    expected = sorted(r["alert"] for r in rules)

    def loaded():
        body = prometheus.api("/api/v1/rules")
        if not body or body.get("status") != "success":
            return None
        got = [r for g in body["data"]["groups"] for r in g["rules"] if r["type"] == "alerting"]
        if sorted(r["name"] for r in got) != expected or any(r["health"] != "ok" for r in got):
            return None
        return got
    rules_loaded = wait_until(loaded, timeout=30, interval=0.5, what="the alert rules loaded and evaluated, health ok")
    firing = [(r["name"], a["labels"]) for r in rules_loaded for a in r.get("alerts", []) if a["state"] == "firing"]
    assert not firing, f"alerts firing on a healthy cluster: {firing}"


class ScrapedOperator(Operator):
    """An operator run with --metrics-auth kubernetes, whose /metrics this test reads with the scraper's token."""

    token = None

    def http(self, path):
        if self.process is not None and self.process.poll() is not None:
            raise AssertionError(f"the operator exited ({self.process.returncode}):\n{self.log()[-3000:]}")
        request = urllib.request.Request(f"http://127.0.0.1:{self.http_port}{path}",
                                         headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except OSError:
            return None, ""


def metrics_reader_token(kube):
    """Lets the operator review tokens and returns one of a ServiceAccount bound to ferry-metrics-reader
    (operator/deploy/rbac.yaml), as a Prometheus in the cluster would scrape with."""
    def binding(name, role, subject):
        return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": [subject]}
    kube.kubectl("create", "serviceaccount", "prometheus", "-n", "default")
    kube.apply(binding("ferry-operator-metrics-auth", "ferry-operator-metrics-auth",
                       {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "ferry-operator"}),
               binding("ferry-metrics-reader-prometheus", "ferry-metrics-reader",
                       {"kind": "ServiceAccount", "name": "prometheus", "namespace": "default"}))
    return kube.kubectl("create", "token", "prometheus", "-n", "default", "--duration", "2h").stdout.strip()


@pytest.fixture(scope="module")
def operated(request, monitored):
    """A ferry-operator for the monitored cluster, with a Topic that becomes Ready, one it refuses (more replicas
    than brokers) and a ConsumerGroup; a second Prometheus scrapes it as job="ferry-operator" and loads the rules."""
    c, _, _ = monitored
    with kube_environment(request) as kube:
        grant_operator(kube, "ferry-operator")
        op = ScrapedOperator(kube, kube.user("ferry-operator"), c.zk_port, cluster_name="it",
                             args=("--max-concurrent-moves", "0", "--metrics-auth", "kubernetes"))
        op.token = metrics_reader_token(kube)
        token_file = os.path.join(kube.dir, "prometheus-token")
        with open(token_file, "w") as f:
            f.write(op.token)
        op.start()
        prometheus = None
        try:
            kube.kubectl("create", "namespace", "dash")
            kube.apply(topic("dash-ready", "dash", 3, 3), topic("dash-refused", "dash", 3, 5),
                       {"apiVersion": "ferry.dev/v1alpha1", "kind": "ConsumerGroup",
                        "metadata": {"name": "dash-group", "namespace": "dash", "labels": {"ferry.dev/cluster": "it"}},
                        "spec": {"groupId": rp.Load.LAGGING_GROUP}})
            wait_ready(kube, "dash-ready", "dash")
            wait_ready(kube, "dash-refused", "dash", status="False")
            config = os.path.join(kube.dir, "prometheus-operator.yml")
            with open(config, "w") as f:
                yaml.safe_dump({
                    "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
                    "rule_files": [os.path.abspath(rp.ALERTS)],
                    "scrape_configs": [{"job_name": OPERATOR_JOB, "authorization": {"credentials_file": token_file},
                                        "static_configs": [{
                        "targets": [f"127.0.0.1:{op.http_port}"],
                        "labels": {"namespace": rp.NAMESPACE, "cluster": rp.CLUSTER, "pod": "ferry-operator-0"}}]}]},
                    f)
            prometheus = rp.Prometheus(config=config)
            wait_until(lambda: prometheus.value(f'sum(up{{job="{OPERATOR_JOB}"}})') == 1, timeout=60, interval=0.5,
                       what="Prometheus scraping the operator")
            yield op, prometheus
        finally:
            if prometheus:
                prometheus.stop()
            op.stop()


def test_operator_metrics_report_resources_results_and_queues(operated):
    op, _ = operated
    assert op.metric("ferry_operator_leader") == 1
    wait_until(lambda: op.metric("ferry_operator_resources", kind="consumergroups", ready="true") == 1, timeout=60,
               interval=0.5, what="the ConsumerGroup counted Ready")
    for controller in ("topics", "consumergroups"):
        assert op.metric("ferry_operator_queue_depth", controller=controller) is not None, controller
        assert op.metric("ferry_operator_queue_adds_total", controller=controller) >= 1, controller
    assert op.metric("ferry_operator_reconciles_total", controller="topics", result="success") >= 1
    assert op.metric("ferry_operator_api_rate_limiter_wait_seconds_count") >= 1, "writes go through the limiter"


def test_operator_dashboard_and_alerts(operated):
    """Every variable and panel query of the operator's dashboard returns data; every operator alert parses and
    its series exist."""
    _, prometheus = operated
    dashboards = operator_dashboards()
    assert dashboards
    failures = []

    def all_pass():
        failures[:] = check_variables(prometheus, dashboards) + \
            check_panels(prometheus, dashboards, rp.all_values) + \
            check_panels(prometheus, dashboards, lambda d: {v: CHOSEN[v] for v in rp.all_values(d)})
        return not failures
    try:
        wait_until(all_pass, timeout=90, interval=2, what="every operator dashboard query to return data")
    except AssertionError:
        pytest.fail(f"{len(failures)} operator dashboard queries fail:\n" + "\n".join(failures))

    failures = []
    rules = [r for r in alert_rules() if f'job="{OPERATOR_JOB}"' in r["expr"]]
    assert {r["alert"] for r in rules} == {"FerryOperatorDown", "FerryOperatorNoLeader", "FerryTopicNotReady",
                                           "FerryReconcileErrors"}
    for rule in rules:
        body = prometheus.query(rule["expr"])
        if not body or body.get("status") != "success":
            failures.append(f"{rule['alert']}: {rule['expr']}: {body and body.get('error')}")
            continue
        for metric in metric_names(rule["expr"]):
            query = f'count({metric}{{job="{OPERATOR_JOB}", namespace="test", cluster="test"}})'
            if not prometheus.value(query):
                failures.append(f"{rule['alert']}: no {metric} series for {rule['expr']}")
    assert not failures, "\n".join(failures)
