# Session 36 call e (1 x H200): issue 35's recorded set on the tree with the one-launch residual
# (kernels::small_residual, --cuda-plan residuals): its [gpu] tests; the residual's phase per n
# with residuals=kernel|cublas; compare --variants auto per n from 200 to 4096 (3 rounds), on the
# committed real systems (3 rounds), on U(-1,1) at 16384 and 32768 and randsvd cond 1e6 and 1e10
# at 16384 (with --pivoting beam beside at 16384). Everything into $OUT/e.tgz after each part.
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/e; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/e.tgz .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 100 $T tcsolve_tests "small_residual*,the FP64 path*,lu_apply*,fp64_solves*,residuals*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); pack
tail -3 $O/tests.log
D=/tmp/sys; mkdir -p $D
for n in 200 256 384 512 768 1024 1536 2048 2560 3072 4096; do
  $T tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
done
for n in 200 512 768 1024 2048; do
  for p in kernel cublas kernel cublas; do
    timeout -s KILL 60 $T tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --cuda-plan residuals=$p --json --output /tmp/x.h5 --force > $O/json/res_${n}_$p.$RANDOM.json 2> /dev/null
  done
done; pack
for n in 200 256 384 512 768 1024 1536 2048 2560 3072 4096; do
  for rep in 1 2 3; do
    timeout -s KILL 60 $T tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --json > $O/json/c_${n}_$rep.json 2> /dev/null
  done
done; pack
for name in bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg; do
  for rep in 1 2 3; do
    timeout -s KILL 60 $T tcsolve compare --input $R/bundle/bin/testdata/inputs/$name.h5 --backend cuda --variants auto --json > $O/json/r_${name}_$rep.json 2> /dev/null
  done
done; pack
echo "small and real done at $SECONDS s"
$T tcsolve generate --n 16384 --mode random --seed 1 --backend cuda --output $D/random16384.h5 --force > /dev/null
timeout -s KILL 90 $T tcsolve compare --input $D/random16384.h5 --backend cuda --variants auto --json > $O/json/big_random_16384.json 2> $O/big_random_16384.err; pack
timeout -s KILL 90 $T tcsolve compare --input $D/random16384.h5 --backend cuda --variants auto --pivoting beam --json > $O/json/big_random_16384_beam.json 2> $O/big_random_16384_beam.err; pack
for c in 1e6 1e10; do
  timeout -s KILL 90 $T tcsolve generate --n 16384 --mode geometric --cond $c --seed 1 --backend cuda --output $D/randsvd16384_$c.h5 --force > $O/generate_$c.log 2>&1
  timeout -s KILL 90 $T tcsolve compare --input $D/randsvd16384_$c.h5 --backend cuda --variants auto --json > $O/json/big_randsvd_16384_$c.json 2> $O/big_randsvd_16384_$c.err; pack
done
rm -f $D/randsvd16384_* $D/random16384.h5
timeout -s KILL 120 $T tcsolve generate --n 32768 --mode random --seed 1 --backend cuda --output $D/random32768.h5 --force > /dev/null 2>&1
timeout -s KILL 120 $T tcsolve compare --input $D/random32768.h5 --backend cuda --variants auto --json > $O/json/big_random_32768.json 2> $O/big_random_32768.err; pack
echo "all done at $SECONDS s"
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
                cp=r.get('cuda_plan') or {}; plan=(cp.get('fp64_solves'),cp.get('residuals'))
            if r.get('method')=='cusolver-dgetrf': d.append(r['time_s']['total']*1e3)
    m=lambda v: st.median(v) if v else float('nan')
    return m(a),m(d),info,plan,n
print("n | auto ms | (iterations, fp64_lu, converged) | (fp64_solves, residuals) | dgetrf+getrs ms | auto / dgetrf+getrs")
for n in (200,256,384,512,768,1024,1536,2048,2560,3072,4096):
    a,d,info,plan,_=comp(f"{O}/json/c_{n}")
    print(f"{n} | {a:.3f} | {info} | {plan} | {d:.3f} | {a/d:.3f}")
print()
print("system | n | auto ms | (iterations, fp64_lu, converged) | (fp64_solves, residuals) | dgetrf+getrs ms | auto / dgetrf+getrs")
for name in "bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg".split():
    a,d,info,plan,n=comp(f"{O}/json/r_{name}")
    print(f"{name} | {n} | {a:.3f} | {info} | {plan} | {d:.3f} | {a/d:.3f}")
print()
print("residual phase (us) and total (us), solve --warmup, FP64 path")
for f in sorted(glob.glob(f"{O}/json/res_*.json")):
    j=load(f)
    if not j: print(f, 'bad'); continue
    ph=dict(j['time_s'].get('phases',{}))
    print(f.split('/')[-1].rsplit('.',2)[0], 'residual', round(ph.get('residual',0)*1e6,1), 'total', round(j['time_s']['total']*1e6,1), 'it', j['iterations'], (j.get('cuda_plan') or {}).get('residuals'))
print()
for f in sorted(glob.glob(f"{O}/json/big_*.json")):
    j=load(f)
    if not j: print(f, 'bad'); continue
    for r in j['results']:
        t=r['time_s']
        print(f.split('/')[-1], r.get('variant') or r.get('method'), 'piv', r.get('pivoting'), 'mods', r.get('modifications'), 'growth', r.get('growth'), 'it', r.get('iterations'), 'conv', r.get('converged'), 'fb', r.get('fallback'), 'be %.2g fe %.2g' % (r.get('backward_error') or 0, r.get('forward_error') or 0), 'total %.2f ms' % (t['total']*1e3), 'cond_est', r.get('condition_estimate'))
PY
pack
cat $O/summary.txt
