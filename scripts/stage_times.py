#!/usr/bin/env python3
"""When each stage of a `tune run` ended, and how many of the host's cores were busy meanwhile.

    scripts/stage_times.py [--cores N] CPU LOG [LOG...]

LOG is a campaign's log as scripts/device/camp.sh writes it (each line prefixed with the seconds since the
epoch; gzipped or not), CPU the host's /proc/stat samples camp.sh takes twice a second through the call.
Prints, for each log, the seconds from its first line to the end of the compile, fuzz and time stages and to
its last line, and the busy cores between them (of N, default 16: camp.sh's nproc.txt says how many).
"""
import gzip
import sys


def lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        yield from f


def samples(path):
    out = []
    for line in lines(path):
        parts = line.split()
        if len(parts) < 10 or parts[1] != "cpu":
            continue
        values = list(map(int, parts[2:10]))
        out.append((float(parts[0]), sum(values), values[3] + values[4]))  # time, all jiffies, idle + iowait
    return out


def busy(cpu, cores, t0, t1):
    inside = [s for s in cpu if t0 <= s[0] <= t1]
    if len(inside) < 2:
        return float("nan")
    total = inside[-1][1] - inside[0][1]
    idle = inside[-1][2] - inside[0][2]
    return cores * (total - idle) / total if total else float("nan")


def stage_ends(path):
    ends = {}
    for line in lines(path):
        stamp, _, text = line.partition(" ")
        try:
            t = float(stamp)
        except ValueError:
            continue
        ends.setdefault("first", t)
        ends["last"] = t
        # A stage's summary line: "[stage] DONE/TOTAL in S s: ..." (the first of each: the confirmation's
        # compile and fuzz lines come later and are part of the winners' checks)
        for stage in ("compile", "fuzz", "time"):
            if text.startswith("[" + stage + "]") and " in " in text and ": " in text and stage not in ends:
                ends[stage] = t
    return ends


def main():
    args = sys.argv[1:]
    cores = 16
    if args[:1] == ["--cores"] and len(args) > 1:
        cores, args = int(args[1]), args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    cpu = samples(args[0])
    for log in args[1:]:
        e = stage_ends(log)
        t0 = e["first"]
        marks = [("compile", e.get("compile")), ("fuzz", e.get("fuzz")), ("time", e.get("time")),
                 ("checks", e["last"])]
        parts, previous = [], t0
        for name, t in marks:
            if t is None:
                continue
            parts.append(f"{name} ends {t - t0:6.1f} s ({busy(cpu, cores, previous, t):4.1f} cores busy)")
            previous = t
        print(f"{log}: " + ", ".join(parts))


if __name__ == "__main__":
    main()
