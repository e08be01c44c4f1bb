#!/usr/bin/env python3
"""Instructions `kafka-codec cluster` runs per record produced and per record consumed, counted
by callgrind (independent of the machine's load, unlike bench.py's CPU seconds).

One server under `valgrind --tool=callgrind --instr-atstart=no`; bench.py's librdkafka
producer and consumer (same settings); collection is switched on (`callgrind_control -i on`)
around each phase alone and dumped after it (`callgrind_control -d`), so start-up, topic
creation and the watermark check are not counted. Prints the instructions of each phase per
record and leaves the profiles (callgrind.out.PID.1 = produce, .2 = consume) in --outdir for
`callgrind_annotate`.

    python benches/cluster/callgrind.py --ours target/release/kafka-codec --records 200000

Needs valgrind and the Python of tools/clients/venv.sh. Slow (a minute or two): not in CI.
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402


def control(pid, *args):
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, stdout=subprocess.DEVNULL)


def dumped(outdir, pid, n, deadline=120):
    """The instruction count of dump n, once callgrind has written it."""
    path = os.path.join(outdir, f"callgrind.out.{pid}.{n}")
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if os.path.exists(path):
            with open(path) as f:
                text = f.read()
            m = re.search(r"^totals: (\d+)", text, re.M) or re.search(r"^summary: (\d+)", text, re.M)
            if m:
                return int(m.group(1))
        time.sleep(0.2)
    raise RuntimeError(f"no {path} after {deadline} s")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ours", required=True, help="the kafka-codec binary (a release build)")
    p.add_argument("--records", type=int, default=200_000)
    p.add_argument("--size", type=int, default=100)
    p.add_argument("--outdir", default=".")
    args = p.parse_args()
    outdir = os.path.abspath(args.outdir)
    os.makedirs(outdir, exist_ok=True)
    for old in glob.glob(os.path.join(outdir, "callgrind.out.*")):
        os.remove(old)

    port = bench.free_port()
    argv = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
            f"--callgrind-out-file={outdir}/callgrind.out.%p",
            args.ours, "cluster", "--listen", f"127.0.0.1:{port}"]
    server = bench.Server("kafka-codec-callgrind", argv, port, outdir)
    bootstrap = f"127.0.0.1:{port}"
    try:
        bench.create_topic(bootstrap)
        control(server.pid, "-i", "on")
        bench.produce(bootstrap, args.records, args.size)
        control(server.pid, "-i", "off")
        control(server.pid, "-d", "produce")
        produce_ir = dumped(outdir, server.pid, 1)
        hw = bench.high_watermark(bootstrap)
        if hw != args.records:
            raise RuntimeError(f"high watermark {hw} after producing {args.records}")
        control(server.pid, "-z")
        control(server.pid, "-i", "on")
        bench.consume(bootstrap, args.records)
        control(server.pid, "-i", "off")
        control(server.pid, "-d", "consume")
        consume_ir = dumped(outdir, server.pid, 2)
    finally:
        server.stop()
    print(f"produce: {produce_ir / args.records:,.0f} instructions per record "
          f"({produce_ir:,} for {args.records:,})")
    print(f"consume: {consume_ir / args.records:,.0f} instructions per record "
          f"({consume_ir:,} for {args.records:,})")
    print(f"profiles: {outdir}/callgrind.out.{server.pid}.1 (produce), .2 (consume)")


if __name__ == "__main__":
    main()
