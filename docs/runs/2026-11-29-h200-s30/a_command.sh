# Session 30 call a (1 x H200): where BERT's and the encoder's preloaded steps spend their time
# (torch.profiler), auto against ec-fp16, on the current tree (bundle_new, 3f29bf2's code).
set -u
rm -rf bundle_new; tar xJf bundle_new.tar.xz
H=$PWD/bundle_new/hook/libtcsolve_cublas.so; O=/tmp/a; rm -rf $O; mkdir -p $O
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv > $O/gpu.txt
pack() { (cd $O && tar czf $OUT/a.tgz --exclude='*.jsonl' .); }
timeout -s KILL 200 scripts/bench-hook-models-gpu $H $O/auto --only bert,encoder --profile --child-timeout 90 > $O/auto.txt 2>&1; pack
timeout -s KILL 120 scripts/bench-hook-models-gpu $H $O/fp16 --only bert --profile --child-timeout 90 --hook-env TCSOLVE_HOOK_VARIANT=ec-fp16 > $O/fp16.txt 2>&1; pack
grep -h "^steps" $O/*/profile-*.txt
grep -E "^\| (bert|encoder|BERT|Transformer)" $O/auto.txt $O/fp16.txt | cut -c1-250
