# Session 39 call a (1 x H200), tree 5c9b877 (unchanged library): issue 35's large n, beam with
# the L21 = A21 U11^-1 products (and the panel joins) on the tensor cores through the existing
# plan fields trsm_products / joins, against partial pivoting; solve --synthetic (A made on the
# device), then compare beside dgetrf+getrs at 16384.
# Run: run(command="bash docs/runs/2026-11-30-h200-s39/a_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/a; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/a.tgz .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
s() {  # name n args...
  local name=$1 n=$2; shift 2
  timeout -s KILL 120 $T tcsolve solve --synthetic $n --seed 1 --backend cuda --warmup --json "$@" > $O/json/$name.json 2> $O/json/$name.err
  echo "$name rc=$? $SECONDS s"
}
V=trsm_products=variant
for n in 16384 32768; do
  s p_$n $n
  s b0_$n $n --pivoting beam
  s b1_$n $n --pivoting beam --cuda-plan $V
  s b2_$n $n --pivoting beam --cuda-plan $V,joins=variant
  s b1c_$n $n --pivoting beam --cuda-plan $V --refine classical --condition-estimate never
  s b1n_$n $n --pivoting beam --cuda-plan $V --condition-estimate never
  s b1d_$n $n --pivoting beam --cuda-plan $V,phases=detail --condition-estimate never
  s b3_$n $n --pivoting beam --cuda-plan $V,joins=variant,panel_sms=32 --condition-estimate never
  s p1_$n $n --cuda-plan $V
  s pd_$n $n --cuda-plan phases=detail
  pack
done
D=/tmp/sys; mkdir -p $D
$T tcsolve generate --n 16384 --mode random --seed 1 --backend cuda --output $D/s16384.h5 --force > /dev/null
timeout -s KILL 120 $T tcsolve compare --input $D/s16384.h5 --backend cuda --variants auto --json > $O/json/c_partial_16384.json 2> $O/json/c_partial.err
timeout -s KILL 120 $T tcsolve compare --input $D/s16384.h5 --backend cuda --variants auto --pivoting beam --cuda-plan $V,joins=variant --json > $O/json/c_beam_16384.json 2> $O/json/c_beam.err
pack
python3 $R/docs/runs/2026-11-30-h200-s39/summary.py $O > $O/summary.txt 2>&1; pack
cat $O/summary.txt
echo "elapsed $SECONDS"
