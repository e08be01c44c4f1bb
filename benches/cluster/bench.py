#!/usr/bin/env python3
"""The cluster benchmark of issue 29 ("fast and light"): `kafka-codec cluster`, franz-go's
kfake and a real Kafka broker, each started fresh for every round, the servers interleaved
(round r starts with server r mod 3), librdkafka (confluent-kafka) as the client.

Per round and server:
  start      launch -> the first ApiVersions answered (this driver polls with a raw v0 request)
  idle RSS   VmRSS two seconds after that answer, before any client connects
  produce    N records of SIZE bytes to one partition (librdkafka's defaults: acks all, linger 5 ms)
             records/s and the server's CPU (utime + stime of the server process, /proc/PID/stat)
  RSS        VmRSS after producing
  consume    the N records back by an assigned consumer: records/s and the server's CPU
  retention  (`kafka-codec cluster` only) 1 GiB more in 10 KiB records to one partition, then
             VmRSS: the default retention cap (256 MiB per partition) must hold it

The results go to a JSON file (--out); `--report FILE` prints the Markdown table of
benches/README.md from one. benches/cluster/run.sh builds the servers and runs both.
"""

import argparse
import base64
import json
import os
import random
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid

CLK_TCK = os.sysconf("SC_CLK_TCK")
TOPIC = "bench"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port_pair():
    """Two consecutive free ports (the real broker's listener and its controller's), below
    Linux's ephemeral range (32768 on), so that no client's outgoing connection takes the
    second one between this check and the broker's bind."""
    for _ in range(100):
        port = random.randrange(20000, 32000)
        try:
            for p in (port, port + 1):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", p))
            return port
        except OSError:
            continue
    raise RuntimeError("no two consecutive free ports")


def cpu_seconds(pid):
    """utime + stime of the process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        # The command name may hold spaces; the fields after it start after the last ')'.
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def api_versions_answered(port, deadline):
    """True once a raw ApiVersions v0 request on 127.0.0.1:port is answered with error 0."""
    client_id = b"bench"
    body = struct.pack(">hhih", 18, 0, 7, len(client_id)) + client_id
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=max(0.05, deadline - time.monotonic())) as s:
            s.sendall(struct.pack(">i", len(body)) + body)
            head = b""
            while len(head) < 10:
                chunk = s.recv(10 - len(head))
                if not chunk:
                    return False
                head += chunk
            _size, correlation, error = struct.unpack(">iih", head)
            return correlation == 7 and error == 0
    except OSError:
        return False


class Server:
    """One fresh server process: launched, timed to its first answer, stopped."""

    def __init__(self, name, argv, port, workdir, env=None):
        self.name, self.port = name, port
        self.log = open(os.path.join(workdir, f"{name}.log"), "wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        deadline = self.started + 120
        while not api_versions_answered(port, deadline):
            if self.proc.poll() is not None:
                raise RuntimeError(f"{name} exited during startup ({self.proc.returncode}); see {self.log.name}")
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{name}: no ApiVersions answer within 120 s")
            time.sleep(0.001)
        self.start_ms = (time.monotonic() - self.started) * 1000

    @property
    def pid(self):
        return self.proc.pid

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()


KAFKA_PROPERTIES = """\
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:{controller}
listeners=PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller}
advertised.listeners=PLAINTEXT://127.0.0.1:{port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs={logs}
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
"""

# The JVM options Kafka's own bin/kafka-server-start.sh and kafka-run-class.sh give a broker.
KAFKA_JVM = ["-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
             "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
             "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true"]


def launch(name, args, workdir):
    if name == "kafka-codec":
        port = free_port()
        return Server(name, [args.ours, "cluster", "--listen", f"127.0.0.1:{port}"], port, workdir)
    if name == "kfake":
        port = free_port()
        return Server(name, [args.kfake, "-port", str(port)], port, workdir)
    if name == "kafka":
        port = free_port_pair()
        home = tempfile.mkdtemp(prefix="kafka-", dir=workdir)
        properties = os.path.join(home, "server.properties")
        with open(properties, "w") as f:
            f.write(KAFKA_PROPERTIES.format(port=port, controller=port + 1, logs=os.path.join(home, "data")))
        java = ["java", *KAFKA_JVM, f"-Dkafka.logs.dir={home}", "-cp", os.path.join(args.kafka_lib, "*")]
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()[:22]
        # Formatting the storage is not part of the start: it is done once, before launch.
        subprocess.run([*java, "kafka.tools.StorageTool", "format", "--config", properties,
                        "--cluster-id", cluster_id, "--standalone"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return Server(name, [*java, "kafka.Kafka", properties], port, workdir)
    raise ValueError(name)


def create_topic(bootstrap):
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 1)])[TOPIC].result(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        topic = admin.list_topics(TOPIC, timeout=5).topics.get(TOPIC)
        if topic and not topic.error and topic.partitions and topic.partitions[0].leader >= 0:
            return
        time.sleep(0.05)
    raise RuntimeError("the topic has no leader after 30 s")


def produce(bootstrap, count, size, partition=0):
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap})
    value = b"x" * size
    for _ in range(count):
        while True:
            try:
                producer.produce(TOPIC, value, partition=partition)
                break
            except BufferError:
                producer.poll(0.005)
    left = producer.flush(120)
    if left:
        raise RuntimeError(f"{left} records not delivered")


def high_watermark(bootstrap):
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench-check"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(TOPIC, 0), timeout=30)[1]
    finally:
        consumer.close()


def consume(bootstrap, count):
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "bench",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    got, last = 0, -1
    deadline = time.monotonic() + 300
    while got < count:
        if time.monotonic() > deadline:
            raise RuntimeError(f"consumed {got} of {count} in 300 s")
        for message in consumer.consume(10000, 1.0):
            if message.error():
                raise RuntimeError(f"consume: {message.error()}")
            if message.offset() != last + 1:
                raise RuntimeError(f"offset {message.offset()} after {last}")
            last = message.offset()
            got += 1
    consumer.close()
    return got


def measure(server, args):
    bootstrap = f"127.0.0.1:{server.port}"
    result = {"start_ms": server.start_ms, "start_cpu_s": cpu_seconds(server.pid)}
    time.sleep(2)
    result["idle_rss_mib"] = rss_mib(server.pid)
    create_topic(bootstrap)

    cpu, t = cpu_seconds(server.pid), time.monotonic()
    produce(bootstrap, args.records, args.size)
    seconds = time.monotonic() - t
    result["produce_cpu_s"] = cpu_seconds(server.pid) - cpu
    result["produce_rps"] = args.records / seconds
    hw = high_watermark(bootstrap)
    if hw != args.records:
        raise RuntimeError(f"{server.name}: high watermark {hw} after producing {args.records}")
    result["produced_rss_mib"] = rss_mib(server.pid)

    cpu, t = cpu_seconds(server.pid), time.monotonic()
    consume(bootstrap, args.records)
    seconds = time.monotonic() - t
    result["consume_cpu_s"] = cpu_seconds(server.pid) - cpu
    result["consume_rps"] = args.records / seconds

    if server.name == "kafka-codec" and args.retention_mib:
        big = 10 * 1024
        produce(bootstrap, args.retention_mib * 1024 * 1024 // big, big)
        result["retention_rss_mib"] = rss_mib(server.pid)
    return result


def run(args):
    servers = args.servers.split(",")
    workdir = tempfile.mkdtemp(prefix="cluster-bench-")
    results = []
    for round_ in range(args.rounds):
        order = servers[round_ % len(servers):] + servers[:round_ % len(servers)]
        for name in order:
            server = launch(name, args, workdir)
            try:
                result = measure(server, args)
            finally:
                server.stop()
            result.update(server=name, round=round_)
            results.append(result)
            print(json.dumps(result), file=sys.stderr, flush=True)
            with open(args.out, "w") as f:
                json.dump({"records": args.records, "size": args.size, "retention_mib": args.retention_mib,
                           "results": results}, f, indent=1)
    subprocess.run(["rm", "-rf", workdir], check=False)


# --- the report -------------------------------------------------------------------------

def summary(values, digits):
    values = sorted(values)
    fmt = f"{{:,.{digits}f}}"
    med = fmt.format(statistics.median(values))
    if len(values) == 1:
        return med
    return f"{med} ({fmt.format(values[0])}–{fmt.format(values[-1])})"


def report(path):
    with open(path) as f:
        data = json.load(f)
    records, size = data["records"], data["size"]
    per_million = 1e6 / records
    by_server = {}
    for r in data["results"]:
        by_server.setdefault(r["server"], []).append(r)
    names = [n for n in ("kafka-codec", "kfake", "kafka") if n in by_server]
    rounds = min(len(v) for v in by_server.values())

    def column(name, key, scale=1.0):
        return [r[key] * scale for r in by_server[name] if key in r]

    def med(name, key, scale=1.0):
        return statistics.median(column(name, key, scale))

    rows = [
        ("first answer after launch (ms)", "start_ms", 1.0, 1, "≤ kfake's", lambda o, k: o <= k),
        ("idle RSS (MiB)", "idle_rss_mib", 1.0, 1, "≤ kfake's", lambda o, k: o <= k),
        ("produce (records/s)", "produce_rps", 1.0, 0, "≥ kfake's", lambda o, k: o >= k),
        ("consume (records/s)", "consume_rps", 1.0, 0, "≥ kfake's", lambda o, k: o >= k),
        ("server CPU producing (s per M records)", "produce_cpu_s", per_million, 2, "≤ ½ kfake's",
         lambda o, k: o <= k / 2),
        ("server CPU consuming (s per M records)", "consume_cpu_s", per_million, 2, "≤ ½ kfake's",
         lambda o, k: o <= k / 2),
    ]
    lines = [f"| metric | {' | '.join(names)} | goal | met |", "|---" * (len(names) + 3) + "|"]
    for label, key, scale, digits, goal, check in rows:
        cells = [summary(column(n, key, scale), digits) for n in names]
        met = "—"
        if "kafka-codec" in by_server and "kfake" in by_server:
            met = "yes" if check(med("kafka-codec", key, scale), med("kfake", key, scale)) else "**no**"
        lines.append(f"| {label} | {' | '.join(cells)} | {goal} | {met} |")
    # Memory held per record: growth of RSS over idle, against the bytes produced.
    produced = records * size
    growth = {n: [(r["produced_rss_mib"] - r["idle_rss_mib"]) * 1024 * 1024 / records for r in by_server[n]]
              for n in names}
    cells = [summary(growth[n], 0) for n in names]
    met = "—"
    if "kafka-codec" in growth:
        met = "yes" if statistics.median(growth["kafka-codec"]) <= 1.5 * size else "**no**"
    lines.append(f"| RSS after producing − idle RSS (bytes per {size}-byte record) | {' | '.join(cells)} "
                 f"| ≤ 1.5 × {size} = {1.5 * size:.0f} | {met} |")
    cells = [summary(column(n, "produced_rss_mib"), 1) for n in names]
    lines.append(f"| RSS after producing (MiB; {produced / 2**20:,.0f} MiB of values produced) "
                 f"| {' | '.join(cells)} | | |")
    if "kafka-codec" in by_server and column("kafka-codec", "retention_rss_mib"):
        values = column("kafka-codec", "retention_rss_mib")
        cap = 256
        met = "yes" if statistics.median(values) <= 1.5 * cap + med("kafka-codec", "idle_rss_mib") else "**no**"
        cells = [summary(values, 1)] + ["—"] * (len(names) - 1)
        lines.append(f"| RSS after {data['retention_mib']:,} MiB more produced to the partition (MiB) "
                     f"| {' | '.join(cells)} | held by the 256 MiB partition cap (≤ 1.5 × cap + idle) | {met} |")
    print(f"Medians over {rounds} rounds, (min–max) in brackets; {records:,} records of {size} bytes.\n")
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ours", help="the kafka-codec binary (release build)")
    parser.add_argument("--kfake", help="the kfake-bench binary")
    parser.add_argument("--kafka-lib", help="the directory of the Kafka broker's jars")
    parser.add_argument("--servers", default="kafka-codec,kfake,kafka")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--retention-mib", type=int, default=1024,
                        help="MiB produced after the run to check the retention cap (0: skip)")
    parser.add_argument("--out", default="cluster-bench.json")
    parser.add_argument("--report", metavar="FILE", help="print the table of a results file and exit")
    args = parser.parse_args()
    if args.report:
        report(args.report)
    else:
        run(args)


if __name__ == "__main__":
    main()
