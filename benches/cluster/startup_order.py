#!/usr/bin/env python3
"""Writes cli/dist-symbol-order.txt: the functions of the `kafka-codec` binary that an idle
`kafka-codec cluster` runs (from exec to its first ApiVersions answer, then idle), in the
order callgrind first meets them. cli/build.rs hands the file to the linker for the `dist`
profile, which places those functions together at the start of the text: the kernel maps a
binary's pages around each faulting address (64 KiB), so startup code spread over 18 MiB of
text kept about 8 MiB of it resident; grouped, about 1.8 MiB (benches/README.md, branch
`rss11`).

  cargo build --profile dist -p kafka-codec-cli
  python3 benches/cluster/startup_order.py target/dist/kafka-codec
  cargo build --profile dist -p kafka-codec-cli   # relinks with the new order

The names are the binary's own (mangled, with their hashes), which hold as long as the
toolchain, Cargo.lock and the `dist` profile do; the linker skips a name it does not find
(`--check` prints how many of the file's names the given binary has). The toolchain is
written beside the file (`dist-symbol-order.rustc`), and a dist build with another rustc
warns. Needs valgrind.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import idle  # noqa: E402  (the raw ApiVersions poll)

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "..", "cli", "dist-symbol-order.txt")


def text_symbols(exe):
    out = subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout
    return {f[2] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and f[1] in "tT"}


def called(exe, idle_seconds):
    """Mangled names of the functions run, in first-met order."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        port = idle.free_port()
        proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--demangle=no",
                                 f"--callgrind-out-file={out}", exe, "cluster", "--listen",
                                 f"127.0.0.1:{port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            started = time.monotonic()
            while not idle.answered(port):
                if proc.poll() is not None or time.monotonic() - started > 300:
                    raise RuntimeError("the cluster did not answer under valgrind")
                time.sleep(0.01)
            time.sleep(idle_seconds)
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
        names, seen = [], set()
        with open(out) as f:
            for line in f:
                m = re.match(r"c?fn=\(\d+\) (.+)$", line.rstrip("\n"))
                if m and m.group(1) not in seen:
                    seen.add(m.group(1))
                    names.append(m.group(1))
        return names


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary", help="a `kafka-codec` built with the dist profile")
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--idle", type=float, default=3.0, help="seconds idle after the first answer")
    parser.add_argument("--check", action="store_true",
                        help="only print how many of --out's names the binary has")
    args = parser.parse_args()
    symbols = text_symbols(args.binary)
    if args.check:
        with open(args.out) as f:
            names = [line.strip() for line in f if line.strip() and not line.startswith("#")]
        found = sum(name in symbols for name in names)
        print(f"{found} of {len(names)} names of {args.out} are in {args.binary}")
        return
    names = [name for name in called(args.binary, args.idle) if name in symbols]
    with open(args.out, "w") as f:
        f.write("\n".join(names) + "\n")
    # The toolchain the names belong to: cli/build.rs warns when a dist build uses another.
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True,
                           check=True).stdout
    with open(os.path.splitext(args.out)[0] + ".rustc", "w") as f:
        f.write(rustc)
    print(f"{len(names)} functions written to {args.out}, for {rustc.strip()}")


if __name__ == "__main__":
    main()
