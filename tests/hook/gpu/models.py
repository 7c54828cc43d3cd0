#!/usr/bin/env python3
"""libtcsolve_cublas.so, the LD_PRELOAD cuBLAS drop-in, on four unmodified programs: each run
once plain and once preloaded, each run in its own process, FP32 everywhere (allow_tf32 off);
time per step, output error against FP64, and the share of the FP32 GEMM flops intercepted.

    python3 tests/hook/gpu/models.py --hook HOOK_SO --out OUTDIR [--only bert,encoder,encoder-long,mlp,cupy]
                                     [--reps N] [--quick] [--sdpa math|default]
                                     [--hook-env TCSOLVE_HOOK_NAME=VALUE ...] [--child-timeout S]
                                     [--profile] [--encoder-tokens BATCHxSEQ]
    (or scripts/bench-hook-models-gpu HOOK_SO OUTDIR [...], which checks the preload first)

The programs (sizes without --quick; --quick: a smoke test with small sizes, not the figures):
  bert     HuggingFace transformers BertModel(BertConfig()) (base: 12 layers, 768 wide), random
           weights, dropout 0, attention "eager" when the config takes it (its products are then
           matmul/bmm calls; the one used is recorded); 32 x 128 random tokens, attention mask all
           ones; one step = forward + backward of last_hidden_state.pow(2).mean(). Row
           "bert-graph": the same step captured once in a CUDA graph (torch.cuda.graph, after
           warm-up on a side stream, as PyTorch's whole-network capture) and replayed: the
           GPU's time for the step without the host's per-operator work (the eager step can
           be bound by the host); its share is over the calls made during the capture.
  encoder  torch.nn.TransformerEncoder, 4 layers of TransformerEncoderLayer(1024, 16 heads,
           dim_feedforward 4096, dropout 0, batch_first); input 32 x 256 x 1024; one step =
           forward, loss pow(2).mean(), backward, SGD step. Out of memory: the batch is halved
           (the sizes that ran are in the output). --encoder-tokens BATCHxSEQ sets the input's
           batch and sequence length instead (the layers stay). Issue 34 gives this program's
           layers and its figures (61.9 ms plain on an H200, 97.2% of the FP32 GEMM flops
           intercepted), not its tokens: 32 x 256 and 64 x 128 (56.6 ms, 97.9%) come closest
           (session 37; 16 x 512: 62.8 ms but 92.2%).
  encoder-long  the same model on 8 x 2048 tokens (the long-sequence case: attention's products
           and PyTorch's softmax over 2048 x 2048 per head take most of the step; not one of the
           issue's figures).
  mlp      torch.compile(Linear(4096, 4096), GELU, Linear(4096, 4096)) on 8192 x 4096, forward
           only under no_grad, compiled before the timing; a compile failure is recorded.
  cupy     cupy.matmul(a, b, out=c) of 8192^2 FP32 (row "cupy-gemm") and of 64 x 512 x 512 by
           64 x 512 x 512 (row "cupy-batched").
With --sdpa math (the default) torch's SDPA runs on its math path (flash, memory-efficient and
cuDNN attention off), so that attention products are cuBLAS bmm calls, as in hook_checks.py (g).

Measures:
  * time: CUDA events around N repetitions (--reps, else per row: bert 10, encoder 5, mlp 20,
    cupy-gemm 20, cupy-batched 50), after warm-up; the median of 3 such timings, per step/call;
  * error: max|y - y64| / max|y64| (rel. max; rel. Frobenius also in the JSON), y64 from an FP64
    copy of the model (the same weights and inputs) in the same child, computed before the timed
    steps (SGD changes the weights); cupy: the FP64 product of the same inputs, plus the worst
    |C - C64| / (gamma |A||B|) elementwise, gamma = 2 (k + 2) 2^-24 + 3 2^-22 (hook_checks.py
    (c)'s bound: FP32's plus the split's operand representation), <= 1 meaning FP32 accuracy;
  * share of FP32 GEMM flops intercepted: a third child, "logged", runs the program preloaded with
    TCSOLVE_HOOK_LOG (one JSON line per cuBLAS GEMM call: function, ops, m, n, k, batch, flops,
    action intercept/pass, variant or reason; hook/src/journal.hpp) and records the log's size
    around the timed steps; the share is over those lines (the timed steps only), lines with
    reason "data type" (FP64 references, non-FP32 products) left out; the whole child's share is
    given beside it. The pass-through table lists, per row, the biggest passed-through shapes of
    the timed steps (reason, function, m x n x k, batch, calls and GFLOP per step). The
    preloaded child whose time is reported runs with the hook's defaults (no log, no report):
    the log's write() per GEMM call cost about 16 us of host time a call on the lent H200
    machine (BERT at 4 x 128 tokens, nothing intercepted: 20.2 ms a step plain, 24.6 logged;
    session 30), which a host-bound program pays in its step time. The logged child's time is
    given beside it (ms_logged).
With --profile the torch programs (bert, encoder) also run PROFILE_STEPS steps under
torch.profiler after the timing and write OUTDIR/profile-PROGRAM-MODE.txt: the operators and
kernels by device time, the device time summed over kernels per step against the step's time,
and the host time per step (where the time goes: the GPU's kernels, gaps between them, or the
host's launches).
The hook's settings are its defaults (docs/guide/drop-in.md, "Settings") unless --hook-env gives TCSOLVE_HOOK_* values for the preloaded children.

Output: the Markdown tables on stdout and in OUTDIR/results.md, everything in OUTDIR/results.json
(times, errors, shares, pass-through shapes, versions, GPU, the exact commands), each child's
stderr in OUTDIR/child-PROGRAM-MODE.log, the hook's log in OUTDIR/hook-PROGRAM.jsonl. A child
that fails is reported (exit status, last lines of its stderr) and the others go on. Progress
goes to stderr. Exit 0 when every child ran, 1 when one failed (the required figures are
reported, not judged in the exit status), 2 on a usage error."""
import argparse
import datetime
import hashlib
import json
import math
import os
import shlex
import signal
import statistics
import subprocess
import sys
import time
import traceback

SEED = 20240917
RESULT_PREFIX = "MODELS-RESULT "
CHILD_TIMEOUT_S = 900
TIMINGS = 3                        # the median of this many timings of N repetitions
STDERR_TAIL_LINES = 25             # of a failed child, in the report
TOP_PASSED = 10                    # pass-through shapes per row
ENV_REMOVED = ("LD_PRELOAD", "NVIDIA_TF32_OVERRIDE", "CUPY_TF32", "TORCH_ALLOW_TF32_CUBLAS_OVERRIDE")
# every child: CuPy's TF32 off, no downloads (the models are built from configs)
ENV_ADDED = {"CUPY_TF32": "0", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
NON_FP32_REASON = "data type"      # the hook's reason for a product whose A, B, C are not FP32
BOUND_C = 2                        # the elementwise bound of hook_checks.py (c)
SPLIT_TERM = 3 * 2.0 ** -22

PROGRAMS = {"bert": "HuggingFace BertModel (base), training step",
            "encoder": "torch.nn.TransformerEncoder, SGD step",
            "encoder-long": "torch.nn.TransformerEncoder on long sequences, SGD step",
            "mlp": "torch.compile MLP, forward",
            "cupy": "CuPy matmul"}
ROWS = {"bert": ["bert", "bert-graph"], "encoder": ["encoder"], "encoder-long": ["encoder-long"], "mlp": ["mlp"], "cupy": ["cupy-gemm", "cupy-batched"]}
SIZES = {
    False: {"bert": {"batch": 32, "seq": 128},
            "encoder": {"layers": 4, "d_model": 1024, "nhead": 16, "ff": 4096, "batch": 32, "seq": 256},
            "encoder-long": {"layers": 4, "d_model": 1024, "nhead": 16, "ff": 4096, "batch": 8, "seq": 2048},
            "mlp": {"rows": 8192, "features": 4096},
            "cupy-gemm": {"n": 8192},
            "cupy-batched": {"batch": 64, "m": 512, "n": 512, "k": 512}},
    True: {"bert": {"batch": 4, "seq": 128},
           "encoder": {"layers": 4, "d_model": 1024, "nhead": 16, "ff": 4096, "batch": 2, "seq": 128},
           "encoder-long": {"layers": 4, "d_model": 1024, "nhead": 16, "ff": 4096, "batch": 1, "seq": 512},
           "mlp": {"rows": 2048, "features": 1024},
           "cupy-gemm": {"n": 2048},
           "cupy-batched": {"batch": 64, "m": 512, "n": 512, "k": 512}},
}
REPS = {False: {"bert": 10, "bert-graph": 10, "encoder": 5, "encoder-long": 5, "mlp": 20, "cupy-gemm": 20, "cupy-batched": 50},
        True: {"bert": 3, "bert-graph": 3, "encoder": 3, "encoder-long": 3, "mlp": 5, "cupy-gemm": 5, "cupy-batched": 10}}
PROFILE_STEPS = 5                  # steps under torch.profiler with --profile
PROFILE_ROWS = 45                  # rows of each profile table
WARMUP = {"bert": 3, "bert-graph": 3, "encoder": 2, "encoder-long": 2, "mlp": 5, "cupy-gemm": 5, "cupy-batched": 5}
# The figures the issue asks for: (row, what, the row summary's key, test, cell format); judged
# without --quick only.
REQUIRED = [
    ("bert", "BERT-base training step at least 1.6x plain FP32", "speedup", lambda v: v >= 1.6, "x"),
    ("bert", "BERT-base: at least 97% of its FP32 GEMM flops on the corrected kernels", "share",
     lambda v: v >= 0.97, "pct"),
    ("encoder", "TransformerEncoder step at least 2x", "speedup", lambda v: v >= 2.0, "x"),
    ("cupy-batched", "CuPy batched 64 x 512^3 intercepted (all its FP32 GEMM flops)", "share",
     lambda v: v >= 0.999, "pct"),
    ("cupy-batched", "CuPy batched 64 x 512^3 faster than cuBLAS SGEMM", "speedup", lambda v: v > 1.0, "x"),
    ("cupy-batched", "CuPy batched 64 x 512^3 at FP32 accuracy (worst |C - C64| / (gamma |A||B|) <= 1)",
     "bound_ratio_preloaded", lambda v: v <= 1.0, None),
]


# ---------------------------------------------------------------------------------------------
# Parent helpers (standard library only)
# ---------------------------------------------------------------------------------------------

# The hook log's reader, a line's flops, the preload probe and the log's position:
# hook_checks.py's, beside this file (it imports nothing but the standard library and runs
# nothing on import).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hook_checks import hook_loaded, log_size, read_log, record_flops  # noqa: E402


def is_intercept(r):
    return r.get("action") == "intercept"


def fp32_share(records):
    """Share of the FP32 GEMM flops intercepted over log lines; lines with reason "data type"
    (not FP32: the FP64 references) are left out and counted apart."""
    fp32 = [r for r in records if r.get("reason") != NON_FP32_REASON]
    total = sum(record_flops(r) for r in fp32)
    intercepted = sum(record_flops(r) for r in fp32 if is_intercept(r))
    variants = {}
    for r in fp32:
        if is_intercept(r):
            variants[str(r.get("variant", "?"))] = variants.get(str(r.get("variant", "?")), 0) + 1
    return {"calls": len(fp32), "intercept_calls": sum(1 for r in fp32 if is_intercept(r)),
            "gflop": total * 1e-9, "intercept_gflop": intercepted * 1e-9,
            "share": intercepted / total if total else None, "variants": variants,
            "non_fp32_calls": len(records) - len(fp32),
            "non_fp32_gflop": sum(record_flops(r) for r in records if r.get("reason") == NON_FP32_REASON) * 1e-9}


def by_shape(records, steps, intercepted, top):
    """FP32 log lines grouped by (reason or variant, function, m, n, k, batch), biggest flops
    first, the `top` first; calls and GFLOP per step (`steps` steps in the lines)."""
    groups = {}
    for r in records:
        if r.get("reason") == NON_FP32_REASON or is_intercept(r) != intercepted:
            continue
        why = str(r.get("variant", "?")) if intercepted else str(r.get("reason", "(no reason)"))
        key = (why, str(r.get("function", "?")), r.get("m"), r.get("n"), r.get("k"), r.get("batch", 1))
        g = groups.setdefault(key, [0, 0.0])
        g[0] += 1
        g[1] += record_flops(r)
    total = sum(record_flops(r) for r in records if r.get("reason") != NON_FP32_REASON)
    steps = max(steps or 1, 1)
    rows = [{"reason" if not intercepted else "variant": why, "function": fn, "m": m, "n": n, "k": k,
             "batch": batch, "calls": calls, "gflop": flops * 1e-9, "calls_per_step": calls / steps,
             "gflop_per_step": flops * 1e-9 / steps, "share_of_fp32_flops": flops / total if total else None}
            for (why, fn, m, n, k, batch), (calls, flops) in groups.items()]
    rows.sort(key=lambda row: -row["gflop"])
    return rows[:top]


def merged_notes(plain, preloaded):
    """The two children's notes on a row: once when both have it, else marked with its mode."""
    plain, preloaded = [n for n in plain or [] if n], [n for n in preloaded or [] if n]
    out = [n if n in preloaded else f"plain: {n}" for n in plain]
    return out + [f"preloaded: {n}" for n in preloaded if n not in plain]


def ratio(numerator, denominator):
    if numerator is None or denominator is None or denominator == 0:
        return None
    return numerator / denominator


def fmt(value, kind=None):
    """A table cell."""
    if value is None:
        return "—"
    if kind == "ms":
        return f"{value:.2f}" if value >= 1 else f"{value:.4f}"
    if kind == "x":
        return f"{value:.2f}x"
    if kind == "err":
        return f"{value:.3e}"
    if kind == "pct":
        return f"{100 * value:.1f}%"
    if kind == "gflop":
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def json_safe(value):
    """results.json stays strict JSON: non-finite floats become strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tail(path, lines):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"(cannot read {path}: {e})"


def progress(message):
    print(f"models: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Parent
# ---------------------------------------------------------------------------------------------

class Parent:
    def __init__(self, args):
        self.hook = os.path.abspath(args.hook)
        self.out = os.path.abspath(args.out)
        self.args = args
        self.hook_env = dict(item.split("=", 1) for item in args.hook_env)

    def run_child(self, program, mode):
        """Runs `--child program --mode mode` (mode plain, preloaded: the hook's defaults, or
        logged: preloaded with the log and the exit report); its record: exit status, result
        (the child's last result line), error, command, logs."""
        preload = mode != "plain"
        removed = sorted(k for k in os.environ if k.startswith("TCSOLVE_") or k in ENV_REMOVED)
        env = {k: v for k, v in os.environ.items() if k not in removed}
        added = dict(ENV_ADDED)
        hook_log = None
        if preload:
            added.update(LD_PRELOAD=self.hook)
        if mode == "logged":
            hook_log = os.path.join(self.out, f"hook-{program}.jsonl")
            if os.path.exists(hook_log):
                os.remove(hook_log)                  # the hook appends
            added.update(TCSOLVE_HOOK_LOG=hook_log, TCSOLVE_HOOK_REPORT="1")
        if preload:
            added.update(self.hook_env)
        env.update(added)
        cmd = [sys.executable, os.path.abspath(__file__), "--child", program, "--mode", mode,
               "--sdpa", self.args.sdpa]
        if self.args.reps:
            cmd += ["--reps", str(self.args.reps)]
        if self.args.quick:
            cmd.append("--quick")
        if self.args.encoder_tokens:
            cmd += ["--encoder-tokens", self.args.encoder_tokens]
        if self.args.profile and mode != "logged":
            cmd += ["--profile-out", os.path.join(self.out, f"profile-{program}-{mode}.txt")]
        stderr_log = os.path.join(self.out, f"child-{program}-{mode}.log")
        run = {"program": program, "mode": mode, "preload": preload,
               "command": shlex.join(["env"] + [f"--unset={k}" for k in removed]
                                     + [f"{k}={v}" for k, v in added.items()] + cmd),
               "env_added": added, "env_removed": removed,
               "stderr_log": stderr_log, "hook_log": hook_log, "exit": None, "result": None, "error": None}
        progress(f"{program} {mode}: {run['command']}")
        t0 = time.monotonic()
        out = ""
        with open(stderr_log, "w") as err:
            try:
                proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True,
                                        errors="replace", start_new_session=True)
            except OSError as e:
                run["error"] = f"cannot start: {e}"
                proc = None
            if proc is not None:
                try:
                    out, _ = proc.communicate(timeout=self.args.child_timeout)
                except subprocess.TimeoutExpired:
                    try:                             # the child's own process group (its compile workers)
                        os.killpg(proc.pid, signal.SIGKILL)
                    except OSError:
                        pass
                    out, _ = proc.communicate()
                    run["error"] = f"timed out after {self.args.child_timeout} s"
                run["exit"] = proc.returncode
        run["seconds"] = round(time.monotonic() - t0, 1)
        stray = []
        for line in (out or "").splitlines():
            if line.startswith(RESULT_PREFIX):
                try:
                    run["result"] = json.loads(line[len(RESULT_PREFIX):])   # the last one counts
                except ValueError:
                    stray.append(line)
            else:
                stray.append(line)
        if stray:
            with open(stderr_log, "a") as err:
                err.write("\n--- stdout ---\n" + "\n".join(stray) + "\n")
        if run["error"] is None:
            if run["exit"] != 0:
                run["error"] = f"exit {run['exit']}"
                if run["exit"] is not None and run["exit"] < 0:
                    try:
                        run["error"] += f" (killed by {signal.Signals(-run['exit']).name})"
                    except ValueError:
                        pass
            elif run["result"] is None:
                run["error"] = "no result line"
            elif run["result"].get("error"):
                run["error"] = "the child reported an error"
        if run["error"] is None and run["result"].get("hook_loaded") is not preload:
            run["error"] = (f"hook loaded = {run['result'].get('hook_loaded')} with preload = {preload}")
        if run["error"] is not None:
            run["stderr_tail"] = tail(stderr_log, STDERR_TAIL_LINES)
        progress(f"{program} {mode}: {run['error'] or 'ok'} ({run['seconds']} s)")
        return run

    def summarize(self, row_name, plain, preloaded, logged):
        """The row's figures from its three children (times and errors from plain and preloaded,
        the share from the logged child's log)."""
        p = ((plain.get("result") or {}).get("rows") or {}).get(row_name) or {}
        q = ((preloaded.get("result") or {}).get("rows") or {}).get(row_name) or {}
        lg = ((logged.get("result") or {}).get("rows") or {}).get(row_name) or {}
        s = {"row": row_name, "title": q.get("title") or p.get("title") or row_name,
             "sizes_plain": p.get("sizes"), "sizes_preloaded": q.get("sizes"),
             "ms_plain": p.get("ms"), "ms_preloaded": q.get("ms"),
             "ms_runs_plain": p.get("ms_runs"), "ms_runs_preloaded": q.get("ms_runs"),
             "reps_plain": p.get("reps"), "reps_preloaded": q.get("reps"),
             "error_plain": (p.get("errors") or {}).get("rel_max"),
             "error_preloaded": (q.get("errors") or {}).get("rel_max"),
             "errors_plain": p.get("errors"), "errors_preloaded": q.get("errors"),
             "bound_ratio_plain": p.get("bound_ratio"), "bound_ratio_preloaded": q.get("bound_ratio"),
             "notes": merged_notes(p.get("notes"), q.get("notes")),
             "failed_plain": p.get("failed"), "failed_preloaded": q.get("failed"),
             "child_failed_plain": bool(plain.get("error")), "child_failed_preloaded": bool(preloaded.get("error")),
             "ms_logged": lg.get("ms"), "ms_runs_logged": lg.get("ms_runs"),
             "child_failed_logged": bool(logged.get("error"))}
        s["same_sizes"] = p.get("sizes") == q.get("sizes")
        s["speedup"] = ratio(s["ms_plain"], s["ms_preloaded"]) if s["same_sizes"] else None
        if not s["same_sizes"] and p and q:
            s["notes"].append(f"sizes differ: plain {p.get('sizes')}, preloaded {q.get('sizes')}: no speedup")
        # The hook writes each line as the call is made (journal.cpp: one write() per call), so the
        # window holds exactly the timed calls; an empty one means no hooked GEMM call there (never
        # replaced by the whole log: that would count another row's calls).
        window = lg.get("log_window")
        section, bad = read_log(logged.get("hook_log"), *window) if window else ([], 0)
        steps = lg.get("steps_in_window") if window else None
        s["share_scope"] = "timed steps" if window else "none (the logged child recorded no timed steps)"
        s["log_malformed_lines"] = bad
        s["timed"] = fp32_share(section)
        s["share"] = s["timed"]["share"]
        s["passed"] = by_shape(section, steps, False, TOP_PASSED)
        s["intercepted"] = by_shape(section, steps, True, 2 * TOP_PASSED)
        s["steps_in_window"] = steps
        return s

    def program(self, name):
        runs = {mode: self.run_child(name, mode) for mode in ("plain", "preloaded", "logged")}
        whole, bad = read_log(runs["logged"]["hook_log"])
        rows = [self.summarize(r, runs["plain"], runs["preloaded"], runs["logged"]) for r in ROWS[name]]
        return {"title": PROGRAMS[name], "children": runs, "rows": rows, "whole_child": fp32_share(whole),
                "log_malformed_lines": bad}


def versions_child(parent):
    """Versions (python, torch, cupy, transformers, numpy), the GPU: a plain child."""
    run = parent.run_child("versions", "plain")
    return (run.get("result") or {}).get("versions") or {"error": run.get("error")}, run


def required_rows(results):
    rows = {s["row"]: s for p in results["programs"].values() for s in p["rows"]}
    out = []
    for row, what, key, test, kind in REQUIRED:
        s = rows.get(row)
        value = s.get(key) if s else None
        met = None if (results["quick"] or value is None) else bool(test(value))
        note = "not judged: --quick" if results["quick"] else ("not run" if s is None else
                                                              ("no figure" if value is None else ""))
        out.append({"row": row, "requirement": what, "value": value, "format": kind, "met": met, "note": note,
                    "sizes": s.get("sizes_preloaded") if s else None})
    return out


def render_markdown(results):
    v = results.get("versions", {})
    out = ["# libtcsolve_cublas.so on four programs: plain FP32 and preloaded", "",
           markdown_table(["", ""], [[k, fmt(x)] for k, x in (
               ("date", results["date"]), ("GPU", v.get("gpu")), ("torch", v.get("torch")),
               ("CUDA (torch)", v.get("torch_cuda")), ("cupy", v.get("cupy")),
               ("transformers", v.get("transformers")), ("hook", results["hook"]),
               ("hook sha256", results["hook_sha256"]), ("hook settings", results["hook_env"] or "defaults"),
               ("quick (smoke sizes)", results["quick"]), ("SDPA", results["sdpa"]))]), ""]
    table = []
    for p in results["programs"].values():
        for s in p["rows"]:
            ms = {}
            for mode in ("plain", "preloaded"):
                failed = s[f"failed_{mode}"] or s[f"child_failed_{mode}"]
                ms[mode] = "failed" if s[f"ms_{mode}"] is None and failed else fmt(s[f"ms_{mode}"], "ms")
            ms["logged"] = "failed" if s["ms_logged"] is None and s["child_failed_logged"] else fmt(s["ms_logged"], "ms")
            table.append([fmt(s["title"]), ms["plain"], ms["preloaded"],
                          fmt(s["speedup"], "x"), fmt(s["error_plain"], "err"), fmt(s["error_preloaded"], "err"),
                          fmt(s["share"], "pct"), ms["logged"]])
    out += ["## Time per step or call, error, share intercepted", "",
            markdown_table(["program", "plain ms", "preloaded ms", "speedup", "error plain", "error preloaded",
                            "share of FP32 GEMM flops intercepted", "preloaded with the log, ms"], table), "",
            "Time: median of 3 timings of N repetitions after warm-up (CUDA events); preloaded with the hook's "
            "defaults. Error: max|y - y64| / max|y64| against an FP64 copy (the same weights and inputs). "
            "Share: over the timed steps' log lines of the logged child (TCSOLVE_HOOK_LOG), FP64/non-FP32 "
            "products (reason \"data type\") left out; that child's time in the last column.", ""]
    notes = []
    for name, p in results["programs"].items():
        w = p["whole_child"]
        notes.append(f"- {name}: whole logged child {fmt(w['share'], 'pct')} of {fmt(w['gflop'], 'gflop')} "
                     f"FP32 GFLOP intercepted ({w['calls']} FP32 calls, {w['non_fp32_calls']} non-FP32 left out)")
        for s in p["rows"]:
            t = s["timed"]
            if s["steps_in_window"]:
                extra = [f"{s['row']}: timed steps ({s['steps_in_window']}): {t['calls']} FP32 GEMM calls logged, "
                         f"{t['intercept_calls']} intercepted (variants {t['variants'] or 'none'})"]
            else:
                extra = [f"{s['row']}: the logged child recorded no timed steps"]
            if s.get("bound_ratio_preloaded") is not None or s.get("bound_ratio_plain") is not None:
                extra.append(f"worst |C - C64| / (gamma |A||B|): plain {fmt(s['bound_ratio_plain'])}, "
                             f"preloaded {fmt(s['bound_ratio_preloaded'])}")
            extra += s["notes"]
            for mode in ("plain", "preloaded"):
                failed = (s.get(f"failed_{mode}") or "").strip()
                if failed:
                    extra.append(f"{mode}: failed: {failed.splitlines()[-1]}")
            notes += ["  - " + str(e).replace("\n", " ") for e in extra]
    out += notes + [""]
    req = results.get("required", [])
    out += ["## Required figures", "",
            markdown_table(["requirement", "figure", "met"],
                           [[fmt(r["requirement"]), fmt(r["value"], r["format"]),
                             fmt(r["met"]) + (f" ({r['note']})" if r["note"] else "")] for r in req]), ""]
    passed = []
    for p in results["programs"].values():
        for s in p["rows"]:
            for g in s["passed"]:
                passed.append([s["row"], fmt(g["reason"]), g["function"], f"{g['m']} x {g['n']} x {g['k']}",
                               fmt(g["batch"]), fmt(g["calls_per_step"]), fmt(g["gflop_per_step"], "gflop"),
                               fmt(g["share_of_fp32_flops"], "pct")])
    out += [f"## Passed through to cuBLAS, by shape (timed steps, per step; top {TOP_PASSED} per row)", "",
            markdown_table(["row", "reason", "function", "m x n x k", "batch", "calls/step", "GFLOP/step",
                            "share of FP32 GEMM flops"], passed) if passed else "(none)", ""]
    failures = [r for p in results["programs"].values() for r in p["children"].values() if r["error"]]
    if results.get("versions_run", {}).get("error"):
        failures.insert(0, results["versions_run"])
    if failures:
        out += ["## Failed children", ""]
        for r in failures:
            out += [f"- {r['program']} {r['mode']}: {r['error']} (stderr: {os.path.basename(r['stderr_log'])}; "
                    f"its last {STDERR_TAIL_LINES} lines:)", "", "```",
                    (r.get("stderr_tail") or "").rstrip()[-4000:], "```", ""]
    return "\n".join(out) + "\n"


def write_results(out, results):
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(json_safe(results), f, indent=1)
    text = render_markdown(results)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    return text


def parent_main(args):
    if not os.path.isfile(args.hook):
        print(f"models: --hook {args.hook}: no such file", file=sys.stderr)
        return 2
    only = [c for c in args.only.split(",") if c] if args.only else list(PROGRAMS)
    unknown = [c for c in only if c not in PROGRAMS]
    bad_env = [e for e in args.hook_env if "=" not in e or not e.startswith("TCSOLVE_HOOK_")]
    if unknown:
        print(f"models: --only: unknown programs {unknown} (known: {','.join(PROGRAMS)})", file=sys.stderr)
    if bad_env:
        print(f"models: --hook-env: {bad_env} is not TCSOLVE_HOOK_NAME=VALUE", file=sys.stderr)
    if unknown or bad_env:
        return 2
    os.makedirs(args.out, exist_ok=True)
    parent = Parent(args)
    results = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "argv": sys.argv, "hook": parent.hook, "hook_sha256": sha256_file(parent.hook),
               "hook_env": parent.hook_env, "quick": args.quick, "sdpa": args.sdpa, "reps": args.reps,
               "sizes": SIZES[args.quick], "programs": {}}
    results["versions"], results["versions_run"] = versions_child(parent)
    for name in only:
        try:
            results["programs"][name] = parent.program(name)
        except Exception:                        # a bug in the parent's summary: reported, the rest go on
            tb = traceback.format_exc()
            progress(f"{name}: the parent failed to summarize:\n{tb}")
            results.setdefault("parent_errors", {})[name] = tb
        results["required"] = required_rows(results)
        write_results(args.out, results)         # after each program: a cut-off run keeps what it did
    text = write_results(args.out, results)
    print(text, end="", flush=True)
    failed = [f"{r['program']} {r['mode']}" for p in results["programs"].values() for r in p["children"].values()
              if r["error"]] + list(results.get("parent_errors", {}))
    progress(f"results in {os.path.join(args.out, 'results.md')} and results.json"
             + (f"; failed: {', '.join(failed)}" if failed else "; every child ran"))
    return 1 if failed else 0


# ---------------------------------------------------------------------------------------------
# Children (GPU; torch, transformers, cupy, numpy are imported here only)
# ---------------------------------------------------------------------------------------------



def say(message):
    print(f"[child] {message}", file=sys.stderr, flush=True)


def emit(result):
    """The child's result so far (the parent keeps the last line: a crash keeps what was done)."""
    print(RESULT_PREFIX + json.dumps(json_safe(result)), flush=True)


def reps_of(args, row):
    return args.reps or REPS[args.quick][row]


def setup_torch(torch, args):
    """FP32 everywhere: TF32 off for cuBLAS and cuDNN; SDPA on its math path with --sdpa math.
    What was set, as a dict."""
    info = {"torch": torch.__version__, "torch_cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0),
            "sdpa": args.sdpa}
    try:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        info["tf32_off_by"] = "allow_tf32 = False"
    except Exception as e:                       # a torch without the legacy switches: the new ones
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.fp32_precision = "ieee"
        info["tf32_off_by"] = f"fp32_precision = 'ieee' (allow_tf32 failed: {e!r})"
    if args.sdpa == "math":
        for name in ("enable_flash_sdp", "enable_mem_efficient_sdp", "enable_cudnn_sdp"):
            fn = getattr(torch.backends.cuda, name, None)
            if fn is not None:
                fn(False)
        torch.backends.cuda.enable_math_sdp(True)
    try:
        info["float32_matmul_precision"] = torch.get_float32_matmul_precision()
    except Exception as e:                       # recorded only
        info["float32_matmul_precision"] = f"unknown: {e!r}"
    return info


def time_torch(torch, fn, warmup, reps):
    """fn() warmup times, then TIMINGS timings of reps calls by CUDA events: per-call ms (median
    and all), and the hook log's window around the timed calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start_log = log_size()
    times = []
    for _ in range(TIMINGS):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / reps)
    torch.cuda.synchronize()
    return {"ms": statistics.median(times), "ms_runs": times, "warmup": warmup, "reps": reps,
            "steps_in_window": TIMINGS * reps, "log_window": [start_log, log_size()]}


def time_graph(torch, fn, warmup, reps):
    """fn() warmed up on a side stream, captured once into a CUDA graph and replayed: time_torch's
    figures for the replays, the log window around the capture (one step's calls)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    start_log = log_size()
    with torch.cuda.graph(graph):
        fn()
    torch.cuda.synchronize()
    window = [start_log, log_size()]
    timed = time_torch(torch, graph.replay, warmup, reps)
    timed.update(log_window=window, steps_in_window=1)
    return timed


def time_cupy(cupy, fn, warmup, reps):
    """time_torch with CuPy's events."""
    for _ in range(warmup):
        fn()
    cupy.cuda.Device().synchronize()
    start_log = log_size()
    times = []
    for _ in range(TIMINGS):
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(reps):
            fn()
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) / reps)
    cupy.cuda.Device().synchronize()
    return {"ms": statistics.median(times), "ms_runs": times, "warmup": warmup, "reps": reps,
            "steps_in_window": TIMINGS * reps, "log_window": [start_log, log_size()]}


def profile_torch(torch, fn, path):
    """PROFILE_STEPS calls of fn under torch.profiler: the tables by device time (operators,
    then kernels) and the per-step sums into path."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(PROFILE_STEPS):
            fn()
        stop.record()
        host_s = time.perf_counter() - t0        # the host's time to issue the steps
        stop.synchronize()
    events = prof.key_averages()
    device_us = sum(getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0))
                    for e in events if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA)
    kernels = sum(e.count for e in events if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA)
    with open(path, "w") as f:
        f.write(f"steps {PROFILE_STEPS}: step {start.elapsed_time(stop) / PROFILE_STEPS:.3f} ms (events), "
                f"kernels' device time {device_us / 1e3 / PROFILE_STEPS:.3f} ms per step, "
                f"{kernels / PROFILE_STEPS:.0f} device activities per step, host issue time "
                f"{host_s * 1e3 / PROFILE_STEPS:.3f} ms per step (profiler on)\n\n")
        for key in ("self_cuda_time_total", "cpu_time_total"):
            try:
                f.write(events.table(sort_by=key, row_limit=PROFILE_ROWS, max_name_column_width=70) + "\n\n")
            except Exception as e:               # a torch that names the column otherwise
                f.write(f"table by {key}: {e!r}\n")
    say(f"profile: {path}")


def torch_errors(torch, y, ref):
    """rel. max and rel. Frobenius of y against ref (both to float64), and y's finiteness."""
    y, ref = y.detach().to(torch.float64), ref.detach().to(torch.float64)
    diff = y - ref
    return {"rel_max": (diff.abs().max() / ref.abs().max()).item(),
            "rel_fro": (torch.linalg.norm(diff) / torch.linalg.norm(ref)).item(),
            "finite": bool(torch.isfinite(y).all())}


def free_torch(torch):
    import gc
    gc.collect()
    torch.cuda.empty_cache()


def bert_model(torch, transformers):
    """BertModel(BertConfig()) with dropout 0 and attention "eager" where the config takes it;
    the model and how attention was chosen."""
    from transformers import BertConfig, BertModel
    notes = []
    kwargs = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
    try:
        config = BertConfig(attn_implementation="eager", **kwargs)
    except Exception as e:                       # an older/newer config without the argument
        notes.append(f"BertConfig(attn_implementation='eager') failed: {e!r}")
        config = BertConfig(**kwargs)
    model = BertModel(config)
    attn = getattr(model.config, "_attn_implementation", None)
    if attn != "eager" and hasattr(model, "set_attn_implementation"):
        try:
            model.set_attn_implementation("eager")
            attn = getattr(model.config, "_attn_implementation", None)
        except Exception as e:                   # recorded; the default stays
            notes.append(f"set_attn_implementation('eager') failed: {e!r}")
    return model, config, {"attn_implementation": attn, "attn_notes": notes,
                           "transformers": transformers.__version__}


def child_bert(args, result):
    import copy
    import torch
    import transformers
    result["info"].update(setup_torch(torch, args))
    size = SIZES[args.quick]["bert"]
    batch, seq = size["batch"], size["seq"]
    torch.manual_seed(SEED)
    model, config, info = bert_model(torch, transformers)
    result["info"].update(info)
    say(f"bert: attention implementation {info['attn_implementation']}")
    model = model.to("cuda", torch.float32).train()
    gen = torch.Generator().manual_seed(SEED)
    ids = torch.randint(0, config.vocab_size, (batch, seq), generator=gen).cuda()
    mask = torch.ones(batch, seq, dtype=torch.long, device="cuda")
    row = {"title": f"BERT-base train step ({batch} x {seq} tokens, attention {info['attn_implementation']})",
           "sizes": dict(size, attn=info["attn_implementation"]),
           "notes": [f"attention implementation: {info['attn_implementation']}"] + info["attn_notes"]}
    result["rows"]["bert"] = row
    model64 = copy.deepcopy(model).to(torch.float64)
    with torch.no_grad():
        y = model(input_ids=ids, attention_mask=mask).last_hidden_state
        y64 = model64(input_ids=ids, attention_mask=mask).last_hidden_state
        row["errors"] = torch_errors(torch, y, y64)
    del model64, y, y64
    free_torch(torch)
    emit(result)

    def step():
        model.zero_grad(set_to_none=True)
        out = model(input_ids=ids, attention_mask=mask).last_hidden_state
        out.float().pow(2).mean().backward()
    row.update(time_torch(torch, step, WARMUP["bert"], reps_of(args, "bert")))
    if args.profile_out:
        profile_torch(torch, step, args.profile_out)
    emit(result)
    graph_row = {"title": f"BERT-base train step, CUDA graph replay ({batch} x {seq} tokens)",
                 "sizes": dict(size, attn=info["attn_implementation"], graph=True), "notes": []}
    result["rows"]["bert-graph"] = graph_row
    # transformers builds the attention mask from the 2D one with a host-to-device copy, which a
    # capture refuses: the graph's step passes the same mask in its 4D additive form, made
    # before the capture (transformers uses a 4D mask as given), else none (all ones: the same
    # products)
    ext = (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
    failures = []
    for name, m in (("4D additive mask", ext), ("no mask", None)):
        def graph_step(m=m):
            model.zero_grad(set_to_none=True)
            out = model(input_ids=ids, attention_mask=m).last_hidden_state
            out.float().pow(2).mean().backward()
        try:
            graph_row.update(time_graph(torch, graph_step, WARMUP["bert-graph"], reps_of(args, "bert-graph")))
            graph_row["notes"].append(f"captured with the {name}")
            graph_row.pop("failed", None)
            break
        except Exception:                        # a capture that fails is reported on its row only
            failures.append(f"{name}: " + traceback.format_exc()[-1500:])
            graph_row["failed"] = "\n".join(failures)
            say(failures[-1])
            torch.cuda.synchronize()
    row["max_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30


def encoder_run(torch, args, s, batch, row):
    import copy
    torch.manual_seed(SEED)
    layer = torch.nn.TransformerEncoderLayer(s["d_model"], s["nhead"], s["ff"], dropout=0.0, batch_first=True)
    model = torch.nn.TransformerEncoder(layer, s["layers"], enable_nested_tensor=False).to("cuda").train()
    gen = torch.Generator().manual_seed(SEED)
    x = torch.randn(batch, s["seq"], s["d_model"], generator=gen).cuda()
    model64 = copy.deepcopy(model).to(torch.float64)
    with torch.no_grad():
        y = model(x)
        y64 = model64(x.to(torch.float64))
        row["errors"] = torch_errors(torch, y, y64)
    del model64, y, y64
    free_torch(torch)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)

    def step():
        optimizer.zero_grad(set_to_none=True)
        model(x).pow(2).mean().backward()
        optimizer.step()
    row.update(time_torch(torch, step, WARMUP[args.child], reps_of(args, args.child)))
    if args.profile_out:
        profile_torch(torch, step, args.profile_out)


def child_encoder(args, result):
    import torch
    result["info"].update(setup_torch(torch, args))
    s = dict(SIZES[args.quick][args.child])
    if args.encoder_tokens:
        s["batch"], s["seq"] = encoder_tokens(args.encoder_tokens)
    batch = s["batch"]
    notes = []
    while True:
        sizes = dict(s, batch=batch)
        row = {"title": f"TransformerEncoder SGD step ({s['layers']} x d {s['d_model']}, {s['nhead']} heads, "
                        f"ff {s['ff']}; {batch} x {s['seq']} tokens)",
               "sizes": sizes, "notes": notes}
        result["rows"][args.child] = row
        try:
            encoder_run(torch, args, s, batch, row)
            break
        except torch.cuda.OutOfMemoryError as e:
            notes.append(f"batch {batch}: out of memory ({str(e).splitlines()[0][:200]})")
            say(notes[-1])
        free_torch(torch)
        if batch == 1:
            raise RuntimeError("encoder: out of memory at batch 1")
        batch //= 2
    row["max_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
    if batch != s["batch"]:
        notes.append(f"ran at batch {batch}, not {s['batch']}: what fits")


def encoder_tokens(text):
    """BATCHxSEQ as (batch, seq), both positive; ValueError otherwise."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.strip().isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"--encoder-tokens {text!r}: expected BATCHxSEQ, two positive integers (e.g. 64x128)")
    return int(parts[0]), int(parts[1])


def child_mlp(args, result):
    import copy
    import torch
    result["info"].update(setup_torch(torch, args))
    s = SIZES[args.quick]["mlp"]
    rows, f = s["rows"], s["features"]
    torch.manual_seed(SEED)
    mlp = torch.nn.Sequential(torch.nn.Linear(f, f), torch.nn.GELU(), torch.nn.Linear(f, f)).to("cuda")
    gen = torch.Generator().manual_seed(SEED)
    x = torch.randn(rows, f, generator=gen).cuda()
    mlp64 = copy.deepcopy(mlp).to(torch.float64)
    row = {"title": f"torch.compile MLP forward ({rows} x {f}, Linear {f}->{f}, GELU, Linear {f}->{f})",
           "sizes": s, "notes": []}
    result["rows"]["mlp"] = row
    with torch.no_grad():
        t0 = time.perf_counter()
        try:
            compiled = torch.compile(mlp)
            y = compiled(x)
            torch.cuda.synchronize()
        except Exception:                        # recorded; the other programs go on
            row["failed"] = f"torch.compile failed: {traceback.format_exc()[-3000:]}"
            say(row["failed"])
            return
        row["compile_s"] = time.perf_counter() - t0
        row["errors"] = torch_errors(torch, y, mlp64(x.to(torch.float64)))
        del y
        free_torch(torch)
        emit(result)
        row.update(time_torch(torch, lambda: compiled(x), WARMUP["mlp"], reps_of(args, "mlp")))


def cupy_row(cupy, np, args, name, batch, m, n, k, result):
    """C = A B (batch of them when batch > 0) with cupy.matmul(out=), timed; errors against the
    FP64 product, and the worst |C - C64| / (gamma |A||B|)."""
    shape_a, shape_b = ((batch, m, k), (batch, k, n)) if batch else ((m, k), (k, n))
    title = (f"CuPy batched matmul {batch} x {m} x {k} @ {batch} x {k} x {n}" if batch
             else f"CuPy a @ b, {m} x {k} @ {k} x {n}")
    row = {"title": title, "sizes": {"batch": batch, "m": m, "n": n, "k": k}, "notes": []}
    result["rows"][name] = row
    rng = np.random.default_rng([SEED, m, n, k, batch])
    a = cupy.asarray(rng.random(shape_a, dtype=np.float32) * 2 - 1)
    b = cupy.asarray(rng.random(shape_b, dtype=np.float32) * 2 - 1)
    c = cupy.empty(shape_a[:-1] + (n,), dtype=cupy.float32)
    row.update(time_cupy(cupy, lambda: cupy.matmul(a, b, out=c), WARMUP[name], reps_of(args, name)))
    a64, b64 = a.astype(cupy.float64), b.astype(cupy.float64)
    ref = cupy.matmul(a64, b64)
    diff = cupy.abs(c.astype(cupy.float64) - ref)
    row["errors"] = {"rel_max": float(diff.max() / cupy.abs(ref).max()),
                     "rel_fro": float(cupy.linalg.norm(diff) / cupy.linalg.norm(ref)),
                     "finite": bool(cupy.isfinite(c).all())}
    del ref
    gamma = BOUND_C * (k + 2) * 2.0 ** -24 + SPLIT_TERM
    bound = gamma * cupy.matmul(cupy.abs(a64), cupy.abs(b64))
    scaled = diff / cupy.maximum(bound, 1e-300)   # bound = 0 (a zero row or column): any error is huge
    row["bound_ratio"] = float(scaled.max())
    row["bound"] = f"gamma = {BOUND_C} (k + 2) 2^-24 + 3 2^-22 = {gamma:.3e}"
    del a, b, c, a64, b64, diff, bound, scaled
    cupy.get_default_memory_pool().free_all_blocks()


def child_cupy(args, result):
    import cupy
    import numpy as np
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props.get("name", b"?")
    result["info"].update(cupy=cupy.__version__, numpy=np.__version__,
                          gpu=name.decode() if isinstance(name, bytes) else str(name),
                          cuda_runtime=cupy.cuda.runtime.runtimeGetVersion(),
                          cupy_tf32=os.environ.get("CUPY_TF32"))
    size = SIZES[args.quick]
    errors = []
    square, batched = size["cupy-gemm"]["n"], size["cupy-batched"]
    for row_name, batch, m, n, k in (("cupy-gemm", 0, square, square, square),
                                     ("cupy-batched", batched["batch"], batched["m"], batched["n"], batched["k"])):
        try:
            cupy_row(cupy, np, args, row_name, batch, m, n, k, result)
        except Exception:                        # the other row goes on; the child reports it
            tb = traceback.format_exc()
            result["rows"].setdefault(row_name, {})["failed"] = tb[-3000:]
            errors.append(f"{row_name}:\n{tb}")
            say(f"{row_name} failed:\n{tb}")
            cupy.get_default_memory_pool().free_all_blocks()
        emit(result)
    if errors:
        raise RuntimeError("cupy rows failed:\n" + "\n".join(errors))


def child_versions(args, result):
    versions = {"python": sys.version.split()[0]}
    for module in ("torch", "cupy", "transformers", "numpy"):
        try:
            versions[module] = __import__(module).__version__
        except Exception as e:                   # recorded: its program fails on its own
            versions[module] = f"not importable: {e!r}"
    try:
        import torch
        versions["gpu"] = torch.cuda.get_device_name(0)
        versions["torch_cuda"] = torch.version.cuda
        versions["cudnn"] = torch.backends.cudnn.version()
    except Exception as e:                       # recorded
        versions["gpu"] = f"unknown: {e!r}"
    result["versions"] = versions


CHILDREN = {"bert": child_bert, "encoder": child_encoder, "encoder-long": child_encoder, "mlp": child_mlp, "cupy": child_cupy,
            "versions": child_versions}


def child_main(args):
    result = {"program": args.child, "mode": args.mode, "quick": args.quick, "rows": {}, "info": {},
              "hook_loaded": hook_loaded(), "error": None}
    status = 0
    try:
        CHILDREN[args.child](args, result)
    except BaseException:                        # reported to the parent with what was done
        result["error"] = traceback.format_exc()[-4000:]
        say(result["error"])
        status = 1
    emit(result)
    return status


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hook", help="libtcsolve_cublas.so (required)")
    p.add_argument("--out", help="output folder (required)")
    p.add_argument("--only", help=f"comma-separated subset of {','.join(PROGRAMS)}")
    p.add_argument("--reps", type=int, help="repetitions per timing, every row (default: per row)")
    p.add_argument("--quick", action="store_true", help="small sizes: a smoke test, not the figures")
    p.add_argument("--sdpa", choices=("math", "default"), default="math",
                   help="torch SDPA backends: math (attention as cuBLAS bmm; default) or torch's default")
    p.add_argument("--hook-env", action="append", default=[], metavar="TCSOLVE_HOOK_NAME=VALUE",
                   help="a hook setting for the preloaded children (repeatable; default: the hook's defaults)")
    p.add_argument("--child-timeout", type=int, default=CHILD_TIMEOUT_S, help="seconds per child")
    p.add_argument("--profile", action="store_true",
                   help="bert, encoder: also profile a few steps (torch.profiler) into OUTDIR/profile-*.txt")
    p.add_argument("--encoder-tokens", metavar="BATCHxSEQ",
                   help="encoder, encoder-long: the input's batch and sequence length (default: %dx%d, %dx%d)"
                        % (SIZES[False]["encoder"]["batch"], SIZES[False]["encoder"]["seq"],
                           SIZES[False]["encoder-long"]["batch"], SIZES[False]["encoder-long"]["seq"]))
    p.add_argument("--profile-out", help=argparse.SUPPRESS)
    p.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    p.add_argument("--mode", default="plain", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.reps is not None and args.reps < 1:
        p.error("--reps must be >= 1")
    if args.encoder_tokens:
        try:
            encoder_tokens(args.encoder_tokens)
        except ValueError as e:
            p.error(str(e))
    if args.child:
        return child_main(args)
    if not (args.hook and args.out):
        p.error("--hook and --out are required")
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
