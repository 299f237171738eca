"""Getting the pieces: the load generators built from source into the work directory, Apache Kafka's jars
from Maven Central, the Ferry broker binary, and the facts of this machine."""
import glob
import os
import platform
import re
import shutil
import subprocess

RDKAFKA_PERF_SRC = "/usr/share/doc/librdkafka-dev/examples/rdkafka_performance.c"


class PrepareError(RuntimeError):
    pass


def _run(argv, what, **kw):
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise PrepareError(f"{what} failed ({r.returncode}): {' '.join(argv)}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return r


def _newer(target, *sources):
    return os.path.exists(target) and all(os.path.getmtime(target) >= os.path.getmtime(s) for s in sources)


def build_tools(bench_dir, work):
    """rdkafka_performance from Debian's librdkafka-dev example source, and bench/tools/benchtool.c.

    The example includes two headers of librdkafka's source tree (rd.h, rdtime.h) that the -dev package
    does not ship; bench/rdkafka_compat holds small stand-ins for the few helpers it uses. The binaries go
    to WORK/bin and are never committed."""
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir, exist_ok=True)
    if not os.path.exists(RDKAFKA_PERF_SRC):
        raise PrepareError(f"{RDKAFKA_PERF_SRC} is missing: install librdkafka-dev (scripts/install-deps)")
    compat = os.path.join(bench_dir, "rdkafka_compat")
    compat_files = glob.glob(os.path.join(compat, "*", "*.h"))
    perf = os.path.join(bindir, "rdkafka_performance")
    if not _newer(perf, RDKAFKA_PERF_SRC, *compat_files):
        _run(["gcc", "-O2", "-w", "-I", os.path.join(compat, "include"), "-I", "/usr/include/librdkafka",
              "-o", perf, RDKAFKA_PERF_SRC, "-lrdkafka", "-lm", "-lpthread"], "building rdkafka_performance")
    tool_src = os.path.join(bench_dir, "tools", "benchtool.c")
    tool = os.path.join(bindir, "benchtool")
    if not _newer(tool, tool_src):
        _run(["gcc", "-O2", "-Wall", "-o", tool, tool_src, "-lrdkafka", "-lzookeeper_mt", "-lpthread"], "building benchtool")
    return perf, tool


def build_connbench(bench_dir, work):
    """bench/tools/connbench.c (TLS handshakes and SCRAM logins, on OpenSSL) into WORK/bin."""
    src = os.path.join(bench_dir, "tools", "connbench.c")
    tool = os.path.join(work, "bin", "connbench")
    if not _newer(tool, src):
        _run(["gcc", "-O2", "-Wall", "-o", tool, src, "-lssl", "-lcrypto", "-lpthread"], "building connbench")
    return tool


POM = """<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by bench/run: the jars of Apache Kafka {version} (broker and tools), copied into lib/. -->
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>ferry.bench</groupId>
  <artifactId>kafka-{version}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{deps}
  </dependencies>
</project>
"""


def resolve_kafka(work, version, extra_artifacts, say):
    """Kafka's jars from Maven Central into WORK/kafka/VERSION/lib (offline first, from ~/.m2)."""
    home = os.path.join(work, "kafka", version)
    lib = os.path.join(home, "lib")
    done = os.path.join(home, "resolved")
    if os.path.exists(done) and glob.glob(os.path.join(lib, f"kafka_2.13-{version}.jar")):
        return lib
    os.makedirs(home, exist_ok=True)
    artifacts = [f"org.apache.kafka:kafka_2.13:{version}", f"org.apache.kafka:kafka-tools:{version}", *extra_artifacts]
    deps = "\n".join(
        "    <dependency><groupId>{}</groupId><artifactId>{}</artifactId><version>{}</version></dependency>".format(
            *a.split(":")) for a in artifacts)
    with open(os.path.join(home, "pom.xml"), "w") as f:
        f.write(POM.format(version=version, deps=deps))
    if os.path.isdir(lib):
        shutil.rmtree(lib)
    args = ["mvn", "-q", "-B", "-f", os.path.join(home, "pom.xml"), "dependency:copy-dependencies",
            f"-DoutputDirectory={lib}", "-DincludeScope=runtime"]
    if shutil.which("mvn") is None:
        raise PrepareError("mvn is not installed (scripts/install-deps installs maven)")
    r = subprocess.run(["mvn", "-o", *args[1:]], stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if r.returncode != 0:
        say(f"  resolving Apache Kafka {version} from Maven Central (mvn dependency:copy-dependencies)")
        _run(args, f"resolving Kafka {version} with Maven")
    if not glob.glob(os.path.join(lib, f"kafka_2.13-{version}.jar")):
        raise PrepareError(f"Maven resolved no kafka_2.13-{version}.jar into {lib}")
    open(done, "w").close()
    return lib


def cmake_cache(build_dir):
    values = {}
    try:
        with open(os.path.join(build_dir, "CMakeCache.txt")) as f:
            for line in f:
                m = re.match(r"^([A-Za-z_]+):[A-Z]+=(.*)$", line.strip())
                if m:
                    values[m.group(1)] = m.group(2)
    except OSError:
        pass
    return values


def ferry_binary(root, build_dir, build, say):
    """The ferry-broker binary of build_dir; builds the release preset first when asked to."""
    if build:
        say("  building Ferry (cmake --preset release; cmake --build --preset release --target ferry-broker)")
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            _run(["cmake", "--preset", "release"], "cmake --preset release", cwd=root)
        _run(["cmake", "--build", "--preset", "release", "--target", "ferry-broker", "-j", str(os.cpu_count() or 2)],
             "building ferry-broker", cwd=root)
    binary = os.path.join(build_dir, "broker", "src", "app", "ferry-broker")
    if not os.access(binary, os.X_OK):
        raise PrepareError(f"no ferry-broker in {build_dir} (build it: cmake --preset release && "
                           "cmake --build --preset release --target ferry-broker)")
    cache = cmake_cache(build_dir)
    build_type = cache.get("CMAKE_BUILD_TYPE", "?")
    sanitized = any(cache.get(option, "OFF").upper() in ("ON", "1", "TRUE", "YES")
                    for option in ("FERRY_SANITIZE", "FERRY_TSAN"))
    return binary, build_type, sanitized


def can_drop_caches():
    try:
        subprocess.run(["sync"], check=False)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
        return True, "echo 3 > /proc/sys/vm/drop_caches works here"
    except OSError as e:
        return False, f"cannot drop the page cache here ({e.strerror}: /proc/sys/vm/drop_caches); cold reads skipped"


def drop_caches():
    subprocess.run(["sync"], check=False)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def _read(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def _out(argv):
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=20)
        return (r.stdout + r.stderr).strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def machine_facts(data_dir):
    cpu_model = ""
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            cpu_model = line.split(":", 1)[1].strip()
            break
    mem_kib = 0
    for line in _read("/proc/meminfo").splitlines():
        if line.startswith("MemTotal:"):
            mem_kib = int(line.split()[1])
    src_fs = _out(["findmnt", "-no", "SOURCE,FSTYPE", "-T", data_dir]).split()
    source, fstype = (src_fs + ["?", "?"])[:2]
    dev = os.path.basename(source)
    base = re.sub(r"p?\d+$", "", dev) if not os.path.exists(f"/sys/block/{dev}") else dev
    rotational = _read(f"/sys/block/{base}/queue/rotational", "?")
    model = _read(f"/sys/block/{base}/device/model", "")
    st = os.statvfs(data_dir)
    java = _out(["java", "-version"]).splitlines()
    return {
        "cores": os.cpu_count(),
        "cpu": cpu_model,
        "memory_gib": round(mem_kib / 1024 / 1024, 1),
        "kernel": platform.release(),
        "os": _read("/etc/debian_version") and f"Debian {_read('/etc/debian_version')}",
        "disk": f"{source} ({fstype}{', ' + model if model else ''}; rotational={rotational}), "
                f"{st.f_bavail * st.f_frsize / 1e9:.0f} GB free of {st.f_blocks * st.f_frsize / 1e9:.0f} GB",
        "java": java[1] if len(java) > 1 else (java[0] if java else "?"),
    }


def build_commit(build_dir):
    """git_describe of the checkout a build tree was configured from; a tree without a CMake cache (a binary
    copied aside, say from before a change) cannot tell, and the checkout at hand may be another commit."""
    source = cmake_cache(build_dir).get("CMAKE_HOME_DIRECTORY")
    return git_describe(source) if source else "commit unknown"


def git_describe(root):
    """The commit Ferry was built from, and whether the broker's sources differ from it."""
    try:
        rev = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", "broker"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return f"{rev}{' with uncommitted broker changes' if dirty else ''}"
    except (OSError, subprocess.TimeoutExpired):
        return "?"
