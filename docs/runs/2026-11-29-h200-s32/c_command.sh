# Session 32, 1 x H200, call 3: the final tree's checks. tcsolve_batched_bench --host on this
# tree's libtcsolve_gemm and 43aebd8's (the k > 1024 shapes, after reverting call 2's gated split
# loop); the beam solve at n = 32768 with refine auto (its condition estimate's FP64 LU no longer
# downloads A, 67a92a5); every [gpu] test; the drop-in's checks (a)-(i). Packed into $OUT/c3.tgz.
# Run: run(command="bash bundle_s32_c3.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_before_s32.tar.xz","bundle_s32_c3.sh"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle bundle_before_s32; tar xJf bundle.tar.xz; tar xJf bundle_before_s32.tar.xz
O=/tmp/c3; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/c3.tgz --exclude='*.jsonl' .); }
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
SH="1x4096x768x768:NN 1x4096x768x3072:NN 1x768x768x4096:NT 1x256x256x65536:NN 1x1024x1024x1024:NN"
B=$R/bundle/bin/tcsolve_batched_bench
LD_LIBRARY_PATH=$R/bundle/lib timeout -s KILL 50 $B --host --variants auto,ec-fp16 $SH > $O/bench_new.md 2>&1
LD_LIBRARY_PATH=$R/bundle_before_s32:$R/bundle/lib timeout -s KILL 50 $B --host --variants auto,ec-fp16 $SH > $O/bench_old.md 2>&1
pack
(cd /tmp && timeout -s KILL 60 $R/bundle/run tcsolve solve --synthetic 32768 --backend cuda --pivoting beam --refine auto --warmup --json --progress never > $O/solve_32768_beam_auto.json 2> $O/solve_32768_beam_auto.err; echo "exit $?" >> $O/solve_32768_beam_auto.err); pack
(cd /tmp && timeout -s KILL 380 $R/bundle/run tcsolve_tests "[gpu]" > $O/tests_gpu.log 2>&1; echo "exit $?" >> $O/tests_gpu.log); tail -4 $O/tests_gpu.log; pack
[ $SECONDS -lt 470 ] && { timeout -s KILL $((580 - SECONDS)) scripts/test-hook-gpu $R/bundle/hook/libtcsolve_cublas.so $O/hook > $O/hook.txt 2>&1; echo "hook exit $?" >> $O/hook.txt; pack; }
tail -25 $O/hook.txt | cut -c1-200
for f in $O/bench_*.md; do echo "== $(basename $f)"; grep -h "^| 1x" $f | awk -F'|' '{print $2,$5,$7,$8,$11}'; done
python3 -c "
import json,sys
d=json.load(open('$O/solve_32768_beam_auto.json')); r=d.get('results',[d])[0] if isinstance(d,dict) else d[0]
print({k:r.get(k) for k in ['pivoting','modifications','iterations','converged','fallback','refine','growth']}, 'total', r['time_s']['total'], {k:round(v*1e3,1) for k,v in r['time_s'].get('phases',{}).items()})
" 2>&1 | cut -c1-600
tail -3 $O/solve_32768_beam_auto.err
echo "elapsed $SECONDS"
