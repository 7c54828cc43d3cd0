# Session 32, 1 x H200, call 4: BERT-base's eager step preloaded, 10503e9's hook (bundle) against
# 43aebd8's (bundle_before_s32), alternating three times, models.py's preloaded child alone
# (the hook's defaults, no log), and one plain child. Packed into $OUT/c4.tgz.
# Run: run(command="bash bundle_s32_c4.sh", kind="nvidia-h200", carry=["bundle.tar.xz","bundle_before_s32.tar.xz","bundle_s32_c4.sh"], timeout_s=330)
set -u
R=$PWD; rm -rf bundle bundle_before_s32; tar xJf bundle.tar.xz; tar xJf bundle_before_s32.tar.xz
O=/tmp/c4; rm -rf $O; mkdir -p $O
pack() { (cd $O && tar czf $OUT/c4.tgz .); }
M=$R/tests/hook/gpu/models.py
child() {  # name, hook ("" for plain)
  local env=(env -u LD_PRELOAD CUPY_TF32=0 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1)
  [ -n "$2" ] && env+=(LD_PRELOAD=$2)
  timeout -s KILL 60 "${env[@]}" python3 $M --child bert --mode $([ -n "$2" ] && echo preloaded || echo plain) --sdpa math > $O/$1.out 2> $O/$1.err
  python3 - $O/$1.out $1 <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("MODELS-RESULT ")]
if not lines:
    print(sys.argv[2], "no result"); sys.exit()
d = json.loads(lines[-1][len("MODELS-RESULT "):])
print(sys.argv[2], {k: [round(t, 2) for t in v.get("ms_runs", [])] for k, v in d["rows"].items()})
PY
  pack
}
child plain ""
for i in 1 2 3; do child new$i $R/bundle/hook/libtcsolve_cublas.so; child old$i $R/bundle_before_s32/libtcsolve_cublas.so; done
echo "elapsed $SECONDS"
