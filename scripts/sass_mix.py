#!/usr/bin/env python3
"""Static SASS instruction mix of the GEMM kernels in cubins: how many instructions each kernel's main loop
issues around its tensor-core instructions (HGMMA for wgmma, HMMA for mma.sync).

    cuobjdump -sass IMAGE.cubin | scripts/sass_mix.py [--kernel tf_gemm_rr] [--label NAME]
    scripts/sass_mix.py IMAGE.cubin ...          (runs cuobjdump itself; it ships with CUDA on the GPU machine)

For each kernel: its static instruction count, its tensor-core instructions, and the span from the first to
the last of them (the unrolled K tile, where the loop's per-step work sits), with the instructions in that span
per tensor-core instruction and the opcodes that fill it. A static count, not an executed one: it compares two
builds of one kernel (a change to its K loop) without a GPU, not two kernels' run time.
"""
import argparse
import collections
import re
import subprocess
import sys

FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
TENSOR = ("HGMMA", "HMMA")


def opcode(text):
    """The opcode of one SASS instruction without its predicate and modifiers: '@!P0 BRA 0x10' -> 'BRA'."""
    words = text.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def kernels(lines):
    """[(kernel name, [instruction text, ...]), ...] in the order cuobjdump prints them (several cubins' output
    may be concatenated, so a name can repeat)."""
    out = []
    for line in lines:
        m = FUNCTION.match(line)
        if m:
            out.append((m.group(1), []))
            continue
        m = INSTRUCTION.match(line)
        if m and out:
            out[-1][1].append(m.group(2))
    return out


def mix(instructions):
    ops = [opcode(i) for i in instructions]
    tensor = [k for k, o in enumerate(ops) if o in TENSOR]
    result = {"instructions": len(ops), "tensor": len(tensor)}
    if tensor:
        span = ops[tensor[0]:tensor[-1] + 1]
        others = [o for o in span if o not in TENSOR]
        result["span"] = len(span)
        result["others_per_tensor"] = len(others) / len(tensor)
        result["top"] = collections.Counter(others).most_common(8)
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cubins", nargs="*", help="cubins to disassemble (default: cuobjdump -sass text on stdin)")
    parser.add_argument("--kernel", help="only kernels whose name contains this")
    parser.add_argument("--label", default="", help="a word printed before each line (a build's name)")
    args = parser.parse_args()
    sources = []
    if args.cubins:
        for cubin in args.cubins:
            text = subprocess.run(["cuobjdump", "-sass", cubin], capture_output=True, text=True, check=True).stdout
            sources.append((cubin.rsplit("/", 1)[-1][:16], text.splitlines()))
    else:
        sources.append(("stdin", sys.stdin.read().splitlines()))
    for source, lines in sources:
        for name, instructions in kernels(lines):
            if args.kernel and args.kernel not in name:
                continue
            m = mix(instructions)
            line = f"{args.label} {source} {name}: {m['instructions']} instructions, {m['tensor']} tensor-core"
            if m["tensor"]:
                top = ", ".join(f"{o} {n}" for o, n in m["top"])
                line += (f"; K-tile span {m['span']}, {m['others_per_tensor']:.1f} others per tensor-core "
                         f"instruction ({top})")
            print(line.strip())


if __name__ == "__main__":
    main()
