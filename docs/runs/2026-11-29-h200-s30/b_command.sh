# Session 30 call b (1 x H200): the launch cuts (bundle_s30) against 3f29bf2 (bundle_new):
# [gpu] GEMM tests, the hook's checks, the BERT shapes, BERT and the encoder preloaded.
set -u
rm -rf bundle_new bundle_s30; tar xJf bundle_new.tar.xz; tar xJf bundle_s30.tar.xz
R=$PWD; N=$R/bundle_s30/run; H=$R/bundle_s30/hook/libtcsolve_cublas.so; H0=$R/bundle_new/hook/libtcsolve_cublas.so
O=/tmp/b; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/b.tgz --exclude='*.jsonl' .); }
(cd /tmp && timeout -s KILL 200 $N tcsolve_tests "*the ec scaling found first*,*DeviceAuto change nothing*,every cuda variant*,[batched]" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); pack
tail -3 $O/tests.log
SH="1x768x4096x768:TN 1x3072x4096x768:TN 1x768x4096x3072:TN 1x768x4096x768:NN 1x3072x4096x768:NN 1x768x4096x3072:NN 1x768x768x4096:NT 1x3072x768x4096:NT 1x768x3072x4096:NT"
timeout -s KILL 90 $N tcsolve_batched_bench --variants auto,ec-fp16 $SH > $O/bert_shapes.md 2>&1; pack
timeout -s KILL 200 scripts/bench-hook-models-gpu $H $O/new --only bert,encoder --profile --child-timeout 90 > $O/new.txt 2>&1; pack
timeout -s KILL 100 scripts/bench-hook-models-gpu $H0 $O/old --only bert --child-timeout 90 > $O/old.txt 2>&1; pack
timeout -s KILL 100 scripts/bench-hook-models-gpu $H $O/new2 --only bert --child-timeout 90 > $O/new2.txt 2>&1; pack
timeout -s KILL 150 scripts/test-hook-gpu $H $O/hook > $O/hook.txt 2>&1; echo "hook exit $?" >> $O/hook.txt; pack
grep -h "^steps" $O/*/profile-*.txt
grep -hE "^\| (BERT|Transformer)" $O/new.txt $O/old.txt $O/new2.txt | cut -c1-200
cut -c1-200 $O/bert_shapes.md | grep -E "^\| 1x"
tail -3 $O/hook.txt
