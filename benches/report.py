#!/usr/bin/env python3
"""Table of the kafka-codec vs kafka-protocol benchmarks from criterion's saved estimates.

Reads target/criterion/**/new/estimates.json (and the benchmark.json beside each, for the group
and function names) and prints, per benchmark group: our median, kafka-protocol's median, and
the ratio kafka-protocol / ours (above 1 means kafka-codec is faster).

Usage: python3 benches/report.py [CRITERION_DIR] [--markdown]
CRITERION_DIR defaults to target/criterion under the workspace root (this file's parent's
parent), or $CARGO_TARGET_DIR/criterion when that is set. Standard library only.
"""

import json
import os
import sys
from pathlib import Path

OURS = "kafka-codec"
THEIRS = "kafka-protocol"


def default_dir() -> Path:
    target = os.environ.get("CARGO_TARGET_DIR")
    if target:
        return Path(target) / "criterion"
    return Path(__file__).resolve().parent.parent / "target" / "criterion"


def load(root: Path) -> dict:
    """{group: {function: median_ns}} for every benchmark with a 'new' estimate."""
    results: dict = {}
    for estimates in sorted(root.glob("**/new/estimates.json")):
        new = estimates.parent
        meta_path = new / "benchmark.json"
        if meta_path.exists():
            meta = json.loads(meta_path.read_text())
            group, function = meta["group_id"], meta.get("function_id") or ""
        else:
            # Without criterion's metadata, fall back on the directory layout
            # (<group>/<function>/new), where '/' in a group name became '_'.
            function, group = new.parent.name, new.parent.parent.name
        median = json.loads(estimates.read_text())["median"]["point_estimate"]
        results.setdefault(group, {})[function] = median
    return results


def fmt_ns(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.1f} ns"


def main(argv: list) -> int:
    markdown = "--markdown" in argv
    paths = [a for a in argv if not a.startswith("--")]
    root = Path(paths[0]) if paths else default_dir()
    if not root.is_dir():
        print(f"no criterion results at {root}: run `cargo bench -p kafka-codec-bench` first",
              file=sys.stderr)
        return 1
    results = load(root)
    rows = []
    for group in sorted(results):
        functions = results[group]
        if OURS not in functions and THEIRS not in functions:
            continue
        ours, theirs = functions.get(OURS), functions.get(THEIRS)
        ratio = f"{theirs / ours:.2f}" if ours and theirs else "-"
        rows.append((group,
                     fmt_ns(ours) if ours is not None else "-",
                     fmt_ns(theirs) if theirs is not None else "-",
                     ratio))
    if not rows:
        print(f"no {OURS}/{THEIRS} benchmarks under {root}", file=sys.stderr)
        return 1
    header = ("benchmark", f"{OURS} (median)", f"{THEIRS} (median)", "ratio (theirs/ours)")
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(4)]
    if markdown:
        print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
        print("|" + "|".join("-" * (w + 1) + (":" if i else "-") for i, w in enumerate(widths)) + "|")
        for row in rows:
            print("| " + row[0].ljust(widths[0]) + " | "
                  + " | ".join(c.rjust(w) for c, w in zip(row[1:], widths[1:])) + " |")
    else:
        print("  ".join(h.ljust(w) if i == 0 else h.rjust(w)
                        for i, (h, w) in enumerate(zip(header, widths))))
        for row in rows:
            print(row[0].ljust(widths[0]) + "  "
                  + "  ".join(c.rjust(w) for c, w in zip(row[1:], widths[1:])))
    print("\nratio > 1: kafka-codec is faster; medians from each benchmark's latest run.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
