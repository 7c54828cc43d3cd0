# Session 33, 1 x H200: GemmOptions::cuda_launch = cached_graphs (the drop-in's default,
# TCSOLVE_HOOK_GRAPHS). Its [gpu] test and the context/gemm tests; tcsolve_batched_bench --host
# with and without --graphs; BERT's preloaded child with TCSOLVE_HOOK_GRAPHS=1 and 0, alternating,
# with the hook's report (how many calls came from graphs); the drop-in's checks (a)-(i).
# Packed into $OUT/g.tgz.
# Run: run(command="bash bundle_s33_graphs.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_s33_graphs.sh"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/g; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/g.tgz --exclude='*.jsonl' .); }
TESTS="cached graphs*,stream-ordered workspaces*,two GEMM contexts*,cuda::gemm returns*,on the GPU*,cuda::gemm_batched*"
(cd /tmp && timeout -s KILL 120 $R/bundle/run tcsolve_tests "$TESTS" > $O/tests.log 2>&1; echo "exit $?" >> $O/tests.log); tail -3 $O/tests.log; pack
SH="1x4096x768x768:NN 1x4096x3072x768:NN 1x4096x768x3072:NN 1x768x768x4096:NT 384x128x128x64:TN 1x1024x1024x1024:NN"
B=$R/bundle/bin/tcsolve_batched_bench
for i in 1 2; do
  LD_LIBRARY_PATH=$R/bundle/lib timeout -s KILL 50 $B --host --variants auto $SH > $O/bench_direct_$i.md 2>&1
  LD_LIBRARY_PATH=$R/bundle/lib timeout -s KILL 50 $B --host --graphs --variants auto $SH > $O/bench_graphs_$i.md 2>&1
done; pack
M=$R/tests/hook/gpu/models.py
child() {
  timeout -s KILL 60 env -u LD_PRELOAD CUPY_TF32=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TCSOLVE_HOOK_REPORT=1 TCSOLVE_HOOK_GRAPHS=$2 LD_PRELOAD=$R/bundle/hook/libtcsolve_cublas.so python3 $M --child bert --mode preloaded --sdpa math > $O/$1.out 2> $O/$1.err
  python3 -c "
import json,sys
l=[x for x in open('$O/$1.out') if x.startswith('MODELS-RESULT ')]
d=json.loads(l[-1][14:]) if l else {'rows':{}}
print('$1', {k:[round(t,2) for t in v.get('ms_runs',[])] for k,v in d['rows'].items()})"; grep -h "calls intercepted\|cached graphs" $O/$1.err | head -4; pack
}
for i in 1 2; do child bert_graphs_$i 1; child bert_direct_$i 0; done
[ $SECONDS -lt 330 ] && { timeout -s KILL $((585 - SECONDS)) scripts/test-hook-gpu $R/bundle/hook/libtcsolve_cublas.so $O/hook > $O/hook.txt 2>&1; echo "hook exit $?" >> $O/hook.txt; pack; }
tail -22 $O/hook.txt | cut -c1-220
for f in $O/bench_*.md; do echo "== $(basename $f)"; grep -h "^host" $f | cut -c1-200; grep -h "^| 1x\|^| 384" $f | awk -F'|' '{print $2,$7,$11}'; done
echo "elapsed $SECONDS"
