# Session 37 call d (1 x H200): fp64_solves = trsm (dgetrf's interchanges composed once, two
# cublasDtrsm per solve). (1) its [gpu] tests and the FP64 path's; (2) solve --warmup on the FP64
# path per n with fp64_solves = kernel and trsm (the crossover), and the FP64 (trsm) and mixed
# paths at 2048-4096 (fp64_below); (3) compare --variants auto per n from 200 to 4096 and on the
# committed real systems, 3 rounds, beside dgetrf+getrs.
# Run: run(command="bash docs/runs/2026-11-29-h200-s37/d_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/d; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/d.tgz .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 150 $T tcsolve_tests "pivots_to_permutation*,the FP64 path*,lu_apply*,fp64_solves*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); pack
tail -3 $O/tests.log
(cd /tmp && timeout -s KILL 100 $T tcsolve_small_lu_bench --apply 256 384 512 768 1024 2560 > $O/apply_bench.txt 2>&1); cat $O/apply_bench.txt; pack
D=/tmp/sys; mkdir -p $D
for n in 200 256 384 512 768 1024 1536 2048 2560 3072 4096; do
  $T tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
done
for rep in 1 2 3; do
  for n in 256 384 512 768 1024; do
    for p in kernel trsm; do
      timeout -s KILL 60 $T tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --fp64-below 1000000 --cuda-plan fp64_solves=$p --json --output /tmp/x.h5 --force > $O/json/k_${n}_${p}_$rep.json 2> /dev/null
    done
  done
  for n in 2048 2560 3072 4096; do
    for fb in 0 1000000; do
      timeout -s KILL 60 $T tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --fp64-below $fb --json --output /tmp/x.h5 --force > $O/json/s_${n}_fb${fb}_$rep.json 2> /dev/null
    done
  done
done; pack
echo "solve parts done at $SECONDS s"
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
cat $O/summary.txt
