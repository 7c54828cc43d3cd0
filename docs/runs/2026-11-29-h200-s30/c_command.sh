# Session 30 call c (1 x H200): the launch cuts + staged split (bundle_s30) against 3f29bf2
# (bundle_new): [gpu] GEMM tests, BERT and encoder shapes (fused against separate scaling),
# BERT and the encoder preloaded, the hook's checks.
set -u
rm -rf bundle_new bundle_s30; tar xJf bundle_new.tar.xz; tar xJf bundle_s30.tar.xz
R=$PWD; N=$R/bundle_s30/run; H=$R/bundle_s30/hook/libtcsolve_cublas.so; H0=$R/bundle_new/hook/libtcsolve_cublas.so
O=/tmp/c; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/c.tgz --exclude='*.jsonl' .); }
(cd /tmp && timeout -s KILL 150 $N tcsolve_tests "*the ec scaling found first*,*DeviceAuto change nothing*,every cuda variant*,[batched],[kmeans][gpu]" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); pack
tail -3 $O/tests.log
SH="1x768x4096x768:TN 1x3072x4096x768:TN 1x768x4096x3072:TN 1x768x4096x768:NN 1x3072x4096x768:NN 1x768x4096x3072:NN 1x768x768x4096:NT 1x3072x768x4096:NT 1x768x3072x4096:NT"
LK="1x768x4096x3072:TN 1x768x4096x3072:NN 1x3072x768x4096:NT 1x3072x16384x1024:TN 1x1024x16384x1024:TN 1x4096x16384x1024:TN 1x1024x16384x4096:NN 1x1024x1024x16384:NT"
timeout -s KILL 60 $N tcsolve_batched_bench --variants auto,ec-fp16 $SH > $O/bert_shapes.md 2>&1; pack
timeout -s KILL 60 $N tcsolve_batched_bench --variants ec-fp16 --scaling fused $LK > $O/long_fused.md 2>&1; pack
timeout -s KILL 60 $N tcsolve_batched_bench --variants ec-fp16 --scaling separate $LK > $O/long_separate.md 2>&1; pack
timeout -s KILL 130 scripts/bench-hook-models-gpu $H $O/new --only bert,encoder --profile --child-timeout 60 > $O/new.txt 2>&1; pack
timeout -s KILL 70 scripts/bench-hook-models-gpu $H0 $O/old --only bert --child-timeout 60 > $O/old.txt 2>&1; pack
timeout -s KILL 70 scripts/bench-hook-models-gpu $H $O/new2 --only bert --child-timeout 60 > $O/new2.txt 2>&1; pack
grep -h "^steps" $O/*/profile-*.txt
grep -hE "^\| (BERT|Transformer)" $O/new.txt $O/old.txt $O/new2.txt | cut -c1-160
cut -c1-230 $O/bert_shapes.md $O/long_fused.md $O/long_separate.md | grep -E "^\| 1x"
