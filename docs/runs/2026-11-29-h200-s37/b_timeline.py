"""Session 37 call b: from an Nsight Systems SQLite export of b_bert_steps.py, inside the NVTX
range "timed": per step, the GPU's busy time (the union of kernels, copies and sets), its idle
gaps by length, the launches, and the host's time in CUDA API calls by name."""
import sqlite3
import sys

STEPS = 10
db = sqlite3.connect(sys.argv[1])
tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
t0, t1 = db.execute("select start, end from NVTX_EVENTS where text = 'timed'").fetchone()
iv = []
for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET"):
    if t in tables:
        iv += db.execute(f"select start, end from {t} where start >= ? and end <= ?", (t0, t1)).fetchall()
iv.sort()
busy, gaps, cur_s, cur_e = 0, [], None, None
for s, e in iv:
    if cur_e is None:
        cur_s, cur_e = s, e
    elif s > cur_e:
        busy += cur_e - cur_s
        gaps.append(s - cur_e)
        cur_s, cur_e = s, e
    else:
        cur_e = max(cur_e, e)
if cur_e is not None:
    busy += cur_e - cur_s
first, last = iv[0][0], iv[-1][1]
print(f"range {(t1 - t0) / 1e6 / STEPS:.2f} ms a step; first to last GPU activity {(last - first) / 1e6 / STEPS:.2f} ms; "
      f"GPU busy {busy / 1e6 / STEPS:.2f} ms; activities {len(iv) / STEPS:.0f} a step")
edges = [0, 1000, 2000, 5000, 20000, 100000, 10**12]
for lo, hi in zip(edges, edges[1:]):
    g = [x for x in gaps if lo <= x < hi]
    print(f"  gaps {lo / 1e3:g}-{hi / 1e3:g} us: {len(g) / STEPS:.0f} a step, {sum(g) / 1e6 / STEPS:.3f} ms a step")
kname = "CUPTI_ACTIVITY_KIND_KERNEL"
rows = db.execute(f"""select s.value, count(*), sum(k.end - k.start) from {kname} k join StringIds s on k.shortName = s.id
                     where k.start >= ? and k.end <= ? group by s.value order by 3 desc limit 15""", (t0, t1)).fetchall()
print("kernels by time (per step): name, count, ms")
for name, c, t in rows:
    print(f"  {name[:80]:80s} {c / STEPS:7.1f} {t / 1e6 / STEPS:8.3f}")
rt = "CUPTI_ACTIVITY_KIND_RUNTIME"
if rt in tables:
    rows = db.execute(f"""select s.value, count(*), sum(r.end - r.start) from {rt} r join StringIds s on r.nameId = s.id
                         where r.start >= ? and r.end <= ? group by s.value order by 3 desc limit 15""", (t0, t1)).fetchall()
    print("CUDA API by host time (per step): name, count, ms")
    for name, c, t in rows:
        print(f"  {name[:60]:60s} {c / STEPS:7.1f} {t / 1e6 / STEPS:8.3f}")
