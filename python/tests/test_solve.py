"""tcsolve.solve on NumPy arrays: FP64 accuracy against numpy.linalg.solve on generated systems,
bitwise the x of ``tcsolve solve`` on every committed system of inputs/ with the same options,
layouts (C, F, slices, float32, several right-hand sides) that give bitwise one x, and the info
it returns (history, timings, the record of the C API)."""

import math
import warnings

import numpy as np
import pytest

import tcsolve

EPS64 = 2.0**-53


def randsvd(n, cond, rng):
    """A = U diag(sigma) V^T, Haar-random orthogonal U and V, sigma geometric from 1 to 1/cond."""
    u, _ = np.linalg.qr(rng.standard_normal((n, n)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    sigma = cond ** (-np.arange(n) / max(1, n - 1))
    return (u * sigma) @ v.T


@pytest.mark.parametrize("n, cond, nrhs", [(100, 10.0, 1), (150, 1e4, 3), (200, 1e8, 1)])
def test_solve_agrees_with_numpy_to_fp64_accuracy(n, cond, nrhs):
    # Both solutions are backward stable: each is within cond(A) * c * n * eps64 (relative) of the
    # true x, hence of the other. c = 2 per solver for the factor of the backward-error bound
    # (LAPACK's dsgesv criterion is sqrt(n) eps64; getrf's growth for these matrices is O(1)), so
    # ||x - x_np||_inf / ||x_np||_inf <= 4 n eps64 cond_2(A) (cond_2 from the singular values
    # we put in).
    rng = np.random.default_rng(n)
    A = randsvd(n, cond, rng)
    x_true = rng.uniform(-1, 1, (n, nrhs))
    b = A @ x_true
    if nrhs == 1:
        b = b[:, 0]
    x, info = tcsolve.solve(A, b)
    x_np = np.linalg.solve(A, b)
    assert info.converged and x.shape == b.shape and x.dtype == np.float64
    bound = 4 * n * EPS64 * cond
    assert np.abs(x - x_np).max() / np.abs(x_np).max() <= bound
    # dsgesv's criterion, which converged states, for every right-hand side: ||r|| <= sqrt(n)
    # ||x|| ||A|| eps64, plus n ||x|| ||A|| eps64 for the rounding of NumPy's own r = b - A x.
    X, B = x.reshape(n, -1), b.reshape(n, -1)
    a_norm = np.abs(A).sum(axis=1).max()
    for j in range(nrhs):
        r = B[:, j] - A @ X[:, j]
        assert np.abs(r).max() <= (math.sqrt(n) + n) * np.abs(X[:, j]).max() * a_norm * EPS64


def test_layouts_give_bitwise_one_x():
    # Row-major (C order, and a row slice with a larger row stride), column-major (F order),
    # float32 and a strided b: the same matrix, so the same solve and bitwise the same x.
    rng = np.random.default_rng(7)
    n = 90
    A = rng.uniform(-1, 1, (n, n)).astype(np.float32).astype(np.float64)
    b = rng.uniform(-1, 1, n)
    x_c, info = tcsolve.solve(A, b, backend="cpu")  # the cpu path's promise (cuSOLVER's dgetrs of
    assert info.converged                            # n < fp64_below need not be columnwise)
    big = np.zeros((n, n + 13))
    big[:, :n] = A
    b_strided = np.zeros(2 * n)
    b_strided[::2] = b
    for a_view, b_view in [(np.asfortranarray(A), b), (big[:, :n], b), (A, b_strided[::2]),
                           (A.astype(np.float32), b), (np.asfortranarray(A), b_strided[::2]), (A[:, ::-1][:, ::-1], b)]:
        x, _ = tcsolve.solve(a_view, b_view, backend="cpu")
        assert np.array_equal(x, x_c)
    X, _ = tcsolve.solve(A, np.stack([b, 2 * b, b], axis=1), backend="cpu")
    assert X.shape == (n, 3) and X.flags.c_contiguous
    assert np.array_equal(X[:, 0], x_c) and np.array_equal(X[:, 2], x_c)
    XF, _ = tcsolve.solve(np.asfortranarray(A), np.asfortranarray(np.stack([b, 2 * b, b], axis=1)), backend="cpu")
    assert XF.flags.f_contiguous and np.array_equal(XF, X)
    XM, _ = tcsolve.solve(np.asfortranarray(A), np.stack([b, 2 * b, b], axis=1), backend="cpu")  # b into F order
    assert np.array_equal(XM, X)


def test_info_carries_the_record_of_the_solve():
    rng = np.random.default_rng(3)
    n = 64
    A = rng.uniform(-1, 1, (n, n)) + n * np.eye(n)
    x, info = tcsolve.solve(A, rng.uniform(-1, 1, n), variant="ec-fp16", block_size=16, estimate_condition=True)
    assert info.converged and not info.fallback_used and info.backend in ("cpu", "cuda")
    assert info.variant == "ec-fp16" and info.resolved_variant == "ec-fp16" and info.block_size == 16
    assert [i for i, _ in info.history] == list(range(info.iterations + 1))
    assert info.history[-1][1] == info.backward_error
    assert info.condition_estimate is not None and info.condition_estimate >= 1
    t = info.timings
    assert t["total"] >= t["factorization"] >= 0 and t["refinement"] >= 0 and isinstance(t["phases"], dict)
    assert "converged" in info.note


def test_not_converged_is_a_result_with_a_warning():
    # max_iter 0 and no fallback: the FP32 LU's solution alone, whose backward error (~u32) fails
    # dsgesv's FP64 criterion: NOT_CONVERGED, returned as (x, info) with a warning.
    rng = np.random.default_rng(5)
    n = 40
    A = rng.uniform(-1, 1, (n, n)) + n * np.eye(n)
    with pytest.warns(tcsolve.NotConvergedWarning, match="did not converge"):
        x, info = tcsolve.solve(A, rng.uniform(-1, 1, n), max_iter=0, fallback=False, backend="cpu")
    assert not info.converged and info.iterations == 0 and 0 < info.backward_error < 1e-5
    assert np.all(np.isfinite(x))


def systems(inputs):
    """The committed systems of inputs/ (files with a dataset A)."""
    return sorted(p for p in inputs.glob("*.h5") if p.stem not in ("iris", "iris_shifted", "wine"))


# (CLI options, solve keywords): the same settings both ways.
OPTIONS = [
    ([], {}),
    (["--variant", "ec-tf32", "--block-size", "64"], {"variant": "ec-tf32", "block_size": 64}),
    (["--variant", "fp32-simt", "--refine", "gmres", "--max-iter", "5"],
     {"variant": "fp32-simt", "refine": "gmres", "max_iter": 5}),
    (["--variant", "fp16-tc", "--no-fallback", "--max-iter", "3"],
     {"variant": "fp16-tc", "fallback": False, "max_iter": 3}),
    (["--pivoting", "rbt", "--block-size", "64"], {"pivoting": "rbt", "block_size": 64}),
    (["--pivoting", "auto"], {"pivoting": "auto"}),
]


def test_inputs_are_all_covered(inputs):
    assert len(systems(inputs)) == 6


@pytest.mark.parametrize("options, kwargs", OPTIONS, ids=["default", "ec-tf32-nb64", "gmres", "fp16-tc-nofallback", "rbt-nb64", "pivoting-auto"])
def test_solve_is_bitwise_the_cli_on_inputs(cli, hdf5, inputs, tmp_path, options, kwargs):
    # Every committed system with the default options; the other option sets on two of them
    # (the CPU emulation of the variants is slow), all on the CLI's backend (auto).
    files = systems(inputs) if not options else [inputs / "west0067.h5", inputs / "randsvd_n256_c1e4.h5"]
    for path in files:
        A, b = hdf5.read(path, "A"), hdf5.read(path, "b")
        out = tmp_path / f"x_{path.stem}.h5"
        report = cli("solve", "--input", path, "--output", out, *options)
        assert report["_exit"] in (0, 3), report
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", tcsolve.NotConvergedWarning)
            x, info = tcsolve.solve(A, b, **kwargs)
        x_cli = hdf5.read(out, "x")
        assert x.shape == x_cli.shape
        assert np.array_equal(x.view(np.uint64), x_cli.view(np.uint64)), path.name
        assert info.converged == report["converged"] and info.iterations == report["iterations"]
        assert info.fallback_used == report["fallback"] and info.backward_error == report["backward_error"]
        assert info.resolved_variant == report["resolved_variant"] and info.backend == report["backend"]
        assert info.history == [(h["iteration"], h["backward_error"]) for h in report["history"]]
        assert info.condition_estimate == report["condition_estimate"]
        assert info.block_size == report["block_size"] and info.note == report["note"]


def test_batched_systems_solve_member_by_member_and_broadcast():
    # (..., n, n) as torch.linalg.solve takes it: each member bitwise its own solve
    rng = np.random.default_rng(5)
    A = rng.uniform(-1, 1, (2, 3, 40, 40)) + 8 * np.eye(40)
    b = rng.uniform(-1, 1, (2, 3, 40))
    B = rng.uniform(-1, 1, (2, 3, 40, 2))
    x, infos = tcsolve.solve(A, b, backend="cpu")
    X, _ = tcsolve.solve(A, B, backend="cpu")
    assert x.shape == b.shape and X.shape == B.shape and len(infos) == 6
    for i in range(2):
        for j in range(3):
            assert np.array_equal(x[i, j], tcsolve.solve(A[i, j], b[i, j], backend="cpu")[0])
            assert np.array_equal(X[i, j], tcsolve.solve(A[i, j], B[i, j], backend="cpu")[0])
    assert all(info.converged for info in infos)
    with pytest.raises(tcsolve.InvalidInputError, match="batch"):
        tcsolve.solve(A, b[:, :2], backend="cpu")  # batch (2, 2) against (2, 3): no broadcast
    # broadcasting, as torch.linalg.solve: a missing or size-1 batch dimension repeats the member
    x1, infos1 = tcsolve.solve(A[0], b[0, 0], backend="cpu")  # (3, n, n) with (n,)
    assert x1.shape == (3, 40) and len(infos1) == 3
    for j in range(3):
        assert np.array_equal(x1[j], tcsolve.solve(A[0, j], b[0, 0], backend="cpu")[0])
    X2, _ = tcsolve.solve(A[0, 0], B[:, 0], backend="cpu")  # (n, n) with (2, n, 2)
    assert X2.shape == (2, 40, 2)
    assert np.array_equal(X2[1], tcsolve.solve(A[0, 0], B[1, 0], backend="cpu")[0])
    X3, _ = tcsolve.solve(A[:, :1], B[:1], backend="cpu")  # (2, 1, n, n) with (1, 3, n, 2)
    assert X3.shape == (2, 3, 40, 2)
    assert np.array_equal(X3[1, 2], tcsolve.solve(A[1, 0], B[0, 2], backend="cpu")[0])
    with pytest.raises(tcsolve.InvalidInputError, match="empty batch"):
        tcsolve.solve(np.zeros((0, 4, 4)), np.zeros((0, 4)), backend="cpu")


def test_solve_backward_formulas_against_finite_differences():
    # autograd's backward for torch (tcsolve/_autograd.py) on NumPy: L = w . x(A, b), x = A^-1 b
    from tcsolve import _autograd
    rng = np.random.default_rng(4)
    n = 8
    A = rng.uniform(-1, 1, (n, n)) + 4 * np.eye(n)
    b = rng.uniform(-1, 1, n)
    w = rng.uniform(-1, 1, n)
    x, _ = tcsolve.solve(A, b, backend="cpu")
    gA, gb = _autograd.solve_backward(A, x, w, dict(backend="cpu"))
    loss = lambda A_, b_: float(w @ np.linalg.solve(A_, b_))
    h = 1e-6
    for (i, j) in [(0, 0), (3, 5), (7, 2)]:
        Ap, Am = A.copy(), A.copy()
        Ap[i, j] += h
        Am[i, j] -= h
        assert abs((loss(Ap, b) - loss(Am, b)) / (2 * h) - gA[i, j]) <= 1e-7
    for i in (0, 6):
        bp, bm = b.copy(), b.copy()
        bp[i] += h
        bm[i] -= h
        assert abs((loss(A, bp) - loss(A, bm)) / (2 * h) - gb[i]) <= 1e-7


def test_every_solver_option_reaches_the_library():
    # issue 36: the options behind the CLI's flags from Python (tcsolveSolveParams_t's new fields)
    rng = np.random.default_rng(8)
    n = 60
    A = rng.uniform(-1, 1, (n, n)) + 6 * np.eye(n)
    b = rng.uniform(-1, 1, n)
    _, on = tcsolve.solve(A, b, backend="cpu", estimate_condition=True)
    _, off = tcsolve.solve(A, b, backend="cpu", estimate_condition=False)
    _, auto = tcsolve.solve(A, b, backend="cpu")  # well conditioned, classical: auto skips it
    assert on.condition_estimate is not None and off.condition_estimate is None
    assert auto.condition_estimate is None
    _, fp64 = tcsolve.solve(A, b, backend="cpu", fp64_below=n + 1)
    assert fp64.converged and fp64.resolved_variant == "fp64" and "fp64_below" in fp64.note
    x1, r1 = tcsolve.solve(A, b, backend="cpu", pivoting="rbt", rbt_seed=5, rbt_window=0)
    x2, r2 = tcsolve.solve(A, b, backend="cpu", pivoting="rbt", rbt_seed=5, rbt_window=0)
    assert r1.converged and np.array_equal(x1, x2)
    for bad in (dict(estimate_condition=1), dict(estimate_condition="sometimes"), dict(fp64_below=-1), dict(rbt_window=-2), dict(rbt_seed=-1)):
        with pytest.raises(tcsolve.InvalidInputError):
            tcsolve.solve(A, b, backend="cpu", **bad)
    lu = tcsolve.lu_factor(A, estimate_condition=False)
    assert tcsolve.lu_solve(lu, b)[1].condition_estimate is None
    # the cuda plan (--cuda-plan's text or a dict) and the kernels: checked by the library by name
    x_plan, _ = tcsolve.solve(A, b, backend="cpu", cuda_plan={"trsv": "cublas", "lookahead": "off"},
                              gemm_kernels="mma")
    assert np.array_equal(x_plan, tcsolve.solve(A, b, backend="cpu")[0])  # the cpu ignores them
    with pytest.raises(tcsolve.InvalidInputError, match="cuda_plan"):
        tcsolve.solve(A, b, backend="cpu", cuda_plan="trsv=nope")
    with pytest.raises(tcsolve.InvalidInputError, match="cuda_plan"):
        tcsolve.lu_factor(A, backend="cpu", cuda_plan="lookahead")
    with pytest.raises(tcsolve.InvalidInputError, match="gemm_kernels"):
        tcsolve.solve(A, b, backend="cpu", gemm_kernels="fast")


def test_pivoting_beam_reports_its_modifications():
    # beam (cpu): a zero diagonal block makes its in-block pivots tiny: modified, GMRES-IR against A
    rng = np.random.default_rng(12)
    n, nb = 256, 32
    A = rng.uniform(-1, 1, (n, n))
    A[:nb, :nb] = 0
    b = A @ np.ones(n)
    x, info = tcsolve.solve(A, b, pivoting="beam", backend="cpu", block_size=nb, variant="fp32-simt")
    assert info.converged and np.abs(A @ x - b).max() <= 1e-10 * np.abs(A).sum(axis=1).max()
    assert (info.pivoting == "beam" and info.modifications > 0) or "beam" in info.note
    assert info.growth > 0 and (info.pivoting != "beam" or info.growth <= 2.0**20)
    _, plain = tcsolve.solve(A, b, backend="cpu")
    assert plain.pivoting == "partial" and plain.modifications == 0 and plain.growth == 0
    with pytest.raises(tcsolve.InvalidInputError, match="pivoting"):
        tcsolve.solve(A, b, pivoting="beem", backend="cpu")
