#!/usr/bin/env python3
"""Ferry's Avro compatibility verdicts against Apache Avro's own (SchemaCompatibility, org.apache.avro:avro 1.12.2).

Generates the pairs (generate_pairs.py, fixed seed), has Java judge them (AvroOracle.java, with the class path of
pom.xml from the local Maven repository: nothing is downloaded) and Ferry (avro_oracle_tool), and fails on any
pair where the verdicts, the incompatibilities (type and location) or the canonical texts (Java's Schema.toString())
differ, printing those pairs.

Usage: run_oracle.py AVRO_ORACLE_TOOL
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MIN_CHECKED = 2000  # pairs both sides parse, as the acceptance criterion counts them


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tool = sys.argv[1]
    with tempfile.TemporaryDirectory() as work:
        pairs = os.path.join(work, "pairs.jsonl")
        with open(pairs, "w") as out:
            subprocess.run([sys.executable, os.path.join(HERE, "generate_pairs.py")], stdout=out, check=True)
        classpath_file = os.path.join(work, "classpath.txt")
        maven = subprocess.run(["mvn", "-o", "-q", "-B", "-f", os.path.join(HERE, "pom.xml"),
                                "dependency:build-classpath", f"-Dmdep.outputFile={classpath_file}"],
                               stdin=subprocess.DEVNULL, capture_output=True, text=True)
        if maven.returncode != 0:
            sys.exit(maven.stdout + maven.stderr +
                     "\nrun_oracle: Apache Avro 1.12.2 is not in the local Maven repository; run scripts/install-deps")
        with open(classpath_file) as f:
            classpath = f.read().strip()
        # Lines split at "\n" only: canonical texts may hold U+2028, which Jackson does not escape.
        java = subprocess.run(["java", "-cp", classpath, os.path.join(HERE, "AvroOracle.java"), pairs],
                              capture_output=True, encoding="utf-8", check=True).stdout.split("\n")[:-1]
        ferry = subprocess.run([tool, pairs], capture_output=True, encoding="utf-8", check=True).stdout.split("\n")[:-1]
        with open(pairs, encoding="utf-8") as f:
            texts = f.read().split("\n")[:-1]
    if len(java) != len(texts) or len(ferry) != len(texts):
        sys.exit(f"run_oracle: {len(texts)} pairs, {len(java)} Java verdicts, {len(ferry)} Ferry verdicts")
    differing = [i for i in range(len(texts)) if java[i] != ferry[i]]
    verdicts = [line.split("\t")[0] for line in java]
    checked = sum(1 for v in verdicts if v != "PARSE_ERROR")
    compatible = sum(1 for v in verdicts if v == "COMPATIBLE")
    print(f"{len(texts)} pairs: {checked} checked by both ({compatible} compatible, {checked - compatible} not), "
          f"{len(texts) - checked} refused by a parser; {len(differing)} differ (verdict or canonical text)")
    for i in differing[:50]:
        print(f"pair {i + 1}: {texts[i]}\n  java:  {java[i]}\n  ferry: {ferry[i]}")
    if differing:
        sys.exit(1)
    if checked < MIN_CHECKED:
        sys.exit(f"run_oracle: only {checked} pairs checked, fewer than {MIN_CHECKED}")


if __name__ == "__main__":
    main()
