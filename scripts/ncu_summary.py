#!/usr/bin/env python3
"""One line per profiled kernel from `ncu --import REPORT --page details --csv` files: duration, DRAM, memory
and SM throughput (% of peak), executed IPC, achieved occupancy, registers, L2 hit rate and waves.
Usage: scripts/ncu_summary.py DETAILS.csv [DETAILS.csv ...]   (plain or .gz)"""
import collections
import csv
import gzip
import sys

WANTED = ["Duration", "DRAM Throughput", "Memory Throughput", "Compute (SM) Throughput", "Executed Ipc Active",
          "Achieved Occupancy", "Registers Per Thread", "L2 Hit Rate", "Waves Per SM", "Executed Instructions"]


def kernels(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        out = collections.OrderedDict()
        for r in csv.DictReader(f):
            if not r["ID"].isdigit():
                continue
            k = out.setdefault(int(r["ID"]), {"name": r["Kernel Name"][:34], "grid": r["Grid Size"],
                                              "block": r["Block Size"], "metrics": {}})
            if r["Metric Name"] in WANTED and r["Metric Name"] not in k["metrics"]:
                unit = r["Metric Unit"]
                k["metrics"][r["Metric Name"]] = r["Metric Value"] + ("" if unit in ("", "%") else " " + unit)
        return out


def main(paths):
    for path in paths:
        print("##", path)
        print(f'{"id":>3} {"kernel":<34} {"grid":<15} {"block":<13} {"duration":<12} {"dram%":>6} {"mem%":>6} '
              f'{"sm%":>6} {"ipc":>5} {"occ%":>6} {"regs":>4} {"L2hit%":>6} {"waves":>5} instructions')
        for i, k in kernels(path).items():
            m = k["metrics"]
            g = lambda name: m.get(name, "?").split(" ")[0]
            print(f'{i:>3} {k["name"]:<34} {k["grid"]:<15} {k["block"]:<13} {m.get("Duration", "?"):<12} '
                  f'{g("DRAM Throughput"):>6} {g("Memory Throughput"):>6} {g("Compute (SM) Throughput"):>6} '
                  f'{g("Executed Ipc Active"):>5} {g("Achieved Occupancy"):>6} {g("Registers Per Thread"):>4} '
                  f'{g("L2 Hit Rate"):>6} {g("Waves Per SM"):>5} {g("Executed Instructions")}')


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
