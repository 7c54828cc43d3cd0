"""Bad inputs raise the right exception with a clear message, never a crash: ValueError
(tcsolve.InvalidInputError) for invalid input, whether refused by the package before calling the
library (dtype, shape, options) or by the library (NaN, inf, a singular A: the library's message,
status TCSOLVE_STATUS_INVALID_VALUE); RuntimeError (tcsolve.NotSupportedError) for what this build
or machine lacks."""

import numpy as np
import pytest

import tcsolve

INVALID_VALUE = 2


def system(n=8):
    rng = np.random.default_rng(0)
    return rng.uniform(-1, 1, (n, n)) + n * np.eye(n), rng.uniform(-1, 1, n)


@pytest.mark.parametrize("A, b, message", [
    (np.eye(4, dtype=np.int64), np.ones(4), "dtype int64"),
    (np.eye(4), np.ones(4, dtype=np.complex128), "dtype complex128"),
    (np.eye(4, dtype=np.float16), np.ones(4), "dtype float16"),
    (np.ones((4, 3)), np.ones(4), "square"),
    (np.ones(4), np.ones(4), "square"),
    (np.eye(4), np.ones(5), "b has 5 rows"),
    (np.eye(4), np.ones((3, 2)), "b has 3 rows"),
    (np.eye(4), np.ones((4, 2, 1)), "b has 2 rows"),  # a batch of four 2 x 1 right-hand sides
    (np.ones((2, 4)), np.ones((3, 2, 1)), "square"),
    ([["a"]], [1.0], "dtype"),
])
def test_solve_refuses_bad_arrays_before_the_library(A, b, message):
    with pytest.raises(ValueError, match=message) as e:
        tcsolve.solve(A, b)
    assert isinstance(e.value, tcsolve.InvalidInputError) and e.value.status is None


@pytest.mark.parametrize("where, value, message", [
    ("A", np.nan, "non-finite|NaN|nan"), ("A", np.inf, "non-finite|inf"), ("b", np.nan, "non-finite|NaN|nan"),
])
def test_solve_non_finite_input_is_the_library_invalid_value(where, value, message):
    A, b = system()
    (A if where == "A" else b)[2] = value
    with pytest.raises(ValueError, match=message) as e:
        tcsolve.solve(A, b)
    assert e.value.status == INVALID_VALUE and "tcsolveDgesv" in str(e.value)


def test_solve_singular_matrix_is_invalid_input():
    A, b = system()
    A[:, 3] = 0.0
    with pytest.raises(ValueError, match="singular") as e:
        tcsolve.solve(A, b)
    assert e.value.status == INVALID_VALUE


@pytest.mark.parametrize("kwargs, exception, message", [
    ({"variant": "ec-fp17"}, ValueError, "ec-fp16"),        # the library lists the valid names
    ({"variant": 3}, ValueError, "variant"),
    ({"refine": "newton"}, ValueError, "refine"),
    ({"pivoting": "complete"}, ValueError, "pivoting"),
    ({"max_iter": -1}, ValueError, "max_iter"),
    ({"max_iter": 2.5}, ValueError, "max_iter"),
    ({"fallback": "yes"}, ValueError, "fallback"),
    ({"block_size": 0}, ValueError, "block_size"),
    ({"backend": "tpu"}, ValueError, "backend"),
])
def test_solve_bad_options(kwargs, exception, message):
    A, b = system()
    with pytest.raises(exception, match=message):
        tcsolve.solve(A, b, **kwargs)


def test_unavailable_variant_or_backend_is_not_supported():
    a = np.ones((4, 4), np.float32)
    with pytest.raises(RuntimeError, match="cublas-tf32") as e:
        tcsolve.matmul(a, a, variant="cublas-tf32")  # a vendor baseline: no cpu implementation
    assert isinstance(e.value, tcsolve.NotSupportedError)
    if not any(v.available_cuda for v in tcsolve.variants()):  # no usable GPU here
        A, b = system()
        with pytest.raises(tcsolve.NotSupportedError, match="cuda"):
            tcsolve.solve(A, b, backend="cuda")


@pytest.mark.parametrize("a, b, out, message", [
    (np.ones((4, 4)), np.ones((4, 4), np.float32), None, "float32"),
    (np.ones((4, 4), np.float32), np.ones((5, 4), np.float32), None, "inner dimensions"),
    (np.ones(4, np.float32), np.ones((4, 4), np.float32), None, "2-D"),
    (np.ones((4, 4), np.float32), np.ones((4, 4), np.float32), np.ones((4, 5), np.float32), "out has shape"),
    (np.ones((4, 4), np.float32), np.ones((4, 4), np.float32), np.ones((4, 4)), "out must be float32"),
    (np.ones((4, 4), np.float32), np.ones((4, 4), np.float32), np.ones((8, 8), np.float32)[::2, ::2], "in place"),
])
def test_matmul_refuses_bad_arrays(a, b, out, message):
    with pytest.raises(ValueError, match=message):
        tcsolve.matmul(a, b, out=out)


def test_matmul_refuses_out_overlapping_an_operand():
    a = np.ones((4, 4), np.float32)
    with pytest.raises(ValueError, match="overlaps a"):
        tcsolve.matmul(a, np.ones((4, 4), np.float32), out=a)


@pytest.mark.parametrize("kwargs, X, message", [
    ({"n_clusters": 0}, np.ones((5, 2)), "n_clusters"),
    ({"n_clusters": 6}, np.ones((5, 2)), "exceeds"),
    ({"n_clusters": 2, "init": "furthest"}, np.ones((5, 2)), "init"),
    ({"n_clusters": 2, "max_iter": 0}, np.ones((5, 2)), "max_iter"),
    ({"n_clusters": 2, "tol": -1.0}, np.ones((5, 2)), "tol"),
    ({"n_clusters": 2, "random_state": "x"}, np.ones((5, 2)), "random_state"),
    ({"n_clusters": 2}, np.ones(5), "matrix"),
    ({"n_clusters": 2}, np.ones((5, 2), np.complex128), "dtype complex128"),
    ({"n_clusters": 2, "variant": "nope"}, np.ones((5, 2)), "variant"),
])
def test_kmeans_bad_parameters_and_data(kwargs, X, message):
    with pytest.raises(ValueError, match=message):
        tcsolve.KMeans(**kwargs).fit(X)


def test_kmeans_nan_is_the_library_invalid_value():
    X = np.ones((6, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="non-finite") as e:
        tcsolve.KMeans(2).fit(X)
    assert e.value.status == INVALID_VALUE and "tcsolveKmeans" in str(e.value)


def test_singular_matrices_raise_numpys_linalgerror():
    # SciPy and NumPy raise numpy.linalg.LinAlgError for a singular matrix; tcsolve's error is one
    # too, and still an InvalidInputError (ValueError) with the library's message
    A = np.eye(6)
    A[:, 2] = 0.0
    for call in (lambda: tcsolve.solve(A, np.ones(6), backend="cpu"), lambda: tcsolve.lu_factor(A)):
        with pytest.raises(np.linalg.LinAlgError, match="exactly singular") as caught:
            call()
        assert isinstance(caught.value, tcsolve.InvalidInputError) and isinstance(caught.value, ValueError)
        assert isinstance(caught.value, tcsolve.SingularMatrixError) and caught.value.status == 2


def test_hilbert_12_warns_as_scipy_does():
    # SciPy warns (LinAlgWarning, rcond 2.6e-17) on Hilbert(12); tcsolve warns from its condition
    # estimate, and for the FP64 fallback when it was needed
    n = 12
    H = 1.0 / (np.arange(n)[:, None] + np.arange(n)[None, :] + 1.0)
    with pytest.warns(tcsolve.LinAlgWarning) as record:
        x, info = tcsolve.solve(H, H @ np.ones(n), backend="cpu")
    texts = " | ".join(str(w.message) for w in record if issubclass(w.category, tcsolve.LinAlgWarning))
    assert "condition" in texts or "fallback" in texts
    if info.fallback_used:
        assert "fallback" in texts
