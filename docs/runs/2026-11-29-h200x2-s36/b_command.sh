# Session 36 call b (2 x H200): member_lend (the non-owner's update on all SMs but 8) at n = 65536,
# alternating 0/25/50/75/100 twice, one GPU beside; the [multi_gpu] tests (member_lend's case).
set -u
tar xJf bundle.tar.xz
O=/tmp/b; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/b.tgz .); }
B=$PWD/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm,driver_version --format=csv > $O/gpu.txt 2>&1
run() { local name=$1; shift
  timeout -s KILL 60 $B tcsolve solve --seed 1 --backend cuda --json --progress never --warmup --synthetic ${N:-65536} "$@" > $O/$name.json 2> $O/$name.err
  echo "$name rc $?" >> $O/runs.txt; pack; }
for r in 1 2; do
  for l in 0 50 100 25 75; do run g2_lend${l}_$r --gpus 2 --cuda-plan member_lend=$l; done
  run g1_$r
done
N=32768 run g2_32768_lend0 --gpus 2 --cuda-plan member_lend=0
N=32768 run g2_32768_lend50 --gpus 2 --cuda-plan member_lend=50
(cd /tmp && timeout -s KILL 200 $B tcsolve_tests "[multi_gpu]" > $O/tests_multi_gpu.log 2>&1; echo "exit $?" >> $O/tests_multi_gpu.log); pack
python3 - <<'PY' | tee /tmp/b/summary.txt
import json, glob
for f in sorted(glob.glob('/tmp/b/*.json')):
    try: j = json.load(open(f))
    except Exception: print(f, 'bad'); continue
    if 'error' in j: print(f.split('/')[-1], j['error']); continue
    t = j.get('time_s', {}); ph = t.get('phases', {})
    print(f.split('/')[-1], j.get('iterations'), 'total %.1f fact %.1f ref %.1f' % (1e3*t.get('total',0), 1e3*t.get('factorization',0), 1e3*t.get('refinement',0)),
          ' '.join('%s %.1f' % (k, 1e3*ph.get(k,0)) for k in ('swap_rest','swap_rest_lent','bcast','update_wait','panel','update_next','equilibrate','condition')),
          'lend', (j.get('cuda_plan') or {}).get('member_lend'))
PY
pack
tail -4 $O/tests_multi_gpu.log
grep -h "note" $O/g2_lend100_1.json | cut -c1-300
