"""Loading libtcsolve (the C API, tcsolve.h) and its ctypes prototypes; statuses to exceptions.

Where the library is found (no environment variable is read): ``_location.py``, written by the
build beside this file, names the directory of ``libtcsolve.so.<SOVERSION>`` relative to this
package's directory and the file's name:

* build tree (``build/python/tcsolve``): ``"."``, a symbolic link to ``build/capi/libtcsolve.so.*``
  made by the build; the library finds its own dependencies through its build RPATH;
* installed (``cmake --install``): the relative path from ``<TCSOLVE_PYTHON_INSTALL_DIR>/tcsolve``
  to ``<CMAKE_INSTALL_LIBDIR>`` under the same prefix, computed at install time; the installed
  library finds its dependencies through ``$ORIGIN``.

So one library serves every Python version, and a moved prefix still works.
"""

import ctypes
import os

from . import _errors

try:
    from . import _location
except ImportError as e:  # the source tree, not a build tree or an installed package
    raise ImportError(
        "tcsolve: _location.py is missing: import the package from a build tree "
        "(PYTHONPATH=build/python) or an installed prefix, not from python/ in the source tree") from e

c_int = ctypes.c_int
c_int64 = ctypes.c_int64
c_double = ctypes.c_double
c_float_p = ctypes.POINTER(ctypes.c_float)
c_double_p = ctypes.POINTER(ctypes.c_double)
c_void_p = ctypes.c_void_p
c_char_p = ctypes.c_char_p

# tcsolveBackend_t, tcsolveOperation_t, tcsolveStatus_t values (tcsolve.h).
BACKEND_AUTO, BACKEND_CPU, BACKEND_CUDA = 0, 1, 2
BACKENDS = {"auto": BACKEND_AUTO, "cpu": BACKEND_CPU, "cuda": BACKEND_CUDA}
BACKEND_NAMES = {BACKEND_CPU: "cpu", BACKEND_CUDA: "cuda"}
OP_N, OP_T = 0, 1
SUCCESS, NOT_CONVERGED, INTERRUPTED = 0, 3, 7


class SolveParams(ctypes.Structure):
    """tcsolveSolveParams_t."""
    _fields_ = [("size", ctypes.c_size_t), ("variant", c_int), ("refinement", c_int), ("pivoting", c_int),
                ("max_iterations", c_int), ("fallback", c_int), ("block_size", c_int), ("row_major", c_int),
                ("estimate_condition", c_int), ("fp64_below", c_int), ("rbt_window", c_int),
                ("rbt_seed", ctypes.c_uint64), ("cuda_plan", ctypes.c_char_p), ("gemm_kernels", c_int)]


class SolveInfo(ctypes.Structure):
    """tcsolveSolveInfo_t."""
    _fields_ = [("converged", c_int), ("iterations", c_int), ("fallback_used", c_int), ("resolved_variant", c_int),
                ("backward_error", c_double), ("condition_estimate", c_double)]


class SolveTimes(ctypes.Structure):
    """tcsolveSolveTimes_t."""
    _fields_ = [("factorization", c_double), ("refinement", c_double), ("total", c_double)]


class KmeansParams(ctypes.Structure):
    """tcsolveKmeansParams_t."""
    _fields_ = [("variant", c_int), ("max_iterations", c_int), ("tol", c_double), ("init", c_int),
                ("seed", ctypes.c_uint64)]


class KmeansInfo(ctypes.Structure):
    """tcsolveKmeansInfo_t."""
    _fields_ = [("iterations", c_int), ("stop", c_int), ("resolved_variant", c_int), ("empty_clusters", c_int),
                ("inertia", c_double), ("time_s", c_double), ("time_per_iteration_s", c_double),
                ("seeding_time_s", c_double)]


def library_path():
    """The path of the libtcsolve this package loads (see the module's docstring)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, _location.LIBRARY_DIR, _location.LIBRARY_NAME))


class tcsolveFactorization(c_void_p):  # noqa: N801 (the C type's name): tcsolveFactorization_t
    """An opaque tcsolveFactorization_t."""


def _load():
    path = library_path()
    if not os.path.exists(path):
        raise ImportError(f"tcsolve: the C API library is not where the package expects it: {path} "
                          "(rebuild, or reinstall the package with its library)")
    lib = ctypes.CDLL(path)
    status = c_int
    handle = c_void_p
    protos = {
        "tcsolveCreate": (status, [ctypes.POINTER(handle), c_int]),
        "tcsolveDestroy": (status, [handle]),
        "tcsolveSetStream": (status, [handle, c_void_p]),
        "tcsolveGetBackend": (status, [handle, ctypes.POINTER(c_int)]),
        "tcsolveInterrupt": (status, [handle]),
        "tcsolveGetStatusString": (c_char_p, [c_int]),
        "tcsolveGetLastErrorMessage": (c_char_p, [handle]),
        "tcsolveGetVersion": (c_char_p, []),
        "tcsolveVariantFromName": (status, [c_char_p, ctypes.POINTER(c_int)]),
        "tcsolveVariantName": (c_char_p, [c_int]),
        "tcsolveVariantCount": (c_int, []),
        "tcsolveVariantDescription": (c_char_p, [c_int]),
        "tcsolveVariantInputFormat": (c_char_p, [c_int]),
        "tcsolveVariantUnitRoundoff": (c_double, [c_int]),
        "tcsolveVariantAvailable": (status, [c_int, c_int, ctypes.POINTER(c_int)]),
        "tcsolveSgemm": (status, [handle, c_int, c_int, c_int, c_int64, c_int64, c_int64, c_float_p, c_void_p, c_int64,
                                  c_void_p, c_int64, c_float_p, c_void_p, c_int64]),
        "tcsolveSolveParamsInit": (None, [ctypes.POINTER(SolveParams), ctypes.c_size_t]),
        "tcsolveDgesv": (status, [handle, ctypes.POINTER(SolveParams), c_int64, c_int64, c_void_p, c_int64, c_void_p,
                                  c_int64, c_void_p, c_int64, ctypes.POINTER(SolveInfo)]),
        "tcsolveDgetrf": (status, [handle, ctypes.POINTER(SolveParams), c_int64, c_void_p, c_int64,
                                   ctypes.POINTER(tcsolveFactorization)]),
        "tcsolveDgetrs": (status, [handle, tcsolveFactorization, c_int, c_int64, c_void_p, c_int64, c_void_p, c_int64,
                                   ctypes.POINTER(SolveInfo)]),
        "tcsolveFactorizationDestroy": (status, [tcsolveFactorization]),
        "tcsolveGetLastSolveHistory": (status, [handle, c_double_p, c_int64, ctypes.POINTER(c_int64)]),
        "tcsolveGetLastSolveTimes": (status, [handle, ctypes.POINTER(SolveTimes)]),
        "tcsolveGetLastSolvePhaseCount": (status, [handle, ctypes.POINTER(c_int64)]),
        "tcsolveGetLastSolvePhase": (status, [handle, c_int64, ctypes.POINTER(c_char_p), c_double_p]),
        "tcsolveGetLastSolveBlockSize": (status, [handle, ctypes.POINTER(c_int)]),
        "tcsolveGetLastSolvePivoting": (status, [handle, ctypes.POINTER(c_int), ctypes.POINTER(c_int)]),
        "tcsolveGetLastSolveGrowth": (status, [handle, ctypes.POINTER(ctypes.c_double)]),
        "tcsolveGetLastSolveNote": (c_char_p, [handle]),
        "tcsolveGetLastSolveWarningCount": (status, [handle, ctypes.POINTER(c_int64)]),
        "tcsolveGetLastSolveWarning": (c_char_p, [handle, c_int64]),
        "tcsolveKmeansParamsDefault": (None, [ctypes.POINTER(KmeansParams)]),
        "tcsolveKmeansPlusPlus": (status, [handle, c_int64, c_int64, c_void_p, c_int64, c_int64, ctypes.c_uint64,
                                           c_void_p, c_int64]),
        "tcsolveKmeans": (status, [handle, ctypes.POINTER(KmeansParams), c_int64, c_int64, c_void_p, c_int64, c_int64,
                                   c_void_p, c_int64, c_void_p, ctypes.POINTER(KmeansInfo)]),
        "tcsolveKmeansWeighted": (status, [handle, ctypes.POINTER(KmeansParams), c_int64, c_int64, c_void_p, c_int64,
                                           c_int64, c_void_p, c_int64, c_void_p, c_double_p,
                                           ctypes.POINTER(KmeansInfo)]),
    }
    for name, (restype, argtypes) in protos.items():
        f = getattr(lib, name)
        f.restype = restype
        f.argtypes = argtypes
    return lib


lib = _load()


def text(raw):
    """A C string from the library as str ("" for NULL)."""
    return raw.decode("utf-8", "replace") if raw else ""


def check(status, handle=None):
    """Raises the exception of a failed ``status`` with the message the library kept for
    ``handle`` (None: the calls made without a handle); returns ``status`` otherwise (SUCCESS,
    or NOT_CONVERGED, which is a result)."""
    if status in (SUCCESS, NOT_CONVERGED):
        return status
    raise _errors.error_for_status(status, text(lib.tcsolveGetLastErrorMessage(handle)))


def version():
    """tcsolveGetVersion(): the library's version ("0.3.0")."""
    return text(lib.tcsolveGetVersion())


def variant_value(name):
    """The C API's int for a variant name ("ec-fp16"); InvalidInputError listing the valid
    names otherwise."""
    if not isinstance(name, str):
        raise _errors.InvalidInputError(f"variant must be a name such as 'auto' or 'ec-fp16', got {name!r}")
    value = c_int(-1)
    check(lib.tcsolveVariantFromName(name.encode(), ctypes.byref(value)))
    return value.value


def variant_name(value):
    """The name of the C API's variant int."""
    return text(lib.tcsolveVariantName(value))
