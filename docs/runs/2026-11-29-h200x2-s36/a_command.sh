# Session 36 call a (2 x H200): issue 33's recorded set on main (bundle = this tree).
# Order: the GPU tests on grids (P x Q ran as 1 x PQ), the C API on GPU ranks, the compare pairs
# at 65536 and 32768, mpirun -np 2 against --gpus 2 at 65536, the largest n, a second 65536 round.
# Everything packed into $OUT/a.tgz after each part (the device returns 8 files at most).
set -u
tar xJf bundle.tar.xz
O=/tmp/a; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/a.tgz --exclude='*.h5' .); }
date -u > $O/start.txt
(cd /tmp && timeout -s KILL 150 $OLDPWD/bundle/run tcsolve_tests "[multi_gpu]" > $O/tests_multi_gpu.log 2>&1; echo "exit $?" >> $O/tests_multi_gpu.log); pack
PARTS="capi" scripts/bench-solver-multi-gpu $O/capi; pack
export RUN_LIMIT=120
PARTS="scale" SCALE_N="65536 32768" scripts/bench-solver-multi-gpu $O/r1; pack
PARTS="mpi" MPI_N="65536" scripts/bench-solver-multi-gpu $O/mpi; pack
PARTS="big" BIG_N=147456 RUN_LIMIT=100 scripts/bench-solver-multi-gpu $O/big; pack
grep -q "big_147456: conv True" $O/big/summary.txt || { PARTS="big" BIG_N=139264 RUN_LIMIT=90 scripts/bench-solver-multi-gpu $O/big2; pack; }
PARTS="scale" SCALE_N="65536" scripts/bench-solver-multi-gpu $O/r2; pack
date -u > $O/end.txt; pack
tail -4 $O/tests_multi_gpu.log
cat $O/*/summary.txt | grep -E "total_ms|exit|bitwise|error|test_capi" | cut -c1-200
