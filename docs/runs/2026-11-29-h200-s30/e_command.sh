# Session 30 call e (1 x H200): BERT preloaded, the final tree (bundle_s30, d183d64) and 3f29bf2
# (bundle_new) alternating, each run plain and preloaded in its own processes; the attention
# and batched shapes on the final tree.
set -u
rm -rf bundle_new bundle_s30; tar xJf bundle_new.tar.xz; tar xJf bundle_s30.tar.xz
R=$PWD; N=$R/bundle_s30/run; H=$R/bundle_s30/hook/libtcsolve_cublas.so; H0=$R/bundle_new/hook/libtcsolve_cublas.so
O=/tmp/e; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/e.tgz --exclude='*.jsonl' .); }
timeout -s KILL 40 $N tcsolve_batched_bench --variants auto 384x128x128x64:TN 384x64x128x128:NN 64x512x512x512:NN 128x2048x2048x64:TN 128x64x2048x2048:NN > $O/batched_shapes.md 2>&1; pack
for i in 1 2; do
  timeout -s KILL 60 scripts/bench-hook-models-gpu $H $O/new$i --only bert --child-timeout 50 > $O/new$i.txt 2>&1; pack
  timeout -s KILL 60 scripts/bench-hook-models-gpu $H0 $O/old$i --only bert --child-timeout 50 > $O/old$i.txt 2>&1; pack
done
for f in new1 old1 new2 old2; do echo "$f $(grep -hE '^\| BERT-base train' $O/$f.txt | cut -c1-140)"; done
cut -c1-230 $O/batched_shapes.md | grep -E "^\| [0-9]"
