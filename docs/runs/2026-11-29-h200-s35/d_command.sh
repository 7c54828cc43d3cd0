# Session 35, 1 x H200, call d: lu_apply with the next tile fetched into registers and stored after
# the barrier, alone against dgetrs (tcsolve_small_lu_bench --apply), and its [gpu] tests.
# Run: run(command="bash bundle_s35_d.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_s35_d.sh"], timeout_s=200)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/s35d; rm -rf $O; mkdir -p $O
(cd /tmp && timeout -s KILL 100 $R/bundle/run tcsolve_tests "lu_apply*" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log)
tail -3 $O/tests.log
timeout -s KILL 100 $R/bundle/run tcsolve_small_lu_bench --apply --reps 21 32 64 96 128 200 256 384 512 768 1024 > $O/apply_bench.txt 2>&1
cat $O/apply_bench.txt
(cd $O && tar czf $OUT/s35_d.tgz .)
echo "elapsed $SECONDS"
