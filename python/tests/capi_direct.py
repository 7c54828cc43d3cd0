"""The C API called directly through the package's ctypes binding (tcsolve._lib), on a fresh
handle: the reference that the package's calls must equal bitwise (test_gpu_arrays.py,
gpu_checks.py)."""

import ctypes

from tcsolve import _lib

N, T = _lib.OP_N, _lib.OP_T


def sgemm(backend, variant, ta, tb, m, n, k, A, lda, B, ldb, C, ldc, stream=0):
    """tcsolveSgemm(ta, tb, m, n, k, 1, A, lda, B, ldb, 0, C, ldc) on a fresh handle of ``backend``
    ("cpu" or "cuda"; pointers as ints, on that backend's side) with its stream set to ``stream``.
    Returns once the product is launched (cuda: ordered on ``stream``)."""
    h = ctypes.c_void_p()
    _lib.check(_lib.lib.tcsolveCreate(ctypes.byref(h), _lib.BACKENDS[backend]))
    one, zero = ctypes.c_float(1), ctypes.c_float(0)
    try:
        _lib.check(_lib.lib.tcsolveSetStream(h, ctypes.c_void_p(stream or None)), h)
        _lib.check(_lib.lib.tcsolveSgemm(h, _lib.variant_value(variant), ta, tb, m, n, k, ctypes.byref(one), A, lda,
                                         B, ldb, ctypes.byref(zero), C, ldc), h)
    finally:
        _lib.lib.tcsolveDestroy(h)


def sgemm_row_major(backend, variant, m, n, k, a_ptr, b_ptr, c_ptr, stream=0):
    """C (m x n) = A (m x k) B (k x n), all three C-contiguous, as tcsolve.matmul computes it with a
    C-ordered output: C^T = B^T A^T column-major, op N, N, the buffers as they are."""
    sgemm(backend, variant, N, N, n, m, k, b_ptr, n, a_ptr, k, c_ptr, n, stream)
