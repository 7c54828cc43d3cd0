# Session 38 call a (1 x H200), issue 35's small systems: (1) the [gpu] tests of the new
# one-cluster equilibration and one-launch residual, the FP64 path on every fp64_solves and
# residuals, lu_apply and the permutation; (2) tcsolve_small_lu_bench --fixed: the equilibration in
# one cluster / one cooperative launch / kernel by kernel and the residual by the kernel / by
# cuBLAS, device times; (3) the FP64 path's phases at n = 200 and 512 (solve --warmup,
# host_times=on) with residuals=kernel and =cublas; (4) compare --variants auto per n from 200 to
# 4096 and on the committed real systems, 3 rounds, beside dgetrf+getrs.
# Run: run(command="bash docs/runs/2026-11-29-h200-s38/a_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/a; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/a.tgz --exclude='*.jsonl' .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 150 $T tcsolve_tests "*equilibration*,small_residual*,the FP64 path*,lu_apply*,pivots_to_permutation*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); pack
tail -3 $O/tests.log
timeout -s KILL 60 $T tcsolve_small_lu_bench --fixed 200 256 384 512 768 1000 1023 > $O/fixed_bench.txt 2>&1; pack
cat $O/fixed_bench.txt
D=/tmp/sys; mkdir -p $D
for n in 200 256 384 512 768 1024 1536 2048 2560 3072 4096; do
  $T tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
done
for rep in 1 2 3; do
  for n in 200 512; do
    for res in kernel cublas; do
      timeout -s KILL 60 $T tcsolve solve --input $D/s$n.h5 --backend cuda --warmup --cuda-plan host_times=on,residuals=$res --json --output /tmp/x.h5 --force > $O/json/p_${n}_${res}_$rep.json 2> /dev/null
    done
  done
done; pack
for rep in 1 2 3; do
  for n in 200 256 384 512 768 1024 1536 2048 2560 3072 4096; do
    timeout -s KILL 60 $T tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --json > $O/json/c_${n}_$rep.json 2> /dev/null
  done
  for name in bfwa62 west0067 randsvd_n256_c1e4 olm500 random_n512 gr_900_900_crg; do
    timeout -s KILL 60 $T tcsolve compare --input $R/bundle/bin/testdata/inputs/$name.h5 --backend cuda --variants auto --json > $O/json/r_${name}_$rep.json 2> /dev/null
  done
done; pack
echo "compare done at $SECONDS s"
python3 $R/docs/runs/2026-11-29-h200-s38/a_summary.py $O > $O/summary.txt 2>&1; pack
cat $O/summary.txt
echo "elapsed $SECONDS"
