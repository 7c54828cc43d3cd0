# Session 37 call a (1 x H200). Part 1 (issue 35): the mixed and the FP64 paths at n = 2048,
# 2560, 3072 with their phases (solve --warmup, --cuda-plan host_times=on), and compare --variants
# auto beside dgetrf+getrs, 3 rounds. Part 2 (issue 34): the TransformerEncoder program at the
# issue's sizes: models.py --only encoder --encoder-tokens B x S for several B x S (the issue gives
# 4 layers of 1024, 16 heads, 4096, and 61.9 ms plain with 97.2% of the flops intercepted, not the
# tokens), plain, preloaded and logged.
# Run: run(command="bash docs/runs/2026-11-29-h200-s37/a_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/a; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/a.tgz --exclude='*.jsonl' .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
D=/tmp/sys; mkdir -p $D
for n in 2048 2560 3072; do
  $T tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
done
for rep in 1 2 3; do
  for n in 2048 2560 3072; do
    for fb in 0 1000000; do
      timeout -s KILL 60 $T tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --fp64-below $fb --cuda-plan host_times=on --json --output /tmp/x.h5 --force > $O/json/s_${n}_fb${fb}_$rep.json 2> /dev/null
    done
    timeout -s KILL 60 $T tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --json > $O/json/c_${n}_$rep.json 2> /dev/null
  done
done; pack
echo "part 1 done at $SECONDS s"
for tok in 64x128 32x256 16x512; do
  timeout -s KILL 150 python3 tests/hook/gpu/models.py --hook $R/bundle/hook/libtcsolve_cublas.so --out $O/enc_$tok --only encoder --encoder-tokens $tok > $O/enc_$tok.txt 2>&1
  echo "exit $?" >> $O/enc_$tok.txt; pack
  echo "encoder $tok done at $SECONDS s"; grep -A3 "^| program" $O/enc_$tok/results.md | head -5
done
python3 - $O > $O/summary.txt <<'PY'
import json,sys,glob,statistics as st
O=sys.argv[1]
def load(f):
    try: return json.load(open(f))
    except Exception: return None
for n in (2048,2560,3072):
    for fb in (0,1000000):
        for f in sorted(glob.glob(f"{O}/json/s_{n}_fb{fb}_*.json")):
            j=load(f)
            if not j: print(f,'bad'); continue
            ph=j['time_s'].get('phases',{})
            print(n,'fp64' if fb else 'mixed','total %.3f ms'%(j['time_s']['total']*1e3),'it',j['iterations'],
                  ' '.join('%s=%.3f'%(k,v*1e3) for k,v in (ph.items() if isinstance(ph,dict) else ph)))
    a=[];d=[]
    for f in sorted(glob.glob(f"{O}/json/c_{n}_*.json")):
        j=load(f)
        if not j: continue
        for r in j['results']:
            if r.get('variant')=='auto': a.append(r['time_s']['total']*1e3)
            if r.get('method')=='cusolver-dgetrf': d.append(r['time_s']['total']*1e3)
    if a and d: print(n,'compare auto',['%.3f'%x for x in a],'dgetrf+getrs',['%.3f'%x for x in d],'ratio %.3f'%(st.median(a)/st.median(d)))
PY
cat $O/summary.txt; pack
echo "all done at $SECONDS s"
