"""Processes: starting and stopping what the bench runs, per-process CPU and peak RSS from /proc, and a
guardian that stops the brokers if bench/run itself dies without cleaning up (SIGKILL, a ctest timeout).

Nothing is ever stopped by name: only pids this run started, and only while /proc/<pid>/cmdline still
holds the marker (a path under this run's directory) they were started with.
"""
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def alive_with_marker(pid, marker):
    line = cmdline(pid)
    return line is not None and marker in line


def cpu_seconds(pid):
    """utime + stime of every thread of `pid` so far, in seconds (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return None


def status_kib(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak_rss(pid):
    """Resets VmHWM to the current RSS (writing 5 to clear_refs, Linux >= 4.0). False when not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def children_cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


class BrokerMeter:
    """CPU seconds and peak RSS of the broker processes (one, or a cluster's) over one load run: CPU summed,
    peak RSS the largest of any one broker."""

    def __init__(self, pids):
        self.pids = list(pids)
        self.cpu0 = None
        self.hwm_reset = False

    def _cpu(self):
        values = [cpu_seconds(p) for p in self.pids]
        return None if any(v is None for v in values) else sum(values)

    def start(self):
        self.hwm_reset = all([reset_peak_rss(p) for p in self.pids])
        self.cpu0 = self._cpu()

    def stop(self):
        cpu1 = self._cpu()
        hwm = [status_kib(p, "VmHWM") for p in self.pids]
        rss = [status_kib(p, "VmRSS") for p in self.pids]
        hwm = None if any(v is None for v in hwm) else max(hwm)
        rss = None if any(v is None for v in rss) else max(rss)
        return {
            "broker_cpu_s": None if cpu1 is None or self.cpu0 is None else round(cpu1 - self.cpu0, 3),
            # VmHWM since the reset before the run; since the broker started if the reset was refused.
            "broker_peak_rss_mib": None if hwm is None else round(hwm / 1024, 1),
            "broker_rss_mib": None if rss is None else round(rss / 1024, 1),
            "peak_rss_since_start": not self.hwm_reset,
        }


class Guardian:
    """A detached helper that stops this run's processes if bench/run dies before its own cleanup.

    The state file lists {"pids": [[pid, marker], ...], "commands": [[argv...], ...]}; bench/run keeps it
    current. The guardian polls the parent every half second; when it is gone, it runs the commands
    (scripts/local-cluster down) and signals the pids whose command line still holds their marker.
    """

    def __init__(self, state_path):
        self.state_path = state_path
        self.state = {"pids": [], "commands": []}
        self.proc = None

    def save(self):
        tmp = self.state_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.state, f)
        os.replace(tmp, self.state_path)

    def start(self):
        self.save()
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--guardian", str(os.getpid()), self.state_path],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)

    def add_pid(self, pid, marker):
        self.state["pids"].append([pid, marker])
        self.save()

    def remove_pid(self, pid):
        self.state["pids"] = [p for p in self.state["pids"] if p[0] != pid]
        self.save()

    def add_command(self, argv):
        self.state["commands"].append(list(argv))
        self.save()

    def remove_command(self, argv):
        self.state["commands"] = [c for c in self.state["commands"] if c != list(argv)]
        self.save()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _guard(parent, state_path):
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        try:
            os.kill(parent, 0)
        except ProcessLookupError:
            break
        except PermissionError:
            pass
        time.sleep(0.5)
    try:
        with open(state_path) as f:
            state = json.load(f)
    except (OSError, ValueError):
        return
    for pid, marker in state.get("pids", []):
        if alive_with_marker(pid, marker):
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
    for argv in state.get("commands", []):
        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=120, check=False)
    deadline = time.monotonic() + 30
    for pid, marker in state.get("pids", []):
        while alive_with_marker(pid, marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        if alive_with_marker(pid, marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def stop_pid(pid, marker, grace=30.0):
    """SIGTERM, then SIGKILL after `grace` seconds; only while the pid still runs our command line."""
    if not alive_with_marker(pid, marker):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return
    deadline = time.monotonic() + grace
    while alive_with_marker(pid, marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive_with_marker(pid, marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class Heartbeat:
    """Prints '... still running (N s)' every `every` seconds while a long tool runs."""

    def __init__(self, say, what, every=15.0):
        self.say, self.what, self.every = say, what, every
        self.done = threading.Event()
        self.t0 = time.monotonic()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self.done.wait(self.every):
            self.say(f"      ... {self.what}: still running ({time.monotonic() - self.t0:.0f} s)")

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()


GUARDIAN = None  # the run's Guardian: tools register with it while they run


def tool_marker(argv):
    """What identifies a tool's command line: an argument naming a path of this run, else the program."""
    paths = [a for a in argv if a.startswith("/") and os.sep + "runs" + os.sep in a]
    return paths[0] if paths else argv[0]


def guard(pid, argv):
    if GUARDIAN:
        GUARDIAN.add_pid(pid, tool_marker(argv))


def unguard(pid):
    if GUARDIAN:
        GUARDIAN.remove_pid(pid)


def run_tool(argv, log_path, timeout, say=None, what=None, progress=None, env=None):
    """Runs a load tool to completion (or timeout), its output appended to log_path.

    Returns (returncode, output text, wall seconds, client CPU seconds). Lines starting with `progress` (the
    tool's own progress reports) are also passed to `say`. A timeout kills it and returns code None.
    """
    with open(log_path, "a") as log:
        log.write(f"\n$ {' '.join(argv)}\n")
        log.flush()
        cpu0 = children_cpu_seconds()
        t0 = time.monotonic()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", env=env, start_new_session=True)
        guard(proc.pid, argv)
        chunks = []

        def pump():
            for line in proc.stdout:
                chunks.append(line)
                log.write(line)
                if progress and say and line.startswith(progress):
                    say(f"      {line.rstrip()}")

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        hb = Heartbeat(say, what) if say and what else None
        if hb:
            hb.__enter__()
        try:
            proc.wait(timeout)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
            chunks.append(f"\n[bench: killed after {timeout} s]\n")
        finally:
            if hb:
                hb.__exit__()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            unguard(proc.pid)
        reader.join(10)
        wall = time.monotonic() - t0
        cpu = children_cpu_seconds() - cpu0
        return code, "".join(chunks), wall, cpu


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "--guardian":
    _guard(int(sys.argv[2]), sys.argv[3])
