# Session 33+, 1 x H200: branch s32-auto-no-fill against main. br1 = 1a18c86 (auto on the device
# without the fill launch), br2 = e9a4cc2 (also the gated TF32 pair as programmatic dependent
# launches); their libtcsolve_gemm and hook were built in session 32 (bundle_branch_s32,
# bundle_branch2_s32). Needs bundle.tar.xz built from main (its tests and bench binaries; the gemm
# library is what differs). The GEMM, LU and hook-relevant [gpu] tests on each branch library;
# tcsolve_batched_bench --host, main / br1 / br2, twice; BERT's preloaded child, main / br2 /
# br1, twice (the graph replay is the device's figure). If the tests pass and the figures hold,
# merge the branch (then rebuild, run the drop-in's checks a-i). Packed into $OUT/br.tgz.
# Run: run(command="bash bundle_s33_branch.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_branch_s32.tar.xz","bundle_branch2_s32.tar.xz","bundle_s33_branch.sh"], timeout_s=560)
set -u
R=$PWD; rm -rf bundle bundle_branch_s32 bundle_branch2_s32
tar xJf bundle.tar.xz; tar xJf bundle_branch_s32.tar.xz; tar xJf bundle_branch2_s32.tar.xz
O=/tmp/br; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/br.tgz .); }
declare -A LIB=([main]=$R/bundle/lib [br1]=$R/bundle_branch_s32:$R/bundle/lib [br2]=$R/bundle_branch2_s32:$R/bundle/lib)
declare -A HOOK=([main]=$R/bundle/hook/libtcsolve_cublas.so [br1]=$R/bundle_branch_s32/libtcsolve_cublas.so [br2]=$R/bundle_branch2_s32/libtcsolve_cublas.so)
TESTS="on the GPU*,cuda::gemm_batched*,cuda: a split*,two GEMM contexts*,stream-ordered workspaces*,cuda::gemm returns*,the cuda LU with auto*"
for v in br1 br2; do
  (cd /tmp && LD_LIBRARY_PATH=${LIB[$v]} timeout -s KILL 120 $R/bundle/bin/tcsolve_tests "$TESTS" > $O/tests_$v.log 2>&1; echo "exit $?" >> $O/tests_$v.log); tail -2 $O/tests_$v.log; pack
done
SH="1x4096x768x768:NN 1x4096x3072x768:NN 1x4096x768x3072:NN 1x768x768x4096:NT 384x128x128x64:TN 1x1024x1024x1024:NN"
for i in 1 2; do for v in main br1 br2; do
  LD_LIBRARY_PATH=${LIB[$v]} timeout -s KILL 50 $R/bundle/bin/tcsolve_batched_bench --host --variants auto $SH > $O/bench_${v}_$i.md 2>&1
done; pack; done
M=$R/tests/hook/gpu/models.py
child() {
  timeout -s KILL 60 env -u LD_PRELOAD CUPY_TF32=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LD_PRELOAD=${HOOK[$2]} python3 $M --child bert --mode preloaded --sdpa math > $O/$1.out 2> $O/$1.err
  python3 -c "
import json,sys
l=[x for x in open('$O/$1.out') if x.startswith('MODELS-RESULT ')]
d=json.loads(l[-1][14:]) if l else {'rows':{}}
print('$1', {k:[round(t,2) for t in v.get('ms_runs',[])] for k,v in d['rows'].items()})"; pack
}
for i in 1 2; do for v in main br2 br1; do [ $SECONDS -lt 500 ] && child bert_${v}_$i $v; done; done
for f in $O/bench_*.md; do echo "== $(basename $f)"; grep -h "^host\|^| " $f | grep -v "^| shape\|^|---" | awk -F'|' '{print $2,$5,$7,$11}' | cut -c1-120; done
echo "elapsed $SECONDS"
