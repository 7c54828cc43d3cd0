# Session 34, 1 x H200: every [gpu] test on the final build.
# Run: run(command="bash bundle_s34_tests.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_s34_tests.sh"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/t34; rm -rf $O; mkdir -p $O
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 560 $R/bundle/run tcsolve_tests "[gpu]" -d yes > $O/tests_gpu.log 2>&1; echo "exit $?" >> $O/tests_gpu.log)
tail -4 $O/tests_gpu.log; grep -c "FAILED" $O/tests_gpu.log
(cd $O && tar czf $OUT/t34_tests.tgz .)
echo "elapsed $SECONDS"
