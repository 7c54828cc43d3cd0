"""``tcsolve.lu_factor`` and ``tcsolve.lu_solve``: factor once, solve many, as SciPy's
``scipy.linalg.lu_factor`` / ``lu_solve`` (tcsolveDgetrf / tcsolveDgetrs). The factorization keeps
the equilibrated FP32 LU and a copy of the FP64 A; each ``lu_solve`` refines to FP64 accuracy
against A (or A^T) with the options given to ``lu_factor``, without a new LU. With ``trans=0``
the x is bitwise ``tcsolve.solve``'s for the same system and options. On the cuda backend the
FP32 factors and the FP64 A stay on the GPU (the arrays may be host or device memory: NumPy, torch,
CuPy) and each ``trans=0`` solve reuses them; ``trans=1``, ``pivoting="rbt"`` and orders below
``fp64_below`` solve the whole system again there (``info.note`` says so).
"""

import ctypes
import warnings

from . import _arrays, _handles, _lib
from ._errors import InvalidInputError, LinAlgWarning, NotConvergedWarning
from .solve import _params, _record

_TRANS = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}  # SciPy's codes; real A: C is T


class LUFactors:
    """The factorization ``lu_factor`` returns (an opaque tcsolveFactorization_t on the handle of
    the thread that made it); pass it to ``lu_solve``. ``n``: the order; ``variant``: the variant
    asked for; ``device``: the GPU of a device A, else None. Freed (the device's factors too)
    when garbage-collected."""

    def __init__(self, handle, raw, n, variant, device=None):
        self._handle = handle
        self._raw = raw
        self.n = n
        self.variant = variant
        self.device = device  # the CUDA device of a device A, else None

    def __repr__(self):
        return f"LUFactors(n={self.n}, variant={self.variant!r}, backend={self._handle.backend!r})"

    def __del__(self):
        raw = getattr(self, "_raw", None)
        if raw is not None and raw.value:
            _lib.lib.tcsolveFactorizationDestroy(raw)
            self._raw = None


def _float64(x, name):
    """The checked Array of x in FP64 (float32 converted in its own library), C-contiguous."""
    a = _arrays.wrap(x, name)
    _arrays.require_dtype(a, ("float64", "float32"), "float64, or float32 (converted to float64)")
    return _arrays.contiguous(_arrays.astype(a, "float64"), "C")


def lu_factor(A, variant="auto", refine="classical", max_iter=30, fallback=True, block_size=None, *,
              backend="auto", pivoting="partial", estimate_condition="auto", fp64_below=None, rbt_window=None,
              rbt_seed=None, cuda_plan=None, gemm_kernels=None):
    """Factors A (n x n, float64 or float32) for later ``lu_solve`` calls.

    The options are ``tcsolve.solve``'s (variant, refine, max_iter, fallback, block_size, backend,
    pivoting, estimate_condition, fp64_below, rbt_window, rbt_seed, cuda_plan, gemm_kernels); they serve every
    ``lu_solve`` of the factorization. A in device memory (torch CUDA tensor, CuPy array) is
    factored on its GPU; host A on ``backend`` ("auto": cuda when a GPU is usable). An exactly
    singular A (or NaN, inf) raises ``SingularMatrixError`` / ``InvalidInputError`` with the
    library's message, as ``solve`` does.
    """
    params = _params(variant, refine, max_iter, fallback, block_size, pivoting, estimate_condition, fp64_below,
                     rbt_window, rbt_seed, cuda_plan, gemm_kernels)
    if backend not in _lib.BACKENDS:
        raise InvalidInputError(f"backend must be one of auto, cpu, cuda, got {backend!r}")
    a = _float64(A, "A")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise InvalidInputError(f"A must be a square matrix (n x n), got shape {a.shape}")
    n = a.shape[0]
    params.row_major = 1  # C order: rows contiguous
    if a.on_device and backend == "cpu":
        raise InvalidInputError(f"backend='cpu' with A in device memory ({a.where()}): move it to the host")
    resolved = "cuda" if a.on_device else backend
    with _arrays.device_scope(a):
        h = _handles.get(resolved, a.device)
        h.set_stream(_arrays.current_stream(a))
        raw = _lib.tcsolveFactorization()
        h.check(h.call(_lib.lib.tcsolveDgetrf, h.raw, ctypes.byref(params), n, a.ptr, max(1, n), ctypes.byref(raw),
                         work=n * n * n))
    return LUFactors(h, raw, n, variant, a.device if a.on_device else None)


def lu_solve(factors, b, trans=0):
    """Solves A x = b (trans 0 or "N") or A^T x = b (1, 2, "T", "C") with ``lu_factor``'s
    factorization, refined to FP64 accuracy; returns ``(x, info)`` as ``tcsolve.solve`` does (x
    a NumPy array of b's shape, float64; info a SolveInfo whose factorization time is 0). Must
    run on the thread that made the factors (their handle). Warnings as ``solve``'s."""
    if not isinstance(factors, LUFactors):
        raise InvalidInputError(f"factors must be what lu_factor returns, got {type(factors).__name__}")
    if isinstance(trans, bool) or trans not in _TRANS:
        raise InvalidInputError(f"trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    bb = _float64(b, "b")
    n = factors.n
    if bb.ndim not in (1, 2) or bb.shape[0] != n:
        raise InvalidInputError(f"b must have n = {n} rows (shape (n,) or (n, nrhs)), got shape {bb.shape}")
    h = factors._handle
    if bb.on_device and (h.backend != "cuda" or bb.device != factors.device):
        raise InvalidInputError(f"b in device memory ({bb.where()}) but the factors are "
                                + (f"on cuda:{factors.device}" if factors.device is not None else f"on {h.backend}")
                                + ": pass b where A was")
    nrhs = 1 if bb.ndim == 1 else bb.shape[1]
    x = _arrays.empty(bb, bb.shape, "float64", "C")
    x.name = "x"
    ld = max(1, nrhs)  # row-major n x nrhs
    info = _lib.SolveInfo()
    with _arrays.device_scope(bb):
        if h.backend == "cuda":
            h.set_stream(_arrays.current_stream(bb))
        status = h.check(h.call(_lib.lib.tcsolveDgetrs, h.raw, factors._raw, _TRANS[trans], nrhs, bb.ptr, ld,
                                  x.ptr, ld, ctypes.byref(info), work=n * n * nrhs))
    message = _lib.text(_lib.lib.tcsolveGetLastErrorMessage(h.raw)) if status == _lib.NOT_CONVERGED else ""
    result = _record(h, info, factors.variant)
    if result.fallback_used:  # x came from the FP64 LU: the mixed-precision path did not hold
        warnings.warn(f"the FP32 LU's refinement did not reach FP64 accuracy; the FP64 LU fallback solved it "
                      f"({result.note})", LinAlgWarning, stacklevel=2)
    for text in result.warnings:
        warnings.warn(text, LinAlgWarning, stacklevel=2)
    if status == _lib.NOT_CONVERGED:
        warnings.warn(message, NotConvergedWarning, stacklevel=2)
    return x.obj, result
