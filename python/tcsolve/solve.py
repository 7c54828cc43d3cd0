"""``tcsolve.solve``: A X = B to FP64 accuracy with the mixed-precision LU solver (tcsolveDgesv):
FP32 LU whose trailing updates run on a GEMM variant, FP64 iterative refinement, FP64 fallback;
the solver of ``tcsolve solve``, which gives bitwise its x for the same system and options.
"""

import ctypes
import dataclasses
import operator
import warnings

from . import _arrays, _autograd, _batch, _handles, _lib
from ._errors import InvalidInputError, LinAlgWarning, NotConvergedWarning

_REFINEMENTS = {"classical": 0, "gmres": 1, "auto": 2}
_PIVOTINGS = {"partial": 0, "rbt": 1, "auto": 2, "beam": 3}


@dataclasses.dataclass
class SolveInfo:
    """What a solve did (tcsolveSolveInfo_t and the handle's record of the last solve).

    converged           LAPACK dsgesv's test ||b - A x||_inf <= sqrt(n) ||x||_inf ||A||_inf eps64
                        holds for every right-hand side
    iterations          refinement steps applied (GMRES-IR: outer steps)
    fallback_used       the FP64 LU fallback ran
    backward_error      max over columns of ||b - A x||_inf / (||A||_inf ||x||_inf + ||b||_inf)
    history             [(iteration, backward_error)], iteration 0 being the LU solve alone (the
                        CLI's JSON "history")
    condition_estimate  cond_1(A) estimated from the LU, None when not computed
    timings             {"factorization", "refinement", "total": seconds, "phases": {name: s}}
                        (the CLI's time_s; cuda: device times, the phase "transfer" outside
                        total; no phases on the cpu)
    resolved_variant    what the trailing updates ran ("auto" resolved; the requested variant
                        when n <= block size: one block, no trailing update)
    variant             the variant asked for
    backend             "cpu" or "cuda"
    block_size          the LU's block size nb
    pivoting            the pivoting that gave x ("partial", "rbt", "beam": partial when rbt or
                        beam fell back to it)
    modifications       beam: the pivots its LU modified; 0 otherwise
    growth              beam: its factors' growth max|LU| / max|A_s| (also when it fell back;
                        0 where it broke down before the test, and for the other pivotings)
    note                why refinement stopped, the fallback's reason
    warnings            the solver's warnings (ill-conditioning, ...)
    """

    converged: bool
    iterations: int
    fallback_used: bool
    backward_error: float
    history: list
    condition_estimate: object
    timings: dict
    resolved_variant: str
    variant: str
    backend: str
    block_size: int
    pivoting: str
    modifications: int
    growth: float
    note: str
    warnings: list


def _int_option(name, value, least):
    """``value`` as an int in [least, 2^31 - 1] (Python or NumPy integers, not bool)."""
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)
    except TypeError:
        raise InvalidInputError(f"{name} must be an integer >= {least}, got {value!r}") from None
    if value < least or value > 2**31 - 1:
        raise InvalidInputError(f"{name} must be an integer in [{least}, 2^31 - 1], got {value}")
    return value


_GEMM_KERNELS = {"automatic": 0, "wgmma": 1, "mma": 2}


def _params(variant, refine, max_iter, fallback, block_size, pivoting="partial", estimate_condition="auto",
            fp64_below=None, rbt_window=None, rbt_seed=None, cuda_plan=None, gemm_kernels=None):
    p = _lib.SolveParams()
    _lib.lib.tcsolveSolveParamsInit(ctypes.byref(p), ctypes.sizeof(p))  # tcsolveSolveParamsDefault's macro
    if cuda_plan is not None:  # "FIELD=VALUE,..." or {field: value}; the library checks each field
        if isinstance(cuda_plan, dict):
            cuda_plan = ",".join(f"{k}={v}" for k, v in cuda_plan.items())
        if not isinstance(cuda_plan, str) or not cuda_plan:
            raise InvalidInputError(f"cuda_plan must be 'FIELD=VALUE,...' or a dict, got {cuda_plan!r}")
        p.cuda_plan = cuda_plan.encode()  # the structure keeps the bytes alive
    if gemm_kernels is not None:
        if gemm_kernels not in _GEMM_KERNELS:
            raise InvalidInputError(f"gemm_kernels must be one of {', '.join(_GEMM_KERNELS)}, got {gemm_kernels!r}")
        p.gemm_kernels = _GEMM_KERNELS[gemm_kernels]
    if isinstance(estimate_condition, bool):  # True: always, False: never (tcsolveSolveParams_t's 1, 0)
        p.estimate_condition = int(estimate_condition)
    elif estimate_condition == "auto":
        p.estimate_condition = 2
    else:
        raise InvalidInputError(f"estimate_condition must be 'auto', True or False, got {estimate_condition!r}")
    if fp64_below is not None:  # None: the library's default (3072 on cuda, 0 on the cpu)
        p.fp64_below = _int_option("fp64_below", fp64_below, 0)
    if rbt_window is not None:
        p.rbt_window = _int_option("rbt_window", rbt_window, 0)
    if rbt_seed is not None:
        if isinstance(rbt_seed, bool) or not isinstance(rbt_seed, int) or not 0 <= rbt_seed < 2**64:
            raise InvalidInputError(f"rbt_seed must be an integer in [0, 2^64), got {rbt_seed!r}")
        p.rbt_seed = rbt_seed
    p.variant = _lib.variant_value(variant)
    if refine not in _REFINEMENTS:
        raise InvalidInputError(f"refine must be one of {', '.join(_REFINEMENTS)}, got {refine!r}")
    p.refinement = _REFINEMENTS[refine]
    if pivoting not in _PIVOTINGS:
        raise InvalidInputError(f"pivoting must be one of {', '.join(_PIVOTINGS)}, got {pivoting!r}")
    p.pivoting = _PIVOTINGS[pivoting]
    p.max_iterations = _int_option("max_iter", max_iter, 0)
    if not isinstance(fallback, bool):
        raise InvalidInputError(f"fallback must be True or False, got {fallback!r}")
    p.fallback = int(fallback)
    p.block_size = 0 if block_size is None else _int_option("block_size", block_size, 1)
    return p


def _record(h, info, variant):
    """SolveInfo from tcsolveSolveInfo_t and the handle's record of the last solve."""
    raw, lib = h.raw, _lib.lib
    length = ctypes.c_int64()
    h.check(lib.tcsolveGetLastSolveHistory(raw, None, 0, ctypes.byref(length)))
    history = (ctypes.c_double * max(1, length.value))()
    h.check(lib.tcsolveGetLastSolveHistory(raw, history, length.value, ctypes.byref(length)))
    times = _lib.SolveTimes()
    h.check(lib.tcsolveGetLastSolveTimes(raw, ctypes.byref(times)))
    count = ctypes.c_int64()
    h.check(lib.tcsolveGetLastSolvePhaseCount(raw, ctypes.byref(count)))
    phases = {}
    for i in range(count.value):
        name, seconds = ctypes.c_char_p(), ctypes.c_double()
        h.check(lib.tcsolveGetLastSolvePhase(raw, i, ctypes.byref(name), ctypes.byref(seconds)))
        phases[_lib.text(name.value)] = seconds.value
    h.check(lib.tcsolveGetLastSolveWarningCount(raw, ctypes.byref(count)))
    solver_warnings = [_lib.text(lib.tcsolveGetLastSolveWarning(raw, i)) for i in range(count.value)]
    nb = ctypes.c_int()
    h.check(lib.tcsolveGetLastSolveBlockSize(raw, ctypes.byref(nb)))
    pivoting, modifications = ctypes.c_int(), ctypes.c_int()
    h.check(lib.tcsolveGetLastSolvePivoting(raw, ctypes.byref(pivoting), ctypes.byref(modifications)))
    growth = ctypes.c_double()
    h.check(lib.tcsolveGetLastSolveGrowth(raw, ctypes.byref(growth)))
    return SolveInfo(
        converged=bool(info.converged),
        iterations=info.iterations,
        fallback_used=bool(info.fallback_used),
        backward_error=info.backward_error,
        history=[(i, history[i]) for i in range(length.value)],
        condition_estimate=None if info.condition_estimate < 0 else info.condition_estimate,
        timings={"factorization": times.factorization, "refinement": times.refinement, "total": times.total,
                 "phases": phases},
        resolved_variant=_lib.variant_name(info.resolved_variant),
        variant=variant,
        backend=h.backend,
        block_size=nb.value,
        pivoting={1: "rbt", 3: "beam"}.get(pivoting.value, "partial"),
        modifications=modifications.value,
        growth=growth.value,
        note=_lib.text(lib.tcsolveGetLastSolveNote(raw)),
        warnings=solver_warnings,
    )


def _system(A, b):
    """The checked Arrays of A and b (FP64, same library and device), b as given (1-D or 2-D)."""
    a, bb = _arrays.wrap(A, "A"), _arrays.wrap(b, "b")
    _arrays.same_place(a, bb)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise InvalidInputError(f"A must be a square matrix (n x n), got shape {a.shape}")
    n = a.shape[0]
    if bb.ndim not in (1, 2):
        raise InvalidInputError(f"b must be a vector (n) or a matrix (n x nrhs), got shape {bb.shape}")
    if bb.shape[0] != n:
        raise InvalidInputError(f"b has {bb.shape[0]} rows but A is {n} x {n} (shapes {bb.shape} and {a.shape})")
    hint = "float64, or float32 (converted to float64)"
    _arrays.require_dtype(a, ("float64", "float32"), hint)
    _arrays.require_dtype(bb, ("float64", "float32"), hint)
    return _arrays.astype(a, "float64"), _arrays.astype(bb, "float64")


def solve(A, b, variant="auto", refine="classical", max_iter=30, fallback=True, block_size=None, *,
          backend="auto", pivoting="partial", estimate_condition="auto", fp64_below=None, rbt_window=None,
          rbt_seed=None, cuda_plan=None, gemm_kernels=None):
    """Solves A x = b to FP64 accuracy; returns ``(x, info)``.

    Parameters
    ----------
    A : (n, n) or (..., n, n) array, float64 or float32
        NumPy (any array-like numpy.asarray takes), a torch tensor (CPU or CUDA) or a CuPy array.
        float32 is converted to float64 (a copy in the array's own library), as the CLI holds
        every system in FP64.
    b : (n,) or (n, nrhs) array, float64 or float32
        Of the same library and device as A. Several right-hand sides are solved together. With
        a batch of systems (A of shape (..., n, n), as torch.linalg.solve takes it) b is (..., n)
        or (..., n, nrhs) with the same batch dimensions; each system is solved in turn, x is
        stacked and info is the list of the members' SolveInfo (C order).
    variant : str, default "auto"
        GEMM variant of the LU's trailing updates (``tcsolve.variants()``; "auto": ec-fp16 when
        the scaled inputs fit FP16, else ec-tf32).
    refine : {"classical", "gmres", "auto"}, default "classical"
        classical: x += LU^-1 r; gmres: GMRES-IR for ill-conditioned systems; auto: classical,
        then GMRES-IR once a step gains less than 10x.
    max_iter : int, default 30
        At most this many refinement steps (0: the LU solve alone).
    fallback : bool, default True
        Solve again with an FP64 LU when refinement fails.
    block_size : int or None, default None
        The LU's block size nb; None: the backend's default (128 cpu; 512 cuda, 1024 from n = 24576).
    backend : {"auto", "cpu", "cuda"}, default "auto"
        Host arrays only: auto is "cuda" when a usable GPU is present, else "cpu" (the CLI's
        --backend auto). Device arrays always run on their own GPU.
    pivoting : {"partial", "rbt", "auto", "beam"}, default "partial"
        partial: a pivot search per column; rbt: random butterflies U^T A V and an LU with
        windowed pivoting, refined against A (partial pivoting again when it fails; the note
        says so); auto: the faster by measurement (partial for now); beam: each pivot searched
        in its diagonal block, tiny pivots modified (``info.modifications`` counts them),
        GMRES-IR against A, partial pivoting again when it fails (on a GPU with a block size of
        at most 512; slower than partial pivoting where measured).
    estimate_condition : {"auto", True, False}, default "auto"
        When cond_1(A) is estimated from the LU (info.condition_estimate and the
        ill-conditioning warning; 10.7 of 77 ms at n = 16384 on an H200): "auto" only where the
        solve's own figures leave the conditioning in doubt (no convergence, the FP64 fallback,
        GMRES-IR, a refinement step that contracted less than 10x; ``info.note`` is unchanged,
        the CLI's JSON names the rule), True always, False never.
    fp64_below : int or None, default None
        Variant auto: systems with n below it are solved by an FP64 LU refined in FP64; 0 never;
        None the library's default (3072 on cuda, 0 on the cpu), as the CLI's --fp64-below.
    rbt_window, rbt_seed : int or None, default None
        pivoting rbt: the LU's pivot window (0: no pivoting) and the butterflies' seed; None the
        library's defaults (the CLI's --rbt-window; seed 1).
    cuda_plan : str, dict or None, default None
        cuda: the LU's code path as the CLI's --cuda-plan takes it ("trsv=cublas,lookahead=off"
        or {"trsv": "cublas"}); None the production path. Checked on both backends.
    gemm_kernels : {"automatic", "wgmma", "mma"} or None, default None
        cuda: the trailing updates' kernels (the CLI's --gemm-kernels); None automatic.

    Returns
    -------
    x : array of b's kind and shape, float64
        NumPy for host input, a torch CUDA tensor or CuPy array on A's device for device input
        (solved there without a host copy of A, on the library's current stream).
    info : SolveInfo
        converged, iterations, fallback_used, backward_error, history, condition_estimate,
        timings, resolved_variant, backend, ... (see SolveInfo).

    torch tensors that require grad (grad enabled): the solve is recorded for autograd; its
    backward solves A^T y = dL/dx (refined as the forward solve) and gives dL/db = y, dL/dA =
    -y x^T (2-D inputs; batches and gradients are not combined yet).

    A solve that does not converge is a result, not an exception: x is the best iterate,
    ``info.converged`` is False, and a ``NotConvergedWarning`` carries the library's message.
    Each of the solver's warnings (``info.warnings``: A ill-conditioned or numerically singular,
    so that x may be far from the true solution although the residual is small; ...) is issued
    as a ``tcsolve.LinAlgWarning`` (a RuntimeWarning), converged or not.

    Ctrl-C (SIGINT) stops a running cpu solve within about a second and raises
    KeyboardInterrupt (the solve runs on a worker thread, interrupted through tcsolveInterrupt).
    Invalid input (wrong dtype or shape, NaN or inf in A, an exactly singular A) raises
    ``InvalidInputError`` (a ValueError) with the library's message; an unavailable variant or
    backend ``NotSupportedError`` and CUDA failures ``CudaError`` (RuntimeErrors).

    Layout: C-ordered A (rows contiguous, any row stride >= n) is passed as row-major
    (tcsolveSolveParams_t.row_major), F-ordered as column-major, without copies; b is copied
    into A's order when it is not in it already, and x is made in A's order. Other strides
    (negative, neither rows nor columns contiguous), NumPy arrays in non-native byte order
    ('>f8' on a little-endian machine) and unaligned ones are copied first; A and b are never
    modified.
    """
    options = dict(variant=variant, refine=refine, max_iter=max_iter, fallback=fallback, block_size=block_size,
                   backend=backend, pivoting=pivoting, estimate_condition=estimate_condition, fp64_below=fp64_below,
                   rbt_window=rbt_window, rbt_seed=rbt_seed, cuda_plan=cuda_plan, gemm_kernels=gemm_kernels)
    if _autograd.requires_grad(A, b):  # recorded for torch's autograd; backward: a solve with A^T
        return _autograd.solve(A, b, options)
    shape_a, shape_b = _batch.shape_of(A), _batch.shape_of(b)
    if len(shape_a) > 2 or len(shape_b) > 2:
        # (..., n, n) with (..., n) or (..., n, k), as torch.linalg.solve takes them: b is a batch
        # of vectors when it is 1-D or A's shape without its last dimension; the batch dimensions
        # broadcast. One solve per member; info a list in C order.
        if len(shape_a) < 2 or len(shape_b) < 1:
            raise InvalidInputError(f"A must be (..., n, n) and b (..., n) or (..., n, k), got shapes {shape_a} and "
                                    f"{shape_b}")
        vector = len(shape_b) == 1 or shape_b == shape_a[:-1]
        batch_a, batch_b = _batch.batch_of(A, 2, "A") or (), _batch.batch_of(b, 1 if vector else 2, "b") or ()
        batch = _batch.broadcast(batch_a, batch_b, ("A", "b"))
        xs, infos = [], []
        for idx in _batch.indices(batch):
            x_i, info_i = solve(A[_batch.member(batch_a, idx)], b[_batch.member(batch_b, idx)], **options)
            xs.append(x_i)
            infos.append(info_i)
        return _batch.stack(xs[0], xs, batch), infos
    params = _params(variant, refine, max_iter, fallback, block_size, pivoting, estimate_condition, fp64_below,
                     rbt_window, rbt_seed, cuda_plan, gemm_kernels)
    if backend not in _lib.BACKENDS:
        raise InvalidInputError(f"backend must be one of auto, cpu, cuda, got {backend!r}")
    a, bb = _system(A, b)
    n = a.shape[0]
    vector = bb.ndim == 1
    nrhs = 1 if vector else bb.shape[1]

    layout = _arrays.blas_layout(a.shape, a.strides)
    if layout is None:
        a = _arrays.contiguous(a, "C")
        layout = _arrays.blas_layout(a.shape, a.strides)
    order, lda = layout
    if vector:  # B is n x 1: row-major with ld = b's stride, column-major when b is contiguous
        step = bb.strides[0] if n > 1 else 1
        if step < 1 or (order == "col" and step != 1):
            bb = _arrays.contiguous(bb, "C")
            step = 1
        ldb = step if order == "row" else max(1, n)
    else:
        ldb = _arrays.fits(bb.shape, bb.strides, order)
        if ldb is None:
            bb = _arrays.contiguous(bb, "C" if order == "row" else "F")
            ldb = _arrays.fits(bb.shape, bb.strides, order)
    x = _arrays.empty(a, bb.shape, "float64", "C" if order == "row" else "F")
    x.name = "x"
    ldx = (1 if order == "row" else max(1, n)) if vector else _arrays.fits(x.shape, x.strides, order)
    params.row_major = 1 if order == "row" else 0

    if a.on_device:
        if backend == "cpu":
            raise InvalidInputError(f"backend='cpu' with A in device memory ({a.where()}): move it to the host")
        resolved = "cuda"
    else:
        resolved = backend
    info = _lib.SolveInfo()
    with _arrays.device_scope(a):
        h = _handles.get(resolved, a.device)
        h.set_stream(_arrays.current_stream(a))
        status = h.check(h.call(_lib.lib.tcsolveDgesv, h.raw, ctypes.byref(params), n, nrhs, a.ptr, lda, bb.ptr, ldb,
                                x.ptr, ldx, ctypes.byref(info), work=n * n * (n + nrhs)))
        message = _lib.text(_lib.lib.tcsolveGetLastErrorMessage(h.raw)) if status == _lib.NOT_CONVERGED else ""
        result = _record(h, info, variant)
    if result.fallback_used:  # x came from the FP64 LU: the mixed-precision path did not hold
        warnings.warn(f"the FP32 LU's refinement did not reach FP64 accuracy; the FP64 LU fallback solved it "
                      f"({result.note})", LinAlgWarning, stacklevel=2)
    for text in result.warnings:  # as the CLI prints them ("warning: ...")
        warnings.warn(text, LinAlgWarning, stacklevel=2)
    if status == _lib.NOT_CONVERGED:
        warnings.warn(message, NotConvergedWarning, stacklevel=2)
    return x.obj, result
