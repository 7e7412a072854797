#!/usr/bin/env python3
"""Reads scripts/device/ctx.sh's output: for each burst of processes started at once, how long each step
took per process (median and max, ms) and over how long the whole burst was spread (first start to last
context, ms). Steps that queue show as a spread near N times one process's step."""
import statistics
import sys

STEPS = ["main", "init", "context", "stream", "alloc"]


def report(label, start, rows):
    if not rows:
        return
    parts = []
    for a, b in zip(STEPS, STEPS[1:]):
        d = [(r[b] - r[a]) / 1000 for r in rows]
        parts.append(f"{a}->{b} med {statistics.median(d):.0f} max {max(d):.0f}")
    launch = [(r["main"] - start) / 1000 for r in rows]
    spread = (max(r["context"] for r in rows) - start) / 1000
    print(f"{label:22} {len(rows):3} processes: start->main max {max(launch):.0f}; " + "; ".join(parts) +
          f"; last context {spread:.0f} ms after the burst began")


def main(path):
    label, start, rows = None, 0, []
    for line in open(path):
        f = line.split()
        if line.startswith("== "):
            report(label, start, rows)
            label, start, rows = f"{f[1]} {f[2]}", int(f[4]), []
        elif f and f[0] == "pid":
            rows.append({f[i]: int(f[i + 1]) for i in range(2, len(f), 2)})
    report(label, start, rows)


if __name__ == "__main__":
    main(sys.argv[1])
