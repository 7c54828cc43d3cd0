"""The exceptions of the tcsolve package: one class per failing status of the C API.

Every exception raised by tcsolve for a failed library call carries the library's message
(tcsolveGetLastErrorMessage) and the status (``.status``, the tcsolveStatus_t value). They derive
from the built-in exceptions a Python user expects:

==========================  ==========================================  ===================
exception                   status (tcsolve.h)                          also a
==========================  ==========================================  ===================
``InvalidInputError``       TCSOLVE_STATUS_INVALID_VALUE (2)            ``ValueError``
``NotSupportedError``       TCSOLVE_STATUS_NOT_SUPPORTED (4)            ``RuntimeError``
``AllocationError``         TCSOLVE_STATUS_ALLOC_FAILED (5)             ``MemoryError``, ``RuntimeError``
``CudaError``               TCSOLVE_STATUS_CUDA_ERROR (6)               ``RuntimeError``
``InternalError``           TCSOLVE_STATUS_INTERNAL_ERROR (1)           ``RuntimeError``
``InterruptedCallError``    TCSOLVE_STATUS_INTERRUPTED (7)              ``RuntimeError``
==========================  ==========================================  ===================

An exactly singular matrix (the library's "matrix is exactly singular: ...", status 2) raises
``SingularMatrixError``: an ``InvalidInputError`` that is also ``numpy.linalg.LinAlgError``, as
NumPy and SciPy raise for singular matrices.

Inputs refused by the package itself before any library call (a wrong dtype, a shape that does
not fit, arrays on different devices) raise ``InvalidInputError`` with status None.

TCSOLVE_STATUS_NOT_CONVERGED (3) is no exception: ``tcsolve.solve`` returns ``(x, info)`` with
``info.converged`` False (x the best iterate) and issues a ``NotConvergedWarning``.

TCSOLVE_STATUS_INTERRUPTED (7): a call stopped by tcsolveInterrupt. The package interrupts its
own long calls when Ctrl-C (SIGINT) arrives and raises ``KeyboardInterrupt`` then, not
``InterruptedCallError``; that class is raised only for a call stopped by someone else.

Warnings: ``NotConvergedWarning`` (solve did not reach FP64 accuracy) and ``LinAlgWarning``
(each entry of ``SolveInfo.warnings``: ill-conditioning and the like, which the CLI prints as
"warning: ...", and a solve that needed the FP64 LU fallback), both subclasses of
``RuntimeWarning``; filter them with the ``warnings`` module.
"""

STATUS_NAMES = {
    0: "TCSOLVE_STATUS_SUCCESS",
    1: "TCSOLVE_STATUS_INTERNAL_ERROR",
    2: "TCSOLVE_STATUS_INVALID_VALUE",
    3: "TCSOLVE_STATUS_NOT_CONVERGED",
    4: "TCSOLVE_STATUS_NOT_SUPPORTED",
    5: "TCSOLVE_STATUS_ALLOC_FAILED",
    6: "TCSOLVE_STATUS_CUDA_ERROR",
    7: "TCSOLVE_STATUS_INTERRUPTED",
}


class TcsolveError(Exception):
    """Base of tcsolve's exceptions. ``status``: the tcsolveStatus_t value, or None when the
    package refused the input before calling the library."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class InvalidInputError(TcsolveError, ValueError):
    """Invalid argument or input (TCSOLVE_STATUS_INVALID_VALUE, or refused by the package)."""


try:  # NumPy is the package's dependency; a bare import of the module must still work
    from numpy.linalg import LinAlgError as _LinAlgError
except ImportError:  # pragma: no cover
    class _LinAlgError(Exception):
        pass


class SingularMatrixError(InvalidInputError, _LinAlgError):
    """A matrix that is exactly singular (the library's "matrix is exactly singular: ..."): an
    ``InvalidInputError`` (ValueError) that is also ``numpy.linalg.LinAlgError``."""


class NotSupportedError(TcsolveError, RuntimeError):
    """The backend, variant or option is not available in this build or on this machine."""


class AllocationError(TcsolveError, MemoryError, RuntimeError):
    """The library could not allocate memory."""


class CudaError(TcsolveError, RuntimeError):
    """A CUDA call failed inside the library."""


class InternalError(TcsolveError, RuntimeError):
    """Any other failure inside the library."""


class InterruptedCallError(TcsolveError, RuntimeError):
    """The call was stopped by tcsolveInterrupt on its handle (TCSOLVE_STATUS_INTERRUPTED); its
    outputs are unspecified. Ctrl-C in a call of this package raises KeyboardInterrupt instead."""


class NotConvergedWarning(RuntimeWarning):
    """Issued by ``tcsolve.solve`` when refinement and fallback did not reach FP64 accuracy."""


class LinAlgWarning(RuntimeWarning):
    """Issued by ``tcsolve.solve`` for each of the solver's warnings (``SolveInfo.warnings``):
    an ill-conditioned or numerically singular A whose solution cannot be trusted to FP64
    accuracy although refinement converged, and the like, as the CLI prints them. Modelled on
    ``scipy.linalg.LinAlgWarning`` (also a RuntimeWarning); silence it with
    ``warnings.simplefilter("ignore", tcsolve.LinAlgWarning)``."""


_BY_STATUS = {
    1: InternalError,
    2: InvalidInputError,
    4: NotSupportedError,
    5: AllocationError,
    6: CudaError,
    7: InterruptedCallError,
}


def error_for_status(status, message):
    """The exception for a failed call that returned ``status`` with ``message``."""
    cls = _BY_STATUS.get(status, InternalError)
    if cls is InvalidInputError and message and "exactly singular" in message:
        cls = SingularMatrixError
    return cls(message or STATUS_NAMES.get(status, f"tcsolve status {status}"), status)
