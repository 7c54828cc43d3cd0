# Session 37 call c (1 x H200): (1) tcsolve_small_lu_bench --apply at n = 1024-4096 (Dgetrs,
# lu_apply, cublasDtrsv and cublasDtrsm pairs); (2) BERT-base: models.py --only bert twice,
# alternating with b_bert_steps.py plain and preloaded (the same step in a plain loop of 10).
# Run: run(command="bash docs/runs/2026-11-29-h200-s37/c_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/c; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/c.tgz --exclude='*.jsonl' .); }
T=$R/bundle/run
H=$R/bundle/hook/libtcsolve_cublas.so
S=$R/docs/runs/2026-11-29-h200-s37
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 120 $T tcsolve_small_lu_bench --apply 1024 2048 2560 3072 4096 > $O/apply_bench.txt 2>&1); pack
cat $O/apply_bench.txt
for rep in 1 2; do
  timeout -s KILL 200 python3 tests/hook/gpu/models.py --hook $H --out $O/bert_$rep --only bert > $O/bert_$rep.txt 2>&1; pack
  grep -A4 "^| program" $O/bert_$rep/results.md | head -6
  (export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 CUPY_TF32=0
   timeout -s KILL 90 python3 $S/b_bert_steps.py > $O/steps_plain_$rep.txt 2>&1
   timeout -s KILL 90 env LD_PRELOAD=$H python3 $S/b_bert_steps.py > $O/steps_preloaded_$rep.txt 2>&1)
  tail -n1 $O/steps_*_$rep.txt; pack
done
echo "all done at $SECONDS s"; pack
