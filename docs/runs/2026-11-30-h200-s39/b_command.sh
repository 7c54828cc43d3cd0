# Session 39 call b (1 x H200), tree 5c9b877 (unchanged library): issue 35's large n with the
# default partial pivoting: the panel's SMs (plan field panel_sms) on one GPU, two rounds
# alternating; the joins on the tensor cores beside more panel SMs; GMRES-IR at 32768.
# Run: run(command="bash docs/runs/2026-11-30-h200-s39/b_command.sh", kind="nvidia-h200", carry=["bundle.tar.xz"], timeout_s=590)
set -u
R=$PWD; rm -rf bundle; tar xJf bundle.tar.xz
O=/tmp/b; rm -rf $O; mkdir -p $O/json
pack() { (cd $O && tar czf $OUT/b.tgz .); }
T=$R/bundle/run
nvidia-smi --query-gpu=index,name,memory.total,driver_version,clocks.max.sm --format=csv > $O/gpu.txt
s() {  # name n args...
  local name=$1 n=$2; shift 2
  timeout -s KILL 120 $T tcsolve solve --synthetic $n --seed 1 --backend cuda --warmup --json "$@" > $O/json/$name.json 2> $O/json/$name.err
  echo "$name rc=$? $SECONDS s"
}
for rep in 1 2; do
  for n in 16384 32768; do
    for sms in 16 24 32 40 48; do s s${sms}_${n}_$rep $n --cuda-plan panel_sms=$sms; done
    s j32_${n}_$rep $n --cuda-plan panel_sms=32,joins=variant
    s j24_${n}_$rep $n --cuda-plan panel_sms=24,joins=variant
  done
  pack
done
for sms in 16 32; do s d${sms}_16384 16384 --cuda-plan panel_sms=$sms,phases=detail; s d${sms}_32768 32768 --cuda-plan panel_sms=$sms,phases=detail; done
s g_32768 32768 --refine gmres
s r_32768 32768 --refine auto
s g_16384 16384 --refine gmres
pack
python3 $R/docs/runs/2026-11-30-h200-s39/summary.py $O > $O/summary.txt 2>&1; pack
cat $O/summary.txt
echo "elapsed $SECONDS"
