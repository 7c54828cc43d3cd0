# Session 32, 1 x H200, call 1: the drop-in's host cost per product. tcsolve_batched_bench --host
# on BERT-base's shapes with this tree's libtcsolve_gemm (the tensor-map cache) and with 43aebd8's
# (bundle_before_s32), twice alternating; then BERT-base eager with 43aebd8's hook and this tree's,
# alternating; then the beam/rbt [gpu] tests this tree has not run yet. Packed into $OUT/c1.tgz.
# Run: run(command="bash bundle_s32_c1.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_before_s32.tar.xz","bundle_s32_c1.sh"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle bundle_before_s32; tar xJf bundle.tar.xz; tar xJf bundle_before_s32.tar.xz
O=/tmp/c1; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/c1.tgz --exclude='*.jsonl' .); }
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
SH="1x4096x768x768:NN 1x4096x3072x768:NN 1x4096x768x3072:NN 1x768x768x4096:NT 1x768x3072x4096:NT 1x4096x768x768:NT 384x128x128x64:TN 384x64x128x128:NN 1x1024x1024x1024:NN"
B=$R/bundle/bin/tcsolve_batched_bench
for i in 1 2; do
  LD_LIBRARY_PATH=$R/bundle/lib timeout -s KILL 60 $B --host --variants auto,ec-fp16 $SH > $O/bench_new_$i.md 2>&1
  LD_LIBRARY_PATH=$R/bundle_before_s32:$R/bundle/lib timeout -s KILL 60 $B --host --variants auto,ec-fp16 $SH > $O/bench_old_$i.md 2>&1
  pack
done
for i in 1 2; do
  timeout -s KILL 80 scripts/bench-hook-models-gpu $R/bundle_before_s32/libtcsolve_cublas.so $O/bert_old$i --only bert --child-timeout 60 > $O/bert_old$i.txt 2>&1; pack
  timeout -s KILL 80 scripts/bench-hook-models-gpu $R/bundle/hook/libtcsolve_cublas.so $O/bert_new$i --only bert --child-timeout 60 > $O/bert_new$i.txt 2>&1; pack
done
(cd /tmp && timeout -s KILL 150 $R/bundle/run tcsolve_tests "the device beam leaf*,cuda beam*,the device rbt leaf*,cuda refine auto*" > $O/tests_beam.log 2>&1; echo "exit $?" >> $O/tests_beam.log); pack
head -3 $O/bench_new_1.md; grep -h "^| 1x4096x768x768\|^| 384x128" $O/bench_*.md | cut -c1-200
grep -hE "^\| BERT" $O/bert_*/results.md | cut -c1-160
tail -4 $O/tests_beam.log
