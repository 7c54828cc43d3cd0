# Session 38 call c (1 x H200), tree after 4e78192 with host_times split further (the first
# launch, the refinement loop, the wait for the upload's search): where the FP64 path's host time
# goes at n = 200 and 256 (solve --warmup --cuda-plan host_times=on, 5 rounds), and compare
# --variants auto at n = 200, 5 rounds.
# Run: run(command="bash docs/runs/2026-11-29-h200-s38/c_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=300)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/c; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/c.tgz --exclude='*.jsonl' .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
D=/tmp/sys; mkdir -p $D
for n in 200 256; do
  $T tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
done
for rep in 1 2 3 4 5; do
  for n in 200 256; do
    timeout -s KILL 60 $T tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --cuda-plan host_times=on --json --output /tmp/x.h5 --force > $O/json/p_${n}_default_$rep.json 2> /dev/null
  done
  timeout -s KILL 60 $T tcsolve compare --input $D/s200.h5 --backend cuda --variants auto --json > $O/json/c_200_$rep.json 2> /dev/null
done; pack
python3 - $O > $O/summary.txt <<'PY'
import glob, json, statistics as st, sys
O = sys.argv[1]
for n in (200, 256):
    ph = {}
    for f in sorted(glob.glob(f"{O}/json/p_{n}_default_*.json")):
        j = json.load(open(f))
        p = j["time_s"]["phases"]
        for k, v in (p.items() if isinstance(p, dict) else p):
            ph.setdefault(k, []).append(v * 1e6)
        ph.setdefault("total", []).append(j["time_s"]["total"] * 1e6)
    print(n, {k: round(st.median(v), 1) for k, v in ph.items()})
a, d = [], []
for f in sorted(glob.glob(f"{O}/json/c_200_*.json")):
    for r in json.load(open(f))["results"]:
        if r.get("variant") == "auto": a.append(r["time_s"]["total"] * 1e3)
        if r.get("method") == "cusolver-dgetrf": d.append(r["time_s"]["total"] * 1e3)
print("compare 200: auto", [round(x, 3) for x in a], "dgetrf+getrs", [round(x, 3) for x in d],
      "ratio of medians %.3f" % (st.median(a) / st.median(d)), "per round", [round(x / y, 3) for x, y in zip(a, d)])
PY
cat $O/summary.txt; pack
echo "elapsed $SECONDS"
