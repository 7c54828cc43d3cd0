# Session 30 call f (1 x H200): BERT's host time per step: the --quick sizes (4 x 128 tokens: the
# same operators, little GPU work), plain and preloaded (bundle_s30), then the full size again.
set -u
rm -rf bundle_s30; tar xJf bundle_s30.tar.xz
H=$PWD/bundle_s30/hook/libtcsolve_cublas.so; O=/tmp/f; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/f.tgz --exclude='*.jsonl' .); }
timeout -s KILL 45 scripts/bench-hook-models-gpu $H $O/quick --only bert --quick --child-timeout 40 > $O/quick.txt 2>&1; pack
grep -hE '^\| BERT-base train' $O/quick.txt | cut -c1-140
