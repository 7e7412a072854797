"""Same-candidate timings of two campaign journals: each problem's cuBLAS time and every candidate timed in
full in both, as the ratio later/earlier. Usage: compare.py EARLIER.journal[.gz] LATER.journal[.gz]"""
import gzip, json, statistics, sys

def timings(path):
    out = {}
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        for line in f:
            e = json.loads(line)
            if e.get("event") != "timed":
                continue
            t = e["timing"]
            out[(e["problem"], "cublas")] = float(t["baseline"]["median_ms"])
            for x in t["entries"]:
                if x.get("status") == "timed":
                    out[(e["problem"], x["id"])] = float(x["median_ms"])
    return out

a, b = timings(sys.argv[1]), timings(sys.argv[2])
kinds = {"cuBLAS": [], "SPLIT_K=1": [], "split": []}
for key in sorted(set(a) & set(b)):
    r = b[key] / a[key]
    if key[1] == "cublas":
        kinds["cuBLAS"].append(r)
    elif "SPLIT_K=1," in key[1]:
        kinds["SPLIT_K=1"].append(r)
    else:
        kinds["split"].append((r, key))
for name in ("cuBLAS", "SPLIT_K=1"):
    print(f"{name}: {len(kinds[name])} timings, median ratio {statistics.median(kinds[name]):.4f}")
print(f"split candidates: {len(kinds['split'])} timings")
for r, (problem, cid) in sorted(kinds["split"]):
    split = next(f for f in cid.split(",") if f.startswith("SPLIT_K"))
    print(f"  {r:.3f}  {problem:30s} {cid.split('/')[0]:14s} {split:12s} {cid.split('/')[2]}")
