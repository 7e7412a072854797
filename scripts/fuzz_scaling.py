#!/usr/bin/env python3
"""Where a multi-GPU fuzz run loses its speed, from the journals of `fuzz run` at different --gpus.

Usage: scripts/fuzz_scaling.py LABEL=JOURNAL[.gz] ...   (the first is the baseline, usually one GPU)

Runs with a time budget fuzz different numbers of candidates, and candidates differ in what a case costs, so
cases per second over the whole run compare unlike work. This compares like with like: the candidates every
run finished, their worker seconds per case, and a least-squares fit over their jobs (each candidate's plain
and perturbed jobs: wall seconds against cases) of a fixed cost per job (process start, driver and context,
loading the image, the generator's domain probe) plus a cost per case. Journals that carry the worker's phase
timings (9b50c96 on) also get them per case, over the common candidates and over all the run finished."""
import gzip
import json
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    jobs, phases = {}, {}
    with opener(path, "rt") as f:
        for line in f:
            event = json.loads(line)
            if event.get("event") != "fuzzed":
                continue
            jobs[event["id"]] = [(int(event["plain_cases"]), float(event["plain_seconds"])),
                                 (int(event["perturbed_cases"]), float(event["perturbed_seconds"]))]
            seconds = event.get("result", {}).get("phase_seconds")
            if seconds:
                phases[event["id"]] = {phase: float(s) for phase, s in seconds.items()}
    return jobs, phases


def phase_line(ids, jobs, phases):
    """Milliseconds per case in each phase the worker timed, over the candidates `ids`."""
    ids = [i for i in ids if i in phases]
    cases = sum(c for i in ids for c, _ in jobs[i])
    if not ids or not cases:
        return "no phase timings"
    total = {}
    for i in ids:
        for phase, seconds in phases[i].items():
            total[phase] = total.get(phase, 0.0) + seconds
    return ", ".join(f"{phase} {seconds / cases * 1000:.1f}" for phase, seconds in sorted(total.items()))


def fit(points):
    points = [(c, s) for c, s in points if c > 0]
    n = len(points)
    mean_c = sum(c for c, _ in points) / n
    mean_s = sum(s for _, s in points) / n
    var = sum((c - mean_c) ** 2 for c, _ in points)
    per_case = sum((c - mean_c) * (s - mean_s) for c, s in points) / var if var else 0.0
    return mean_s - per_case * mean_c, per_case


def main(args):
    runs = []
    for arg in args:
        label, _, path = arg.partition("=")
        runs.append((label, *load(path)))
    common = set.intersection(*(set(jobs) for _, jobs, _ in runs))
    print(f"candidates every run finished: {len(common)}")
    base = None
    for label, jobs, phases in runs:
        points = [job for cid in common for job in jobs[cid]]
        cases = sum(c for c, _ in points)
        seconds = sum(s for _, s in points)
        per_job, per_case = fit(points)
        per = seconds / cases
        base = base or per
        print(f"{label}: {len(jobs)} candidates finished; on the common ones {seconds / cases * 1000:.1f} ms of "
              f"worker time per case ({base / per:.2f} of the first run's rate per worker); "
              f"fit: {per_job:.2f} s per job + {per_case * 1000:.1f} ms per case")
        if phases:
            print(f"  ms per case by phase, common candidates: {phase_line(common, jobs, phases)}")
            print(f"  ms per case by phase, all it finished:   {phase_line(jobs, jobs, phases)}")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1:])
