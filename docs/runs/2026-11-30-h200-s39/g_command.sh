# Session 39 call g (1 x H200), the review's commit (the tests' shared random_floats helper, a
# static_assert in blocked_lu.cpp): the [gpu] tests of the files it touched, the diagonal-block
# kernels and the members' sweep kernels.
# Run: run(command="bash docs/runs/2026-11-30-h200-s39/g_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=300)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=$OUT
(cd /tmp && timeout -s KILL 240 $R/bundle/run tcsolve_tests -# "[#test_trsm_leaf_cuda],[#test_fan_in_kernels_cuda]" > $O/g_tests.log 2>&1; echo "exit $?" >> $O/g_tests.log)
tail -4 $O/g_tests.log
