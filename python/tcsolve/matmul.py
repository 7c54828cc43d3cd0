"""``tcsolve.matmul``: FP32 products C = A B through a GEMM variant (tcsolveSgemm).

tcsolveSgemm is column-major (BLAS). A row-major (C-ordered) result is computed as its
transpose, C^T = B^T A^T: the row-major buffers of A and B are, read column-major, A^T and B^T
already, so nothing is copied. For each operand the call picks op N or T from how it is stored
(rows or columns contiguous), so C-, F- and mixed-order operands, and slices with a row or column
stride, are all passed in place.
"""

import ctypes

from . import _arrays, _autograd, _batch, _handles, _lib
from ._errors import InvalidInputError

_ONE = ctypes.c_float(1.0)
_ZERO = ctypes.c_float(0.0)


def _operand(arr):
    """(layout, ld, arr) of a 2-D operand, copied into C order when its strides fit no BLAS
    layout."""
    layout = _arrays.blas_layout(arr.shape, arr.strides)
    if layout is None:
        arr = _arrays.contiguous(arr, "C")
        layout = _arrays.blas_layout(arr.shape, arr.strides)
    return layout[0], layout[1], arr


def sgemm(h, variant, a, b, out, out_layout):
    """out = a @ b through tcsolveSgemm on handle ``h``: a (m x k), b (k x n), out (m x n) as
    Arrays with BLAS layouts, out's given by ``out_layout`` = (layout, ld)."""
    m, k = a.shape
    n = b.shape[1]
    la, lda, a = _operand(a)
    lb, ldb, b = _operand(b)
    order, ldc = out_layout
    work = m * n * k
    if order == "row":  # C^T (n x m) = B^T (n x k) A^T (k x m), column-major
        op_first = _lib.OP_N if lb == "row" else _lib.OP_T  # b row-major: its buffer is B^T
        op_second = _lib.OP_N if la == "row" else _lib.OP_T
        return h.check(h.call(_lib.lib.tcsolveSgemm, h.raw, variant, op_first, op_second, n, m, k, ctypes.byref(_ONE),
                              b.ptr, ldb, a.ptr, lda, ctypes.byref(_ZERO), out.ptr, ldc, work=work))
    op_first = _lib.OP_N if la == "col" else _lib.OP_T  # a column-major: its buffer is A
    op_second = _lib.OP_N if lb == "col" else _lib.OP_T
    return h.check(h.call(_lib.lib.tcsolveSgemm, h.raw, variant, op_first, op_second, m, n, k, ctypes.byref(_ONE),
                          a.ptr, lda, b.ptr, ldb, ctypes.byref(_ZERO), out.ptr, ldc, work=work))


def handle_for(arr):
    """The handle for an array's memory: the cpu backend (the emulation) for host arrays, cuda on
    the array's device for device arrays, with the handle's stream set to the array library's
    current stream. Call inside _arrays.device_scope(arr)."""
    h = _handles.get("cuda" if arr.on_device else "cpu", arr.device)
    h.set_stream(_arrays.current_stream(arr))
    return h


def matmul(a, b, variant="auto", out=None):
    """C = a @ b in FP32 through a GEMM variant.

    Parameters
    ----------
    a : (m, k) float32 array, or a batch (..., m, k) (b then (..., k, n) with the same batch
        dimensions, out (..., m, n): one product per member)
        NumPy (host: runs on the CPU emulation of the variant, the cpu backend), a torch tensor
        (CPU: as NumPy; CUDA: on its GPU) or a CuPy array (on its GPU). Device arrays are used in
        place (no copy), and the product is launched on the library's current stream.
    b : (k, n) float32 array
        Of the same library and device as a.
    variant : str, default "auto"
        A GEMM variant (``tcsolve.variants()``): "ec-fp16", "ec-tf32", "fp32-simt", ... "auto"
        picks ec-fp16 when the scaled inputs fit FP16 without loss, else ec-tf32.
    out : (m, n) float32 array, optional
        Written in place (same library and device as a; rows or columns contiguous, not
        overlapping a or b); returned. Nothing else is allocated for device arrays. A read-only
        NumPy array (``flags.writeable`` False, e.g. ``np.load(..., mmap_mode="r")``) is refused;
        one in non-native byte order ('>f4') or unaligned is computed into a native copy that is
        then copied into it.

    Returns
    -------
    out, or a new C-ordered (m, n) float32 array of a's kind on a's device.

    torch tensors that require grad (grad enabled): the product is recorded for autograd, its
    backward two corrected products through the same variant (dL/da = G b^T, dL/db = a^T G);
    out= is then refused (an in-place product cannot be recorded).

    Operands whose strides fit no BLAS layout (neither rows nor columns contiguous, e.g.
    ``a[:, ::2]``, negative strides) are copied into C order first, as are NumPy operands in
    non-native byte order or unaligned; a and b are never modified. An ``out`` whose strides fit
    no BLAS layout is refused. Other dtypes are refused (convert with
    ``.astype(numpy.float32)``): the variants take FP32 operands.

    Ctrl-C (SIGINT) stops a running host product within about a second and raises
    KeyboardInterrupt (large products run on a worker thread, interrupted through
    tcsolveInterrupt).

    Non-finite inputs: a row of a or a column of b holding +-inf gives NaN in that row or column
    with the split variants (ec-fp16, ec-tf32, auto, markidis, ootomo-*, legemm), where
    ``numpy.matmul`` and fp32-simt give +-inf (docs/guide/variants.md, "Non-finite inputs").
    """
    if _autograd.requires_grad(a, b):  # recorded for torch's autograd; backward: corrected products
        return _autograd.matmul(a, b, variant, out)
    if len(_batch.shape_of(a)) > 2 or len(_batch.shape_of(b)) > 2:
        # (..., m, k) @ (..., k, n), the batch dimensions broadcast: one product per member
        batch_a, batch_b = _batch.batch_of(a, 2, "a") or (), _batch.batch_of(b, 2, "b") or ()
        batch = _batch.broadcast(batch_a, batch_b, ("a", "b"))
        pairs = [(a[_batch.member(batch_a, idx)], b[_batch.member(batch_b, idx)]) for idx in _batch.indices(batch)]
        if out is not None:
            _batch.check_same(batch, out, 2, "out")
            for idx, (x, y) in zip(_batch.indices(batch), pairs):
                matmul(x, y, variant, out=out[idx])
            return out
        parts = [matmul(x, y, variant) for x, y in pairs]
        return _batch.stack(parts[0], parts, batch)
    value = _lib.variant_value(variant)
    A, B = _arrays.wrap(a, "a"), _arrays.wrap(b, "b")
    _arrays.same_place(A, B)
    for arr in (A, B):
        if arr.ndim != 2:
            raise InvalidInputError(f"{arr.name} must be a matrix (2-D), got shape {arr.shape}")
        _arrays.require_dtype(arr, ("float32",), "matmul takes float32 operands: convert with .astype(float32)")
    m, k = A.shape
    if B.shape[0] != k:
        raise InvalidInputError(f"a is {m} x {k} but b is {B.shape[0]} x {B.shape[1]}: inner dimensions differ")
    n = B.shape[1]
    if out is None:
        C = _arrays.empty(A, (m, n), "float32", "C")
        layout = ("row", _arrays.fits(C.shape, C.strides, "row"))
    else:
        target = _arrays.output(out, "out")
        C = target.target
        _arrays.same_place(A, C)
        _arrays.require_dtype(C, ("float32",), "out must be float32")
        if C.shape != (m, n):
            raise InvalidInputError(f"out has shape {C.shape}, expected {(m, n)}")
        layout = _arrays.blas_layout(C.shape, C.strides)
        if layout is None:
            raise InvalidInputError(f"out has strides {C.strides} (elements): neither its rows nor its columns are "
                                    "contiguous, so it cannot be written in place")
        for arr in (A, B):
            if target.in_place and _arrays.overlaps(C, arr):
                raise InvalidInputError(f"out overlaps {arr.name}: pass a separate output array")
    with _arrays.device_scope(A):
        sgemm(handle_for(A), value, A, B, C, layout)
    return C.obj if out is None else target.finish()
