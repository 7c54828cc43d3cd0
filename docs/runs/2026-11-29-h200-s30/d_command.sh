# Session 30 call d (1 x H200): the final tree (bundle_s30): every [gpu] test, the hook's checks a-i.
set -u
rm -rf bundle_s30; tar xJf bundle_s30.tar.xz
R=$PWD; N=$R/bundle_s30/run; H=$R/bundle_s30/hook/libtcsolve_cublas.so
O=/tmp/d; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/d.tgz --exclude='*.jsonl' .); }
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 330 $N tcsolve_tests "[gpu]" > $O/gpu_tests.log 2>&1; echo "exit $?" >> $O/gpu_tests.log); pack
grep -E "passed|failed|FAILED|exit" $O/gpu_tests.log | tail -4
timeout -s KILL 240 scripts/test-hook-gpu $H $O/hook > $O/hook.txt 2>&1; echo "hook exit $?" >> $O/hook.txt; pack
grep -E "FAIL|fail|exit|^\| \(" $O/hook.txt | head -30
