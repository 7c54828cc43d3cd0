# Session 39 call d (1 x H200), tree 5c9b877 (unchanged library): the figures of issue 35's
# account in one call: compare beside dgetrf+getrs at 16384 and 32768 (partial pivoting, the
# default); the factorization at 32768 over the panel's SMs (16, 32, 48); beam's panel path per
# phase (phases=detail) at both sizes with the default plan.
# Run: run(command="bash docs/runs/2026-11-30-h200-s39/d_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/d; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/d.tgz .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
s() {  # name n args...
  local name=$1 n=$2; shift 2
  timeout -s KILL 150 $T tcsolve solve --synthetic $n --seed 1 --backend cuda --warmup --json "$@" > $O/json/$name.json 2> $O/json/$name.err
  echo "$name rc=$? $SECONDS s"
}
D=/tmp/sys; mkdir -p $D
for n in 16384 32768; do
  $T tcsolve generate --n $n --mode random --seed 1 --backend cuda --output $D/s$n.h5 --force > /dev/null
  timeout -s KILL 200 $T tcsolve compare --input $D/s$n.h5 --backend cuda --variants auto --json > $O/json/c_$n.json 2> $O/json/c_$n.err
  echo "compare $n rc=$? $SECONDS s"; rm -f $D/s$n.h5
  for sms in 16 32 48; do s p${sms}_$n $n --cuda-plan panel_sms=$sms; done
  s pd_$n $n --cuda-plan phases=detail
  s bd_$n $n --pivoting beam --cuda-plan phases=detail --condition-estimate never
  pack
done
python3 $R/docs/runs/2026-11-30-h200-s39/summary.py $O > $O/summary.txt 2>&1; pack
cat $O/summary.txt
echo "elapsed $SECONDS"
