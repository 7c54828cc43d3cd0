# Session 37 call g (1 x H200), tree 2c5751e: the [gpu] tests that run the FP64 LU's solves
# (the FP64 path of small systems, the FP64 fallback, factorize, the C API, compare, the
# condition estimate, the distributed FP64 LU on one GPU member) on the final build.
# Run: run(command="bash docs/runs/2026-11-29-h200-s37/g_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=330)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/g; rm -rf $O; mkdir -p $O
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 290 $R/bundle/run tcsolve_tests "cuda fp64_below*,cuda: the FP64 fallback*,the cuda solver: several*,the FP64 path*,factorize on cuda*,the C API's tcsolveDgesv*,tcsolve compare --backend cuda*,cuda condition estimate auto*,cuda: the condition estimate*,cuda: rows scaled*,cuda: the subnormal*,the FP64 LU on GPU members*,pivots_to_permutation*,lu_apply*,fp64_solves*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log)
grep -c "^-----" $O/tests.log; tail -4 $O/tests.log
(cd $O && tar czf $OUT/g.tgz .)
echo "elapsed $SECONDS"
