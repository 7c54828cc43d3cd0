# Session 36 call c (2 x H200): issue 33's recorded set on main (bundle) with cb2dca4's tcsolve
# (bundle-before, the last build before the device layer) for the one-GPU before/after: the
# compare pairs at 65536 twice (round 2 with 20 s between the invocations), 32768 once, solve
# --warmup at 65536 on 1 and 2 GPUs alternating, each start's SM clock, temperature and power;
# then tcsolve_tests "[gpu]" on the final tree. Everything into $OUT/c.tgz after each part.
set -u
tar xJf bundle.tar.xz; tar xJf bundle-before.tar.xz
O=/tmp/c; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/c.tgz --exclude='*.h5' .); }
B=$PWD/bundle/run
gpu() { echo "$1 $(date -u +%T) $(nvidia-smi --query-gpu=index,clocks.sm,temperature.gpu,power.draw --format=csv,noheader | tr '\n' ' ')" >> $O/clocks.txt; }
export NEW=bundle OLD=bundle-before RUN_LIMIT=120
gpu before; PARTS="before" scripts/bench-solver-multi-gpu $O/before; pack
gpu r1; PARTS="scale" SCALE_N="65536 32768" scripts/bench-solver-multi-gpu $O/r1; pack
cx() { local name=$1; shift; sleep 20; gpu $name
  timeout -s KILL 120 $B tcsolve compare --seed 1 --backend cuda --json --progress never --variants auto --synthetic 65536 "$@" > $O/$name.json 2> $O/$name.err
  echo "$name rc $?" >> $O/runs.txt; pack; }
cx cmp1_r2; cx cmp2_r2 --gpus 2
sv() { local name=$1; shift; gpu $name
  timeout -s KILL 60 $B tcsolve solve --seed 1 --backend cuda --json --progress never --warmup --synthetic 65536 "$@" > $O/$name.json 2> $O/$name.err
  echo "$name rc $?" >> $O/runs.txt; pack; }
for r in 1 2; do sv g2_$r --gpus 2; sv g1_$r; done
(cd /tmp && timeout -s KILL 240 $B tcsolve_tests "[gpu]" > $O/tests_gpu.log 2>&1; echo "exit $?" >> $O/tests_gpu.log); pack
python3 - <<'PY' > /tmp/c/solve_summary.txt
import json, glob
for f in sorted(glob.glob('/tmp/c/cmp*.json')):
    try: j = json.load(open(f))
    except Exception: print(f, 'bad'); continue
    for r in j.get('results', []):
        t = r.get('time_s', {})
        print(f.split('/')[-1], r.get('variant', r.get('method')), r.get('iterations'), 'total %.1f fact %.1f ref %.1f' % (1e3*t.get('total',0), 1e3*t.get('factorization',0), 1e3*t.get('refinement',0)))
for f in sorted(glob.glob('/tmp/c/g*.json')):
    try: j = json.load(open(f))
    except Exception: print(f, 'bad'); continue
    t = j.get('time_s', {}); ph = t.get('phases', {})
    print(f.split('/')[-1], j.get('iterations'), 'total %.1f fact %.1f ref %.1f' % (1e3*t.get('total',0), 1e3*t.get('factorization',0), 1e3*t.get('refinement',0)),
          ' '.join('%s %.1f' % (k, 1e3*ph.get(k,0)) for k in ('swap_rest','bcast','update_wait','panel','update_next','equilibrate','condition')))
PY
pack
cat $O/solve_summary.txt; cat $O/clocks.txt | cut -c1-200
cat $O/*/summary.txt | grep -E "total_ms|exit|error|compare 16384|cmp" | cut -c1-200
tail -3 $O/tests_gpu.log
