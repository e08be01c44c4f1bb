"""The old clients' workloads against a real Kafka 3.9 broker and against `kafka-codec
cluster --as-version 3.9`, their observable results compared (issue 29 item 3).

    python compare_old_clients.py KAFKA_BROKER --python VENV_PYTHON [--kafka-codec PATH]
        [--java-old DIR] [--setting SETTING ...] [--out DIR] [--against HOST:PORT]

The settings are those of `cluster/tests/old_clients.rs` (old_workload.py's SETTINGS):
kafka-python pinned to `api_version=(0, 9)` (Produce/Fetch v1, magic 0) and `(0, 10)` (v2,
magic 1), and the Java kafka-clients 0.10.2.2 and 0.11.0.3 (`java-old/`, OldWorkload.java),
which take the newest versions they share with the broker. Each produces five known records
with every codec of the old formats (the Java ones three more with acks=0), consumes them in
a consumer group, commits and reads the commit back, and fails on any answer that differs
from what was sent; each prints its `observed` results: the records as consumed (offset, key,
value, and the timestamp kafka-python reports, which its producer set, or the timestamp type
the Java consumer reports: its producer's clock differs between runs), the committed offset,
and for kafka-python the end and beginning offsets and the group's state. Both servers are
asked the same things, the settings one after the other, the two servers side by side.

The cluster answers as 3.9, the broker's release: the clients pick the same versions from
both ApiVersions answers (cluster/tests/old_clients.rs runs them against `--as-version 0.10`
and `0.11`). Topics carry a per-run prefix (the broker keeps what earlier runs made),
removed before comparing. Prints one table (setting: match or mismatch), each difference,
and exits 1 on any mismatch or any run that failed. Results: --out (default
target/compare-old-clients). `--against` compares with another server instead of a new
cluster (for trying the script without a broker).
"""

import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SETTINGS = ("kafka-python-0.9", "kafka-python-0.10", "java-0.10.2.2", "java-0.11.0.3")
TIMEOUT = 180  # a hang guard per client run; the workloads have their own, shorter ones


def start_cluster(kafka_codec, release, err):
    """`kafka-codec cluster` answering as `release`: (process, bootstrap)."""
    # Auto-creation off, as tools/kafka-broker/broker.sh sets the real broker.
    command = [kafka_codec, "cluster", "--brokers", "1", "--listen", "127.0.0.1:0",
               "--broker-config", "auto.create.topics.enable=false",
               "--as-version", release]
    with open(err, "w", encoding="utf-8") as stderr:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(err, encoding="utf-8", errors="replace") as text:
            found = re.search(r"^kafka-codec cluster: bootstrap (\S+)", text.read(), re.M)
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    with open(err, encoding="utf-8", errors="replace") as text:
        sys.exit(f"compare-old: kafka-codec cluster did not start: {text.read()[-2000:]}")


def java_classpath(java_old, version):
    """java-old's jar and the class path of kafka-clients `version` (built once each)."""
    listed = os.path.join(java_old, "target", f"classpath-{version}")
    if not os.path.exists(listed):
        subprocess.run(["mvn", "-q", "-B", "-f", os.path.join(java_old, "pom.xml"),
                        "dependency:build-classpath", f"-Dkafka.version={version}",
                        f"-Dmdep.outputFile={listed}"], check=True, capture_output=True)
    with open(listed, encoding="utf-8") as f:
        return os.path.join(java_old, "target", "java-old-clients.jar") + ":" + f.read().strip()


def run(command, prints=True):
    """Runs one client; its last stdout line as JSON (`prints`; else {}), or {"failed": why}."""
    try:
        child = subprocess.run(command, cwd=HERE, stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return {"failed": f"no end in {TIMEOUT} s: {' '.join(command)}"}
    lines = child.stdout.strip().splitlines()
    if child.returncode != 0 or (prints and not lines):
        return {"failed": f"exit {child.returncode}: {child.stderr[-3000:]}"}
    return json.loads(lines[-1]) if prints else {}


def run_setting(setting, bootstrap, topic, python, classpaths):
    """One setting's workload against `bootstrap`: what it observed."""
    # Every setting here has its topic made first (one partition), by the venv's kafka-python
    # at its own versions: 0.9's and 0.10's versions have no CreateTopics.
    workload = [python, "old_workload.py", setting]
    if setting.startswith("java-"):
        made = run(workload + ["-", topic, "--direct", bootstrap, "--create-only"], prints=False)
        if made.get("failed"):
            return made
        result = run(["java", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
                      classpaths[setting], "kafkacodec.clients.OldWorkload",
                      bootstrap, topic, setting])
    else:
        result = run(workload + [bootstrap, topic, "--direct", bootstrap])
    return result.get("observed", result)


def differences(a, b, path=""):
    """Paths where two JSON values differ, with both values."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(a.keys() | b.keys()):
            found += differences(a.get(key, "<absent>"), b.get(key, "<absent>"), f"{path}/{key}")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}/{i}")]
    return [] if a == b else [f"{path}: broker {json.dumps(a)} | cluster {json.dumps(b)}"]


def strip(value, prefix):
    """`value` without the run's topic prefix in any string."""
    if isinstance(value, str):
        return value.replace(prefix, "")
    if isinstance(value, list):
        return [strip(v, prefix) for v in value]
    if isinstance(value, dict):
        return {strip(k, prefix): strip(v, prefix) for k, v in value.items()}
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("broker", help="the real Kafka 3.9 broker's bootstrap address")
    parser.add_argument("--python", required=True,
                        help="the venv's python, with kafka-python (tools/clients/venv.sh)")
    parser.add_argument("--kafka-codec", default=os.path.join(REPO, "target/debug/kafka-codec"))
    parser.add_argument("--java-old", default=os.path.join(HERE, "java-old"),
                        help="java-old/, built (mvn package)")
    parser.add_argument("--setting", action="append", choices=SETTINGS)
    parser.add_argument("--as-version", default="3.9", help="the cluster's release")
    parser.add_argument("--out", default=os.path.join(REPO, "target/compare-old-clients"))
    parser.add_argument("--against", help="compare with this server instead of a new cluster")
    args = parser.parse_args()
    settings = args.setting or list(SETTINGS)
    os.makedirs(args.out, exist_ok=True)
    prefix = f"oldcmp-{int(time.time())}-"
    # Before any run: both sides' runs of a setting share java-old's jar and class path.
    if any(s.startswith("java-") for s in settings) and not os.path.exists(
            os.path.join(args.java_old, "target", "java-old-clients.jar")):
        subprocess.run(["mvn", "-q", "-B", "-f", os.path.join(args.java_old, "pom.xml"),
                        "package"], check=True, capture_output=True)
    classpaths = {s: java_classpath(args.java_old, s.removeprefix("java-"))
                  for s in settings if s.startswith("java-")}

    cluster = None
    other = args.against
    if not other:
        cluster, other = start_cluster(args.kafka_codec, args.as_version,
                                       os.path.join(args.out, "cluster.err"))
    results = {"broker": {}, "cluster": {}}
    try:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            for setting in settings:
                began = time.monotonic()
                sides = {label: pool.submit(run_setting, setting, bootstrap, prefix + setting,
                                            args.python, classpaths)
                         for label, bootstrap in (("broker", args.broker), ("cluster", other))}
                for label, side in sides.items():
                    results[label][setting] = strip(side.result(), prefix)
                print(f"compare-old: {setting} in {time.monotonic() - began:.1f} s",
                      file=sys.stderr)
    finally:
        if cluster:
            cluster.terminate()
            cluster.wait()
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1, sort_keys=True)

    failed, details = False, []
    print(f"Old clients, real broker vs kafka-codec cluster --as-version {args.as_version}:")
    for setting in settings:
        broker, ours = results["broker"][setting], results["cluster"][setting]
        if "failed" in broker or "failed" in ours:
            cell = "failed"
            for label, result in (("broker", broker), ("cluster", ours)):
                if "failed" in result:
                    details.append(f"{setting} against the {label}: {result['failed']}")
        else:
            found = differences(broker, ours)
            details += [f"{setting}{d}" for d in found]
            cell = "mismatch" if found else (
                f"match ({len(broker.get('consumed', []))} records, "
                f"committed {broker.get('committed')})")
        failed |= not cell.startswith("match")
        print(f"  {setting:<20} {cell}")
    for line in details:
        print(f"MISMATCH: {line}")
    if failed:
        sys.exit(f"compare-old: FAILED (results in {args.out})")
    print(f"compare-old: every setting of {', '.join(settings)} matches")


if __name__ == "__main__":
    main()
