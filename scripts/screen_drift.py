"""How far each problem's full timings read from the same candidates' screens in the same campaign, journal by
journal: per problem the largest median/screen ratio over its candidates timed in full (a full timing runs
20+ launches back to back, a screen 3, so a few per cent above 1 is the usual; far above, or below, is a
measurement something disturbed). Then, across the journals, the winners' and cuBLAS's medians against the
first journal's. Usage: screen_drift.py A.journal[.gz] B.journal[.gz] ..."""
import gzip, json, math, sys

def timed(path):
    out = {}
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:  # journals before 3d1e781 broke timings taken from the store over lines
                continue
            if e.get("event") == "timed" and "timing" in e:
                out[e["problem"]] = e["timing"]
    return out

def drift(t):
    ratios = [float(x["median_ms"]) / float(x["screen_ms"]) for x in t["entries"]
              if x.get("status") == "timed" and float(x.get("screen_ms", 0)) > 0]
    return max(ratios) if ratios else None

def fastest(t):
    full = [x for x in t["entries"] if x.get("status") == "timed"]
    return min(float(x["median_ms"]) for x in full) if full else None

runs = [(p.split("/")[-1].split(".journal")[0], timed(p)) for p in sys.argv[1:]]
problems = list(runs[0][1])
print("largest full-timing median / own screen median over each problem's finalists")
print(f"{'problem':26s}" + "".join(f"{name:>18s}" for name, _ in runs))
worst = {name: 0.0 for name, _ in runs}
for p in problems:
    cells = []
    for name, r in runs:
        d = drift(r[p]) if p in r else None
        cells.append(f"{d:18.3f}" if d else f"{'-':>18s}")
        if d: worst[name] = max(worst[name], abs(math.log(d)))
    print(f"{p:26s}" + "".join(cells))
print(f"{'largest |log|, as a ratio':26s}" + "".join(f"{math.exp(worst[name]):18.3f}" for name, _ in runs))
first = runs[0][1]
for name, r in runs[1:]:
    for what, get in (("fastest full timing", fastest), ("cuBLAS", lambda t: float(t["baseline"]["median_ms"]))):
        q = [get(r[p]) / get(first[p]) for p in problems if p in r and get(r[p]) and get(first[p])]
        g = math.exp(sum(map(math.log, q)) / len(q))
        print(f"{name} / {runs[0][0]}, {what}: geometric mean {g:.4f}, range {min(q):.3f}-{max(q):.3f} over {len(q)} problems")
