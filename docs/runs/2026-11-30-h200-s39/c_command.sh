# Session 39 call c (1 x H200), tree 5c9b877 (unchanged library): the rest of U12 by trsm.cu's
# kernel (plan field trsm=kernel) against the default recursive TRSM (trsm=mixed: 64-column
# cublasStrsm leaves and products), partial pivoting, two rounds alternating, n = 16384, 32768, 65536.
# Run: run(command="bash docs/runs/2026-11-30-h200-s39/c_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/c; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/c.tgz .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
s() {  # name n args...
  local name=$1 n=$2; shift 2
  timeout -s KILL 150 $T tcsolve solve --synthetic $n --seed 1 --backend cuda --warmup --json "$@" > $O/json/$name.json 2> $O/json/$name.err
  echo "$name rc=$? $SECONDS s"
}
for rep in 1 2; do
  for n in 16384 32768; do
    s m_${n}_$rep $n
    s k_${n}_$rep $n --cuda-plan trsm=kernel
    s k24_${n}_$rep $n --cuda-plan trsm=kernel,panel_sms=24
  done
  pack
done
s m_65536 65536
s k_65536 65536 --cuda-plan trsm=kernel
pack
python3 $R/docs/runs/2026-11-30-h200-s39/summary.py $O > $O/summary.txt 2>&1; pack
cat $O/summary.txt
echo "elapsed $SECONDS"
