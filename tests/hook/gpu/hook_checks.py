#!/usr/bin/env python3
"""GPU acceptance checks (a..i) of libtcsolve_cublas.so, the LD_PRELOAD cuBLAS drop-in.

One program, three roles:
  parent     python3 hook_checks.py --hook HOOK.so --out DIR [--only a,c] [--quick]
             starts children of itself with and without LD_PRELOAD=HOOK.so (the preload must be
             there at process start), judges their results and the hook's JSON-lines logs, and
             writes DIR/results.json, DIR/results.md, DIR/child-NAME-MODE.log (each child's
             stderr and stray stdout) and DIR/hook-NAME-MODE.jsonl (the hook's log, TCSOLVE_HOOK_LOG).
             Exit 0 when every pass/fail check passed, 1 otherwise.
  child      python3 hook_checks.py --child NAME --mode MODE --data DIR [--quick]
             one GPU job; prints one line "HOOKCHECK-RESULT {json}" on stdout. torch, cupy, jax and
             numpy are imported inside the children only.
  self-test  python3 hook_checks.py --self-test   (CPU, standard library only) tests the parent's
             pure helpers: log parsing, FLOP shares, judging, the covering shape set, Markdown.

Conventions of every check:
  * errors are relative to a float64 product computed on the GPU (A.double() @ B.double()):
    "rel. Frobenius" = ||C - C_ref||_F / ||C_ref||_F (the pass/fail measure), "rel. max" =
    max|C - C_ref| / max|C_ref| (reported);
  * TF32 is off (torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False;
    CUPY_TF32 and NVIDIA_TF32_OVERRIDE are removed from the children's environment) except in
    the "tf32" run of (g);
  * inputs are seeded (SEED): urand = U(-1,1); exp_rand:-8:8 = the project's exp_rand
    (gemm/src/random.cpp) with exponents -8..8: random sign * U[1,2) * 2**e, e uniform integer in
    [-8, 8] (NumPy generator, the same matrices for PyTorch, CuPy and JAX);
  * timing: CUDA events around each call, 3 warm-up calls, the median of 10;
  * (c)'s elementwise bound: |C - C_ref| <= gamma (|alpha| |A||B| + |beta| |C0|) with
    gamma = 2 (k + 2) 2^-24 + 3 2^-22: c k u with c = 2, u = 2^-24, plus 2 for the alpha/beta
    epilogue's roundings (a k = 1 addmm reaches 1.3 x 2 k u on a CPU BLAS), plus the ec path's
    operand representation 3 2^-22 (SPLIT_TERM); the worst err / (2 (k + 2) u bound), the plain
    FP32 bound, is reported too, with the k where it occurs;
  * (i)'s epilogues add the activation to (c)'s bound: ReLU is 1-Lipschitz, so |relu(y) -
    relu(y_ref)| <= gamma (|A||B| + |bias|); GELU (the tanh approximation cuBLASLt's epilogue
    and gelu(approximate='tanh') compute) has slope at most GELU_SLOPE, and its FP32 evaluation
    adds at most GELU_EVAL |y_ref|: GELU_SLOPE gamma (|A||B| + |bias|) + GELU_EVAL |y_ref|;
  * with --quick (a smoke test) the sizes are small, every preloaded child gets
    TCSOLVE_HOOK_MIN_FLOPS=0, TCSOLVE_HOOK_MIN_DIM=0, TCSOLVE_HOOK_MIN_TILES=0 and TCSOLVE_HOOK_MIN_SPEEDUP=0 so that small products are intercepted,
    and the 3x speed criterion of (a)/(b) is not judged.
The hook must write each log line as it happens (not buffered to exit): (d), (f) and (g) read the
log's size before and after a section to attribute lines to it.
"""
import argparse
import datetime
import filecmp
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import unittest

SEED = 20240917
WARMUP = 3
REPS = 10
CHILD_TIMEOUT_S = 300
RESULT_PREFIX = "HOOKCHECK-RESULT "
DISTS = ("urand", "exp_rand")
DIST_RECIPES = {"urand": "U(-1,1)", "exp_rand": "exp_rand:-8:8 = sign * U[1,2) * 2^e, e in -8..8"}
EXP_RAND_RANGE = (-8, 8)
SPEEDUP_MIN = 3.0              # (a)/(b): no-hook time / hook time, judged for urand
ERROR_RATIO_MAX = 0.5          # (a)/(b): hook error <= 0.5 x no-hook error
FP32_REL_TOL = 1e-5            # (f): rel. Frobenius error vs fp64 (TF32 gives ~1e-4 .. 1e-3)
BOUND_C = 2                    # (c): gamma = BOUND_C * (k + 2) * 2^-24 + SPLIT_TERM
# (c): the ec path's operand representation, a term that does not grow with k: each operand is
# hi + lo in FP16 (lo rounded from a - hi, |a - hi| <= 2^-11 |a|), so |a - (hi + lo)| <= 2^-22 |a|
# for A and for B, and the dropped lo_a lo_b <= 2^-22 |a b|: 3 * 2^-22 |a||b| in all. It matters
# only for tiny k (at k = 1 it is twice the accumulation term); the drop-in's default
# TCSOLVE_HOOK_MIN_DIM = 64 sends every product with k < 64 to cuBLAS.
SPLIT_TERM = 3 * 2.0 ** -22
TRANSFORMER_SHARE_AIM = 0.9    # (g): reported as "aim met", never a failure
# (i): GELU(y) = 0.5 y (1 + tanh(sqrt(2/pi) (y + 0.044715 y^3))) has |GELU'| <= 1.129 (at
# y = 1.419), and its FP32 evaluation (about ten roundings, tanhf's few ulps) errs by at most
# 16 u |y| (tests/test_hook_policy.cpp checks the hook's formula against that on the CPU).
GELU_SLOPE = 1.13
GELU_EVAL = 16 * 2.0 ** -24
ENV_REMOVED = ("LD_PRELOAD", "NVIDIA_TF32_OVERRIDE", "CUPY_TF32", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")

SIZES = {
    False: {"gemm_n": 8192, "shape_dims": (1, 7, 61, 68, 1000, 4097), "bmm16": (16, 512, 256, 384),
            "graph_n": 4096, "stream_n": 4096, "stream_count": 20, "linear": (8192, 4096, 4096),
            "jax_n": 2048, "edge_n": 2048,
            "transformer": {"batch": 8, "seq": 2048, "d_model": 1024, "nhead": 16, "ff": 4096},
            "bmm64": (64, 512, 512, 512), "attention": (384, 128, 64), "epilogue": (2048, 1024, 4096)},
    True: {"gemm_n": 2048, "shape_dims": (1, 7, 61, 68, 1000), "bmm16": (16, 64, 32, 48),
           "graph_n": 1024, "stream_n": 1024, "stream_count": 20, "linear": (2048, 1024, 1024),
           "jax_n": 512, "edge_n": 256,
           "transformer": {"batch": 2, "seq": 256, "d_model": 256, "nhead": 4, "ff": 1024},
           "bmm64": (8, 128, 128, 128), "attention": (48, 128, 64), "epilogue": (256, 256, 512)},
}
# bmm16, bmm64 = (batch, m, n, k): A is batch x m x k, B is batch x k x n (torch's row-major m, n).
# attention = (heads, seq, head_dim): QK^T is heads x (seq x head_dim @ head_dim x seq), PV is
# heads x (seq x seq @ seq x head_dim); cuBLAS sees them as 128 x 128 x 64 and 64 x 128 x 128.
# epilogue = (rows, fan_in, fan_out): act(x @ w^T + bias), x rows x fan_in, w fan_out x fan_in.

CHECK_TITLES = {
    "a": "PyTorch matmul, square",
    "b": "CuPy matmul, square",
    "c": "Shapes and operand forms (MIN_FLOPS=0, MIN_DIM=0, MIN_TILES=0)",
    "d": "CUDA graph capture and replay",
    "e": "Two threads on two streams",
    "f": "nn.Linear forward/backward; JAX",
    "g": "TransformerEncoderLayer forward/backward",
    "h": "BLAS semantics: device pointer mode, beta = 0 with NaN in C, k = 0",
    "i": "Batched products (one launch) and cuBLASLt's ReLU/GELU epilogues",
}
# (i)'s products: name -> (what it is, the child mode whose run judges it). "defaults" runs with
# the hook's default thresholds, "min_flops_0" with TCSOLVE_HOOK_MIN_FLOPS=0: the attention
# products of a small model are 8.1e8 flops a call, below the default 4e9, so the defaults leave
# them to cuBLAS (reported) and the second run judges them taken and accurate.
BATCHED_PRODUCTS = {
    "bmm64_torch": ("torch.bmm, the bmm64 batch", "defaults"),
    "bmm64_cupy": ("cupy.matmul of 3-d arrays, the bmm64 batch", "defaults"),
    "attn_qk": ("torch.bmm, attention's Q K^T", "min_flops_0"),
    "attn_pv": ("torch.bmm, attention's P V", "min_flops_0"),
    "addmm_relu": ("relu(x @ w^T + bias): torch._addmm_activation, cuBLASLt's RELU_BIAS", "defaults"),
    "addmm_gelu": ("gelu_tanh(x @ w^T + bias): torch._addmm_activation(use_gelu=True), cuBLASLt's GELU_BIAS",
                   "defaults"),
}


# ---------------------------------------------------------------------------------------------
# Pure helpers (standard library only; the self-test covers them)
# ---------------------------------------------------------------------------------------------

def read_log(path, start=0, end=None):
    """The hook's JSON-lines log from byte `start` to `end` (whole file by default) as
    (records, malformed_line_count); a missing file is an empty log."""
    if not path or not os.path.exists(path):
        return [], 0
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read() if end is None else f.read(max(0, end - start))
    records, bad = [], 0
    for line in data.decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if isinstance(record, dict):
            records.append(record)
        else:
            bad += 1
    return records, bad


def record_flops(record):
    """A log line's flops: its `flops` key, else 2*m*n*k*batch."""
    if record.get("flops") is not None:
        return float(record["flops"])
    return 2.0 * record.get("m", 0) * record.get("n", 0) * record.get("k", 0) * record.get("batch", 1)


def flop_shares(records):
    """Share of GEMM FLOPs intercepted, and each pass-through reason's share, over log lines."""
    total = sum(record_flops(r) for r in records)
    intercepted = [r for r in records if r.get("action") == "intercept"]
    reasons = {}
    for r in records:
        if r.get("action") != "intercept":
            entry = reasons.setdefault(str(r.get("reason", "(no reason)")), {"calls": 0, "flops": 0.0})
            entry["calls"] += 1
            entry["flops"] += record_flops(r)
    functions = {}
    for r in records:
        functions[r.get("function", "?")] = functions.get(r.get("function", "?"), 0) + 1
    intercept_flops = sum(record_flops(r) for r in intercepted)
    return {
        "calls": len(records),
        "intercept_calls": len(intercepted),
        "total_flops": total,
        "intercept_flops": intercept_flops,
        "intercept_share": intercept_flops / total if total else None,
        "pass_reasons": sorted(({"reason": reason, "calls": e["calls"], "flops": e["flops"],
                                 "share": e["flops"] / total if total else None}
                                for reason, e in reasons.items()), key=lambda p: -p["flops"]),
        "functions": functions,
    }


def intercepts_of(records, m, n, k):
    """Intercept lines of an m x n x k product."""
    return [r for r in records
            if r.get("action") == "intercept" and (r.get("m"), r.get("n"), r.get("k")) == (m, n, k)]


def ratio(numerator, denominator):
    """numerator / denominator, None when either is missing or the denominator is 0."""
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def files_equal(path_a, path_b):
    """Bitwise equality of two saved arrays (.npy files), None when one is missing."""
    if not (os.path.exists(path_a) and os.path.exists(path_b)):
        return None
    return filecmp.cmp(path_a, path_b, shallow=False)


def shape_cases(dims, bmm16):
    """(form, m, n, k, batch) cases of check (c): the plain product for every (m, n, k) in
    dims^3; every other operand form on a covering subset: (d_i, d_j, d_(i+j) mod len), which holds
    every pair of values in every two of m, n, k, plus the 8 corners {min, max}^3; and one
    batch-16 bmm."""
    cases = [("mm", m, n, k, 1) for m in dims for n in dims for k in dims]
    count = len(dims)
    lo, hi = min(dims), max(dims)
    subset = {(dims[i], dims[j], dims[(i + j) % count]) for i in range(count) for j in range(count)}
    subset |= {(m, n, k) for m in (lo, hi) for n in (lo, hi) for k in (lo, hi)}
    for form in ("At", "Bt", "AtBt", "slice", "strided", "addmm", "bmm"):
        cases += [(form, m, n, k, 3 if form == "bmm" else 1) for (m, n, k) in sorted(subset)]
    batch, m, n, k = bmm16
    cases.append(("bmm", m, n, k, batch))
    return cases


def criterion(name, ok, detail=""):
    """One pass/fail line of a check; ok None = not judged (reported only)."""
    return {"name": name, "ok": ok, "detail": detail}


def check_status(criteria):
    return "fail" if any(c["ok"] is False for c in criteria) else "pass"


def children_criterion(runs):
    """Every child exited 0 with a result, the hook loaded exactly in the preloaded ones, and
    every line of their hook logs (as run_log read them) is JSON."""
    problems = []
    for run in runs:
        label = f"{run['child']}/{run['mode']}"
        if run["exit"] != 0 or run["result"] is None:
            problems.append(f"{label}: {run['error'] or 'exit %s' % run['exit']}")
        elif run["result"].get("hook_loaded") != run["preload"]:
            problems.append(f"{label}: hook loaded = {run['result'].get('hook_loaded')} "
                            f"with preload = {run['preload']}")
        if run.get("log_malformed_lines"):
            problems.append(f"{label}: {run['log_malformed_lines']} hook log lines are not JSON")
    return criterion("children ran (exit 0), hook loaded exactly where preloaded, log lines JSON",
                     not problems, "; ".join(problems) or f"{len(runs)} children")


def run_log(run):
    """A child's whole hook log; its count of malformed lines goes into the run record."""
    records, bad = read_log(run["hook_log"])
    run["log_malformed_lines"] = bad
    return records


def result_of(run):
    return (run or {}).get("result") or {}


def judge_gemm(runs, hook_records, n, bitwise, quick):
    """(a)/(b) from the nohook, hook and off children, the hook child's log and the off-vs-nohook
    bitwise comparisons ({dist: bool or None})."""
    results = {mode: result_of(run) for mode, run in runs.items()}
    figures = {"n": n, "inputs": {}}
    for dist in DISTS:
        nohook, hook, off = (results[mode].get("inputs", {}).get(dist, {})
                             for mode in ("nohook", "hook", "off"))
        digests = {r.get("sha256") for r in (nohook, hook, off)}
        figures["inputs"][dist] = {
            "recipe": DIST_RECIPES[dist],
            "rel_fro_nohook": nohook.get("rel_fro"), "rel_fro_hook": hook.get("rel_fro"),
            "rel_fro_off": off.get("rel_fro"),
            "rel_max_nohook": nohook.get("rel_max"), "rel_max_hook": hook.get("rel_max"),
            "error_ratio": ratio(hook.get("rel_fro"), nohook.get("rel_fro")),
            "ms_nohook": nohook.get("ms"), "ms_hook": hook.get("ms"), "ms_off": off.get("ms"),
            "speedup": ratio(nohook.get("ms"), hook.get("ms")),
            "hook_finite": hook.get("finite"),
            "off_bitwise_equal": bitwise.get(dist),
            "same_inputs": len(digests) == 1 and None not in digests,
        }
    found = intercepts_of(hook_records, n, n, n)
    figures["intercept_lines"] = len(found)
    figures["intercept_functions"] = sorted({r.get("function", "?") for r in found})
    crit = [children_criterion(runs.values()),
            criterion("same inputs in every child", all(f["same_inputs"] for f in figures["inputs"].values()),
                      "sha256 of A and B"),
            criterion(f"log shows an intercept of m=n=k={n}", bool(found),
                      f"{len(found)} lines, {', '.join(figures['intercept_functions']) or 'none'}")]
    for dist in DISTS:
        f = figures["inputs"][dist]
        crit.append(criterion(f"{dist}: hook error <= {ERROR_RATIO_MAX} x no-hook error, finite",
                              f["error_ratio"] is not None and f["error_ratio"] <= ERROR_RATIO_MAX
                              and f["hook_finite"] is True,
                              f"rel. Frobenius {fmt(f['rel_fro_hook'])} vs {fmt(f['rel_fro_nohook'])}"))
    speed = figures["inputs"]["urand"]["speedup"]
    crit.append(criterion(f"urand: hook >= {SPEEDUP_MIN}x faster than no hook",
                          None if quick else (speed is not None and speed >= SPEEDUP_MIN),
                          f"{fmt(speed)}x (exp_rand {fmt(figures['inputs']['exp_rand']['speedup'])}x)"
                          + (", not judged with --quick" if quick else "")))
    for dist in DISTS:
        crit.append(criterion(f"{dist}: VARIANT=off bitwise equal to no hook",
                              figures["inputs"][dist]["off_bitwise_equal"] is True))
    return crit, figures


def judge_shapes(run, records):
    """(c) from the shapes child and its log."""
    result = result_of(run)
    intercepted = [r for r in records if r.get("action") == "intercept"]
    cases = result.get("cases", 0)
    figures = {"cases": cases, "forms": result.get("forms", {}), "gamma": result.get("gamma"),
               "failures": result.get("failures", []), "failure_count": result.get("failure_count"),
               "intercept_lines": len(intercepted), "log_lines": len(records),
               "shares": flop_shares(records), "seconds": run.get("seconds")}
    crit = [children_criterion([run]),
            criterion("every result within the FP32 bound, no NaN/Inf",
                      cases > 0 and result.get("failure_count") == 0,
                      f"{result.get('failure_count')} of {cases} cases outside; {result.get('gamma')}"),
            criterion("most products intercepted (intercept lines > half the cases)",
                      cases > 0 and len(intercepted) > cases / 2,
                      f"{len(intercepted)} intercept lines, {len(records)} log lines, {cases} cases")]
    return crit, figures


def judge_graph(run, window_records, n):
    """(d) from the graph child and the log lines written during capture."""
    result = result_of(run)
    replays = result.get("replays_equal", [])
    found = intercepts_of(window_records, n, n, n)
    figures = {"n": n, "capture_error": result.get("capture_error"), "replays": len(replays),
               "replays_bitwise_equal": sum(1 for r in replays if r),
               "capture_log_lines": len(window_records), "capture_intercepts": len(found)}
    crit = [children_criterion([run]),
            criterion("capture raised no error", run["result"] is not None and result.get("capture_error") is None,
                      result.get("capture_error") or ""),
            criterion("10 replays, each bitwise equal to the eager result",
                      len(replays) == 10 and all(replays), f"{figures['replays_bitwise_equal']} of {len(replays)}"),
            criterion("log shows an intercept during capture", bool(found),
                      f"{len(found)} intercept lines of {len(window_records)} during capture")]
    return crit, figures


def judge_streams(run, records, n):
    """(e) from the streams child and its log."""
    result = result_of(run)
    equal = result.get("equal", [])
    found = intercepts_of(records, n, n, n)
    figures = {"n": n, "products": len(equal), "bitwise_equal": sum(1 for e in equal if e),
               "thread_errors": result.get("thread_errors", []), "intercept_lines": len(found),
               "threaded_ms": result.get("threaded_ms"), "sequential_ms": result.get("sequential_ms")}
    crit = [children_criterion([run]),
            criterion("no error in the threads", run["result"] is not None and not figures["thread_errors"],
                      "; ".join(figures["thread_errors"])),
            criterion("two-stream results bitwise equal to one-after-the-other",
                      bool(equal) and all(equal), f"{figures['bitwise_equal']} of {len(equal)}"),
            criterion("log shows intercepts", bool(found), f"{len(found)} intercept lines of m=n=k={n}")]
    return crit, figures


def judge_edges(run, records, n):
    """(h) from the edges child and its log: the device-pointer and NaN-C products intercepted
    and within (c)'s bound, the k = 0 call answered by cuBLAS (C = beta C, bitwise)."""
    result = result_of(run)
    full = intercepts_of(records, n, n, n)
    k0 = [r for r in records if r.get("k") == 0 and r.get("action") != "intercept"]
    tf32 = [r for r in records if r.get("reason") == "tf32 math mode"]
    figures = {"n": n, "intercept_lines": len(full), "k0_lines": len(k0),
               "k0_reason": k0[0].get("reason") if k0 else None}
    for key in ("device_pointers", "beta0_nan_c"):
        figures[key] = result.get(key, {})
    figures["k0_bitwise_beta_c"] = result.get("k0_bitwise_beta_c")
    dev, nan = figures["device_pointers"], figures["beta0_nan_c"]
    crit = [children_criterion([run]),
            criterion("device pointer mode (alpha 1.5, beta -0.75 in device memory): within the bound, finite",
                      bool(dev) and dev.get("finite") and dev.get("worst", math.inf) <= 1,
                      f"worst err / bound {fmt(dev.get('worst'))}"),
            criterion("beta = 0 with C full of NaN: C not read (finite, within the bound)",
                      bool(nan) and nan.get("finite") and nan.get("worst", math.inf) <= 1,
                      f"worst err / bound {fmt(nan.get('worst'))}"),
            criterion("both full products intercepted", len(full) >= 2, f"{len(full)} intercept lines of m=n=k={n}"),
            criterion("k = 0: passed to cuBLAS, C = beta C bitwise", bool(k0) and figures["k0_bitwise_beta_c"] is True,
                      f"reason {figures['k0_reason']!r}"),
            criterion("TF32 math mode on the handle: passed through", len(tf32) == 1, f"{len(tf32)} lines")]
    return crit, figures


def judge_linear(linear_run, linear_records, scope, jax_run, jax_records):
    """(f) from the Linear child (its log section, `scope` says which, = the fp32 forward and
    backward) and the JAX child (whose log must stay empty)."""
    result = result_of(linear_run)
    errors = result.get("errors", {})
    jax = result_of(jax_run)
    figures = {"errors": errors, "finite": result.get("finite"), "shares": flop_shares(linear_records),
               "log_scope": scope,
               "jax": {"skipped": jax.get("skipped"), "version": jax.get("jax"), "device": jax.get("device"),
                       "rel_fro": jax.get("rel_fro"), "finite": jax.get("finite"),
                       "log_lines": len(jax_records),
                       "log_functions": sorted({r.get("function", "?") for r in jax_records})}}
    crit = [children_criterion([linear_run, jax_run]),
            criterion(f"Linear: output and gradients within rel. Frobenius {FP32_REL_TOL} of fp64, finite",
                      bool(errors) and result.get("finite") is True
                      and all(e is not None and e <= FP32_REL_TOL for e in errors.values()),
                      ", ".join(f"{name} {fmt(e)}" for name, e in errors.items()))]
    if jax.get("skipped"):
        crit.append(criterion("JAX", None, "skipped: " + jax["skipped"]))
    else:
        crit.append(criterion(f"JAX: jnp.dot within rel. Frobenius {FP32_REL_TOL} of numpy fp64, finite",
                              jax.get("finite") is True and jax.get("rel_fro") is not None
                              and jax["rel_fro"] <= FP32_REL_TOL, fmt(jax.get("rel_fro"))))
        crit.append(criterion("JAX: the hook's log has no lines", not jax_records,
                              f"{len(jax_records)} lines {figures['jax']['log_functions'] or ''}"))
    return crit, figures


def judge_transformer(runs, hook_records, scope):
    """(g) from the fp64, fp32, tf32 and hook children and the hook child's first-step log
    (`scope` says whether it is that section or the whole log)."""
    results = {mode: result_of(run) for mode, run in runs.items()}
    shares = flop_shares(hook_records)
    share = shares["intercept_share"]
    figures = {"runs": {mode: {"ms": r.get("ms"), "output_rel_fro": r.get("output_rel_fro"),
                               "grad_rel_fro_max": r.get("grad_rel_fro_max"),
                               "grad_worst_param": r.get("grad_worst_param"), "finite": r.get("finite")}
                        for mode, r in results.items()},
               "speedup_vs_fp32": ratio(results["fp32"].get("ms"), results["hook"].get("ms")),
               "shares": shares, "log_scope": scope,
               "share_aim": TRANSFORMER_SHARE_AIM,
               "share_aim_met": None if share is None else share >= TRANSFORMER_SHARE_AIM}
    crit = [children_criterion(runs.values()),
            criterion("outputs and gradients finite in every run",
                      all(r.get("finite") is True for r in results.values())),
            criterion(f"share of GEMM FLOPs intercepted (aim {TRANSFORMER_SHARE_AIM:.0%}, reported)", None,
                      pct(share))]
    return crit, figures


def judge_batched(runs, sections):
    """(i) from the two batched children (runs: {"defaults": run, "min_flops_0": run}) and each
    product's log lines (sections: {mode: {product: records}}): every product of BATCHED_PRODUCTS
    intercepted in the run that judges it (every log line of its section an intercept) and within
    its bound, finite; what the other run did with it is reported."""
    crit = [children_criterion(runs.values())]
    rows = []
    for name, (what, judged_in) in BATCHED_PRODUCTS.items():
        for mode in runs:
            product = result_of(runs[mode]).get("products", {}).get(name, {})
            # the section's FP32 products: the child's FP64 reference (CuPy's batched matmul in
            # FP64 reaches cublasGemmStridedBatchedEx too) passes as "data type", rightly
            lines = [r for r in sections.get(mode, {}).get(name, []) if r.get("reason") != "data type"]
            taken = bool(lines) and all(r.get("action") == "intercept" for r in lines)
            actions = sorted({"intercept" if r.get("action") == "intercept" else f"pass: {r.get('reason')}"
                              for r in lines})
            calls = sorted({f"{r.get('function')} {r.get('ops')} {r.get('m')} x {r.get('n')} x {r.get('k')}, "
                            f"batch {r.get('batch')}" for r in lines})
            rows.append({"product": name, "mode": mode, "what": what, "path": product.get("path"),
                         "calls": "; ".join(calls) or "(no log lines)", "actions": ", ".join(actions) or "—",
                         "worst": product.get("worst"), "finite": product.get("finite"),
                         "skipped": product.get("skipped")})
            label = f"{what} [{mode}]"
            if mode != judged_in:
                crit.append(criterion(f"{label}: reported", None, f"{', '.join(actions) or 'no log lines'}"))
            elif product.get("skipped"):
                crit.append(criterion(f"{label}: intercepted, within the bound, finite", None,
                                      "skipped: " + product["skipped"]))
            else:
                worst = product.get("worst")
                ok = taken and product.get("finite") is True and worst is not None and worst <= 1
                crit.append(criterion(f"{label}: intercepted, within the bound, finite", ok,
                                      f"{', '.join(actions) or 'no log lines'}; {'; '.join(calls)}; "
                                      f"worst err / bound {fmt(product.get('worst'))}"))
    return crit, {"products": rows}


# ----- Markdown -------------------------------------------------------------------------------

def fmt(value):
    """A figure for a table cell."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value == 0 or (1e-3 <= abs(value) < 1e5):
            return f"{value:.4g}"
        return f"{value:.3e}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def pct(share):
    return "—" if share is None else f"{100 * share:.1f}%"


def markdown_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def share_rows(shares):
    if not shares or not shares["total_flops"]:
        return [["(no GEMM lines in the log)", "—", 0]]
    rows = [["intercepted", pct(shares["intercept_share"]), shares["intercept_calls"]]]
    rows += [[f"pass: {p['reason']}", pct(p["share"]), p["calls"]] for p in shares["pass_reasons"]]
    return rows


SHARE_HEADERS = ["GEMM calls", "share of FLOPs", "calls"]


def tables_gemm(f):
    rows = [[f"{dist}: {x['recipe']}", x["rel_fro_nohook"], x["rel_fro_hook"], x["error_ratio"],
             x["rel_max_nohook"], x["rel_max_hook"], x["ms_nohook"], x["ms_hook"], x["speedup"],
             x["off_bitwise_equal"]] for dist, x in f["inputs"].items()]
    return [(f"m = n = k = {f['n']}; errors vs fp64", [
        "input", "rel. Frobenius, no hook", "rel. Frobenius, hook", "hook / no hook",
        "rel. max, no hook", "rel. max, hook", "ms, no hook", "ms, hook", "speedup",
        "VARIANT=off bitwise = no hook"], rows)]


def tables_shapes(f):
    rows = [[form, x["cases"], x["worst"], x["worst_fp32"], x["worst_fp32_k"], x["failures"]]
            for form, x in f["forms"].items()]
    failures = [[x["form"], x["m"], x["n"], x["k"], x["batch"], x["ratio"], x["finite"]]
                for x in f["failures"]]
    tables = [(f"{f['cases']} cases; bound {f['gamma']}; {f['intercept_lines']} intercept lines of "
               f"{f['log_lines']} log lines", ["form", "cases", "worst err / bound",
                                               "worst err / FP32 bound 2 (k + 2) u", "at k",
                                               "outside bound"], rows),
              ("log", SHARE_HEADERS, share_rows(f["shares"]))]
    if failures:
        tables.append(("first cases outside the bound",
                       ["form", "m", "n", "k", "batch", "err / bound", "finite"], failures))
    return tables


def tables_pairs(f):
    return [("", ["figure", "value"], [[key, value] for key, value in f.items()])]


def tables_linear(f):
    jax = f["jax"]
    return [("nn.Linear, rel. Frobenius error vs fp64", ["quantity", "rel. Frobenius error"],
             [[name, e] for name, e in f["errors"].items()]),
            (f"GEMM FLOPs of the fp32 forward + backward ({f['log_scope']})", SHARE_HEADERS,
             share_rows(f["shares"])),
            ("JAX jnp.dot under the preload", ["figure", "value"], [[k, v] for k, v in jax.items()])]


def tables_transformer(f):
    rows = [[mode, r["ms"], r["output_rel_fro"], r["grad_rel_fro_max"], r["grad_worst_param"]]
            for mode, r in f["runs"].items()]
    return [("step = forward + backward, SDPA on its math path (flash, memory-efficient and cuDNN "
             "attention off, so attention products are cuBLAS bmm calls); errors vs fp64 (rel. Frobenius)",
             ["run", "median step (ms)", "output error", "max param-grad error", "worst param"], rows),
            (f"GEMM FLOPs of one step under the hook ({f['log_scope']}); aim {pct(f['share_aim'])} "
             f"met: {fmt(f['share_aim_met'])}; speedup vs fp32 {fmt(f['speedup_vs_fp32'])}x",
             SHARE_HEADERS, share_rows(f["shares"]))]


def tables_batched(f):
    rows = [[r["product"], r["mode"], r["path"], r["calls"], r["actions"], r["worst"], r["finite"]]
            for r in f["products"]]
    return [("each product's log lines and its worst err / bound ((c)'s bound; with the activation's for "
             "the epilogues)", ["product", "run", "path", "cuBLAS calls", "hook", "worst err / bound", "finite"],
             rows)]


TABLES = {"a": tables_gemm, "b": tables_gemm, "c": tables_shapes, "d": tables_pairs,
          "e": tables_pairs, "f": tables_linear, "g": tables_transformer, "h": tables_pairs,
          "i": tables_batched}


def render_markdown(results):
    v = results.get("versions", {})
    out = ["# libtcsolve_cublas.so GPU checks", "",
           markdown_table(["", ""], [["date", results["date"]], ["GPU", v.get("gpu")],
                                     ["torch", v.get("torch")], ["cupy", v.get("cupy")],
                                     ["jax", v.get("jax")], ["hook", results["hook"]],
                                     ["hook sha256", results["hook_sha256"]], ["quick", results["quick"]]]),
           "", markdown_table(["check", "what", "status"],
                              [[name, c["title"], c["status"].upper()] for name, c in results["checks"].items()])]
    for name, check in results["checks"].items():
        out += ["", f"## ({name}) {check['title']}: {check['status'].upper()}", "",
                markdown_table(["criterion", "result", "detail"],
                               [[c["name"], "n/a" if c["ok"] is None else ("pass" if c["ok"] else "FAIL"),
                                 c["detail"]] for c in check["criteria"]])]
        if check.get("figures"):
            for caption, headers, rows in TABLES[name](check["figures"]):
                out += ["", f"*{caption}*", ""] if caption else [""]
                out.append(markdown_table(headers, rows))
    return "\n".join(out) + "\n"


def json_safe(value):
    """results.json stays strict JSON: non-finite floats become strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# Children (GPU; import torch / cupy / jax / numpy here only)
# ---------------------------------------------------------------------------------------------

def hook_loaded():
    import ctypes
    try:
        return ctypes.CDLL(None).tcsolve_hook_is_loaded() == 1
    except AttributeError:
        return False


def log_size():
    """Current size of the hook's log (0 when absent): a position in it for read_log."""
    path = os.environ.get("TCSOLVE_HOOK_LOG")
    return os.path.getsize(path) if path and os.path.exists(path) else 0


def set_tf32(torch, on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def gemm_inputs(np, m, n, k, dist):
    """Seeded A (m x k) and B (k x n), float32, of distribution `dist` (see the header)."""
    rng = np.random.default_rng([SEED, DISTS.index(dist), m, n, k])

    def matrix(shape):
        if dist == "urand":
            return rng.random(shape, dtype=np.float32) * 2 - 1
        sign = np.where(rng.random(shape, dtype=np.float32) < 0.5, -1, 1).astype(np.float32)
        exponent = rng.integers(EXP_RAND_RANGE[0], EXP_RAND_RANGE[1] + 1, size=shape, dtype=np.int8)
        return np.ldexp(sign * (1 + rng.random(shape, dtype=np.float32)), exponent).astype(np.float32)
    return matrix((m, k)), matrix((k, n))


def digest(*arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(a)                          # C-contiguous NumPy arrays: their bytes
    return h.hexdigest()


def time_torch(torch, fn):
    """Median milliseconds of fn() by CUDA events, after WARMUP calls."""
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(REPS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def time_cupy(cupy, fn):
    for _ in range(WARMUP):
        fn()
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(REPS):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def rel_fro(torch, c, ref):
    return (torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref)).item()


def child_torch_gemm(args):
    """(a) C = A @ B (torch.matmul with out=), timed; errors vs fp64; C saved as C-MODE-DIST.npy."""
    import numpy as np
    import torch
    set_tf32(torch, False)
    n = SIZES[args.quick]["gemm_n"]
    out = {"inputs": {}}
    for dist in DISTS:
        a, b = gemm_inputs(np, n, n, n, dist)
        A, B = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        C = torch.empty(n, n, device="cuda")
        ms = time_torch(torch, lambda: torch.matmul(A, B, out=C))
        ref = A.double() @ B.double()
        out["inputs"][dist] = {"sha256": digest(a, b), "ms": ms, "rel_fro": rel_fro(torch, C, ref),
                               "rel_max": ((C.double() - ref).abs().max() / ref.abs().max()).item(),
                               "finite": bool(torch.isfinite(C).all())}
        np.save(os.path.join(args.data, f"C-{args.mode}-{dist}.npy"), C.cpu().numpy())
        del A, B, C, ref
        torch.cuda.empty_cache()
    return out


def child_cupy_gemm(args):
    """(b) the same with cupy.matmul (CuPy calls cublasGemmEx)."""
    import cupy
    import numpy as np
    n = SIZES[args.quick]["gemm_n"]
    out = {"inputs": {}, "cupy": cupy.__version__}
    for dist in DISTS:
        a, b = gemm_inputs(np, n, n, n, dist)
        A, B = cupy.asarray(a), cupy.asarray(b)
        C = cupy.empty((n, n), dtype=cupy.float32)
        ms = time_cupy(cupy, lambda: cupy.matmul(A, B, out=C))
        ref = A.astype(cupy.float64) @ B.astype(cupy.float64)
        diff = C.astype(cupy.float64) - ref
        out["inputs"][dist] = {"sha256": digest(a, b), "ms": ms,
                               "rel_fro": float(cupy.linalg.norm(diff) / cupy.linalg.norm(ref)),
                               "rel_max": float(cupy.abs(diff).max() / cupy.abs(ref).max()),
                               "finite": bool(cupy.isfinite(C).all())}
        np.save(os.path.join(args.data, f"C-{args.mode}-{dist}.npy"), cupy.asnumpy(C))
        del A, B, C, ref, diff
        cupy.get_default_memory_pool().free_all_blocks()
    return out


def shape_operands(torch, gen, form, m, n, k, batch):
    """Operands of one (c) case: (A, B, C0 or None, alpha, beta), U(-1,1) on the GPU."""
    def rand(*shape):
        return torch.rand(*shape, generator=gen, device="cuda") * 2 - 1

    def odd_ld(extent):                      # an odd leading dimension > extent
        return extent + 1 if extent % 2 == 0 else extent + 2
    if form == "At":
        return rand(k, m).T, rand(k, n), None, 1.0, 0.0
    if form == "Bt":
        return rand(m, k), rand(n, k).T, None, 1.0, 0.0
    if form == "AtBt":
        return rand(k, m).T, rand(n, k).T, None, 1.0, 0.0
    if form == "slice":                      # leading dimensions k + 5, n + 5; start 1 row + 3 in
        return rand(m + 2, k + 5)[1:, 3:][:m, :k], rand(k + 2, n + 5)[1:, 3:][:k, :n], None, 1.0, 0.0
    if form == "strided":                    # row-major A and column-major B, odd strides and offsets
        lda, ldb = odd_ld(k), odd_ld(k)
        A = torch.as_strided(rand(1 + m * lda), (m, k), (lda, 1), 1)
        B = torch.as_strided(rand(3 + n * ldb), (k, n), (1, ldb), 3)
        return A, B, None, 1.0, 0.0
    if form == "addmm":
        return rand(m, k), rand(k, n), rand(m, n), 1.5, 0.5
    if form == "bmm":
        return rand(batch, m, k), rand(batch, k, n), None, 1.0, 0.0
    return rand(m, k), rand(k, n), None, 1.0, 0.0


def child_edges(args):
    """(h) cuBLAS semantics through the hook, with CuPy's raw cuBLAS binding on CuPy's handle:
    C = alpha A B + beta C with alpha and beta in device memory (pointer mode device); beta = 0
    with C full of NaN (host pointers: C must not be read); k = 0 with beta 0.5 (BLAS: C = beta C,
    which the hook leaves to cuBLAS); a product in TF32 math mode (passes through). Bound as in
    (c)."""
    import cupy
    import numpy as np
    from cupy_backends.cuda.libs import cublas
    n = SIZES[args.quick]["edge_n"]
    rng = np.random.default_rng(SEED)
    A = cupy.asarray(np.asfortranarray(rng.uniform(-1, 1, (n, n)).astype(np.float32)))
    B = cupy.asarray(np.asfortranarray(rng.uniform(-1, 1, (n, n)).astype(np.float32)))
    C0 = cupy.asarray(np.asfortranarray(rng.uniform(-1, 1, (n, n)).astype(np.float32)))
    A64, B64, C064 = A.astype(cupy.float64), B.astype(cupy.float64), C0.astype(cupy.float64)
    gamma = BOUND_C * (n + 2) * 2.0 ** -24 + SPLIT_TERM
    handle = cupy.cuda.device.get_cublas_handle()
    N = cublas.CUBLAS_OP_N

    def judged(C, alpha, beta):
        ref = alpha * (A64 @ B64) + (beta * C064 if beta != 0 else 0)
        bound = gamma * (abs(alpha) * (cupy.abs(A64) @ cupy.abs(B64)) + abs(beta) * cupy.abs(C064))
        err = cupy.abs(C.astype(cupy.float64) - ref)
        return {"finite": bool(cupy.isfinite(C).all()), "worst": float((err / bound).max())}

    out = {}
    start = log_size()
    scalars = cupy.asarray([1.5, -0.75], dtype=cupy.float32)
    C = C0.copy(order="F")
    mode = cublas.getPointerMode(handle)
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_DEVICE)
    try:
        cublas.sgemm(handle, N, N, n, n, n, scalars.data.ptr, A.data.ptr, n, B.data.ptr, n,
                     scalars.data.ptr + 4, C.data.ptr, n)
    finally:
        cublas.setPointerMode(handle, mode)
    cupy.cuda.get_current_stream().synchronize()
    out["device_pointers"] = judged(C, 1.5, -0.75)
    one, zero, half = (np.array(v, dtype=np.float32) for v in (1.0, 0.0, 0.5))
    C = cupy.full((n, n), cupy.nan, dtype=cupy.float32, order="F")
    cublas.sgemm(handle, N, N, n, n, n, one.ctypes.data, A.data.ptr, n, B.data.ptr, n, zero.ctypes.data,
                 C.data.ptr, n)
    out["beta0_nan_c"] = judged(C, 1.0, 0.0)
    C = C0.copy(order="F")
    cublas.sgemm(handle, N, N, n, n, 0, one.ctypes.data, A.data.ptr, n, B.data.ptr, n, half.ctypes.data,
                 C.data.ptr, n)
    cupy.cuda.get_current_stream().synchronize()
    out["k0_bitwise_beta_c"] = bool(cupy.array_equal(C, C0 * cupy.float32(0.5)))
    # TF32 asked for through the handle's math mode: passes through (TCSOLVE_HOOK_TF32=respect)
    math_mode = cublas.getMathMode(handle)
    cublas.setMathMode(handle, 3)  # CUBLAS_TF32_TENSOR_OP_MATH (CuPy names only the legacy modes)
    try:
        cublas.sgemm(handle, N, N, n, n, n, one.ctypes.data, A.data.ptr, n, B.data.ptr, n, zero.ctypes.data,
                     C.data.ptr, n)
    finally:
        cublas.setMathMode(handle, math_mode)
    cupy.cuda.get_current_stream().synchronize()
    out["log_window"] = [start, log_size()]
    return out


def child_shapes(args):
    """(c) every case of shape_cases against |C - C_ref| <= gamma (|alpha| |A||B| + |beta| |C0|)
    elementwise, gamma = BOUND_C * (k + 2) * 2^-24 + SPLIT_TERM (the +2: the alpha/beta epilogue's
    roundings; SPLIT_TERM: see its definition). The worst ratio to the plain FP32 bound
    BOUND_C * (k + 2) * 2^-24 is reported beside it."""
    import torch
    set_tf32(torch, False)
    size = SIZES[args.quick]
    gen = torch.Generator(device="cuda").manual_seed(SEED)
    forms, failures = {}, []
    cases = shape_cases(size["shape_dims"], size["bmm16"])
    with torch.no_grad():
        for form, m, n, k, batch in cases:
            A, B, C0, alpha, beta = shape_operands(torch, gen, form, m, n, k, batch)
            if form == "addmm":
                C = torch.addmm(C0, A, B, beta=beta, alpha=alpha)
            elif form == "bmm":
                C = torch.bmm(A, B)
            else:
                C = A @ B
            A64, B64 = A.double(), B.double()
            ref = alpha * (A64 @ B64)
            bound = abs(alpha) * (A64.abs() @ B64.abs())
            if C0 is not None:
                ref += beta * C0.double()
                bound += abs(beta) * C0.double().abs()
            err = (C.double() - ref).abs()
            fp32_gamma = BOUND_C * (k + 2) * 2.0 ** -24
            gamma = fp32_gamma + SPLIT_TERM
            scaled = torch.where(bound > 0, err / (gamma * bound),
                                 torch.where(err > 0, math.inf, 0.0))
            worst = scaled.max().item()
            worst_fp32 = worst * gamma / fp32_gamma
            finite = bool(torch.isfinite(C).all())
            entry = forms.setdefault(form, {"cases": 0, "worst": 0.0, "worst_fp32": 0.0, "worst_fp32_k": 0,
                                            "failures": 0})
            entry["cases"] += 1
            entry["worst"] = max(entry["worst"], worst)
            if worst_fp32 > entry["worst_fp32"]:
                entry["worst_fp32"], entry["worst_fp32_k"] = worst_fp32, k
            if not finite or not worst <= 1:
                entry["failures"] += 1
                failures.append({"form": form, "m": m, "n": n, "k": k, "batch": batch,
                                 "ratio": worst, "finite": finite})
    return {"cases": len(cases), "forms": forms, "failures": failures[:20], "failure_count": len(failures),
            "gamma": f"gamma = {BOUND_C} (k + 2) 2^-24 + 3 2^-22"}


def child_graph(args):
    """(d) capture torch.matmul(A, B, out=C) in a CUDA graph, replay 10 times against the eager C."""
    import torch
    set_tf32(torch, False)
    n = SIZES[args.quick]["graph_n"]
    gen = torch.Generator(device="cuda").manual_seed(SEED)
    A = torch.rand(n, n, generator=gen, device="cuda") * 2 - 1
    B = torch.rand(n, n, generator=gen, device="cuda") * 2 - 1
    eager = A @ B
    C = torch.empty_like(eager)
    side = torch.cuda.Stream()               # warm-up on a side stream, as PyTorch's graph notes do
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.matmul(A, B, out=C)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    start = log_size()
    capture_error = None
    try:
        with torch.cuda.graph(graph):
            torch.matmul(A, B, out=C)
    except Exception as e:                   # reported: the check is that capture works
        capture_error = repr(e)
    end = log_size()
    replays = []
    if capture_error is None:
        for _ in range(10):
            C.fill_(math.nan)
            graph.replay()
            torch.cuda.synchronize()
            replays.append(bool(torch.equal(C, eager)))
    return {"capture_error": capture_error, "replays_equal": replays, "log_window": [start, end]}


def child_streams(args):
    """(e) two threads, each on its own stream, each stream_count products of its own inputs, at
    once; compared bitwise with the same products done one after the other on one thread."""
    import torch
    set_tf32(torch, False)
    n, count = SIZES[args.quick]["stream_n"], SIZES[args.quick]["stream_count"]
    gen = torch.Generator(device="cuda").manual_seed(SEED)
    inputs = [[(torch.rand(n, n, generator=gen, device="cuda") * 2 - 1,
                torch.rand(n, n, generator=gen, device="cuda") * 2 - 1) for _ in range(count)]
              for _ in range(2)]
    t0 = time.perf_counter()
    sequential = [[a @ b for a, b in pairs] for pairs in inputs]
    torch.cuda.synchronize()
    sequential_ms = 1e3 * (time.perf_counter() - t0)
    threaded = [[None] * count for _ in range(2)]
    streams = [torch.cuda.Stream() for _ in range(2)]
    for s in streams:
        s.wait_stream(torch.cuda.current_stream())
    barrier = threading.Barrier(2)
    errors = []

    def worker(t):
        try:
            with torch.cuda.stream(streams[t]):
                barrier.wait()
                for i, (a, b) in enumerate(inputs[t]):
                    threaded[t][i] = a @ b
        except Exception as e:               # reported by the parent
            errors.append(f"thread {t}: {e!r}")
    threads = [threading.Thread(target=worker, args=(t,)) for t in range(2)]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    torch.cuda.synchronize()
    threaded_ms = 1e3 * (time.perf_counter() - t0)
    equal = [threaded[t][i] is not None and bool(torch.equal(sequential[t][i], threaded[t][i]))
             for t in range(2) for i in range(count)]
    return {"equal": equal, "thread_errors": errors, "sequential_ms": sequential_ms, "threaded_ms": threaded_ms}


def child_linear(args):
    """(f) nn.Linear(bias=True) forward and backward (fixed random cotangent), fp32 vs fp64; the log
    section covers the fp32 forward and backward only."""
    import copy
    import torch
    set_tf32(torch, False)
    rows, fan_in, fan_out = SIZES[args.quick]["linear"]
    torch.manual_seed(SEED)
    linear = torch.nn.Linear(fan_in, fan_out, bias=True)
    linear64 = copy.deepcopy(linear).to("cuda", torch.float64)
    linear = linear.cuda()
    x, dy = torch.randn(rows, fan_in), torch.randn(rows, fan_out)
    x32 = x.cuda().detach().requires_grad_()
    x64 = x.to("cuda", torch.float64).detach().requires_grad_()
    start = log_size()
    y = linear(x32)
    y.backward(dy.cuda())
    torch.cuda.synchronize()
    end = log_size()
    y64 = linear64(x64)
    y64.backward(dy.to("cuda", torch.float64))
    pairs = {"output": (y, y64), "weight_grad": (linear.weight.grad, linear64.weight.grad),
             "bias_grad": (linear.bias.grad, linear64.bias.grad), "input_grad": (x32.grad, x64.grad)}
    return {"errors": {name: rel_fro(torch, c, ref) for name, (c, ref) in pairs.items()},
            "finite": all(bool(torch.isfinite(c).all()) for c, _ in pairs.values()),
            "log_window": [start, end]}


def child_jax(args):
    """(f) jnp.dot under the preload: close to numpy fp64; the parent checks the log is empty."""
    try:
        import jax
        import jax.numpy as jnp
    except Exception as e:                   # reported as "skipped"
        return {"skipped": f"jax import failed: {e!r}"}
    import numpy as np
    jax.config.update("jax_default_matmul_precision", "highest")
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError as e:
        return {"skipped": f"no JAX GPU backend: {e}", "jax": jax.__version__}
    n = SIZES[args.quick]["jax_n"]
    a, b = gemm_inputs(np, n, n, n, "urand")
    c = np.asarray(jnp.dot(jax.device_put(a, gpu), jax.device_put(b, gpu)).block_until_ready())
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return {"jax": jax.__version__, "device": str(gpu), "finite": bool(np.isfinite(c).all()),
            "rel_fro": float(np.linalg.norm(c - ref) / np.linalg.norm(ref))}


def child_transformer(args):
    """(g) TransformerEncoderLayer forward + backward (fixed random cotangent) in MODE: fp64 (saves
    the reference), fp32, tf32 (allow_tf32 on) or hook (fp32 under the preload). SDPA is forced
    to its math path, whose attention products are bmm calls cuBLAS sees (flash, memory-efficient
    and cuDNN attention kernels never call cuBLAS). The log section is the first step."""
    import torch
    set_tf32(torch, args.mode == "tf32")
    torch.backends.cuda.enable_flash_sdp(False)
    torch.backends.cuda.enable_mem_efficient_sdp(False)
    torch.backends.cuda.enable_cudnn_sdp(False)
    torch.backends.cuda.enable_math_sdp(True)
    s = SIZES[args.quick]["transformer"]
    dtype = torch.float64 if args.mode == "fp64" else torch.float32
    torch.manual_seed(SEED)
    layer = torch.nn.TransformerEncoderLayer(s["d_model"], s["nhead"], s["ff"], dropout=0.0, batch_first=True)
    x = torch.randn(s["batch"], s["seq"], s["d_model"])
    dy = torch.randn_like(x)
    layer, x, dy = layer.to("cuda", dtype), x.to("cuda", dtype), dy.to("cuda", dtype)

    def step():
        for p in layer.parameters():
            p.grad = None
        y = layer(x)
        y.backward(dy)
        return y
    start = log_size()
    y = step().detach()
    torch.cuda.synchronize()
    end = log_size()
    grads = {name: p.grad.detach().clone() for name, p in layer.named_parameters()}
    out = {"ms": time_torch(torch, step), "log_window": [start, end],
           "finite": bool(torch.isfinite(y).all()) and all(bool(torch.isfinite(g).all()) for g in grads.values())}
    ref_path = os.path.join(args.data, "transformer-ref.pt")
    if args.mode == "fp64":
        torch.save({"output": y.cpu(), "grads": {k: g.cpu() for k, g in grads.items()}}, ref_path)
        return out
    if not os.path.exists(ref_path):
        return out
    ref = torch.load(ref_path, map_location="cuda")
    errors = {name: rel_fro(torch, g, ref["grads"][name]) for name, g in grads.items()}
    worst = max(errors, key=errors.get)
    out.update(output_rel_fro=rel_fro(torch, y, ref["output"]), grad_rel_fro=errors,
               grad_rel_fro_max=errors[worst], grad_worst_param=worst)
    return out


def worst_ratio(xp, err, bound):
    """max(err / bound) elementwise (xp: torch or cupy), inf where err > 0 = bound."""
    safe = xp.where(bound > 0, bound, 1.0)
    scaled = xp.where(bound > 0, err / safe, xp.where(err > 0, math.inf, 0.0))
    return float(scaled.max())


def child_batched(args):
    """(i) the products of BATCHED_PRODUCTS, each in its own log section: torch.bmm and CuPy's
    batched matmul of the bmm64 batch, attention's Q K^T and P V by torch.bmm, and relu / gelu_tanh
    (x @ w^T + bias) by torch._addmm_activation (cuBLASLt's RELU_BIAS and GELU_BIAS epilogues;
    F.linear and then the activation where torch lacks it: cuBLASLt's BIAS). Errors against the
    float64 product elementwise, in units of the bound of (c) (with the activation's term for GELU,
    see the header): worst <= 1 is within."""
    import torch
    set_tf32(torch, False)
    size = SIZES[args.quick]
    gen = torch.Generator(device="cuda").manual_seed(SEED)

    def rand(*shape):
        return torch.rand(*shape, generator=gen, device="cuda") * 2 - 1

    def gamma(k):
        return BOUND_C * (k + 2) * 2.0 ** -24 + SPLIT_TERM

    products = {}

    def section(name, run, sync):
        """Runs `run` (which returns its figures) between two log positions."""
        sync()
        start = log_size()
        figures = run()
        sync()
        products[name] = dict(figures, log_window=[start, log_size()])

    def bmm(A, B):
        C = torch.bmm(A, B)
        A64, B64 = A.double(), B.double()
        err = (C.double() - A64 @ B64).abs()
        return {"worst": worst_ratio(torch, err, gamma(A.shape[-1]) * (A64.abs() @ B64.abs())),
                "finite": bool(torch.isfinite(C).all()), "path": "torch.bmm"}

    with torch.no_grad():
        batch, m, n, k = size["bmm64"]
        A, B = rand(batch, m, k), rand(batch, k, n)
        section("bmm64_torch", lambda: bmm(A, B), torch.cuda.synchronize)
        heads, seq, dim = size["attention"]
        Q, K, V = rand(heads, seq, dim), rand(heads, seq, dim), rand(heads, seq, dim)
        P = torch.softmax(rand(heads, seq, seq), dim=-1)
        section("attn_qk", lambda: bmm(Q, K.transpose(1, 2)), torch.cuda.synchronize)
        section("attn_pv", lambda: bmm(P, V), torch.cuda.synchronize)
        rows, fan_in, fan_out = size["epilogue"]
        x, w, bias = rand(rows, fan_in), rand(fan_out, fan_in), rand(fan_out)
        x64, w64, b64 = x.double(), w.double(), bias.double()
        z64 = x64 @ w64.T + b64
        mag = x64.abs() @ w64.abs().T + b64.abs()
        fused = hasattr(torch, "_addmm_activation")

        def linear_act(act):
            if fused:
                y = torch._addmm_activation(bias, x, w.T, use_gelu=act == "gelu")
            else:
                z = torch.nn.functional.linear(x, w, bias)
                y = torch.relu(z) if act == "relu" else torch.nn.functional.gelu(z, approximate="tanh")
            if act == "relu":
                ref, bound = z64.clamp_min(0), gamma(fan_in) * mag
            else:
                ref = 0.5 * z64 * (1 + torch.tanh(math.sqrt(2 / math.pi) * (z64 + 0.044715 * z64 ** 3)))
                bound = GELU_SLOPE * gamma(fan_in) * mag + GELU_EVAL * z64.abs()
            return {"worst": worst_ratio(torch, (y.double() - ref).abs(), bound),
                    "finite": bool(torch.isfinite(y).all()),
                    "path": "torch._addmm_activation" if fused else f"F.linear + {act}"}
        for act in ("relu", "gelu"):
            section(f"addmm_{act}", lambda: linear_act(act), torch.cuda.synchronize)
    try:
        import cupy
        import numpy as np
    except Exception as e:                   # reported: the check is skipped for CuPy only
        products["bmm64_cupy"] = {"skipped": f"cupy import failed: {e!r}"}
        return {"products": products}
    rng = np.random.default_rng(SEED)
    batch, m, n, k = size["bmm64"]
    a = cupy.asarray(rng.uniform(-1, 1, (batch, m, k)).astype(np.float32))
    b = cupy.asarray(rng.uniform(-1, 1, (batch, k, n)).astype(np.float32))

    def cupy_bmm():
        c = cupy.matmul(a, b)
        a64, b64 = a.astype(cupy.float64), b.astype(cupy.float64)
        err = cupy.abs(c.astype(cupy.float64) - cupy.matmul(a64, b64))
        return {"worst": worst_ratio(cupy, err, gamma(k) * cupy.matmul(cupy.abs(a64), cupy.abs(b64))),
                "finite": bool(cupy.isfinite(c).all()), "path": "cupy.matmul", "cupy": cupy.__version__}
    section("bmm64_cupy", cupy_bmm, lambda: cupy.cuda.Device().synchronize())
    return {"products": products}


def child_versions(args):
    """Versions of Python, torch, cupy, jax, numpy, and the GPU's name (no preload)."""
    out = {"python": sys.version.split()[0]}
    for module in ("torch", "cupy", "jax", "numpy"):
        try:
            out[module] = __import__(module).__version__
        except Exception as e:               # recorded: a missing module skips or fails its check
            out[module] = f"not importable: {e!r}"
    try:
        import torch
        out["gpu"] = torch.cuda.get_device_name(0)
        out["torch_cuda"] = torch.version.cuda
    except Exception as e:                   # recorded
        out["gpu"] = f"unknown: {e!r}"
    return out


CHILDREN = {"torch_gemm": child_torch_gemm, "cupy_gemm": child_cupy_gemm, "shapes": child_shapes,
            "graph": child_graph, "streams": child_streams, "linear": child_linear, "jax": child_jax,
            "transformer": child_transformer, "versions": child_versions, "edges": child_edges,
            "batched": child_batched}


def child_main(args):
    result = CHILDREN[args.child](args)
    result["hook_loaded"] = hook_loaded()
    print(RESULT_PREFIX + json.dumps(result), flush=True)


# ---------------------------------------------------------------------------------------------
# Parent
# ---------------------------------------------------------------------------------------------

class Parent:
    def __init__(self, args, data_root):
        self.hook = os.path.abspath(args.hook)
        self.out = os.path.abspath(args.out)
        self.quick = args.quick
        self.timeout = args.child_timeout
        self.data_root = data_root

    def data_dir(self, check):
        path = os.path.join(self.data_root, check)
        os.makedirs(path, exist_ok=True)
        return path

    def hook_log(self, child, mode):
        return os.path.join(self.out, f"hook-{child}-{mode}.jsonl")

    def run_child(self, check, child, mode, preload, tcsolve_env=None, other_env=None):
        """Runs `--child child --mode mode`; returns its record (exit, result, env, logs)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("TCSOLVE_") and k not in ENV_REMOVED}
        tcsolve = {}
        hook_log = None
        if preload:
            hook_log = self.hook_log(child, mode)
            if os.path.exists(hook_log):
                os.remove(hook_log)
            env["LD_PRELOAD"] = self.hook
            tcsolve = {"TCSOLVE_HOOK_LOG": hook_log, "TCSOLVE_HOOK_REPORT": "1"}
            if self.quick:
                tcsolve.update(TCSOLVE_HOOK_MIN_FLOPS="0", TCSOLVE_HOOK_MIN_DIM="0",
                               TCSOLVE_HOOK_MIN_TILES="0", TCSOLVE_HOOK_MIN_SPEEDUP="0")
            tcsolve.update(tcsolve_env or {})
        env.update(tcsolve)
        env.update(other_env or {})
        stderr_log = os.path.join(self.out, f"child-{child}-{mode}.log")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", child, "--mode", mode,
               "--data", self.data_dir(check)] + (["--quick"] if self.quick else [])
        run = {"check": check, "child": child, "mode": mode, "preload": preload, "env": tcsolve,
               "stderr_log": stderr_log, "hook_log": hook_log, "exit": None, "result": None, "error": None}
        t0 = time.monotonic()
        with open(stderr_log, "w") as err:
            try:
                proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True,
                                      errors="replace", timeout=self.timeout)
            except subprocess.TimeoutExpired:
                run["error"] = f"timed out after {self.timeout} s"
                proc = None
        run["seconds"] = round(time.monotonic() - t0, 1)
        if proc is not None:
            run["exit"] = proc.returncode
            stray = []
            for line in proc.stdout.splitlines():
                if line.startswith(RESULT_PREFIX):
                    run["result"] = json.loads(line[len(RESULT_PREFIX):])
                else:
                    stray.append(line)
            if stray:
                with open(stderr_log, "a") as err:
                    err.write("\n--- stdout ---\n" + "\n".join(stray) + "\n")
            if proc.returncode != 0:
                run["error"] = f"exit {proc.returncode}, see {os.path.basename(stderr_log)}"
            elif run["result"] is None:
                run["error"] = "no result line"
        print(f"  [{check}] {child} {mode}: {run['error'] or 'ok'} ({run['seconds']} s)", flush=True)
        return run

    def log_section(self, run):
        """Log lines of the child's log_window (the whole log if the window is empty but the log is
        not, e.g. a hook that buffers lines) and which of the two it is."""
        window = result_of(run).get("log_window")
        records = run_log(run)
        if not window:
            return records, "whole log: the child recorded no section"
        section, _ = read_log(run["hook_log"], *window)
        if section or not records:
            return section, "the section's log lines"
        return records, "whole log: section empty, does the hook write lines at once?"

    def check_gemm(self, check, child):
        n = SIZES[self.quick]["gemm_n"]
        other = {"CUPY_TF32": "0"} if child == "cupy_gemm" else None
        runs = {"nohook": self.run_child(check, child, "nohook", False, other_env=other),
                "hook": self.run_child(check, child, "hook", True, other_env=other),
                "off": self.run_child(check, child, "off", True, {"TCSOLVE_HOOK_VARIANT": "off"}, other)}
        data = self.data_dir(check)
        bitwise = {dist: files_equal(os.path.join(data, f"C-off-{dist}.npy"),
                                     os.path.join(data, f"C-nohook-{dist}.npy")) for dist in DISTS}
        records = run_log(runs["hook"])
        for mode in ("nohook", "off"):
            run_log(runs[mode])
        return runs.values(), judge_gemm(runs, records, n, bitwise, self.quick)

    def check_a(self):
        return self.check_gemm("a", "torch_gemm")

    def check_b(self):
        return self.check_gemm("b", "cupy_gemm")

    def check_c(self):
        run = self.run_child("c", "shapes", "hook", True,
                             {"TCSOLVE_HOOK_MIN_FLOPS": "0", "TCSOLVE_HOOK_MIN_DIM": "0",
                              "TCSOLVE_HOOK_MIN_TILES": "0", "TCSOLVE_HOOK_MIN_SPEEDUP": "0"})
        return [run], judge_shapes(run, run_log(run))

    def check_d(self):
        run = self.run_child("d", "graph", "hook", True)
        run_log(run)
        window = result_of(run).get("log_window") or [0, 0]
        records, _ = read_log(run["hook_log"], *window)
        return [run], judge_graph(run, records, SIZES[self.quick]["graph_n"])

    def check_e(self):
        run = self.run_child("e", "streams", "hook", True)
        return [run], judge_streams(run, run_log(run), SIZES[self.quick]["stream_n"])

    def check_f(self):
        linear = self.run_child("f", "linear", "hook", True)
        jax = self.run_child("f", "jax", "hook", True, other_env={"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
        section, scope = self.log_section(linear)
        return [linear, jax], judge_linear(linear, section, scope, jax, run_log(jax))

    def check_h(self):
        run = self.run_child("h", "edges", "hook", True)
        run_log(run)
        window = result_of(run).get("log_window") or [0, 0]
        records, _ = read_log(run["hook_log"], *window)
        return [run], judge_edges(run, records, SIZES[self.quick]["edge_n"])

    def check_g(self):
        runs = {"fp64": self.run_child("g", "transformer", "fp64", False),
                "fp32": self.run_child("g", "transformer", "fp32", False),
                "tf32": self.run_child("g", "transformer", "tf32", False),
                "hook": self.run_child("g", "transformer", "hook", True)}
        section, scope = self.log_section(runs["hook"])
        return runs.values(), judge_transformer(runs, section, scope)


    def check_i(self):
        runs = {"defaults": self.run_child("i", "batched", "defaults", True),
                "min_flops_0": self.run_child("i", "batched", "min_flops_0", True, {"TCSOLVE_HOOK_MIN_FLOPS": "0", "TCSOLVE_HOOK_MIN_SPEEDUP": "0"})}
        sections = {}
        for mode, run in runs.items():
            run_log(run)
            sections[mode] = {name: read_log(run["hook_log"], *product["log_window"])[0]
                              for name, product in result_of(run).get("products", {}).items()
                              if product.get("log_window")}
        return runs.values(), judge_batched(runs, sections)


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def parent_main(args):
    if not os.path.isfile(args.hook):
        sys.exit(f"hook_checks: --hook {args.hook}: no such file")
    only = [c for c in args.only.split(",") if c] if args.only else list(CHECK_TITLES)
    unknown = [c for c in only if c not in CHECK_TITLES]
    if unknown:
        sys.exit(f"hook_checks: --only: unknown checks {unknown} (known: {','.join(CHECK_TITLES)})")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hook-checks-") as data_root:
        parent = Parent(args, data_root)
        versions = parent.run_child("versions", "versions", "nohook", False)
        results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                   "hook": parent.hook, "hook_sha256": sha256_file(parent.hook), "quick": args.quick,
                   "versions": result_of(versions), "checks": {}}
        for name in only:
            print(f"({name}) {CHECK_TITLES[name]}", flush=True)
            try:
                runs, (criteria, figures) = getattr(parent, f"check_{name}")()
            except Exception:                    # a bug in the parent's judging fails the check only
                runs, figures = [], {}
                criteria = [criterion("parent judged the check", False, traceback.format_exc(limit=4))]
            status = check_status(criteria)
            results["checks"][name] = {"title": CHECK_TITLES[name], "status": status, "criteria": criteria,
                                       "figures": figures, "children": list(runs)}
            shutil.rmtree(os.path.join(data_root, name), ignore_errors=True)
            for c in criteria:
                mark = "n/a " if c["ok"] is None else ("ok  " if c["ok"] else "FAIL")
                print(f"    {mark} {c['name']}: {c['detail']}", flush=True)
            print(f"  ({name}) {status.upper()}", flush=True)
            write_results(args.out, results)     # after each check: a cut-off run keeps what it did
    failed = [name for name, c in results["checks"].items() if c["status"] == "fail"]
    print("summary: " + ", ".join(f"({n}) {c['status']}" for n, c in results["checks"].items())
          + f"; results in {os.path.join(args.out, 'results.md')}")
    return 1 if failed else 0


def write_results(out, results):
    results["all_passed"] = all(c["status"] != "fail" for c in results["checks"].values())
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(json_safe(results), f, indent=1)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(render_markdown(results))


# ---------------------------------------------------------------------------------------------
# Self-test of the pure helpers (CPU, no torch)
# ---------------------------------------------------------------------------------------------

def fake_run(child, mode, preload, result, exit_code=0):
    return {"check": "x", "child": child, "mode": mode, "preload": preload, "env": {}, "exit": exit_code,
            "result": result, "error": None if exit_code == 0 else f"exit {exit_code}", "seconds": 1.0,
            "hook_log": None, "stderr_log": None}


class SelfTest(unittest.TestCase):
    LOG_LINES = [
        {"function": "cublasSgemm_v2", "ops": "NN", "m": 8, "n": 8, "k": 8, "batch": 1, "flops": 1024,
         "action": "intercept", "variant": "auto"},
        {"function": "cublasLtMatmul", "ops": "TN", "m": 4, "n": 4, "k": 4, "batch": 1, "flops": 128,
         "action": "pass", "reason": "epilogue BGRADB"},
        {"function": "cublasGemmEx", "ops": "NN", "m": 2, "n": 2, "k": 2, "batch": 2, "flops": 32,
         "action": "pass", "reason": "below min flops"},
        {"function": "cublasSgemmStridedBatched_64", "ops": "NT", "m": 8, "n": 8, "k": 8, "batch": 1,
         "action": "intercept", "variant": "ec-fp16"},        # no flops key: 2*m*n*k*batch
    ]

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hook-checks-selftest-")
        self.log = os.path.join(self.tmp, "hook.jsonl")
        lines = [json.dumps(r) for r in self.LOG_LINES]
        text = lines[0] + "\n\n" + lines[1] + "\n{not json\n" + "\n".join(lines[2:]) + "\n"
        with open(self.log, "w") as f:
            f.write(text)
        self.first_line_end = len(lines[0]) + 1

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_read_log(self):
        records, bad = read_log(self.log)
        self.assertEqual(len(records), 4)
        self.assertEqual(bad, 1)
        self.assertEqual(read_log(os.path.join(self.tmp, "missing.jsonl")), ([], 0))
        window, bad = read_log(self.log, 0, self.first_line_end)
        self.assertEqual([r["function"] for r in window], ["cublasSgemm_v2"])
        rest, _ = read_log(self.log, self.first_line_end)
        self.assertEqual(len(rest), 3)

    def test_flop_shares(self):
        records, _ = read_log(self.log)
        s = flop_shares(records)
        self.assertEqual(s["total_flops"], 1024 + 128 + 32 + 1024)
        self.assertEqual(s["intercept_calls"], 2)
        self.assertAlmostEqual(s["intercept_share"], 2048 / 2208)
        self.assertEqual([p["reason"] for p in s["pass_reasons"]], ["epilogue BGRADB", "below min flops"])
        self.assertAlmostEqual(s["pass_reasons"][0]["share"], 128 / 2208)
        self.assertEqual(s["functions"]["cublasGemmEx"], 1)
        self.assertIsNone(flop_shares([])["intercept_share"])
        self.assertEqual(len(intercepts_of(records, 8, 8, 8)), 2)
        self.assertEqual(intercepts_of(records, 4, 4, 4), [])

    def gemm_runs(self, ms_hook, err_hook, off_sha="x"):
        def result(ms, err, sha="x"):
            return {"inputs": {d: {"sha256": sha, "ms": ms, "rel_fro": err, "rel_max": err, "finite": True}
                               for d in DISTS}}
        return {"nohook": fake_run("torch_gemm", "nohook", False, dict(result(30.0, 1e-6), hook_loaded=False)),
                "hook": fake_run("torch_gemm", "hook", True, dict(result(ms_hook, err_hook), hook_loaded=True)),
                "off": fake_run("torch_gemm", "off", True, dict(result(30.0, 1e-6, off_sha), hook_loaded=True))}

    def test_judge_gemm(self):
        records = [{"function": "cublasSgemm_v2", "m": 64, "n": 64, "k": 64, "action": "intercept"}]
        bitwise = {d: True for d in DISTS}
        crit, figures = judge_gemm(self.gemm_runs(8.0, 1e-7), records, 64, bitwise, quick=False)
        self.assertEqual(check_status(crit), "pass", crit)
        self.assertAlmostEqual(figures["inputs"]["urand"]["speedup"], 3.75)
        slow = judge_gemm(self.gemm_runs(20.0, 1e-7), records, 64, bitwise, quick=False)[0]
        self.assertEqual([c["name"] for c in slow if c["ok"] is False], ["urand: hook >= 3.0x faster than no hook"])
        self.assertEqual(check_status(judge_gemm(self.gemm_runs(20.0, 1e-7), records, 64, bitwise, True)[0]), "pass")
        inaccurate = judge_gemm(self.gemm_runs(8.0, 6e-7), records, 64, bitwise, False)[0]
        self.assertEqual(len([c for c in inaccurate if c["ok"] is False]), 2)
        no_intercept = judge_gemm(self.gemm_runs(8.0, 1e-7), [], 64, bitwise, False)[0]
        self.assertEqual(check_status(no_intercept), "fail")
        other_inputs = judge_gemm(self.gemm_runs(8.0, 1e-7, off_sha="y"), records, 64, bitwise, False)[0]
        self.assertEqual(check_status(other_inputs), "fail")
        missing = judge_gemm(self.gemm_runs(8.0, 1e-7), records, 64, {d: None for d in DISTS}, False)[0]
        self.assertEqual(check_status(missing), "fail")

    def test_children_criterion(self):
        self.assertTrue(children_criterion([fake_run("c", "hook", True, {"hook_loaded": True})])["ok"])
        self.assertFalse(children_criterion([fake_run("c", "hook", True, {"hook_loaded": False})])["ok"])
        self.assertFalse(children_criterion([fake_run("c", "hook", True, None, exit_code=-11)])["ok"])
        run = dict(fake_run("c", "hook", True, {"hook_loaded": True}), hook_log=self.log)
        self.assertEqual(len(run_log(run)), 4)
        self.assertIn("1 hook log lines are not JSON", children_criterion([run])["detail"])

    def test_judge_transformer_and_linear(self):
        runs = {mode: fake_run("transformer", mode, mode == "hook",
                               {"ms": 10.0 if mode == "hook" else 20.0, "finite": True, "hook_loaded": mode == "hook",
                                "output_rel_fro": 1e-7, "grad_rel_fro_max": 2e-7, "grad_worst_param": "w"})
                for mode in ("fp64", "fp32", "tf32", "hook")}
        records, _ = read_log(self.log)
        crit, figures = judge_transformer(runs, records, "section")
        self.assertEqual(check_status(crit), "pass")
        self.assertTrue(figures["share_aim_met"])                 # 2048 of 2208 flops
        self.assertFalse(judge_transformer(runs, records[1:], "section")[1]["share_aim_met"])
        self.assertIn("| hook | 10 | 1.000e-07 | 2.000e-07 | w |",
                      "\n".join(markdown_table(h, r) for _, h, r in tables_transformer(figures)))
        self.assertAlmostEqual(figures["speedup_vs_fp32"], 2.0)
        linear = fake_run("linear", "hook", True, {"errors": {"output": 1e-7, "weight_grad": 2e-6}, "finite": True,
                                                   "hook_loaded": True})
        jax = fake_run("jax", "hook", True, {"skipped": "jax import failed", "hook_loaded": True})
        crit, _ = judge_linear(linear, records, "section", jax, [])
        self.assertEqual(check_status(crit), "pass")
        self.assertIsNone(crit[-1]["ok"])
        jax = fake_run("jax", "hook", True, {"rel_fro": 1e-7, "finite": True, "hook_loaded": True})
        self.assertEqual(check_status(judge_linear(linear, records, "section", jax, records)[0]), "fail")
        self.assertEqual(check_status(judge_linear(linear, records, "section", jax, [])[0]), "pass")

    def test_shape_cases_cover(self):
        dims = SIZES[False]["shape_dims"]
        cases = shape_cases(dims, SIZES[False]["bmm16"])
        self.assertEqual(len([c for c in cases if c[0] == "mm"]), len(dims) ** 3)
        subset = {(m, n, k) for form, m, n, k, _ in cases if form == "At"}
        self.assertGreaterEqual(len(subset), 40)
        for lo_hi in [(a, b, c) for a in (1, 4097) for b in (1, 4097) for c in (1, 4097)]:
            self.assertIn(lo_hi, subset)
        for i, j in ((0, 1), (0, 2), (1, 2)):
            pairs = {(t[i], t[j]) for t in subset}
            self.assertEqual(len(pairs), len(dims) ** 2)
        self.assertIn(("bmm", 512, 256, 384, 16), cases)

    def test_judge_batched(self):
        def products(worst, skip_cupy=False):
            out = {name: {"worst": worst, "finite": True, "path": "p", "log_window": [0, 1]}
                   for name in BATCHED_PRODUCTS}
            if skip_cupy:
                out["bmm64_cupy"] = {"skipped": "cupy import failed"}
            return out

        def runs(worst, skip_cupy=False):
            return {mode: fake_run("batched", mode, True, {"products": products(worst, skip_cupy), "hook_loaded": True})
                    for mode in ("defaults", "min_flops_0")}

        taken = {"function": "cublasSgemmStridedBatched", "ops": "NN", "m": 512, "n": 512, "k": 512, "batch": 64,
                 "action": "intercept", "variant": "auto"}
        passed = dict(taken, action="pass", reason="below min flops", m=128, n=128, k=64, batch=384)
        del passed["variant"]
        # the defaults leave attention to cuBLAS (reported), the min_flops_0 run takes it (judged)
        sections = {"defaults": {name: [passed if name.startswith("attn") else taken] for name in BATCHED_PRODUCTS},
                    "min_flops_0": {name: [taken] for name in BATCHED_PRODUCTS}}
        crit, figures = judge_batched(runs(0.5), sections)
        self.assertEqual(check_status(crit), "pass", crit)
        self.assertEqual(len(figures["products"]), 2 * len(BATCHED_PRODUCTS))
        reported = [c for c in crit if c["ok"] is None]
        self.assertEqual(len(reported), len(BATCHED_PRODUCTS))
        self.assertIn("pass: below min flops", " ".join(c["detail"] for c in reported))
        self.assertEqual(check_status(judge_batched(runs(1.5), sections)[0]), "fail")      # outside the bound
        self.assertEqual(check_status(judge_batched(runs(0.0), sections)[0]), "pass")      # exact
        attention_passed = {"defaults": sections["defaults"], "min_flops_0": sections["defaults"]}
        failed = [c["name"] for c in judge_batched(runs(0.5), attention_passed)[0] if c["ok"] is False]
        self.assertEqual(len(failed), 2)
        self.assertTrue(all("attention" in name for name in failed))
        no_lines = {"defaults": {}, "min_flops_0": sections["min_flops_0"]}
        self.assertEqual(check_status(judge_batched(runs(0.5), no_lines)[0]), "fail")       # no log lines
        skipped = judge_batched(runs(0.5, skip_cupy=True), sections)[0]
        self.assertEqual(check_status(skipped), "pass")
        self.assertTrue(any(c["ok"] is None and "skipped" in c["detail"] for c in skipped))
        table = "\n".join(markdown_table(h, r) for _, h, r in tables_batched(figures))
        self.assertIn("| bmm64_torch | defaults | p | cublasSgemmStridedBatched NN 512 x 512 x 512, batch 64 | intercept |",
                      table)

    def test_files_equal(self):
        a, b, c = (os.path.join(self.tmp, name) for name in ("a.npy", "b.npy", "c.npy"))
        for path, data in ((a, b"\x93NUMPY1234"), (b, b"\x93NUMPY1234"), (c, b"\x93NUMPY1235")):
            with open(path, "wb") as f:
                f.write(data)
        self.assertTrue(files_equal(a, b))
        self.assertFalse(files_equal(a, c))
        self.assertIsNone(files_equal(a, os.path.join(self.tmp, "none.npy")))

    def test_markdown(self):
        self.assertEqual(fmt(None), "—")
        self.assertEqual(fmt(True), "yes")
        self.assertEqual(fmt(1.5e-7), "1.500e-07")
        self.assertEqual(fmt(3.14159), "3.142")
        self.assertEqual(fmt("a|b"), "a\\|b")
        self.assertEqual(markdown_table(["x", "y"], [[1, None]]), "| x | y |\n|---|---|\n| 1 | — |")
        records, _ = read_log(self.log)
        crit, figures = judge_gemm(self.gemm_runs(8.0, 1e-7), records, 8, {d: True for d in DISTS}, False)
        results = {"date": "2024-01-01", "hook": "/h.so", "hook_sha256": "ab", "quick": False,
                   "versions": {"gpu": "H100"},
                   "checks": {"a": {"title": CHECK_TITLES["a"], "status": check_status(crit), "criteria": crit,
                                    "figures": figures}}}
        text = render_markdown(results)
        self.assertIn("## (a) PyTorch matmul, square: PASS", text)
        self.assertIn("| urand: U(-1,1) | 1.000e-06 | 1.000e-07 | 0.1 |", text)
        shares_md = markdown_table(SHARE_HEADERS, share_rows(flop_shares(records)))
        self.assertIn("| pass: epilogue BGRADB | 5.8% | 1 |", shares_md)
        self.assertEqual(json.loads(json.dumps(json_safe({"x": [math.inf]}))), {"x": ["inf"]})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hook", help="libtcsolve_cublas.so (parent: required)")
    p.add_argument("--out", help="output folder (parent: required)")
    p.add_argument("--only", help="comma-separated subset of checks a..i")
    p.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    p.add_argument("--child-timeout", type=int, default=CHILD_TIMEOUT_S, help="seconds per child")
    p.add_argument("--self-test", action="store_true", help="test the pure helpers (CPU)")
    p.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    p.add_argument("--mode", default="", help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.self_test:
        suite = unittest.defaultTestLoader.loadTestsFromTestCase(SelfTest)
        return 0 if unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() else 1
    if args.child:
        child_main(args)
        return 0
    if not (args.hook and args.out):
        p.error("--hook and --out are required")
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
