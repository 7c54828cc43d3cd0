# Session 37 call e (1 x H200), tree 3c2c5a7: (1) the FP64 path's and its solves' [gpu] tests;
# (2) issue 35's small systems: compare --variants auto per n from 200 to 4096 and on the committed
# real systems, 3 rounds each, beside dgetrf+getrs (the defaults: the FP64 path below 3072, its
# solves by the kernel below 512 and by cublasDtrsm from there); (3) the drop-in's checks a-i
# (scripts/test-hook-gpu: graph replay and two streams bitwise among them).
# Run: run(command="bash docs/runs/2026-11-29-h200-s37/e_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/e; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/e.tgz --exclude='*.jsonl' .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 150 $T tcsolve_tests "pivots_to_permutation*,the FP64 path*,lu_apply*,fp64_solves*,*fp64_below*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); pack
tail -3 $O/tests.log
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
python3 $R/docs/runs/2026-11-29-h200-s37/d_summary.py $O > $O/summary.txt 2>&1; pack
sed -n '/compare/,$p' $O/summary.txt
timeout -s KILL $((585 - SECONDS)) scripts/test-hook-gpu $R/bundle/hook/libtcsolve_cublas.so $O/hook > $O/hook.txt 2>&1; echo "hook exit $?" >> $O/hook.txt; pack
tail -25 $O/hook.txt | cut -c1-200
echo "elapsed $SECONDS"
