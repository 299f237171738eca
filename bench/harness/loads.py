"""The load generators and how to read their output.

- librdkafka's rdkafka_performance (Debian's example source, built by bench/run): -P to produce, -C with
  explicit partitions to consume (the simple consumer, no consumer group), -C -l to measure end-to-end
  latency from the payload's send timestamp.
- Kafka's own ProducerPerformance, ConsumerPerformance (which subscribes with a consumer group) and
  EndToEndLatency (org.apache.kafka.tools, from the kafka-tools jar of the newest Kafka, the same tool
  version against every broker).
- benchtool (bench/tools/benchtool.c, librdkafka): paced-produce, the fixed-rate producer for latency, and
  commit-load, group members committing offsets.
- grouptool (bench/tools/grouptool.py, kafka-python's protocol classes): thousands of groups formed with
  JoinGroup and SyncGroup, and the broker's memory before and after.

MB is 10^6 bytes everywhere in the results (the Java tools print MiB; converted here).
"""
import copy
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time

from . import procs

GROUPTOOL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools", "grouptool.py")

JAVA_TOOL_HEAP = ["-Xmx512M"]  # as kafka-producer-perf-test.sh and kafka-consumer-perf-test.sh

# Client settings, the same against every broker.
RDKAFKA_BATCHED = {"linger.ms": "5"}  # librdkafka's default; rdkafka_performance itself sets 1000
RDKAFKA_BATCH1 = {"linger.ms": "0", "batch.num.messages": "1"}
JAVA_BATCHED = {"linger.ms": "5"}     # the Java client's default since 4.0 (batch.size 16384, its default)
JAVA_BATCH1 = {"linger.ms": "0", "batch.size": "0"}  # batch.size=0: one record per batch


class ToolFailed(RuntimeError):
    pass


def _props_file(path, props):
    with open(path, "w") as f:
        for k, v in props.items():
            f.write(f"{k}={v}\n")
    return path


def java_tool_argv(kafka_lib, log4j_cfg, main, *args):
    from .brokers import KAFKA_JVM_OPTS
    return ["java", *JAVA_TOOL_HEAP, *KAFKA_JVM_OPTS, f"-Dlog4j2.configurationFile={log4j_cfg}",
            "-cp", os.path.join(kafka_lib, "*"), main, *args]


_RDK_PRODUCED = re.compile(r"% (\d+) messages produced \((\d+) bytes\), (\d+) delivered \(offset -?\d+, (\d+) failed\) "
                           r"in (\d+)ms")
_RDK_CONSUMED = re.compile(r"% (\d+) messages \((\d+) bytes\) consumed in (\d+)ms")


def parse_rdkafka_produce(out, size):
    m = _RDK_PRODUCED.findall(out)
    if not m:
        raise ToolFailed("no summary line from rdkafka_performance -P")
    sent, nbytes, delivered, failed, ms = (int(x) for x in m[-1])
    if failed or delivered < sent:
        raise ToolFailed(f"rdkafka_performance: {delivered} of {sent} delivered, {failed} failed")
    secs = max(ms, 1) / 1000
    return {"records": delivered, "seconds": secs, "rec_per_s": delivered / secs,
            "MB_per_s": delivered * size / secs / 1e6}


def parse_rdkafka_consume(out, want):
    m = _RDK_CONSUMED.findall(out)
    if not m:
        raise ToolFailed("no summary line from rdkafka_performance -C")
    n, nbytes, ms = (int(x) for x in m[-1])
    if n < want:
        raise ToolFailed(f"rdkafka_performance -C consumed {n} of {want} records")
    secs = max(ms, 1) / 1000
    return {"records": n, "seconds": secs, "rec_per_s": n / secs, "MB_per_s": nbytes / secs / 1e6}


_PP_FINAL = re.compile(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                       r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th")


def parse_producer_performance(out, size):
    m = _PP_FINAL.findall(out)
    if not m:
        raise ToolFailed("no final line from ProducerPerformance")
    sent, rps, _mib, avg, mx, p50, p95, p99, p999 = m[-1]
    rps = float(rps)
    return {"records": int(sent), "rec_per_s": rps, "MB_per_s": rps * size / 1e6,
            "ack_latency_avg_ms": float(avg), "ack_latency_p50_ms": float(p50), "ack_latency_p99_ms": float(p99),
            "ack_latency_p999_ms": float(p999)}


def parse_consumer_performance(out, want):
    # header: start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
    #         rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec
    lines = [ln for ln in out.splitlines() if re.match(r"^\d{4}-\d\d-\d\d ", ln)]
    if not lines:
        raise ToolFailed("no result line from ConsumerPerformance")
    f = [x.strip() for x in lines[-1].split(",")]
    mib, n, fetch_ms = float(f[2]), int(f[4]), float(f[7])
    if n < want:
        raise ToolFailed(f"ConsumerPerformance consumed {n} of {want} records")
    secs = max(fetch_ms, 1) / 1000
    return {"records": n, "seconds": secs, "rec_per_s": n / secs, "MB_per_s": mib * 1048576 / secs / 1e6,
            "group_join_ms": float(f[6])}


_E2E_AVG = re.compile(r"Avg latency: ([\d.]+) ms")
_E2E_PCT = re.compile(r"Percentiles: 50th = (\d+), 99th = (\d+), 99.9th = (\d+)")


def parse_end_to_end(out):
    a, p = _E2E_AVG.findall(out), _E2E_PCT.findall(out)
    if not a or not p:
        raise ToolFailed("no latency summary from EndToEndLatency")
    p50, p99, p999 = (float(x) for x in p[-1])
    return {"avg_ms": float(a[-1]), "p50_ms": p50, "p99_ms": p99, "p999_ms": p999}


def _benchtool_result(code, out, what):
    try:
        r = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError) as e:
        raise ToolFailed(f"{what} exited {code} and printed no result: {out.strip()[-300:]}") from e
    if code != 0 or not r.get("ok"):
        raise ToolFailed(f"{what}: {r.get('error', out.strip()[-300:])}")
    return r


def percentile(sorted_values, q):
    """Nearest-rank percentile of an ascending list."""
    if not sorted_values:
        return None
    k = max(0, min(len(sorted_values) - 1, int(round(q / 100 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[k]


def latency_stats(latency_file, drop_first):
    with open(latency_file) as f:
        values = [int(x) for x in f.read().split() if x.strip().isdigit()]
    values = values[drop_first:]
    if not values:
        raise ToolFailed("no latency samples")
    s = sorted(values)
    return {"samples": len(s), "p50_ms": percentile(s, 50) / 1000, "p99_ms": percentile(s, 99) / 1000,
            "p999_ms": percentile(s, 99.9) / 1000, "avg_ms": sum(s) / len(s) / 1000, "max_ms": s[-1] / 1000}


class Tools:
    def __init__(self, rdkafka_perf, benchtool, kafka_lib, tmp_dir, say):
        self.perf, self.benchtool, self.kafka_lib, self.tmp, self.say = rdkafka_perf, benchtool, kafka_lib, tmp_dir, say
        self.log4j = os.path.join(tmp_dir, "tools-log4j2.yaml")
        from .brokers import LOG4J2
        with open(self.log4j, "w") as f:
            f.write(LOG4J2.format(level="WARN"))
        self.seq = itertools.count(1)
        self.rdkafka_security, self.java_security = {}, {}

    def secured(self, rdkafka_settings, java_settings):
        """The same tools connecting with these settings (librdkafka's names for rdkafka_performance and
        benchtool, the Java client's for the Java tools): a TLS or SASL listener's."""
        tools = copy.copy(self)
        tools.rdkafka_security, tools.java_security = dict(rdkafka_settings), dict(java_settings)
        return tools

    def _x(self):
        """-X KEY=VALUE of the security settings, for rdkafka_performance and benchtool."""
        return [a for k, v in self.rdkafka_security.items() for a in ("-X", f"{k}={v}")]

    def _props(self, props):
        return _props_file(os.path.join(self.tmp, f"client-{next(self.seq)}.properties"),
                           {**props, **self.java_security})

    # --- admin -------------------------------------------------------------------------------------------
    def create_topic(self, bootstrap, topic, partitions, configs=None, replication_factor=1):
        argv = [self.benchtool, "create-topic", "-b", bootstrap, "-t", topic, "-p", str(partitions), "-w", "120",
                "-R", str(replication_factor), *self._x()]
        for k, v in (configs or {}).items():
            argv += ["-c", f"{k}={v}"]
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
        if r.returncode != 0:
            raise ToolFailed(f"create-topic {topic}: {r.stdout.strip()} {r.stderr.strip()}")

    def create_topics(self, bootstrap, prefix, topics, partitions, configs, replication_factor, timeout, log):
        """Topics PREFIX-0 .. PREFIX-<topics-1>, about 1,000 partitions per CreateTopics request; returns once
        every partition is led."""
        argv = [self.benchtool, "create-topic", "-b", bootstrap, "-t", prefix, "-T", str(topics), "-p",
                str(partitions), "-R", str(replication_factor), "-w", str(timeout)]
        for k, v in (configs or {}).items():
            argv += ["-c", f"{k}={v}"]
        code, out, _, _ = procs.run_tool(argv, log, timeout + 60, self.say, "creating topics")
        return _benchtool_result(code, out, "benchtool create-topic -T")

    def wait_leaders(self, bootstrap, partitions, log, timeout, dead=None, in_sync=False):
        """Waits until the metadata names a live leader (not `dead`) for each of `partitions` partitions (and
        with in_sync, every replica in the ISR); returns benchtool's answer: "at" (CLOCK_MONOTONIC, the clock
        of time.monotonic()), and the partitions each broker led at the first and the last look."""
        argv = [self.benchtool, "leaders", "-b", bootstrap, "-n", str(partitions), "-w", str(timeout)]
        if dead is not None:
            argv += ["-x", str(dead)]
        if in_sync:
            argv.append("-i")
        code, out, _, _ = procs.run_tool(argv, log, timeout + 60, self.say, "waiting for leaders")
        return _benchtool_result(code, out, "benchtool leaders")

    def delete_topic(self, bootstrap, topic):
        subprocess.run([self.benchtool, "delete-topic", "-b", bootstrap, "-t", topic, *self._x()],
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)

    # --- produce -----------------------------------------------------------------------------------------
    def rdkafka_produce(self, bootstrap, topic, size, count, batched, log, timeout, acks="1"):
        props = RDKAFKA_BATCHED if batched else RDKAFKA_BATCH1
        argv = [self.perf, "-P", "-t", topic, "-b", bootstrap, "-s", str(size), "-c", str(count),
                "-a", "-1" if acks == "all" else acks,
                "-i", "5000", *self._x()]
        for k, v in props.items():
            argv += ["-X", f"{k}={v}"]
        code, out, wall, cpu = procs.run_tool(argv, log, timeout, self.say, "rdkafka_performance -P")
        if code != 0:
            raise ToolFailed(f"rdkafka_performance -P exited {code}")
        r = parse_rdkafka_produce(out, size)
        r.update(client_cpu_s=round(cpu, 2), wall_s=round(wall, 2))
        return r

    def java_produce(self, bootstrap, topic, size, count, batched, log, timeout, acks="1", transaction_ms=None):
        """ProducerPerformance; with transaction_ms, a transactional producer that commits a transaction that
        often."""
        props = {"bootstrap.servers": bootstrap, "acks": acks, **(JAVA_BATCHED if batched else JAVA_BATCH1)}
        txn = [] if transaction_ms is None else ["--transactional-id", f"bench-{topic}",
                                                 "--transaction-duration-ms", str(transaction_ms)]
        argv = java_tool_argv(self.kafka_lib, self.log4j, "org.apache.kafka.tools.ProducerPerformance",
                              "--topic", topic, "--num-records", str(count), "--record-size", str(size),
                              "--throughput", "-1", *txn, "--command-config", self._props(props))
        code, out, wall, cpu = procs.run_tool(argv, log, timeout, self.say, "ProducerPerformance")
        if code != 0:
            raise ToolFailed(f"ProducerPerformance exited {code}")
        r = parse_producer_performance(out, size)
        r.update(client_cpu_s=round(cpu, 2), wall_s=round(wall, 2))
        return r

    # --- consume -----------------------------------------------------------------------------------------
    def rdkafka_consume(self, bootstrap, topic, partitions, count, log, timeout):
        argv = [self.perf, "-C", "-t", topic, "-b", bootstrap, "-o", "beginning", "-e", "-c", str(count),
                "-i", "5000", *self._x()]
        for p in range(partitions):
            argv += ["-p", str(p)]
        code, out, wall, cpu = procs.run_tool(argv, log, timeout, self.say, "rdkafka_performance -C")
        if code != 0:
            raise ToolFailed(f"rdkafka_performance -C exited {code}")
        r = parse_rdkafka_consume(out, count)
        r.update(client_cpu_s=round(cpu, 2), wall_s=round(wall, 2))
        return r

    def java_consume(self, bootstrap, topic, count, log, timeout, isolation="read_uncommitted"):
        props = {"bootstrap.servers": bootstrap, "isolation.level": isolation}
        argv = java_tool_argv(self.kafka_lib, self.log4j, "org.apache.kafka.tools.ConsumerPerformance",
                              "--bootstrap-server", bootstrap, "--topic", topic, "--num-records", str(count),
                              "--timeout", str(int(timeout * 1000)), "--command-config", self._props(props))
        code, out, wall, cpu = procs.run_tool(argv, log, timeout + 30, self.say, "ConsumerPerformance")
        if code != 0:
            raise ToolFailed(f"ConsumerPerformance exited {code}")
        r = parse_consumer_performance(out, count)
        r.update(client_cpu_s=round(cpu, 2), wall_s=round(wall, 2))
        return r

    # --- latency -----------------------------------------------------------------------------------------
    def rdkafka_latency(self, bootstrap, topic, size, rate, seconds, warmup_s, log, timeout):
        """rdkafka_performance -C -l (the consumer, writing each record's latency to a file) and benchtool
        paced-produce at `rate` records/s; the first warmup_s seconds of samples are dropped."""
        count = int(rate * (seconds + warmup_s))
        lat_file = os.path.join(self.tmp, f"latency-{topic}.txt")
        cons_argv = [self.perf, "-C", "-l", "-A", lat_file, "-t", topic, "-p", "0", "-b", bootstrap,
                     "-o", "beginning", "-c", str(count), "-i", "5000"]
        cpu0 = procs.children_cpu_seconds()
        with open(log, "a") as logf:
            logf.write(f"\n$ {' '.join(cons_argv)}\n")
            logf.flush()
            consumer = subprocess.Popen(cons_argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        procs.guard(consumer.pid, cons_argv)
        try:
            time.sleep(2.0)  # let the consumer connect and start fetching before the first record
            if consumer.poll() is not None:
                raise ToolFailed(f"rdkafka_performance -C -l exited early ({consumer.returncode})")
            prod_argv = [self.benchtool, "paced-produce", "-b", bootstrap, "-t", topic, "-p", "0", "-s", str(size),
                         "-r", str(rate), "-n", str(count)]
            code, out, wall, _ = procs.run_tool(prod_argv, log, timeout, self.say, "paced producer")
            if code != 0:
                raise ToolFailed(f"benchtool paced-produce exited {code}: {out.strip()[-300:]}")
            try:
                consumer.wait(15)
            except subprocess.TimeoutExpired:
                consumer.send_signal(signal.SIGINT)  # rdkafka_performance prints and closes the file on SIGINT
                try:
                    consumer.wait(10)
                except subprocess.TimeoutExpired:
                    consumer.kill()
                    consumer.wait()
        finally:
            if consumer.poll() is None:
                consumer.kill()
                consumer.wait()
            procs.unguard(consumer.pid)
        r = latency_stats(lat_file, int(rate * warmup_s))
        try:
            sent = json.loads(out.strip().splitlines()[-1])
            r["achieved_rate"] = sent.get("rate")
        except (ValueError, IndexError):
            pass
        r["client_cpu_s"] = round(procs.children_cpu_seconds() - cpu0, 2)
        r["wall_s"] = round(wall, 2)
        return r

    def produce_one(self, bootstrap, topic, log, timeout):
        """Waits until the topic's leaders answer, then produces one record and waits for its acknowledgement."""
        argv = [self.benchtool, "paced-produce", "-b", bootstrap, "-t", topic, "-p", "0", "-s", "100", "-r", "1000",
                "-n", "1", "-w", str(timeout)]
        code, out, _, _ = procs.run_tool(argv, log, timeout + 60, self.say, "one record")
        if code != 0:
            raise ToolFailed(f"benchtool paced-produce -n 1 exited {code}: {out.strip()[-300:]}")

    def paced_produce_acks(self, bootstrap, topic, size, rate, seconds, warmup_s, log, timeout, acks="1"):
        """benchtool paced-produce at `rate` records/s (linger.ms=0): the acknowledgement latency of each
        record, send to delivery report, without the first warmup_s seconds."""
        count = int(rate * (seconds + warmup_s))
        argv = [self.benchtool, "paced-produce", "-b", bootstrap, "-t", topic, "-p", "0", "-s", str(size),
                "-r", str(rate), "-n", str(count), "-d", str(int(rate * warmup_s)), "-a", acks]
        code, out, wall, cpu = procs.run_tool(argv, log, timeout, self.say, "paced producer")
        if code != 0:
            raise ToolFailed(f"benchtool paced-produce exited {code}: {out.strip()[-300:]}")
        try:
            sent = json.loads(out.strip().splitlines()[-1])
        except (ValueError, IndexError) as e:
            raise ToolFailed(f"benchtool paced-produce printed no result: {out.strip()[-300:]}") from e
        if not sent.get("ack_samples"):
            raise ToolFailed("benchtool paced-produce measured no acknowledgements")
        return {"p50_ms": sent["ack_p50_ms"], "p99_ms": sent["ack_p99_ms"], "p999_ms": sent["ack_p999_ms"],
                "max_ms": sent["ack_max_ms"], "avg_ms": sent["ack_avg_ms"], "samples": sent["ack_samples"],
                "achieved_rate": sent.get("rate"), "client_cpu_s": round(cpu, 2), "wall_s": round(wall, 2)}

    def java_end_to_end(self, bootstrap, topic, size, count, log, timeout):
        """EndToEndLatency: one record at a time, sent synchronously and polled back (a round trip each); it
        ends with commitSync() of its consumer's group."""
        argv = java_tool_argv(self.kafka_lib, self.log4j, "org.apache.kafka.tools.EndToEndLatency",
                              "--bootstrap-server", bootstrap, "--topic", topic, "--num-records", str(count),
                              "--producer-acks", "1", "--record-size", str(size))
        code, out, wall, cpu = procs.run_tool(argv, log, timeout, self.say, "EndToEndLatency")
        if code != 0:
            raise ToolFailed(f"EndToEndLatency exited {code}")
        r = parse_end_to_end(out)
        r.update(client_cpu_s=round(cpu, 2), wall_s=round(wall, 2))
        return r

    # --- consumer groups ---------------------------------------------------------------------------------
    def commit_load(self, bootstrap, topic, groups, members, seconds, warmup_s, log, timeout):
        """benchtool commit-load: `groups` groups of `members` members (topic has `members` partitions), each
        member committing an explicit offset synchronously in a loop; the first warmup_s seconds are not
        counted."""
        argv = [self.benchtool, "commit-load", "-b", bootstrap, "-t", topic, "-g", str(groups), "-n", str(members),
                "-s", str(seconds), "-d", str(warmup_s), "-w", str(timeout // 2)]
        code, out, wall, cpu = procs.run_tool(argv, log, timeout, self.say, "commit-load", progress="benchtool:")
        r = _benchtool_result(code, out, "benchtool commit-load")
        return {k: r[k] for k in ("commits", "commits_per_s", "p50_ms", "p99_ms", "p999_ms", "max_ms", "avg_ms",
                                  "join_s")} | {"client_cpu_s": round(cpu, 2), "wall_s": round(wall, 2)}

    def group_memory(self, bootstrap, pid, prefix, groups, members, lanes, jvm, log, timeout):
        """grouptool: `groups` groups of `members` members formed; the broker's RSS (and with jvm its live heap)
        before and after, and the time it took."""
        argv = [sys.executable, GROUPTOOL, "-b", bootstrap, "-g", str(groups), "-m", str(members), "--prefix", prefix,
                "--pid", str(pid), "--lanes", str(lanes), *(["--jvm"] if jvm else [])]
        code, out, wall, cpu = procs.run_tool(argv, log, timeout, self.say, "grouptool", progress="grouptool:")
        r = _benchtool_result(code, out, "grouptool")
        r.pop("ok")
        r.update(client_cpu_s=round(cpu, 2), wall_s=round(wall, 2))
        return r
