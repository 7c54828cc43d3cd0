# Session 38 call f (1 x H200), tree e09684b: tcsolve_small_lu_bench --fixed with the host's cost per
# call of each equilibration and residual way (the cluster launch's host cost, for the next step
# at n = 200), twice.
# Run: run(command="bash docs/runs/2026-11-29-h200-s38/f_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=120)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/f; rm -rf $O; mkdir -p $O
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
for rep in 1 2; do timeout -s KILL 50 $R/bundle/run tcsolve_small_lu_bench --fixed 200 256 384 512 768 > $O/fixed_bench_$rep.txt 2>&1; done
cat $O/fixed_bench_*.txt
(cd $O && tar czf $OUT/f.tgz .)
echo "elapsed $SECONDS"
