"""Per journal: how far apart its finalists' full timings read from their own screens within each problem (the
largest over the smallest full/screen ratio among the candidates timed in full; 1.0 when drift hit them all alike).
Usage: finalist_spread.py A.journal[.gz] ..."""
import gzip, json, sys, math
def timed(p):
    out={}
    f=gzip.open(p,'rt') if p.endswith('.gz') else open(p)
    for line in f:
        try: e=json.loads(line)
        except: continue
        if e.get('event')=='timed' and 'timing' in e: out[e['problem']]=e['timing']
    return out
for p in sys.argv[1:]:
    t=timed(p); vals=[]
    for prob,x in t.items():
        r=[float(e['median_ms'])/float(e['screen_ms']) for e in x['entries'] if e.get('status')=='timed' and float(e.get('screen_ms',0))>0]
        if len(r)>=2: vals.append((max(r)/min(r),prob))
    vals.sort()
    print(f"{p.split('/')[-2]+'/'+p.split('/')[-1]:70s} problems {len(vals)} median {vals[len(vals)//2][0]:.3f} worst {vals[-1][0]:.3f} ({vals[-1][1]}) >1.05: {sum(v>1.05 for v,_ in vals)}")
