# Session 39 call f (1 x H200), the final library code (trsm_leaves default cublas): the
# diagonal-block solves' [gpu] tests first, then the whole [gpu] suite.
# Run: run(command="bash docs/runs/2026-11-30-h200-s39/f_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/f; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/f.tgz .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 120 $T tcsolve_tests -# "[#test_trsm_leaf_cuda]" > $O/tests_leaf.log 2>&1; echo "exit $?" >> $O/tests_leaf.log)
tail -4 $O/tests_leaf.log; pack
(cd /tmp && timeout -s KILL $((583 - SECONDS)) $T tcsolve_tests "[gpu]" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); pack
grep -E "^(test cases|assertions)|FAILED|exit" $O/tests.log | tail -8
echo "elapsed $SECONDS"
