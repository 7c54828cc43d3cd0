"""tcsolve.matmul on NumPy arrays (the CPU emulation): the residuals of ``tcsolve gemm-bench`` on
its own inputs (drawn here bit for bit: mt19937_64.py), layouts, out= in place, and the product of
small integers that every variant gets exactly."""

import numpy as np
import pytest

import tcsolve
from mt19937_64 import gemm_bench_inputs

EPS64 = 2.0**-53
M, N, K, SEED = 96, 80, 144, 3
VARIANTS = ["fp32-simt", "fp16-tc", "markidis", "ec-fp16", "ec-tf32", "auto"]


@pytest.fixture(scope="module")
def bench(cli):
    report = cli("gemm-bench", "--m", M, "--n", N, "--k", K, "--seed", SEED, "--backend", "cpu", "--repeats", 1,
                 "--variants", ",".join(VARIANTS))
    assert report["_exit"] == 0, report
    return {row["variant"]: row for row in report["results"]}


def residuals(C, C64):
    """gemm-bench's metrics: ||C - C64||_F / ||C64||_F and max |C - C64| / |C64|."""
    return np.linalg.norm(C - C64) / np.linalg.norm(C64), (np.abs(C - C64) / np.abs(C64)).max()


@pytest.mark.parametrize("variant", VARIANTS)
def test_matmul_matches_gemm_bench_residuals(bench, variant):
    a, b = gemm_bench_inputs(M, N, K, SEED)  # gemm-bench's A and B, F-ordered as it stores them
    C64 = a.astype(np.float64) @ b.astype(np.float64)
    row = bench[variant]
    # An F-ordered out is the CLI's own column-major call, C = A B (op N, N): the same FP32
    # result, so the same residuals up to the FP64 reference's own rounding (each entry of C64
    # within K eps64 sum|a||b| of the exact product, i.e. at most K eps64 / residual relative
    # in the metrics; twice that for the two C64 computed in different orders).
    C = tcsolve.matmul(a, b, variant=variant, out=np.empty((M, N), np.float32, order="F"))
    res, max_rel = residuals(C, C64)
    assert res == pytest.approx(row["relative_residual"], rel=2 * K * EPS64 / row["relative_residual"])
    assert max_rel == pytest.approx(row["max_relative_error"], rel=2 * K * EPS64 / row["relative_residual"])
    # A C-ordered result is computed as C^T = B^T A^T: the same variant with the operands' roles
    # swapped, another rounding sample of the same error. Its residual, a norm over M N = 7680
    # errors, stays within 5% of the CLI's.
    for order_a, order_b in [("C", "C"), ("F", "C"), ("C", "F")]:
        Cc = tcsolve.matmul(np.asarray(a, order=order_a), np.asarray(b, order=order_b), variant=variant)
        assert Cc.flags.c_contiguous and Cc.dtype == np.float32
        assert residuals(Cc, C64)[0] == pytest.approx(row["relative_residual"], rel=0.05)


def test_operand_layouts_do_not_change_the_product():
    # For one output layout the operands' layouts only change op N/T and the leading dimension:
    # bitwise the same product for C order, F order, slices and copies of other strides.
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (33, 40)).astype(np.float32)
    b = rng.uniform(-1, 1, (40, 21)).astype(np.float32)
    ref = tcsolve.matmul(a, b, variant="ec-fp16")
    big = np.zeros((50, 70), np.float32)
    big[5:38, 7:47] = a
    for x, y in [(np.asfortranarray(a), b), (a, np.asfortranarray(b)), (big[5:38, 7:47], b), (a[:, ::1], b[::1]),
                 (np.repeat(a, 2, axis=1)[:, ::2], b)]:
        assert np.array_equal(tcsolve.matmul(x, y, variant="ec-fp16"), ref)


def test_out_is_written_in_place():
    rng = np.random.default_rng(2)
    a = rng.uniform(-1, 1, (16, 24)).astype(np.float32)
    b = rng.uniform(-1, 1, (24, 8)).astype(np.float32)
    out = np.full((16, 8), np.nan, np.float32)
    assert tcsolve.matmul(a, b, variant="fp32-simt", out=out) is out
    assert np.allclose(out, a.astype(np.float64) @ b, rtol=0, atol=24 * 2**-24 * 24)
    wide = np.zeros((16, 20), np.float32)
    view = wide[:, 4:12]  # rows contiguous, row stride 20
    tcsolve.matmul(a, b, variant="fp32-simt", out=view)
    assert np.array_equal(view, out) and not wide[:, :4].any() and not wide[:, 12:].any()


@pytest.mark.parametrize("variant", [v.name for v in tcsolve.variants() if v.available_cpu])
def test_small_integer_products_are_exact_in_every_variant(variant):
    # Integers in [-8, 8], k = 32: every product and partial sum is an integer below 2^11, exact
    # in FP16, TF32 and FP32 alike.
    rng = np.random.default_rng(4)
    a = rng.integers(-8, 9, (12, 32)).astype(np.float32)
    b = rng.integers(-8, 9, (32, 10)).astype(np.float32)
    assert np.array_equal(tcsolve.matmul(a, b, variant=variant), (a.astype(np.int64) @ b.astype(np.int64)))


def test_empty_and_k_zero():
    assert tcsolve.matmul(np.zeros((0, 4), np.float32), np.zeros((4, 3), np.float32)).shape == (0, 3)
    C = tcsolve.matmul(np.zeros((3, 0), np.float32), np.zeros((0, 2), np.float32))
    assert C.shape == (3, 2) and not C.any()


@pytest.mark.parametrize("variant", [v.name for v in tcsolve.variants() if v.available_cpu])
def test_infinite_inputs_give_inf_or_documented_nan(variant):
    # numpy.matmul (BLAS) gives inf in column 0; the split variants give NaN there, as matmul's
    # docstring and README say; every other entry is exact (sums of ones).
    a = np.ones((8, 8), np.float32)
    b = a.copy()
    b[0, 0] = np.inf
    c = tcsolve.matmul(a, b, variant=variant)
    expected = a @ b
    assert np.array_equal(c[:, 1:], expected[:, 1:])
    split = variant == "auto" or next(v for v in tcsolve.variants() if v.name == variant).input_format.endswith("x2")
    if split:
        assert np.isnan(c[:, 0]).all()
    else:
        assert np.array_equal(c[:, 0], expected[:, 0])


def test_batched_products_member_by_member_and_broadcast():
    rng = np.random.default_rng(9)
    a = rng.uniform(-1, 1, (4, 30, 20)).astype(np.float32)
    b = rng.uniform(-1, 1, (4, 20, 10)).astype(np.float32)
    c = tcsolve.matmul(a, b, variant="ec-fp16")
    assert c.shape == (4, 30, 10) and c.dtype == np.float32
    out = np.empty((4, 30, 10), np.float32)
    assert tcsolve.matmul(a, b, variant="ec-fp16", out=out) is out
    for i in range(4):
        one = tcsolve.matmul(a[i], b[i], variant="ec-fp16")
        assert np.array_equal(c[i], one) and np.array_equal(out[i], one)
    with pytest.raises(tcsolve.InvalidInputError, match="batch"):
        tcsolve.matmul(a, b[:2])
    # broadcasting, as numpy.matmul: (4, m, k) @ (k, n), and (1, m, k) @ (4, k, n)
    c2 = tcsolve.matmul(a, b[0], variant="ec-fp16")
    assert c2.shape == (4, 30, 10)
    assert np.array_equal(c2[3], tcsolve.matmul(a[3], b[0], variant="ec-fp16"))
    c3 = tcsolve.matmul(a[:1], b, variant="ec-fp16")
    assert c3.shape == (4, 30, 10)
    assert np.array_equal(c3[2], tcsolve.matmul(a[0], b[2], variant="ec-fp16"))


def test_matmul_backward_formulas_against_finite_differences():
    # autograd's backward for torch (tcsolve/_autograd.py) is these array functions: checked here on
    # NumPy (torch is not in Debian's CI packages) against central differences of L = sum(W * C)
    from tcsolve import _autograd
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (6, 5)).astype(np.float32)
    b = rng.uniform(-1, 1, (5, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (6, 4)).astype(np.float32)
    ga, gb = _autograd.matmul_backward(a, b, w, "fp32-simt")
    loss = lambda a_, b_: float(np.sum(w.astype(np.float64) * (a_.astype(np.float64) @ b_.astype(np.float64))))
    h = 1e-3
    for (i, j) in [(0, 0), (2, 3), (5, 4)]:
        ap, am = a.copy(), a.copy()
        ap[i, j] += h
        am[i, j] -= h
        assert abs((loss(ap, b) - loss(am, b)) / (2 * h) - ga[i, j]) <= 1e-3
    for (i, j) in [(0, 0), (4, 3)]:
        bp, bm = b.copy(), b.copy()
        bp[i, j] += h
        bm[i, j] -= h
        assert abs((loss(a, bp) - loss(a, bm)) / (2 * h) - gb[i, j]) <= 1e-3
