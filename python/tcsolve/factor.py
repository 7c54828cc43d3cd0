"""``tcsolve.lu_factor`` and ``tcsolve.lu_solve``: factor once, solve many, as SciPy's
``scipy.linalg.lu_factor`` / ``lu_solve`` (tcsolveDgetrf / tcsolveDgetrs). The factorization keeps
the equilibrated FP32 LU and a copy of the FP64 A; each ``lu_solve`` refines to FP64 accuracy
against A (or A^T) with the options given to ``lu_factor``, without a new LU. With ``trans=0``
the x is bitwise ``tcsolve.solve``'s for the same system and options. Host arrays on the cpu
backend for now (the C API factors on cpu handles only).
"""

import ctypes
import warnings

import numpy as np

from . import _arrays, _handles, _lib
from ._errors import InvalidInputError, LinAlgWarning, NotConvergedWarning, NotSupportedError
from .solve import _params, _record

_TRANS = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}  # SciPy's codes; real A: C is T


class LUFactors:
    """The factorization ``lu_factor`` returns (an opaque tcsolveFactorization_t on the handle of
    the thread that made it); pass it to ``lu_solve``. ``n``: the order; ``variant``: the variant
    asked for. Freed when garbage-collected."""

    def __init__(self, handle, raw, n, variant):
        self._handle = handle
        self._raw = raw
        self.n = n
        self.variant = variant

    def __repr__(self):
        return f"LUFactors(n={self.n}, variant={self.variant!r}, backend={self._handle.backend!r})"

    def __del__(self):
        raw = getattr(self, "_raw", None)
        if raw is not None and raw.value:
            _lib.lib.tcsolveFactorizationDestroy(raw)
            self._raw = None


def _host_float64(x, name):
    a = _arrays.wrap(x, name)
    if a.on_device:
        raise NotSupportedError(f"{name} in device memory ({a.where()}): lu_factor/lu_solve run on the cpu backend "
                                "for now (tcsolve.solve takes device arrays)")
    _arrays.require_dtype(a, ("float64", "float32"), "float64, or float32 (converted to float64)")
    return np.ascontiguousarray(np.asarray(_arrays.to_host(a), dtype=np.float64))


def lu_factor(A, variant="auto", refine="classical", max_iter=30, fallback=True, block_size=None, *,
              pivoting="partial", estimate_condition=True, fp64_below=None, rbt_window=None, rbt_seed=None):
    """Factors A (n x n, float64 or float32, host memory) for later ``lu_solve`` calls.

    The options are ``tcsolve.solve``'s (variant, refine, max_iter, fallback, block_size,
    pivoting, estimate_condition, fp64_below, rbt_window, rbt_seed); they serve every
    ``lu_solve`` of the factorization. An exactly singular A (or NaN,
    inf) raises ``InvalidInputError`` with the library's message, as ``solve`` does.
    """
    params = _params(variant, refine, max_iter, fallback, block_size, pivoting, estimate_condition, fp64_below,
                     rbt_window, rbt_seed)
    a = _host_float64(A, "A")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise InvalidInputError(f"A must be a square matrix (n x n), got shape {a.shape}")
    n = a.shape[0]
    params.row_major = 1  # C order: rows contiguous
    h = _handles.get("cpu")
    raw = _lib.tcsolveFactorization()
    h.check(h.call(_lib.lib.tcsolveDgetrf, h.raw, ctypes.byref(params), n, a.ctypes.data, max(1, n),
                   ctypes.byref(raw), work=n * n * n))
    return LUFactors(h, raw, n, variant)


def lu_solve(factors, b, trans=0):
    """Solves A x = b (trans 0 or "N") or A^T x = b (1, 2, "T", "C") with ``lu_factor``'s
    factorization, refined to FP64 accuracy; returns ``(x, info)`` as ``tcsolve.solve`` does (x
    a NumPy array of b's shape, float64; info a SolveInfo whose factorization time is 0). Must
    run on the thread that made the factors (their handle). Warnings as ``solve``'s."""
    if not isinstance(factors, LUFactors):
        raise InvalidInputError(f"factors must be what lu_factor returns, got {type(factors).__name__}")
    if isinstance(trans, bool) or trans not in _TRANS:
        raise InvalidInputError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    bb = _host_float64(b, "b")
    n = factors.n
    if bb.ndim not in (1, 2) or bb.shape[0] != n:
        raise InvalidInputError(f"b must have n = {n} rows (shape (n,) or (n, nrhs)), got shape {bb.shape}")
    nrhs = 1 if bb.ndim == 1 else bb.shape[1]
    x = np.empty_like(bb)
    ld = max(1, nrhs)  # row-major n x nrhs
    h = factors._handle
    info = _lib.SolveInfo()
    status = h.check(h.call(_lib.lib.tcsolveDgetrs, h.raw, factors._raw, _TRANS[trans], nrhs, bb.ctypes.data, ld,
                            x.ctypes.data, ld, ctypes.byref(info), work=n * n * nrhs))
    message = _lib.text(_lib.lib.tcsolveGetLastErrorMessage(h.raw)) if status == _lib.NOT_CONVERGED else ""
    result = _record(h, info, factors.variant)
    if result.fallback_used:  # x came from the FP64 LU: the mixed-precision path did not hold
        warnings.warn(f"the FP32 LU's refinement did not reach FP64 accuracy; the FP64 LU fallback solved it "
                      f"({result.note})", LinAlgWarning, stacklevel=2)
    for text in result.warnings:
        warnings.warn(text, LinAlgWarning, stacklevel=2)
    if status == _lib.NOT_CONVERGED:
        warnings.warn(message, NotConvergedWarning, stacklevel=2)
    return x, result
