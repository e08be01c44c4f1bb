#!/usr/bin/env python3
"""Idle memory of the cluster servers, broken down: each binary started fresh, interleaved
(round r starts with binary r mod n), polled with a raw ApiVersions v0 request until it
answers (as bench.py does), then left idle; after --wait seconds its `VmRSS` (what bench.py
reports as idle RSS) and `/proc/PID/smaps` summed by where the pages are: anonymous, the
server's own binary (file pages), other files (libc, the loader), and the page faults it
took (minor, major) up to then. Prints the median (min-max) of each per binary.

  python3 benches/cluster/idle.py --rounds 5 \\
      --bin ours=target/release/kafka-codec --bin kfake=target/kfake-bench

A binary named `kfake…` gets kfake-bench's arguments (`-port N`), any other
`kafka-codec cluster --listen 127.0.0.1:N`. Needs nothing beyond python3.
"""

import argparse
import os
import signal
import statistics
import subprocess
import time

# The same start-up probe and port choice as the benchmark (this script's directory is on
# sys.path when it runs).
from bench import api_versions_answered, free_port


def smaps(pid, exe):
    """KiB resident by kind: anonymous, the binary's own file pages, other files."""
    exe = os.path.realpath(exe)
    out = {"anon_kib": 0, "bin_file_kib": 0, "other_file_kib": 0}
    path = None
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if not fields:
                continue
            if "-" in fields[0] and not fields[0].endswith(":"):
                path = fields[5] if len(fields) > 5 else ""
                rss = anon = 0
            elif fields[0] == "Rss:":
                rss = int(fields[1])
            elif fields[0] == "Anonymous:":
                anon = int(fields[1])
                out["anon_kib"] += anon
                file = rss - anon
                if path == exe:
                    out["bin_file_kib"] += file
                else:
                    out["other_file_kib"] += file
    return out


def status(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return {"vmrss_kib": rss, "threads": threads, "minflt": int(fields[7]), "majflt": int(fields[9])}


def evict(exe):
    """Drops the binary's pages from the page cache (those no process maps), so that the
    start reads it as after a reboot rather than as the linker or `cp` left it: the kernel
    maps the page-cache folio around a faulting address, so how the file is cached decides
    part of the resident size."""
    fd = os.open(exe, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def one(name, exe, wait, cold):
    if cold:
        evict(exe)
    port = free_port()
    if os.path.basename(name).startswith("kfake"):
        argv = [exe, "-port", str(port)]
    else:
        argv = [exe, "cluster", "--listen", f"127.0.0.1:{port}"]
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        while not api_versions_answered(port, time.monotonic() + 1):
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited ({proc.returncode})")
            if time.monotonic() - started > 60:
                raise RuntimeError(f"{name}: no answer in 60 s")
            time.sleep(0.001)
        start_ms = (time.monotonic() - started) * 1000
        time.sleep(wait)
        result = {"start_ms": start_ms, **status(proc.pid), **smaps(proc.pid, exe)}
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", action="append", required=True, metavar="NAME=PATH")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--wait", type=float, default=2.0, help="seconds idle after the first answer")
    parser.add_argument("--cold", action="store_true",
                        help="drop each binary from the page cache before each start")
    args = parser.parse_args()
    bins = [b.split("=", 1) for b in args.bin]
    results = {name: [] for name, _ in bins}
    for r in range(args.rounds):
        for i in range(len(bins)):
            name, exe = bins[(r + i) % len(bins)]
            results[name].append(one(name, exe, args.wait, args.cold))
    keys = [("vmrss_kib", "VmRSS (MiB)", 1024), ("anon_kib", "anonymous (MiB)", 1024),
            ("bin_file_kib", "the binary's file pages (MiB)", 1024),
            ("other_file_kib", "other files' pages (MiB)", 1024),
            ("minflt", "minor faults", 1), ("majflt", "major faults", 1),
            ("threads", "threads", 1), ("start_ms", "first answer (ms)", 1)]
    print(f"| metric | {' | '.join(name for name, _ in bins)} |")
    print(f"|---|{'---|' * len(bins)}")
    for key, label, scale in keys:
        cells = []
        for name, _ in bins:
            values = [r[key] / scale for r in results[name]]
            digits = 0 if scale == 1 and key != "start_ms" else 1
            cells.append(f"{statistics.median(values):,.{digits}f} ({min(values):,.{digits}f}–{max(values):,.{digits}f})")
        print(f"| {label} | {' | '.join(cells)} |")
    try:
        print(f"load average: {open('/proc/loadavg').read().split()[:3]}")
    except OSError:
        pass


if __name__ == "__main__":
    main()
