#!/usr/bin/env python3
"""The drop-in's size crossover on the lent GPU: torch.mm of n x n x n FP32 (allow_tf32 off), and
torch.mm and torch.bmm of a few other shapes, timed without the hook and with it forced on every
size (TCSOLVE_HOOK_MIN_FLOPS=0, TCSOLVE_HOOK_MIN_DIM=0, TCSOLVE_HOOK_MIN_TILES=0), each in its
own process; prints Markdown tables and writes JSON.

    python3 tests/hook/gpu/crossover.py HOOK_SO OUT.json [--variant auto]

The defaults of TCSOLVE_HOOK_MIN_FLOPS and TCSOLVE_HOOK_MIN_TILES in hook/src/policy.hpp come
from these tables (docs/benchmark-history.md, session 9; the policy now also predicts each call's
ratio from a cost model fitted to the per-shape table of docs/BENCHMARKS.md)."""
import json
import os
import subprocess
import sys

SIZES = [128, 192, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1536, 2048, 4096]
# torch.bmm (batch, m, n, k): the attention products of a TransformerEncoderLayer (d_model 1024,
# 16 heads, 8 x 2048 tokens) and a batch of square ones
# torch.mm (m, n, k) of other shapes: few output tiles (128 x 128) with a long k, a short k
SHAPES = [(1024, 1024, 16384), (1024, 4096, 16384), (2048, 128, 16384), (256, 256, 65536), (8192, 8192, 64),
          (8192, 8192, 128), (16384, 128, 16384), (4096, 1024, 4096)]
BATCHED = [(128, 2048, 2048, 64), (128, 2048, 64, 2048), (16, 1024, 1024, 1024), (16, 2048, 2048, 2048)]


def timed(torch, fn, flops):
    reps = max(10, min(200, int(2e11 / flops)))
    for _ in range(5):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(3):
        start.record()
        for _ in range(reps):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / reps)
    return sorted(times)[1]


def child():
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    g = torch.Generator(device="cuda").manual_seed(1)
    out = {}
    for n in SIZES:
        a = torch.rand(n, n, device="cuda", generator=g) * 2 - 1
        b = torch.rand(n, n, device="cuda", generator=g) * 2 - 1
        c = torch.empty(n, n, device="cuda")
        out[n] = timed(torch, lambda: torch.mm(a, b, out=c), 2 * n**3)
    for m, n, k in SHAPES:
        a = torch.rand(m, k, device="cuda", generator=g) * 2 - 1
        b = torch.rand(k, n, device="cuda", generator=g) * 2 - 1
        c = torch.empty(m, n, device="cuda")
        out[f"{m}x{n}x{k}"] = timed(torch, lambda: torch.mm(a, b, out=c), 2 * m * n * k)
    for batch, m, n, k in BATCHED:
        a = torch.rand(batch, m, k, device="cuda", generator=g) * 2 - 1
        b = torch.rand(batch, k, n, device="cuda", generator=g) * 2 - 1
        c = torch.empty(batch, m, n, device="cuda")
        out[f"{batch}x{m}x{n}x{k}"] = timed(torch, lambda: torch.bmm(a, b, out=c), 2 * batch * m * n * k)
    print("CROSSOVER " + json.dumps(out))


def run(env):
    r = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, timeout=300)
    line = [l for l in r.stdout.splitlines() if l.startswith("CROSSOVER ")]
    if r.returncode != 0 or not line:
        sys.exit(f"crossover child failed ({r.returncode}): {r.stderr[-2000:]}")
    return {(int(k) if k.isdigit() else k): v for k, v in json.loads(line[0][10:]).items()}


def main():
    if sys.argv[1:] == ["--child"]:
        return child()
    hook, out = sys.argv[1], sys.argv[2]
    variant = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--variant" else "auto"
    base = {k: v for k, v in os.environ.items() if not k.startswith("TCSOLVE_HOOK_")}
    plain = run(base)
    hooked = run(dict(base, LD_PRELOAD=hook, TCSOLVE_HOOK_MIN_FLOPS="0", TCSOLVE_HOOK_MIN_DIM="0",
                      TCSOLVE_HOOK_MIN_TILES="0", TCSOLVE_HOOK_MIN_SPEEDUP="0", TCSOLVE_HOOK_VARIANT=variant))
    rows = [{"n": n, "cublas_ms": plain[n], "hook_ms": hooked[n], "speedup": plain[n] / hooked[n]} for n in SIZES]
    faster_from = None
    for i, r in enumerate(rows):
        if all(x["speedup"] > 1 for x in rows[i:]):
            faster_from = r["n"]
            break
    batched = [{"bmm": key, "cublas_ms": plain[key], "hook_ms": hooked[key], "speedup": plain[key] / hooked[key]}
               for key in (f"{b}x{m}x{n}x{k}" for b, m, n, k in BATCHED)]
    shapes = [{"mm": key, "tiles": -(-m // 128) * -(-n // 128), "cublas_ms": plain[key], "hook_ms": hooked[key],
               "speedup": plain[key] / hooked[key]} for key, m, n in ((f"{m}x{n}x{k}", m, n) for m, n, k in SHAPES)]
    json.dump({"variant": variant, "rows": rows, "hook_faster_from_n": faster_from, "mm": shapes, "bmm": batched},
              open(out, "w"), indent=1)
    print(f"| n | cuBLAS SGEMM ms | hook ({variant}) ms | speedup |\n| --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['n']} | {r['cublas_ms']:.4f} | {r['hook_ms']:.4f} | {r['speedup']:.2f} |")
    print(f"hook faster from n = {faster_from} at every larger size measured\n")
    print(f"| torch.mm m x n x k | 128^2 output tiles | cuBLAS ms | hook ({variant}) ms | speedup |\n"
          "| --- | --- | --- | --- | --- |")
    for r in shapes:
        print(f"| {r['mm']} | {r['tiles']} | {r['cublas_ms']:.4f} | {r['hook_ms']:.4f} | {r['speedup']:.2f} |")
    print()
    print(f"| torch.bmm batch x m x n x k | cuBLAS ms | hook ({variant}) ms | speedup |\n| --- | --- | --- | --- |")
    for r in batched:
        print(f"| {r['bmm']} | {r['cublas_ms']:.4f} | {r['hook_ms']:.4f} | {r['speedup']:.2f} |")


if __name__ == "__main__":
    main()
