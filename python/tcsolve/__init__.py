"""tcsolve for Python: FP32-accurate tensor-core products, the mixed-precision linear solver and
K-means on NumPy arrays, CuPy arrays and torch tensors, over the C API (libtcsolve,
tcsolve.h) through ctypes.

    import numpy as np, tcsolve
    x, info = tcsolve.solve(A, b)                 # A x = b to FP64 accuracy
    lu = tcsolve.lu_factor(A); x, info = tcsolve.lu_solve(lu, b)   # factor once, solve many
    C = tcsolve.matmul(a, b, variant="ec-fp16")   # FP32 product
    km = tcsolve.KMeans(3, variant="ec-fp16").fit(X)

NumPy arrays run on the host (solve on the backend ``auto`` picks, matmul on the CPU emulation);
CuPy arrays and torch CUDA tensors run on their GPU without copies, on the array library's
current stream. ``tcsolve.variants()`` lists the GEMM variants; ``tcsolve.__version__`` is the
project's version: what pip recorded (``importlib.metadata.version("tcsolve")``) for a package
that pip installed, else the loaded library's (tcsolveGetVersion: a build tree, ``cmake --install``).

Warnings: ``tcsolve.solve`` issues a ``NotConvergedWarning`` when it did not reach FP64 accuracy
and a ``LinAlgWarning`` (a RuntimeWarning, as scipy's) for each of the solver's warnings
(``info.warnings``: an ill-conditioned A, ...). Ctrl-C stops a running solve or host matmul
within about a second (KeyboardInterrupt). NumPy inputs in any byte order and layout are
converted (copied) as needed and never modified; ``out=`` must be writeable.
"""

import os as _os
from importlib import metadata as _metadata

from ._errors import (AllocationError, CudaError, InternalError, InterruptedCallError, InvalidInputError,
                      LinAlgWarning, NotConvergedWarning, NotSupportedError, SingularMatrixError, TcsolveError)
from ._lib import library_path, version as _version
from .factor import LUFactors, lu_factor, lu_solve
from .kmeans import KMeans, kmeans_plusplus
from .matmul import matmul
from .solve import SolveInfo, solve
from .variants import Variant, variants


def _package_version():
    """importlib.metadata's version when pip installed this very package (its record names this
    file), else the library's: a build tree or a prefix beside an older pip-installed copy must not
    report that copy's version."""
    try:
        dist = _metadata.distribution("tcsolve")
    except _metadata.PackageNotFoundError:
        return _version()
    if _os.path.realpath(dist.locate_file("tcsolve/__init__.py")) == _os.path.realpath(__file__):
        return dist.version
    return _version()


__version__ = _package_version()
__license__ = "BSD-3-Clause"  # LICENSE at the top of the source tree

__all__ = [
    "solve", "SolveInfo", "lu_factor", "lu_solve", "LUFactors", "matmul", "KMeans", "kmeans_plusplus", "variants", "Variant", "library_path", "TcsolveError",
    "InvalidInputError", "SingularMatrixError", "NotSupportedError", "AllocationError", "CudaError", "InternalError", "InterruptedCallError",
    "NotConvergedWarning", "LinAlgWarning", "__version__", "__license__",
]
