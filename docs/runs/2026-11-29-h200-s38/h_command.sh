# Session 38 call h (1 x H200), tree a82b5fa (the final code: call g's with formatting and the enum conversion): the [gpu] tests of the
# equilibration and of the FP64 path (every fp64_solves, residuals and equilibration), and compare
# --variants auto at n = 200, 256, 512, 3 rounds, beside dgetrf+getrs.
# Run: run(command="bash docs/runs/2026-11-29-h200-s38/h_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=200)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/h; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/h.tgz --exclude='*.jsonl' .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 120 $T tcsolve_tests "*equilibration*,the FP64 path*,small_residual*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); pack
tail -3 $O/tests.log
D=/tmp/sys; mkdir -p $D
for n in 200 256 512; do $T tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null; done
for rep in 1 2 3; do
  for n in 200 256 512; do
    timeout -s KILL 60 $T tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --json > $O/json/c_${n}_$rep.json 2> /dev/null
  done
done; pack
python3 - $O > $O/summary.txt <<'PY'
import glob, json, statistics as st, sys
O = sys.argv[1]
for n in (200, 256, 512):
    a, d, plan = [], [], None
    for f in sorted(glob.glob(f"{O}/json/c_{n}_*.json")):
        for r in json.load(open(f))["results"]:
            if r.get("variant") == "auto":
                a.append(r["time_s"]["total"] * 1e3)
                p = r.get("cuda_plan") or {}
                plan = (p.get("equilibration"), p.get("residuals"), p.get("fp64_solves"))
            if r.get("method") == "cusolver-dgetrf": d.append(r["time_s"]["total"] * 1e3)
    print(n, plan, "auto %.3f dgetrf+getrs %.3f ratio %.3f" % (st.median(a), st.median(d), st.median(a) / st.median(d)),
          "per round", [round(x / y, 3) for x, y in zip(a, d)])
PY
cat $O/summary.txt; pack
echo "elapsed $SECONDS"
