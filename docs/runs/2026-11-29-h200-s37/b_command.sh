# Session 37 call b (1 x H200): (1) the FP64 solves of one dgetrf factorization at n = 1024-4096:
# Dgetrs, lu_apply, and the two triangular solves by cublasDtrsv and cublasDtrsm
# (tcsolve_small_lu_bench --apply); (2) BERT-base's eager step plain and preloaded (b_bert_steps.py:
# the step time and the host's enqueue time), then each under Nsight Systems, the timeline of
# the timed steps summarized by b_timeline.py (GPU busy time, idle gaps, kernels, CUDA API).
# Run: run(command="bash docs/runs/2026-11-29-h200-s37/b_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/b; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/b.tgz --exclude='*.nsys-rep' --exclude='*.sqlite' .); }
T=$R/bundle/run
H=$R/bundle/hook/libtcsolve_cublas.so
S=$R/docs/runs/2026-11-29-h200-s37
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 120 $T tcsolve_small_lu_bench --apply 1024 2048 2560 3072 4096 > $O/apply_bench.txt 2>&1); pack
cat $O/apply_bench.txt
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 CUPY_TF32=0
for rep in 1 2; do
  timeout -s KILL 90 python3 $S/b_bert_steps.py > $O/steps_plain_$rep.txt 2>&1
  timeout -s KILL 90 env LD_PRELOAD=$H python3 $S/b_bert_steps.py > $O/steps_preloaded_$rep.txt 2>&1
done
tail -n1 $O/steps_*.txt; pack
NSYS=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${NSYS:-none}" | tee $O/nsys_where.txt
if [ -n "$NSYS" ]; then
  for mode in plain preloaded; do
    pre=""; [ $mode = preloaded ] && pre="LD_PRELOAD=$H"
    timeout -s KILL 150 $NSYS profile -t cuda,nvtx --sample=none --cpuctxsw=none --force-overwrite=true -o /tmp/nsys_$mode \
      env $pre python3 $S/b_bert_steps.py > $O/nsys_$mode.log 2>&1
    timeout -s KILL 100 $NSYS export --type sqlite --force-overwrite=true -o /tmp/nsys_$mode.sqlite /tmp/nsys_$mode.nsys-rep >> $O/nsys_$mode.log 2>&1
    python3 $S/b_timeline.py /tmp/nsys_$mode.sqlite > $O/timeline_$mode.txt 2>&1
    echo "== $mode"; cat $O/timeline_$mode.txt; pack
  done
fi
echo "all done at $SECONDS s"; pack
