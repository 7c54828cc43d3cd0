# Session 36 call d (2 x H200, a fresh machine): the compare pair at n = 65536 twice (a third
# machine sample for issue 33's 0.6x), then tcsolve_tests "[gpu]" on the final tree (main).
set -u
tar xJf bundle.tar.xz
O=/tmp/d; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/d.tgz --exclude='*.h5' .); }
B=$PWD/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,clocks.max.sm,driver_version,uuid --format=csv > $O/gpu.txt 2>&1
export NEW=bundle RUN_LIMIT=120
PARTS="scale" SCALE_N=65536 scripts/bench-solver-multi-gpu $O/r1; pack
PARTS="scale" SCALE_N=65536 scripts/bench-solver-multi-gpu $O/r2; pack
(cd /tmp && timeout -s KILL 420 $B tcsolve_tests "[gpu]" > $O/tests_gpu.log 2>&1; echo "exit $?" >> $O/tests_gpu.log); pack
grep -h -E "cmp|auto|cusolvermg" $O/r*/summary.txt | cut -c1-160
tail -4 $O/tests_gpu.log
