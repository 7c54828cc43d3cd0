# Session 35, 1 x H200, call g: lu_apply with the update's entries loaded a step ahead (384 threads); the defaults (fp64_solves automatic: lu_apply below n =
# 512, dgetrs from there): `compare --variants auto` per n (REPS rounds) and on the committed real
# systems, host_times at three n, and the FP64 path's [gpu] tests.
# Run: run(command="bash bundle_s35_g.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_s35_f.sh"], timeout_s=400)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/s35g; rm -rf $O; mkdir -p $O/json
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 100 $R/bundle/run tcsolve_tests "lu_apply*,the FP64 path*,fp64_solves*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log)
tail -3 $O/tests.log
timeout -s KILL 60 $R/bundle/run tcsolve_small_lu_bench --apply --reps 21 32 64 128 200 256 384 512 768 1024 > $O/apply_bench.txt 2>&1
cat $O/apply_bench.txt
D=/tmp/sys; mkdir -p $D
for n in 200 256 384 512 768 1024 1536 2048 2560 3072 4096; do
  $R/bundle/run tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
  for rep in 1 2 3; do
    timeout -s KILL 60 $R/bundle/run tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --json > $O/json/c_${n}_$rep.json 2> /dev/null
  done
done
for n in 200 384 512; do
  timeout -s KILL 60 $R/bundle/run tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --cuda-plan host_times=on --json --output /tmp/x.h5 --force > $O/json/h_${n}.json 2> /dev/null
done
for name in bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg; do
  for rep in 1 2 3; do
    timeout -s KILL 60 $R/bundle/run tcsolve compare --input $R/bundle/bin/testdata/inputs/$name.h5 --backend cuda --variants auto --json > $O/json/r_${name}_$rep.json 2> /dev/null
  done
done
python3 - $O > $O/summary.txt <<'PY'
import json,sys,glob,statistics as st
O=sys.argv[1]
def load(f):
    try: return json.load(open(f))
    except Exception: return None
def comp(prefix):
    a=[];d=[];info=None;plan=None;n=0
    for f in sorted(glob.glob(prefix+'_*.json')):
        j=load(f)
        if not j: continue
        n=j['n']
        for r in j['results']:
            if r.get('variant')=='auto':
                a.append(r['time_s']['total']*1e3); info=(r['iterations'],r['fp64_lu'],r['converged'])
                plan=(r.get('cuda_plan') or {}).get('fp64_solves')
            if r.get('method')=='cusolver-dgetrf': d.append(r['time_s']['total']*1e3)
    m=lambda v: st.median(v) if v else float('nan')
    return m(a),m(d),info,plan,n
print("n | auto ms | (iterations, fp64_lu, converged) | fp64_solves | dgetrf+getrs ms | auto / dgetrf+getrs")
for n in (200,256,384,512,768,1024,1536,2048,2560,3072,4096):
    a,d,info,plan,_=comp(f"{O}/json/c_{n}")
    print(f"{n} | {a:.3f} | {info} | {plan} | {d:.3f} | {a/d:.3f}")
print()
print("system | n | auto ms | (iterations, fp64_lu, converged) | fp64_solves | dgetrf+getrs ms | auto / dgetrf+getrs")
for name in "bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg".split():
    a,d,info,plan,n=comp(f"{O}/json/r_{name}")
    print(f"{name} | {n} | {a:.3f} | {info} | {plan} | {d:.3f} | {a/d:.3f}")
print()
for n in (200,384,512):
    j=load(f"{O}/json/h_{n}.json")
    if j: print(n, 'total us', round(j['time_s']['total']*1e6), {k:round(v*1e6,1) for k,v in j['time_s']['phases'].items()})
PY
cat $O/summary.txt
(cd $O && tar czf $OUT/s35_g.tgz .)
echo "elapsed $SECONDS"
