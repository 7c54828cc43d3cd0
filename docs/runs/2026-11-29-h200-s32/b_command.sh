# Session 32, 1 x H200, call 2: the production path in one allocation a call and auto's gated
# TF32 split in one wave. The GEMM [gpu] tests of the changed code; tcsolve_batched_bench --host
# with this tree's libtcsolve_gemm and 43aebd8's (bundle_before_s32), alternating, and the same
# bench preloaded with each tree's hook (its "cuBLAS" column is then the drop-in's path); then
# BERT-base eager with 43aebd8's hook and this tree's, alternating. Packed into $OUT/c2.tgz.
# Run: run(command="bash bundle_s32_c2.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_before_s32.tar.xz","bundle_s32_c2.sh"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle bundle_before_s32; tar xJf bundle.tar.xz; tar xJf bundle_before_s32.tar.xz
O=/tmp/c2; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/c2.tgz --exclude='*.jsonl' .); }
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 100 $R/bundle/run tcsolve_tests "on the GPU*,cuda::gemm_batched*,cuda: a split*,two GEMM contexts*,stream-ordered workspaces*,cuda::gemm returns*" > $O/tests_gemm.log 2>&1; echo "exit $?" >> $O/tests_gemm.log); tail -3 $O/tests_gemm.log; pack
SH="1x4096x768x768:NN 1x4096x3072x768:NN 1x4096x768x3072:NN 1x768x768x4096:NT 1x4096x768x768:NT 384x128x128x64:TN 1x1024x1024x1024:NN 1x256x256x65536:NN"
B=$R/bundle/bin/tcsolve_batched_bench
NEWL=$R/bundle/lib; OLDL=$R/bundle_before_s32:$R/bundle/lib
for i in 1 2; do
  LD_LIBRARY_PATH=$NEWL timeout -s KILL 60 $B --host --variants auto,ec-fp16 $SH > $O/bench_new_$i.md 2>&1
  LD_LIBRARY_PATH=$OLDL timeout -s KILL 60 $B --host --variants auto,ec-fp16 $SH > $O/bench_old_$i.md 2>&1
  LD_PRELOAD=$R/bundle/hook/libtcsolve_cublas.so LD_LIBRARY_PATH=$NEWL timeout -s KILL 60 $B --host --variants auto $SH > $O/bench_hook_new_$i.md 2>&1
  LD_PRELOAD=$R/bundle_before_s32/libtcsolve_cublas.so LD_LIBRARY_PATH=$OLDL timeout -s KILL 60 $B --host --variants auto $SH > $O/bench_hook_old_$i.md 2>&1
  pack
done
for i in 1 2; do
  [ $SECONDS -lt 480 ] && { timeout -s KILL 95 scripts/bench-hook-models-gpu $R/bundle/hook/libtcsolve_cublas.so $O/bert_new$i --only bert --child-timeout 70 > $O/bert_new$i.txt 2>&1; pack; }
  [ $SECONDS -lt 480 ] && { timeout -s KILL 95 scripts/bench-hook-models-gpu $R/bundle_before_s32/libtcsolve_cublas.so $O/bert_old$i --only bert --child-timeout 70 > $O/bert_old$i.txt 2>&1; pack; }
done
echo "elapsed $SECONDS s"
head -4 $O/bench_new_1.md | tail -2
for f in $O/bench_*.md; do echo "== $(basename $f)"; grep -h "^| 1x4096x768x768:NN\|^| 384x128" $f | awk -F'|' '{print $5,$7,$8,$11,$12}'; done
grep -hE "^\| BERT" $O/bert_*/results.md | cut -c1-160
