"""tcsolve.lu_factor / lu_solve (factor once, solve many): every solve to dsgesv's criterion on
A and on A^T, x with trans=0 bitwise tcsolve.solve's x for the same options, new right-hand
sides without a new LU (factorization time 0), SciPy's lu_factor/lu_solve as the oracle where
SciPy is installed (NumPy's solve otherwise), and bad arguments named. On a GPU: the cuda
factorization's solves bitwise tcsolve.solve's there, torch CUDA tensors in and out."""

import math

import numpy as np
import pytest

import tcsolve

EPS64 = 2.0**-53


def dsgesv_ok(A, b, x):
    """LAPACK dsgesv's criterion, column by column: ||b - A x|| <= sqrt(n) ||x|| ||A|| eps64."""
    b2, x2 = b.reshape(len(b), -1), x.reshape(len(x), -1)
    r = b2 - A @ x2
    norm_a = np.abs(A).sum(axis=1).max()
    return all(np.abs(r[:, j]).max() <= math.sqrt(len(A)) * np.abs(x2[:, j]).max() * norm_a * EPS64
               for j in range(x2.shape[1]))


def system(n, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (n, n)) + n ** 0.5 * np.eye(n), rng


@pytest.mark.parametrize("n, variant", [(120, "fp32-simt"), (200, "ec-fp16"), (257, "auto")])
def test_factor_once_solve_many(n, variant):
    A, rng = system(n, n)
    lu = tcsolve.lu_factor(A, variant=variant, block_size=64, backend="cpu")
    assert lu.n == n
    for nrhs in (None, 3):  # a vector, then three new right-hand sides: no new LU
        b = rng.uniform(-1, 1, n if nrhs is None else (n, nrhs))
        x, info = tcsolve.lu_solve(lu, b)
        assert info.converged and x.shape == b.shape and dsgesv_ok(A, b, x)
        assert info.timings["factorization"] == 0.0
        x_solve, _ = tcsolve.solve(A, b, variant=variant, block_size=64, backend="cpu")
        assert np.array_equal(x, x_solve)  # trans = 0: bitwise solve()'s x
    bt = rng.uniform(-1, 1, n)
    for trans in (1, "T", 2, "C"):
        xt, info = tcsolve.lu_solve(lu, bt, trans=trans)
        assert info.converged and dsgesv_ok(A.T, bt, xt)


def test_against_scipy_or_numpy():
    n = 150
    A, rng = system(n, 7)
    b = rng.uniform(-1, 1, (n, 2))
    x, _ = tcsolve.lu_solve(tcsolve.lu_factor(A), b)
    xt, _ = tcsolve.lu_solve(tcsolve.lu_factor(A), b, trans=1)
    try:
        import scipy.linalg as sla
        lu_piv = sla.lu_factor(A)
        ref, ref_t = sla.lu_solve(lu_piv, b), sla.lu_solve(lu_piv, b, trans=1)
    except ImportError:
        ref, ref_t = np.linalg.solve(A, b), np.linalg.solve(A.T, b)
    # both backward stable: within 2 cond_inf(A) (eta + eta_ref), eta <= sqrt(n) eps64 each
    cond = np.linalg.cond(A, np.inf)
    for got, want in ((x, ref), (xt, ref_t)):
        assert np.abs(got - want).max() / np.abs(want).max() <= 4 * cond * math.sqrt(n) * EPS64


def test_float32_and_fortran_order_give_the_same_x():
    A, rng = system(90, 3)
    b = rng.uniform(-1, 1, 90)
    x, _ = tcsolve.lu_solve(tcsolve.lu_factor(A), b)
    xf, _ = tcsolve.lu_solve(tcsolve.lu_factor(np.asfortranarray(A)), np.asfortranarray(b))
    assert np.array_equal(x, xf)
    a32 = A.astype(np.float32)
    x32, info = tcsolve.lu_solve(tcsolve.lu_factor(a32), b)
    assert info.converged and dsgesv_ok(a32.astype(np.float64), b, x32)


def test_bad_arguments_are_named():
    A, _ = system(10, 1)
    lu = tcsolve.lu_factor(A)
    with pytest.raises(tcsolve.InvalidInputError, match="square"):
        tcsolve.lu_factor(np.ones((3, 4)))
    with pytest.raises(tcsolve.InvalidInputError, match="rows"):
        tcsolve.lu_solve(lu, np.ones(11))
    with pytest.raises(tcsolve.InvalidInputError, match="trans"):
        tcsolve.lu_solve(lu, np.ones(10), trans="X")
    with pytest.raises(tcsolve.InvalidInputError, match="lu_factor"):
        tcsolve.lu_solve((A, np.arange(10)), np.ones(10))
    singular = A.copy()
    singular[:, 4] = 0.0
    with pytest.raises(tcsolve.InvalidInputError, match="singular"):
        tcsolve.lu_factor(singular)
    nan = np.ones(10)
    nan[3] = np.nan
    with pytest.raises(tcsolve.InvalidInputError):
        tcsolve.lu_solve(lu, nan)


def cuda_or_skip():
    if not any(v.available_cuda for v in tcsolve.variants()):
        pytest.skip("tcsolve has no usable CUDA backend here")


def test_cuda_factors_are_kept_and_each_solve_is_solves_x():
    """On cuda: a second right-hand side reuses the device factors (factorization time 0), x
    bitwise tcsolve.solve's on cuda; A^T solved whole there, to dsgesv's criterion."""
    cuda_or_skip()
    n = 600
    A, rng = system(n, 5)
    lu = tcsolve.lu_factor(A, backend="cuda")
    for _ in range(2):
        b = rng.uniform(-1, 1, n)
        x, info = tcsolve.lu_solve(lu, b)
        assert info.backend == "cuda" and info.converged and dsgesv_ok(A, b, x)
        assert info.timings["factorization"] == 0.0
        x_solve, _ = tcsolve.solve(A, b, backend="cuda")
        assert np.array_equal(x, x_solve)
    bt = rng.uniform(-1, 1, n)
    xt, info = tcsolve.lu_solve(lu, bt, trans=1)
    assert info.converged and dsgesv_ok(A.T, bt, xt) and "A^T solved whole" in info.note


def test_cuda_factors_of_torch_tensors_stay_on_their_device():
    cuda_or_skip()
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no usable CUDA device")
    n = 400
    A, rng = system(n, 6)
    b = rng.uniform(-1, 1, (n, 2))
    lu = tcsolve.lu_factor(torch.tensor(A, device="cuda"))
    assert lu.device == 0
    x, info = tcsolve.lu_solve(lu, torch.tensor(b, device="cuda"))
    assert x.is_cuda and x.dtype == torch.float64 and info.converged
    assert dsgesv_ok(A, b, x.cpu().numpy())
    with pytest.raises(tcsolve.InvalidInputError):  # device b for a cpu factorization: refused by name
        tcsolve.lu_solve(tcsolve.lu_factor(A, backend="cpu"), torch.tensor(b, device="cuda"))
