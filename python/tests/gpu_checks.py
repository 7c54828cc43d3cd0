#!/usr/bin/env python3
"""GPU checks of the Python package (issue 17), for the lent GPU machine (python3 with PyTorch and
CuPy); not a pytest module. Writes OUT/results.json and OUT/results.md; exit 0 when every
pass/fail check passed, 1 when one failed, 2 when torch has no GPU.

  (solve)  tcsolve.solve on a torch float64 CUDA tensor, n = 16384, A and x U(-1, 1) (the system
           of `tcsolve generate --mode random --seed 1`, read from the file the CLI solves):
           its device time (info.timings["total"], median of the timed runs after one warm-up)
           within 5% of `tcsolve compare --variants auto --backend cuda`'s time_s.total for the
           same file, with the same iterations and backward error; side by side with
           torch.linalg.solve and cupy.linalg.solve (FP64, median wall time of the timed runs,
           synchronized) and their backward errors.
  (matmul) tcsolve.matmul(a, b, out=out) on torch and CuPy float32 at 8192^2 (U(-1, 1)), for
           auto, ec-fp16 and ec-tf32: no device memory allocated by the call (torch:
           memory_stats' allocated_bytes.all.allocated, a running total, unchanged; CuPy: the
           default pool's used and total bytes unchanged), bitwise tcsolveSgemm called directly
           through ctypes (capi_direct.py) on a separate output; times beside torch.mm in FP32
           (TF32 off).
  (kmeans) tcsolve.KMeans(k = 1024) on a 1,000,000 x 128 float32 CUDA tensor (Gaussian blobs:
           1024 centres uniform in [-10, 10]^128, unit noise, torch seed 1), k-means++ seed 1,
           (drawn once, tcsolve.kmeans_plusplus), at most 50 iterations, tol 0 (as
           scripts/bench-demos-gpu runs the CLI), for auto,
           ec-fp16 and fp16-tc: time per iteration (the library's), and the fraction of labels
           equal to the fp64 variant's run from the same start; beside one iteration of a plain
           PyTorch FP32 Lloyd step (mm, argmin, index_add_).

Usage (from the repository root, the package importable, e.g. after scripts/test-python-gpu
set PYTHONPATH; CLI may be a command with arguments, such as "bundle/run tcsolve"):
  python3 python/tests/gpu_checks.py --cli CLI --out OUTDIR [--work DIR] [--quick] [--only solve,matmul,kmeans]
--quick runs small sizes (n = 2048, 2048^2, 100000 x 32 with k = 64) to try the script out.
"""

import argparse
import json
import os
import pathlib
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def run_cli(cli, *args):
    """The CLI's JSON object for ``args`` (with --json)."""
    argv = shlex.split(cli) + [str(a) for a in args] + ["--json"]
    p = subprocess.run(argv, capture_output=True, text=True)
    try:
        obj = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}, no JSON; stderr: {p.stderr[-2000:]}")
    if p.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {obj.get('error')}")
    return obj


def find_hdf5(cli, given):
    """libhdf5 for the reader: --hdf5-library, else the one the CLI loads (ldd of the binary, or
    the lib/ folder of a bundle-binaries bundle), else found by name."""
    if given:
        return given
    words = shlex.split(cli)
    exe = words[0]
    if os.path.basename(exe) == "run" and len(words) > 1:  # bundle/run tcsolve
        lib = pathlib.Path(exe).resolve().parent / "lib"
        found = sorted(lib.glob("libhdf5*.so*"))
        found = [f for f in found if "_hl" not in f.name]
        if found:
            return str(found[0])
        exe = str(pathlib.Path(exe).resolve().parent / "bin" / words[1])
    try:
        out = subprocess.run(["ldd", shutil.which(exe) or exe], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if "libhdf5" in line and "_hl" not in line and "=>" in line:
                return line.split("=>")[1].split()[0]
    except OSError:
        pass
    return None


def read_system(cli, hdf5_library, path, work):
    """(A, b, how) of a system file as NumPy float64 arrays: through h5py when it imports, else
    through hdf5_reader.py in a child process (first as the machine is, then with the library
    path holding the bundle's libhdf5 and its dependencies); None when neither reads it."""
    try:
        import h5py
        with h5py.File(path, "r") as f:
            return np.asarray(f["A"], dtype=np.float64), np.asarray(f["b"], dtype=np.float64), "h5py"
    except ImportError:
        pass
    library = find_hdf5(cli, hdf5_library)
    envs = [dict(os.environ)]
    if library:
        envs.append({**os.environ, "LD_LIBRARY_PATH": os.path.dirname(library) +
                     (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")})
    for env in envs:
        ok = True
        for name in ("A", "b"):
            argv = [sys.executable, str(HERE / "hdf5_reader.py"), str(path), name, str(pathlib.Path(work) / f"{name}.npy")]
            if library:
                argv += ["--library", library]
            p = subprocess.run(argv, env=env, capture_output=True, text=True)
            if p.returncode != 0:
                print(f"gpu_checks: reading {path}:{name}: {p.stderr.strip()[-500:]}", file=sys.stderr)
                ok = False
                break
        if ok:
            A = np.load(pathlib.Path(work) / "A.npy")
            b = np.load(pathlib.Path(work) / "b.npy")
            for name in ("A", "b"):
                (pathlib.Path(work) / f"{name}.npy").unlink()
            return A, b, "hdf5_reader.py (child process)"
    return None


def median(values):
    return statistics.median(values) if values else float("nan")


def backward_error_torch(torch, A, b, x):
    """||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf) in FP64 on the device."""
    r = b - A @ x
    return float(r.abs().max() / (A.abs().sum(dim=1).max() * x.abs().max() + b.abs().max()))


def timed(torch, fn, repeats):
    """fn() run `repeats` times after one warm-up; wall seconds each, synchronized."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return times


def check_solve(ctx):
    torch, tcsolve, cupy, args = ctx["torch"], ctx["tcsolve"], ctx["cupy"], ctx["args"]
    n = args.n
    path = pathlib.Path(ctx["work"]) / f"random_n{n}.h5"
    gen = run_cli(args.cli, "generate", "--n", n, "--mode", "random", "--seed", 1, "--output", path, "--force")
    cmp = run_cli(args.cli, "compare", "--input", path, "--variants", "auto", "--backend", "cuda")
    cli_auto = next(r for r in cmp["results"] if r.get("variant") == "auto")
    system = read_system(args.cli, args.hdf5_library, path, ctx["work"])
    if system is not None:
        A, b, how = system
        A, b = torch.from_numpy(A).cuda(), torch.from_numpy(b).cuda()
        source = f"the CLI's file, read by {how}"
    else:  # no HDF5 reader here: an independent draw of the same distribution
        g = torch.Generator(device="cuda").manual_seed(1)
        A = torch.rand(n, n, device="cuda", dtype=torch.float64, generator=g) * 2 - 1
        b = A @ (torch.rand(n, device="cuda", dtype=torch.float64, generator=g) * 2 - 1)
        source = "independent draw (no HDF5 reader): A, x U(-1,1), torch seed 1"
    torch.cuda.synchronize()

    tcsolve.solve(A, b)  # warm-up: the handle, its library handles and workspaces
    runs = []
    for _ in range(args.repeats):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        x, info = tcsolve.solve(A, b)
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t0, info))
    py_total = median([info.timings["total"] for _, info in runs])
    info = runs[-1][1]
    ratio = py_total / cli_auto["time_s"]["total"]
    result = {
        "n": n, "system": source, "generate": {"time_s": gen.get("time_s"), "backend": gen.get("backend")},
        "cli_compare_auto": {k: cli_auto[k] for k in ("resolved_variant", "iterations", "converged", "backward_error",
                                                     "time_s", "block_size")},
        "cli_compare_baselines": [{"method": r["method"], "time_total_s": r["time_s"]["total"],
                                   "iterations": r["iterations"], "backward_error": r["backward_error"]}
                                  for r in cmp["results"] if "method" in r],
        "python": {"device_time_total_s": py_total, "device_times_s": [i.timings["total"] for _, i in runs],
                   "wall_times_s": [w for w, _ in runs], "iterations": info.iterations,
                   "converged": info.converged, "backward_error": info.backward_error,
                   "resolved_variant": info.resolved_variant, "phases": info.timings["phases"]},
        "ratio_python_vs_cli": ratio,
    }
    t_torch = timed(torch, lambda: torch.linalg.solve(A, b), args.repeats)
    x_torch = torch.linalg.solve(A, b)
    result["torch_linalg_solve"] = {"wall_s": median(t_torch), "backward_error": backward_error_torch(torch, A, b, x_torch)}
    if cupy is not None:
        Ac, bc = cupy.asarray(A.cpu().numpy()), cupy.asarray(b.cpu().numpy())
        t_cupy = timed(torch, lambda: (cupy.linalg.solve(Ac, bc), cupy.cuda.Device().synchronize()), args.repeats)
        xc = cupy.linalg.solve(Ac, bc)
        rc = bc - Ac @ xc
        be = float(cupy.abs(rc).max() / (cupy.abs(Ac).sum(axis=1).max() * cupy.abs(xc).max() + cupy.abs(bc).max()))
        result["cupy_linalg_solve"] = {"wall_s": median(t_cupy), "backward_error": be}
    result["tcsolve_wall_s"] = median([w for w, _ in runs])
    checks = {
        "solve: device time within 5% of the CLI's compare time": abs(ratio - 1) <= 0.05,
        "solve: same iterations as the CLI": info.iterations == cli_auto["iterations"],
        "solve: converged": info.converged,
    }
    if system is not None:  # the same system: the same solve, bit for bit
        checks["solve: same backward error as the CLI"] = info.backward_error == cli_auto["backward_error"]
    path.unlink()
    return result, checks


def check_matmul(ctx):
    torch, tcsolve, cupy, args = ctx["torch"], ctx["tcsolve"], ctx["cupy"], ctx["args"]
    import capi_direct
    n = args.matmul_n
    flops = 2.0 * n**3
    torch.manual_seed(1)
    a = torch.rand(n, n, device="cuda") * 2 - 1
    b = torch.rand(n, n, device="cuda") * 2 - 1
    out = torch.empty(n, n, device="cuda")
    ref = torch.empty(n, n, device="cuda")
    result, checks = {"n": n, "torch": {}, "cupy": {}}, {}
    torch.backends.cuda.matmul.allow_tf32 = False
    t_mm = timed(torch, lambda: torch.mm(a, b, out=ref), args.repeats)
    result["torch_mm_fp32"] = {"time_s": median(t_mm), "tflops": flops / median(t_mm) / 1e12}
    for variant in ("auto", "ec-fp16", "ec-tf32"):
        tcsolve.matmul(a, b, variant=variant, out=out)  # warm-up (the handle's workspaces)
        torch.cuda.synchronize()
        before = torch.cuda.memory_stats()
        times = timed(torch, lambda: tcsolve.matmul(a, b, variant=variant, out=out), args.repeats)
        after = torch.cuda.memory_stats()
        capi_direct.sgemm_row_major("cuda", variant, n, n, n, a.data_ptr(), b.data_ptr(), ref.data_ptr(),
                                    torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        allocated = after["allocated_bytes.all.allocated"] - before["allocated_bytes.all.allocated"]
        bitwise = bool(torch.equal(out, ref))
        exact = None
        if variant == "auto":  # accuracy against FP64 on a 1024-row slice
            e = a[:1024].double() @ b.double()
            exact = float((out[:1024].double() - e).norm() / e.norm())
        result["torch"][variant] = {"time_s": median(times), "tflops": flops / median(times) / 1e12,
                                    "allocated_bytes_during_calls": allocated, "bitwise_capi": bitwise,
                                    "relative_residual_first_1024_rows": exact}
        checks[f"matmul torch {variant}: no device allocation"] = allocated == 0 and \
            after["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]
        checks[f"matmul torch {variant}: bitwise tcsolveSgemm"] = bitwise
    if cupy is not None:
        ac, bc = cupy.asarray(a.cpu().numpy()), cupy.asarray(b.cpu().numpy())
        oc = cupy.empty((n, n), cupy.float32)
        rc = cupy.empty((n, n), cupy.float32)
        pool = cupy.get_default_memory_pool()
        for variant in ("auto", "ec-fp16", "ec-tf32"):
            tcsolve.matmul(ac, bc, variant=variant, out=oc)
            cupy.cuda.Device().synchronize()
            used, total = pool.used_bytes(), pool.total_bytes()
            times = timed(torch, lambda: (tcsolve.matmul(ac, bc, variant=variant, out=oc),
                                          cupy.cuda.Device().synchronize()), args.repeats)
            same_pool = pool.used_bytes() == used and pool.total_bytes() == total
            capi_direct.sgemm_row_major("cuda", variant, n, n, n, ac.data.ptr, bc.data.ptr, rc.data.ptr,
                                        cupy.cuda.get_current_stream().ptr)
            cupy.cuda.Device().synchronize()
            bitwise = bool((oc == rc).all())
            # The torch loop ended with ec-tf32: `out` holds its result for the same inputs and call.
            same_as_torch = bool((oc == cupy.asarray(out.cpu().numpy())).all()) if variant == "ec-tf32" else None
            result["cupy"][variant] = {"time_s": median(times), "tflops": flops / median(times) / 1e12,
                                       "pool_unchanged": same_pool, "bitwise_capi": bitwise,
                                       "equal_to_torch_result": same_as_torch}
            checks[f"matmul cupy {variant}: no device allocation"] = same_pool
            checks[f"matmul cupy {variant}: bitwise tcsolveSgemm"] = bitwise
    return result, checks


def lloyd_step_torch(torch, X, C):
    """One plain PyTorch FP32 Lloyd iteration (the baseline): distances by one mm, argmin, sums by
    index_add_, means."""
    scores = (C * C).sum(dim=1)[None, :] - 2.0 * (X @ C.t())
    labels = scores.argmin(dim=1)
    sums = torch.zeros_like(C).index_add_(0, labels, X)
    counts = torch.bincount(labels, minlength=C.shape[0]).clamp_(min=1).to(X.dtype)
    return sums / counts[:, None], labels


def check_kmeans(ctx):
    torch, tcsolve, args = ctx["torch"], ctx["tcsolve"], ctx["args"]
    points, dim, k = args.kmeans_points, args.kmeans_dim, args.kmeans_k
    g = torch.Generator(device="cuda").manual_seed(1)
    centres = torch.rand(k, dim, device="cuda", generator=g) * 20 - 10
    which = torch.randint(0, k, (points,), device="cuda", generator=g)
    X = centres[which] + torch.randn(points, dim, device="cuda", generator=g)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    start = tcsolve.kmeans_plusplus(X, k, random_state=1)  # drawn once: every run starts from it
    common = {"max_iter": 50, "tol": 0.0, "init": start}
    result, checks = {"points": points, "dim": dim, "k": k, "max_iter": 50, "runs": {},
                      "seeding_wall_s": time.perf_counter() - t0}, {}
    t0 = time.perf_counter()
    ref = tcsolve.KMeans(k, variant="fp64", **common).fit(X)
    result["runs"]["fp64"] = {"time_per_iteration_s": ref.time_per_iteration_, "iterations": ref.n_iter_,
                              "inertia": ref.inertia_, "stop": ref.stop_reason_,
                              "fit_wall_s": time.perf_counter() - t0}
    for variant in ("auto", "ec-fp16", "fp16-tc"):
        t0 = time.perf_counter()
        km = tcsolve.KMeans(k, variant=variant, **common).fit(X)
        wall = time.perf_counter() - t0
        agreement = float((km.labels_ == ref.labels_).double().mean())
        result["runs"][variant] = {"time_per_iteration_s": km.time_per_iteration_, "iterations": km.n_iter_,
                                   "inertia": km.inertia_, "stop": km.stop_reason_,
                                   "resolved_variant": km.resolved_variant_, "labels_equal_to_fp64": agreement,
                                   "fit_wall_s": wall, "labels_on_device": bool(km.labels_.is_cuda)}
        checks[f"kmeans {variant}: ran on cuda with device attributes"] = km.backend_ == "cuda" and km.labels_.is_cuda
    C = X[:k].clone()
    lloyd_step_torch(torch, X, C)
    times = timed(torch, lambda: lloyd_step_torch(torch, X, C), 5)
    result["torch_fp32_lloyd_iteration_s"] = median(times)
    return result, checks


def markdown(results):
    lines = [f"# Python package GPU checks ({results['date']})", "",
             f"Device: {results['device']}; tcsolve {results['versions']['tcsolve']}, torch "
             f"{results['versions']['torch']}, CuPy {results['versions']['cupy']}, Python "
             f"{results['versions']['python']}", "", "| check | result |", "| --- | --- |"]
    for name, ok in results["checks"].items():
        lines.append(f"| {name} | {'pass' if ok else 'FAIL'} |")
    s = results.get("solve")
    if s:
        lines += ["", f"## solve, n = {s['n']} (U(-1,1), FP64 accuracy)", "", f"System: {s['system']}", "",
                  "| method | time (s) | iterations | backward error |", "| --- | ---: | ---: | ---: |",
                  f"| tcsolve.solve (torch CUDA tensor, device time) | {s['python']['device_time_total_s']:.4f} | "
                  f"{s['python']['iterations']} | {s['python']['backward_error']:.2e} |",
                  f"| tcsolve.solve (wall, synchronized) | {s['tcsolve_wall_s']:.4f} | | |",
                  f"| `tcsolve compare` auto (device time) | {s['cli_compare_auto']['time_s']['total']:.4f} | "
                  f"{s['cli_compare_auto']['iterations']} | {s['cli_compare_auto']['backward_error']:.2e} |",
                  f"| torch.linalg.solve (wall) | {s['torch_linalg_solve']['wall_s']:.4f} | | "
                  f"{s['torch_linalg_solve']['backward_error']:.2e} |"]
        if "cupy_linalg_solve" in s:
            lines.append(f"| cupy.linalg.solve (wall) | {s['cupy_linalg_solve']['wall_s']:.4f} | | "
                         f"{s['cupy_linalg_solve']['backward_error']:.2e} |")
        for r in s["cli_compare_baselines"]:
            lines.append(f"| `compare` {r['method']} | {r['time_total_s']:.4f} | {r['iterations']} | "
                         f"{r['backward_error']:.2e} |")
        lines.append(f"\nPython / CLI device time: {s['ratio_python_vs_cli']:.3f}")
    m = results.get("matmul")
    if m:
        lines += ["", f"## matmul, {m['n']}^2 float32, out= in place", "",
                  "| array | variant | ms | TFLOP/s | allocated during calls | bitwise tcsolveSgemm |",
                  "| --- | --- | ---: | ---: | --- | --- |",
                  f"| torch.mm FP32 | | {m['torch_mm_fp32']['time_s'] * 1e3:.2f} | {m['torch_mm_fp32']['tflops']:.1f} | | |"]
        for kind in ("torch", "cupy"):
            for v, r in m[kind].items():
                alloc = r.get("allocated_bytes_during_calls", "pool unchanged" if r.get("pool_unchanged") else "CHANGED")
                lines.append(f"| {kind} | {v} | {r['time_s'] * 1e3:.2f} | {r['tflops']:.1f} | {alloc} | {r['bitwise_capi']} |")
    k = results.get("kmeans")
    if k:
        lines += ["", f"## KMeans, {k['points']} x {k['dim']}, k = {k['k']}, at most {k['max_iter']} iterations", "",
                  "| variant | ms / iteration | iterations | labels equal to fp64's | inertia |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        for v, r in k["runs"].items():
            agree = r.get("labels_equal_to_fp64", 1.0)
            lines.append(f"| {v} | {r['time_per_iteration_s'] * 1e3:.2f} | {r['iterations']} | {agree:.5%} | "
                         f"{r['inertia']:.6e} |")
        lines.append(f"\nOne PyTorch FP32 Lloyd iteration (mm, argmin, index_add_): "
                     f"{k['torch_fp32_lloyd_iteration_s'] * 1e3:.2f} ms")
    for name, err in results.get("errors", {}).items():
        lines += ["", f"## {name}: error", "", "```", err, "```"]
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", required=True, help='the tcsolve command (e.g. "bundle/run tcsolve")')
    parser.add_argument("--out", required=True, help="folder for results.json and results.md")
    parser.add_argument("--work", help="folder for the 2 GiB system file (default: a temporary folder)")
    parser.add_argument("--hdf5-library", help="libhdf5 for reading the system (default: the CLI's)")
    parser.add_argument("--quick", action="store_true", help="small sizes, to try the script out")
    parser.add_argument("--only", default="solve,matmul,kmeans", help="checks to run (comma-separated)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per measurement (after a warm-up)")
    args = parser.parse_args()
    args.n, args.matmul_n = (2048, 2048) if args.quick else (16384, 8192)
    args.kmeans_points, args.kmeans_dim, args.kmeans_k = (100000, 32, 64) if args.quick else (1000000, 128, 1024)

    import torch
    if not torch.cuda.is_available():
        print("gpu_checks: torch sees no CUDA device", file=sys.stderr)
        return 2
    import tcsolve
    try:
        import cupy
    except ImportError:
        cupy = None
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = args.work or tempfile.mkdtemp(prefix="tcsolve-gpu-checks-")
    cli_version = subprocess.run(shlex.split(args.cli) + ["--version"], capture_output=True, text=True).stdout
    results = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "device": torch.cuda.get_device_name(0),
        "versions": {"tcsolve": tcsolve.__version__, "cli": cli_version.strip(), "torch": torch.__version__,
                     "torch_cuda": torch.version.cuda, "cupy": getattr(cupy, "__version__", None),
                     "python": platform.python_version(), "numpy": np.__version__},
        "library": tcsolve.library_path(), "quick": args.quick, "checks": {}, "errors": {},
    }
    ctx = {"torch": torch, "tcsolve": tcsolve, "cupy": cupy, "args": args, "work": work}
    for name, fn in (("solve", check_solve), ("matmul", check_matmul), ("kmeans", check_kmeans)):
        if name not in args.only.split(","):
            continue
        print(f"gpu_checks: {name} ...", file=sys.stderr, flush=True)
        try:
            results[name], checks = fn(ctx)
            results["checks"].update(checks)
        except Exception:
            results["errors"][name] = traceback.format_exc()
            results["checks"][f"{name}: ran without error"] = False
            print(results["errors"][name], file=sys.stderr)
        torch.cuda.empty_cache()  # the check's arrays are gone with its frame
        if cupy is not None:
            cupy.get_default_memory_pool().free_all_blocks()
        (out / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
        (out / "results.md").write_text(markdown(results))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    print(markdown(results))
    return 0 if all(results["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
