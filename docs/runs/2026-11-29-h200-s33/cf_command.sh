# Session 33, 1 x H200: the one-launch FP64 LU (kernels::coop_lu). Its [gpu] tests (bitwise its
# reference), then tcsolve_small_lu_bench --coop against cusolverDnDgetrf. Packed into $OUT/coop.tgz.
# Run: run(command="bash bundle_s33_coop.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_s33_coop.sh"], timeout_s=400)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/coop; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/coop.tgz .); }
(cd /tmp && timeout -s KILL 120 $R/bundle/run tcsolve_tests "coop_lu*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); tail -4 $O/tests.log; pack
timeout -s KILL 200 $R/bundle/run tcsolve_small_lu_bench --coop 32 64 128 200 256 384 512 768 1024 1536 > $O/bench.txt 2>&1; cat $O/bench.txt; pack
echo "elapsed $SECONDS"
