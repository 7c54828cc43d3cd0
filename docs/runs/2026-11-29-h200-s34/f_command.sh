# Session 34, 1 x H200: the small systems' FP64 path without allocations or waits (new) against
# 8fbed25's build (old). Part tests: the solver's [gpu] tests of the FP64 path; part small: per n,
# REPS (default 3) alternating rounds of `compare --variants auto` (old, new) and `solve --warmup` with
# --fp64-below 1000000 (FP64 LU) and 0 (mixed) on the new build.
# Run: run(command="bash bundle_s34_small.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_old.tar.xz","bundle_s34_small.sh"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle old; tar xJf bundle.tar.xz; mkdir old; tar -C old -xJf bundle_old.tar.xz
O=/tmp/s34; rm -rf $O; mkdir -p $O/json
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 200 $R/bundle/run tcsolve_tests "the FP64 path*,the device equilibration*,the cuda LU's panel-stream products*,the cuda LU equilibrates*,cuda condition estimate auto*,an exactly singular*,tcsolve compare --backend cuda*,the cuda solver: several*,factorize on cuda*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log)
tail -3 $O/tests.log
D=/tmp/sys; mkdir -p $D
for n in ${NS:-200 256 384 512 768 1024 1536 2048 2560 3072 4096}; do
  $R/bundle/run tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
  for rep in ${REPS:-1 2 3}; do
    for t in old new; do
      B=$R/bundle; [ $t = old ] && B=$R/old/bundle
      timeout -s KILL 60 $B/run tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --json > $O/json/c_${t}_${n}_$rep.json 2> /dev/null
    done
    for fb in 1000000 0; do
      timeout -s KILL 60 $R/bundle/run tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --fp64-below $fb --json --output /tmp/x.h5 --force > $O/json/s_${fb}_${n}_$rep.json 2> /dev/null
    done
    [ $rep = 1 ] && timeout -s KILL 60 $R/bundle/run tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --fp64-below 1000000 --cuda-plan host_times=on --json --output /tmp/x.h5 --force > $O/json/h_1000000_${n}_$rep.json 2> /dev/null
    [ $n -ge 1024 ] && timeout -s KILL 60 $R/bundle/run tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --fp64-below 1000000 --condition-estimate never --json --output /tmp/x.h5 --force > $O/json/n_1000000_${n}_$rep.json 2> /dev/null
  done
done
for name in bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg; do
  for rep in 1 2 3; do
    for t in old new; do
      B=$R/bundle; [ $t = old ] && B=$R/old/bundle
      timeout -s KILL 60 $B/run tcsolve compare --input $R/bundle/bin/testdata/inputs/$name.h5 --backend cuda --variants auto --json > $O/json/r_${t}_${name}_$rep.json 2> /dev/null
    done
  done
done
python3 - $O > $O/real_summary.txt <<'PY'
import json,sys,statistics as st
O=sys.argv[1]
print("system n old:auto_ms new:auto_ms(it,fp64_lu) dgetrf+getrs_ms(old,new) old/dg new/dg")
for name in "bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg".split():
    row={}
    for t in ('old','new'):
        a=[];d=[];info=None;n=0
        for rep in (1,2,3):
            try: j=json.load(open(f"{O}/json/r_{t}_{name}_{rep}.json"))
            except Exception: continue
            n=j['n']
            for r in j['results']:
                if r.get('variant')=='auto': a.append(r['time_s']['total']*1e3); info=(r['iterations'],r['fp64_lu'],r['converged'])
                if r.get('method')=='cusolver-dgetrf': d.append(r['time_s']['total']*1e3)
        row[t]=(st.median(a) if a else float('nan'), st.median(d) if d else float('nan'), info, n)
    o,nw=row['old'],row['new']
    print(f"{name} {nw[3]} {o[0]:.3f} {nw[0]:.3f}{nw[2]} {o[1]:.3f},{nw[1]:.3f} {o[0]/o[1]:.2f} {nw[0]/nw[1]:.2f}")
PY
cat $O/real_summary.txt
python3 - $O > $O/summary.txt <<'PY'
import json,sys,glob,statistics as st
O=sys.argv[1]
REPS=sorted({int(f.split('_')[-1][:-5]) for f in glob.glob(O+'/json/c_new_*.json')})
def load(f):
    try: return json.load(open(f))
    except Exception: return None
ns=sorted({int(f.split('_')[-2]) for f in glob.glob(O+'/json/c_new_*.json')})
print("n  old:auto_ms(it) new:auto_ms(it) dgetrf+getrs_ms(old,new) new_fp64_ms(it) new_mixed_ms(it) old/dg new/dg")
for n in ns:
    row={}
    for t in ('old','new'):
        a=[];d=[];it=[]
        for rep in REPS:
            j=load(f"{O}/json/c_{t}_{n}_{rep}.json")
            if not j: continue
            for r in j['results']:
                if r.get('variant')=='auto': a.append(r['time_s']['total']*1e3); it.append(r['iterations'])
                if r.get('method')=='cusolver-dgetrf': d.append(r['time_s']['total']*1e3)
        row[t]=(st.median(a) if a else float('nan'), max(it) if it else -1, st.median(d) if d else float('nan'))
    s={}
    for fb in ('1000000','0'):
        a=[];it=[]
        for rep in REPS:
            j=load(f"{O}/json/s_{fb}_{n}_{rep}.json")
            if j: a.append(j['time_s']['total']*1e3); it.append(j['iterations'])
        s[fb]=(st.median(a) if a else float('nan'), max(it) if it else -1)
    nv=[load(f"{O}/json/n_1000000_{n}_{rep}.json") for rep in REPS]
    nv=[j['time_s']['total']*1e3 for j in nv if j]
    s['never']=(st.median(nv) if nv else float('nan'),)
    print(f"{n} never_fp64 {s['never'][0]:.3f}")
    print(f"{n} {row['old'][0]:.3f}({row['old'][1]}) {row['new'][0]:.3f}({row['new'][1]}) {row['old'][2]:.3f},{row['new'][2]:.3f} {s['1000000'][0]:.3f}({s['1000000'][1]}) {s['0'][0]:.3f}({s['0'][1]}) {row['old'][0]/row['old'][2]:.2f} {row['new'][0]/row['new'][2]:.2f}")
PY
cat $O/summary.txt
for f in $O/json/h_1000000_200_1.json $O/json/h_1000000_512_1.json $O/json/h_1000000_1024_1.json $O/json/h_1000000_2048_1.json; do python3 -c "import json,sys;d=json.load(open('$f'));print('$f'.split('/')[-1],json.dumps(d['time_s']))"; done
(cd $O && tar czf $OUT/s34_small.tgz .)
echo "elapsed $SECONDS"
