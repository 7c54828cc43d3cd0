# Session 39 call e (1 x H200), the tree with trsm_leaf.cu (CudaLuPlan::trsm_leaves, default the
# kernel): its [gpu] tests; partial pivoting and beam at 16384 and 32768 with the kernel's leaves
# against cublasStrsm's (two rounds alternating; beam with phases=detail); compare beside
# dgetrf+getrs with the new default (and beam at 16384).
# Run: run(command="bash docs/runs/2026-11-30-h200-s39/e_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/e; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/e.tgz .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
(cd /tmp && timeout -s KILL 120 $T tcsolve_tests "trsm_leaf kernels*" "the cuda LU with trsm_leaves*" > $O/tests_leaf.log 2>&1; echo "exit $?" >> $O/tests_leaf.log)
tail -4 $O/tests_leaf.log; pack
s() {  # name n args...
  local name=$1 n=$2; shift 2
  timeout -s KILL 150 $T tcsolve solve --synthetic $n --seed 1 --backend cuda --warmup --json "$@" > $O/json/$name.json 2> $O/json/$name.err
  echo "$name rc=$? $SECONDS s"
}
for rep in 1 2; do
  for n in 16384 32768; do
    s pk_${n}_$rep $n
    s pc_${n}_$rep $n --cuda-plan trsm_leaves=cublas
  done
done
for n in 16384 32768; do
  s bk_$n $n --pivoting beam --cuda-plan phases=detail --condition-estimate never
  s bc_$n $n --pivoting beam --cuda-plan phases=detail,trsm_leaves=cublas --condition-estimate never
  s pdk_$n $n --cuda-plan phases=detail
done
pack
D=/tmp/sys; mkdir -p $D
for n in 16384 32768; do
  $T tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
  timeout -s KILL 200 $T tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --json > $O/json/c_$n.json 2> $O/json/c_$n.err
  echo "compare $n rc=$? $SECONDS s"
  if [ $n = 16384 ]; then
    timeout -s KILL 200 $T tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --pivoting beam --json > $O/json/c_beam_$n.json 2> $O/json/c_beam_$n.err
    echo "compare beam $n rc=$? $SECONDS s"
  fi
  rm -f $D/s$n.h5; pack
done
python3 $R/docs/runs/2026-11-30-h200-s39/summary.py $O > $O/summary.txt 2>&1; pack
cat $O/summary.txt
echo "elapsed $SECONDS"
