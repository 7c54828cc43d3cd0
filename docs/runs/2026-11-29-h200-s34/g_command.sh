# Session 34, 1 x H200, call g: the one-launch equilibration only below n = 1024. The FP64 path's
# and equilibration's [gpu] tests, then `solve --warmup --fp64-below 1000000` three times per n
# (the "equilibrate" phase and the total, medians).
# Run: run(command="bash bundle_s34_g.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_s34_g.sh"], timeout_s=200)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/g34; rm -rf $O; mkdir -p $O/json
(cd /tmp && timeout -s KILL 80 $R/bundle/run tcsolve_tests "the FP64 path*,the device equilibration*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log)
tail -3 $O/tests.log
D=/tmp/sys; mkdir -p $D
for n in 200 512 768 1024 2048; do
  $R/bundle/run tcsolve generate --n $n --mode random --seed 1 --output $D/s$n.h5 --force > /dev/null
  for rep in 1 2 3; do
    timeout -s KILL 30 $R/bundle/run tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --fp64-below 1000000 --json --output /tmp/x.h5 --force > $O/json/s_${n}_$rep.json 2> /dev/null
  done
done
python3 - $O > $O/summary.txt <<'PY'
import json,sys,statistics as st
O=sys.argv[1]
print("n equilibrate_us total_ms (medians of 3)")
for n in (200,512,768,1024,2048):
    j=[json.load(open(f"{O}/json/s_{n}_{r}.json")) for r in (1,2,3)]
    print(n, round(st.median(x['time_s']['phases']['equilibrate']*1e6 for x in j),1), round(st.median(x['time_s']['total']*1e3 for x in j),3))
PY
cat $O/summary.txt
(cd $O && tar czf $OUT/g34.tgz tests.log summary.txt)
echo "elapsed $SECONDS"
