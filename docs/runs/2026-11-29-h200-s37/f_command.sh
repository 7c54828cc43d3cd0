# Session 37 call f (1 x H200), tree 3c2c5a7's hook: issue 34's recorded run, the drop-in on every
# program of tests/hook/gpu/models.py (BERT-base eager and replayed, the TransformerEncoder at
# 32 x 256 tokens and at 8 x 2048 (encoder-long), the torch.compile MLP, CuPy 8192^2 and
# batched 64 x 512^3), each plain, preloaded (the hook's defaults) and logged.
# Run: run(command="bash docs/runs/2026-11-29-h200-s37/f_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/f; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/f.tgz --exclude='*.jsonl' .); }
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
timeout -s KILL 570 python3 tests/hook/gpu/models.py --hook $R/bundle/hook/libtcsolve_cublas.so --out $O/models --child-timeout 150 > $O/models.txt 2>&1
echo "models exit $?" >> $O/models.txt; pack
sed -n '/^## Time per step/,/^## Passed/p' $O/models/results.md | cut -c1-260
echo "elapsed $SECONDS"
