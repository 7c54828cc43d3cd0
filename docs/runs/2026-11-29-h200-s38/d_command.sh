# Session 38 call d (1 x H200), tree cdb962e (call b's, with the phase events made before the timed part and the LU's event time read after it): (1) issue 35's recorded
# run for small systems: compare --variants auto per n from 200 to 4096 and on the committed real
# systems, 3 rounds, beside dgetrf+getrs; (2) the FP64 path's phases at n = 200 and 256 (solve
# --warmup, host_times=on, 5 rounds); (3) the [gpu] tests of the FP64 path and what runs it.
# Run: run(command="bash docs/runs/2026-11-29-h200-s38/d_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=400)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/d; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/d.tgz --exclude='*.jsonl' .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
D=/tmp/sys; mkdir -p $D
for n in 200 256 384 512 768 1024 1536 2048 2560 3072 4096; do
  $T tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
done
for rep in 1 2 3; do
  for n in 200 256 384 512 768 1024 1536 2048 2560 3072 4096; do
    timeout -s KILL 60 $T tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --json > $O/json/c_${n}_$rep.json 2> /dev/null
  done
  for name in bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg; do
    timeout -s KILL 60 $T tcsolve compare --input $R/bundle/bin/testdata/inputs/$name.h5 --backend cuda --variants auto --json > $O/json/r_${name}_$rep.json 2> /dev/null
  done
done; pack
echo "compare done at $SECONDS s"
python3 $R/docs/runs/2026-11-29-h200-s38/a_summary.py $O > $O/summary.txt 2>&1; pack
sed -n '/compare/,/^solve/p' $O/summary.txt
for rep in 1 2 3 4 5; do
  for n in 200 256; do
    timeout -s KILL 60 $T tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --cuda-plan host_times=on --json --output /tmp/x.h5 --force > $O/json/p_${n}_default_$rep.json 2> /dev/null
  done
done; pack
python3 - $O > $O/phases.txt <<'PY'
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
        ph.setdefault("factorization", []).append(j["time_s"]["factorization"] * 1e6)
    print(n, {k: round(st.median(v), 1) for k, v in ph.items()})
PY
cat $O/phases.txt; pack
(cd /tmp && timeout -s KILL 200 $T tcsolve_tests "cuda fp64_below*,cuda: the FP64 fallback*,the cuda solver: several*,the FP64 path*,factorize on cuda*,the C API's tcsolveDgesv*,tcsolve compare --backend cuda*,cuda condition estimate auto*,cuda: the condition estimate*,cuda: rows scaled*,cuda: the subnormal*,the FP64 LU on GPU members*,small_residual*,*equilibration*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); pack
tail -4 $O/tests.log
echo "elapsed $SECONDS"
