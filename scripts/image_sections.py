#!/usr/bin/env python3
"""How much of each compiled kernel image is debug information rather than code: the section sizes of every
cubin in a kernel cache directory (readelf -S), summed per kind. Behind docs/runtime.md's note on the first
call: an image's module load was measured at 1.0-1.5 ms for 1.1-1.9 MB cubins (results/load-probe-h200.txt).

Usage: scripts/image_sections.py CACHE_DIR   (default: ~/.cache/tunefuzz)
"""
import os
import statistics
import subprocess
import sys


def sections(path):
    out = subprocess.run(["readelf", "-S", "-W", path], capture_output=True, text=True, check=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.replace("[ ", "[").split()
        if len(parts) > 6 and parts[0].startswith("[") and parts[1].startswith("."):
            sizes[parts[1]] = sizes.get(parts[1], 0) + int(parts[5], 16)
    return sizes


def kind(name):
    if "debug" in name:
        return "debug"
    if name.startswith(".text"):
        return "code"
    return "other"


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else os.path.expanduser("~/.cache/tunefuzz")
    images = sorted(f for f in os.listdir(directory) if f.endswith(".cubin"))
    if not images:
        sys.exit(f"no .cubin in {directory}")
    shares, totals, per_kind, per_section = [], [], {}, {}
    for name in images:
        sizes = sections(os.path.join(directory, name))
        total = sum(sizes.values())
        totals.append(total)
        debug = 0
        for section, size in sizes.items():
            k = kind(section)
            per_kind[k] = per_kind.get(k, 0) + size
            debug += size if k == "debug" else 0
            base = section.split(".tf_")[0] if ".tf_" in section else section
            per_section[base] = per_section.get(base, 0) + size
        shares.append(debug / total)
    everything = sum(totals)
    print(f"{len(images)} cubins in {directory}: {everything / 1e6:.1f} MB, "
          f"median {statistics.median(totals) / 1e6:.2f} MB, largest {max(totals) / 1e6:.2f} MB")
    print("share of each image that is debug sections: min %.2f, median %.2f, max %.2f"
          % (min(shares), statistics.median(shares), max(shares)))
    for k, size in sorted(per_kind.items(), key=lambda x: -x[1]):
        print(f"  {k:6} {size / everything:.2f} of all bytes")
    print("largest sections over all images:")
    for section, size in sorted(per_section.items(), key=lambda x: -x[1])[:6]:
        print(f"  {section:22} {size / everything:.2f}")


if __name__ == "__main__":
    main()
