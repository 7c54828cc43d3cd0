# Session 33, 1 x H200, final calls on 7b6b73a's build. Part "tests": every [gpu] test. Part
# "models": tests/hook/gpu/models.py, every program plain and preloaded (the drop-in's default,
# cached graphs on), then BERT's preloaded child with TCSOLVE_HOOK_GRAPHS=0 beside it.
# Run: run(command="bash bundle_s33_final.sh tests|models", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_s33_final.sh"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/f_$1; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/f_$1.tgz --exclude='*.jsonl' .); }
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
if [ "$1" = tests ]; then
  (cd /tmp && timeout -s KILL 560 $R/bundle/run tcsolve_tests "[gpu]" > $O/tests_gpu.log 2>&1; echo "exit $?" >> $O/tests_gpu.log)
  tail -4 $O/tests_gpu.log; grep -c "FAILED" $O/tests_gpu.log; pack tests
else
  timeout -s KILL 470 python3 tests/hook/gpu/models.py --hook $R/bundle/hook/libtcsolve_cublas.so --out $O/models > $O/models.txt 2>&1
  echo "models exit $?" >> $O/models.txt; pack models
  timeout -s KILL 60 env -u LD_PRELOAD HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TCSOLVE_HOOK_REPORT=1 TCSOLVE_HOOK_GRAPHS=0 LD_PRELOAD=$R/bundle/hook/libtcsolve_cublas.so python3 tests/hook/gpu/models.py --child bert --mode preloaded --sdpa math > $O/bert_direct.out 2> $O/bert_direct.err
  grep "MODELS-RESULT" $O/bert_direct.out | cut -c1-400; pack models
  tail -40 $O/models.txt | cut -c1-220
fi
echo "elapsed $SECONDS"
