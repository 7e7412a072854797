"""Where two campaigns on the same problems chose different winners, how the other campaign's winner fared in
the first: its own figure there (full timing, else screen median) over the first winner's. Usage:
winner_cross.py FIRST.journal[.gz] FIRST.yaml[.gz] OTHER.yaml[.gz]"""
import gzip, json, sys, yaml

def opened(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)

def timed(path):
    out = {}
    for line in opened(path):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if e.get("event") == "timed" and "timing" in e:
            out[e["problem"]] = e["timing"]
    return out

first, first_table, other_table = timed(sys.argv[1]), yaml.safe_load(opened(sys.argv[2])), yaml.safe_load(opened(sys.argv[3]))
winners = {r["name"]: r["winner"]["id"] for r in first_table["problems"] if r.get("winner")}
rows, unmeasured = [], []
for r in other_table["problems"]:
    name, won = r["name"], (r.get("winner") or {}).get("id")
    if not won or won == winners.get(name):
        continue
    entries = {e["id"]: e for e in first[name]["entries"] if e.get("status") in ("timed", "screened")}
    if won in entries and winners[name] in entries:
        rows.append((float(entries[won]["median_ms"]) / float(entries[winners[name]]["median_ms"]), name, entries[won]["status"]))
    else:
        unmeasured.append(name)
print(f"other winner on {len(rows) + len(unmeasured)} of {len(other_table['problems'])} problems")
for ratio, name, status in sorted(rows):
    print(f"  {name:28s} {ratio:.3f} ({status} in the first)")
if unmeasured:
    print("  not measured in the first:", " ".join(unmeasured))
