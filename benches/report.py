#!/usr/bin/env python3
"""Table of the kafka-codec vs kafka-protocol benchmarks from criterion's saved estimates.

Reads target/criterion/<group>/<function>/<BASELINE>/estimates.json (and benchmark.json beside
it, for the group and function names) and prints, per benchmark group: our median,
kafka-protocol's median, and the ratio kafka-protocol / ours (above 1 means kafka-codec is
faster). An encode group's `kafka-codec (segmented)` function (Message::encode_segments) is a
row of its own, `<group> (segmented)`, against the same kafka-protocol encode. Groups whose
case name ends in TOPICSxPARTITIONSxREPLICAS (the Metadata cases) also get the time per
partition, and the Metadata pair a line comparing the two sizes.

Usage: python3 benches/report.py [CRITERION_DIR] [--markdown] [--baseline NAME]...
CRITERION_DIR defaults to target/criterion under the workspace root (this file's parent's
parent), or $CARGO_TARGET_DIR/criterion when that is set. BASELINE defaults to `new` (each
benchmark's latest run); given several times (runs saved with criterion's `--save-baseline`),
each median is the median over those runs, and the ratio is the median of the runs' ratios
(their range in brackets).
Standard library only.
"""

import json
import os
import re
import statistics
import sys
from pathlib import Path

OURS = "kafka-codec"
THEIRS = "kafka-protocol"
# The encode groups' third function (Message::encode_segments); reported as a row of its own,
# `<group> (segmented)`, against the same kafka-protocol encode.
SEGMENTED = "kafka-codec (segmented)"
SHAPE = re.compile(r"_(\d+)x(\d+)x(\d+)(/|$)")


def default_dir() -> Path:
    target = os.environ.get("CARGO_TARGET_DIR")
    if target:
        return Path(target) / "criterion"
    return Path(__file__).resolve().parent.parent / "target" / "criterion"


def load(root: Path, baseline: str) -> dict:
    """{group: {function: median_ns}} for every benchmark with an estimate in `baseline`."""
    results: dict = {}
    for estimates in sorted(root.glob(f"**/{baseline}/estimates.json")):
        run = estimates.parent
        meta_path = run / "benchmark.json"
        if meta_path.exists():
            meta = json.loads(meta_path.read_text())
            group, function = meta["group_id"], meta.get("function_id") or ""
        else:
            # Without criterion's metadata, fall back on the directory layout
            # (<group>/<function>/<baseline>), where '/' in a group name became '_'.
            function, group = run.parent.name, run.parent.parent.name
        median = json.loads(estimates.read_text())["median"]["point_estimate"]
        results.setdefault(group, {})[function] = median
    return results


def split_segmented(results: dict) -> dict:
    """Each group's segmented function as a group of its own, beside the same kafka-protocol
    median, so that every row reads ours / theirs / ratio."""
    out = {}
    for group, functions in results.items():
        out[group] = {f: v for f, v in functions.items() if f != SEGMENTED}
        if SEGMENTED in functions:
            row = {OURS: functions[SEGMENTED]}
            if THEIRS in functions:
                row[THEIRS] = functions[THEIRS]
            out[f"{group} (segmented)"] = row
    return out


def fmt_ns(ns: float) -> str:
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.1f} ns"


def partitions(group: str):
    m = SHAPE.search(group)
    return int(m.group(1)) * int(m.group(2)) if m else None


def main(argv: list) -> int:
    markdown = "--markdown" in argv
    baselines, paths, args = [], [], iter(argv)
    for a in args:
        if a == "--baseline":
            baselines.append(next(args, "new"))
        elif not a.startswith("--"):
            paths.append(a)
    baselines = baselines or ["new"]
    root = Path(paths[0]) if paths else default_dir()
    if not root.is_dir():
        print(f"no criterion results at {root}: run `cargo bench -p kafka-codec-bench` first",
              file=sys.stderr)
        return 1
    runs = [split_segmented(load(root, b)) for b in baselines]
    groups = sorted(set().union(*runs))
    rows, per_partition = [], {}
    for group in groups:
        ours = [r[group][OURS] for r in runs if OURS in r.get(group, {})]
        theirs = [r[group][THEIRS] for r in runs if THEIRS in r.get(group, {})]
        if not ours and not theirs:
            continue
        ratios = [r[group][THEIRS] / r[group][OURS] for r in runs
                  if OURS in r.get(group, {}) and THEIRS in r.get(group, {})]
        o = statistics.median(ours) if ours else None
        t = statistics.median(theirs) if theirs else None
        ratio = f"{statistics.median(ratios):.2f}" if ratios else "-"
        if len(ratios) > 1:
            ratio += f" ({min(ratios):.2f}–{max(ratios):.2f})"
        n = partitions(group)
        pp = "-"
        if n and o is not None and t is not None:
            pp = f"{o / n:.1f} / {t / n:.1f}"
            per_partition[group] = (n, o / n, t / n)
        rows.append((group, fmt_ns(o) if o is not None else "-",
                     fmt_ns(t) if t is not None else "-", ratio, str(len(ratios)), pp))
    if not rows:
        print(f"no {OURS}/{THEIRS} benchmarks under {root} ({', '.join(baselines)})",
              file=sys.stderr)
        return 1
    header = ("benchmark", f"{OURS} (median)", f"{THEIRS} (median)", "ratio (theirs/ours, range)",
              "runs", "ns/partition (ours / theirs)")
    cols = len(header)
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(cols)]
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
    # The Metadata pair: does the cost per partition stay flat as the response grows?
    for op in ("decode", "encode"):
        sized = sorted((n, o, t, g) for g, (n, o, t) in per_partition.items()
                       if g.endswith("/" + op))
        if len(sized) >= 2:
            (n1, o1, t1, g1), (n2, o2, t2, g2) = sized[0], sized[-1]
            print(f"\n{op} per partition, {g2.split('/')[0]} vs {g1.split('/')[0]}: "
                  f"{OURS} {o2:.1f} vs {o1:.1f} ns ({o2 / o1:.2f}×), "
                  f"{THEIRS} {t2:.1f} vs {t1:.1f} ns ({t2 / t1:.2f}×)")
    print(f"\nratio > 1: kafka-codec is faster; baselines: {', '.join(baselines)}"
          + ("; medians of the runs' medians, ratio the median of the runs' ratios"
             if len(baselines) > 1 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
