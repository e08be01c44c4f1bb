#!/usr/bin/env python3
"""`kafka-codec quorum serve` builds compared: first answer, CPU and context switches per
request, threads and idle RSS. Each round starts every binary fresh, interleaved (round r
starts with binary r mod n), and sends it REQUESTS ApiVersions v0 requests one after
another on one connection (each answered before the next is sent), as an admin tool's
requests come.

    python benches/cluster/quorum.py --bin NAME=PATH --bin NAME=PATH [--rounds 5]

Per binary, the median (min-max) over the rounds of:
  first answer  launch -> the first ApiVersions answered (bench.py's 1 ms polling)
  CPU           utime + stime of the server (every thread) over the requests, per request
  switches      voluntary + involuntary context switches of every thread over the requests
  threads, idle RSS (VmRSS 1 s after the first answer)
"""

import argparse
import os
import socket
import statistics
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def switches(pid):
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


def threads(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def ask(port, count):
    client_id = b"bench"
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for correlation in range(count):
            body = struct.pack(">hhih", 18, 0, correlation, len(client_id)) + client_id
            s.sendall(struct.pack(">i", len(body)) + body)
            head = b""
            while len(head) < 4:
                chunk = s.recv(4 - len(head))
                if not chunk:
                    raise RuntimeError("closed")
                head += chunk
            size = struct.unpack(">i", head)[0]
            left = size
            while left:
                chunk = s.recv(left)
                if not chunk:
                    raise RuntimeError("closed")
                left -= len(chunk)


def measure(path, args, workdir):
    port = bench.free_port()
    server = bench.Server("quorum", [path, "quorum", "serve", "--listen", f"127.0.0.1:{port}"],
                          port, workdir)
    try:
        time.sleep(1)
        result = {"start_ms": server.start_ms, "idle_rss_mib": bench.rss_mib(server.pid),
                  "threads": threads(server.pid)}
        cpu, sw, t = bench.cpu_seconds(server.pid), switches(server.pid), time.monotonic()
        ask(port, args.requests)
        result["wall_us"] = (time.monotonic() - t) / args.requests * 1e6
        result["cpu_us"] = (bench.cpu_seconds(server.pid) - cpu) / args.requests * 1e6
        result["switches"] = (switches(server.pid) - sw) / args.requests
    finally:
        server.stop()
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", action="append", required=True, help="NAME=PATH of a kafka-codec binary")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--requests", type=int, default=20_000)
    args = p.parse_args()
    bins = [b.split("=", 1) for b in args.bin]
    workdir = tempfile.mkdtemp(prefix="quorum-bench-")
    results = {name: [] for name, _ in bins}
    for round_ in range(args.rounds):
        order = bins[round_ % len(bins):] + bins[:round_ % len(bins)]
        for name, path in order:
            r = measure(path, args, workdir)
            results[name].append(r)
            print(name, r, file=sys.stderr, flush=True)
    keys = [("start_ms", "first answer (ms)", 1), ("cpu_us", "server CPU per request (µs)", 1),
            ("switches", "context switches per request", 2), ("wall_us", "round trip (µs)", 1),
            ("threads", "threads", 0), ("idle_rss_mib", "idle RSS (MiB)", 1)]
    print("| metric | " + " | ".join(name for name, _ in bins) + " |")
    print("|---|" + "---|" * len(bins))
    for key, label, digits in keys:
        cells = [bench.summary([r[key] for r in results[name]], digits) for name, _ in bins]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
