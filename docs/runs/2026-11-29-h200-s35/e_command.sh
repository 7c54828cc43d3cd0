# Session 35, 1 x H200, call e: the FP64 LU's solves in one launch (lu_apply.cu, warp-specialised, the diagonal blocks by groups of 4 rows, fp64_solves=kernel,
# the default up to n = 4000) against dgetrs (fp64_solves=dgetrs) in the same build. Part tests:
# lu_apply's [gpu] tests and the FP64 path's; part small: per n, REPS alternating rounds of
# `compare --variants auto` with each, `solve --warmup --fp64-below 1000000` (FP64 LU, kernel) and
# --fp64-below 0 (mixed); host_times at a few n; the committed real systems both ways.
# Run: run(command="bash bundle_s35_e.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_s35_a.sh"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/s35; rm -rf $O; mkdir -p $O/json
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 150 $R/bundle/run tcsolve_tests "lu_apply*,the FP64 path*,the FP64 fallback*,the device equilibration*,cuda condition estimate auto*,an exactly singular*,tcsolve compare --backend cuda*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log)
tail -3 $O/tests.log
timeout -s KILL 100 $R/bundle/run tcsolve_small_lu_bench --apply --reps 21 32 64 128 200 256 384 512 768 1024 > $O/apply_bench.txt 2>&1
cat $O/apply_bench.txt
D=/tmp/sys; mkdir -p $D
for n in ${NS:-200 256 384 512 768 1024 1536 2048 2560 3072 4096}; do
  $R/bundle/run tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
  for rep in ${REPS:-1 2 3}; do
    for t in dgetrs kernel; do
      timeout -s KILL 60 $R/bundle/run tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --cuda-plan fp64_solves=$t --json > $O/json/c_${t}_${n}_$rep.json 2> /dev/null
    done
    for fb in 1000000 0; do
      timeout -s KILL 60 $R/bundle/run tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --fp64-below $fb --json --output /tmp/x.h5 --force > $O/json/s_${fb}_${n}_$rep.json 2> /dev/null
    done
    if [ $rep = 1 ]; then for t in dgetrs kernel; do
      timeout -s KILL 60 $R/bundle/run tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --fp64-below 1000000 --cuda-plan host_times=on,fp64_solves=$t --json --output /tmp/x.h5 --force > $O/json/h_${t}_${n}.json 2> /dev/null
    done; fi
  done
done
for name in bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg; do
  for rep in 1 2 3; do
    for t in dgetrs kernel; do
      timeout -s KILL 60 $R/bundle/run tcsolve compare --input $R/bundle/bin/testdata/inputs/$name.h5 --backend cuda --variants auto --cuda-plan fp64_solves=$t --json > $O/json/r_${t}_${name}_$rep.json 2> /dev/null
    done
  done
done
python3 - $O > $O/summary.txt <<'PY'
import json,sys,glob,statistics as st
O=sys.argv[1]
def load(f):
    try: return json.load(open(f))
    except Exception: return None
def comp(prefix):
    a=[];d=[];it=[];plan=None
    for f in sorted(glob.glob(prefix+'_*.json')):
        j=load(f)
        if not j: continue
        for r in j['results']:
            if r.get('variant')=='auto':
                a.append(r['time_s']['total']*1e3); it.append((r['iterations'],r['fp64_lu'],r['converged']))
                plan=(r.get('cuda_plan') or {}).get('fp64_solves')
            if r.get('method')=='cusolver-dgetrf': d.append(r['time_s']['total']*1e3)
    m=lambda v: st.median(v) if v else float('nan')
    return m(a),m(d),it[-1] if it else None,plan
ns=sorted({int(f.split('_')[-2]) for f in glob.glob(O+'/json/c_kernel_*.json')})
print("n | dgetrs: auto ms | kernel: auto ms (it, fp64, conv) plan | dgetrf+getrs ms (dgetrs run, kernel run) | FP64 LU ms | mixed ms | dgetrs/dg | kernel/dg")
for n in ns:
    o=comp(f"{O}/json/c_dgetrs_{n}"); k=comp(f"{O}/json/c_kernel_{n}")
    s={}
    for fb in ('1000000','0'):
        v=[load(f) for f in glob.glob(f"{O}/json/s_{fb}_{n}_*.json")]
        v=[j['time_s']['total']*1e3 for j in v if j]
        s[fb]=st.median(v) if v else float('nan')
    print(f"{n} | {o[0]:.3f} | {k[0]:.3f} {k[2]} {k[3]} | {o[1]:.3f}, {k[1]:.3f} | {s['1000000']:.3f} | {s['0']:.3f} | {o[0]/o[1]:.3f} | {k[0]/k[1]:.3f}")
print()
print("system | n | dgetrs: auto ms | kernel: auto ms (it, fp64, conv) | dgetrf+getrs ms (both runs) | dgetrs/dg | kernel/dg")
for name in "bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg".split():
    o=comp(f"{O}/json/r_dgetrs_{name}"); k=comp(f"{O}/json/r_kernel_{name}")
    print(f"{name} | {o[0]:.3f} | {k[0]:.3f} {k[2]} | {o[1]:.3f}, {k[1]:.3f} | {o[0]/o[1]:.3f} | {k[0]/k[1]:.3f}")
print()
for f in sorted(glob.glob(O+'/json/h_*.json')):
    j=load(f)
    if j: print(f.split('/')[-1], json.dumps({k:round(v*1e6,1) for k,v in j['time_s'].items() if isinstance(v,(int,float))}), 'phases', json.dumps({k:round(v*1e6,1) for k,v in (j.get('phases_s') or j.get('phases') or {}).items()}))
PY
cat $O/summary.txt
(cd $O && tar czf $OUT/s35_e.tgz .)
echo "elapsed $SECONDS"
