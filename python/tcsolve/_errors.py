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
==========================  ==========================================  ===================

Inputs refused by the package itself before any library call (a wrong dtype, a shape that does
not fit, arrays on different devices) raise ``InvalidInputError`` with status None.

TCSOLVE_STATUS_NOT_CONVERGED (3) is no exception: ``tcsolve.solve`` returns ``(x, info)`` with
``info.converged`` False (x the best iterate) and issues a ``NotConvergedWarning``.
"""

STATUS_NAMES = {
    0: "TCSOLVE_STATUS_SUCCESS",
    1: "TCSOLVE_STATUS_INTERNAL_ERROR",
    2: "TCSOLVE_STATUS_INVALID_VALUE",
    3: "TCSOLVE_STATUS_NOT_CONVERGED",
    4: "TCSOLVE_STATUS_NOT_SUPPORTED",
    5: "TCSOLVE_STATUS_ALLOC_FAILED",
    6: "TCSOLVE_STATUS_CUDA_ERROR",
}


class TcsolveError(Exception):
    """Base of tcsolve's exceptions. ``status``: the tcsolveStatus_t value, or None when the
    package refused the input before calling the library."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class InvalidInputError(TcsolveError, ValueError):
    """Invalid argument or input (TCSOLVE_STATUS_INVALID_VALUE, or refused by the package)."""


class NotSupportedError(TcsolveError, RuntimeError):
    """The backend, variant or option is not available in this build or on this machine."""


class AllocationError(TcsolveError, MemoryError, RuntimeError):
    """The library could not allocate memory."""


class CudaError(TcsolveError, RuntimeError):
    """A CUDA call failed inside the library."""


class InternalError(TcsolveError, RuntimeError):
    """Any other failure inside the library."""


class NotConvergedWarning(RuntimeWarning):
    """Issued by ``tcsolve.solve`` when refinement and fallback did not reach FP64 accuracy."""


_BY_STATUS = {
    1: InternalError,
    2: InvalidInputError,
    4: NotSupportedError,
    5: AllocationError,
    6: CudaError,
}


def error_for_status(status, message):
    """The exception for a failed call that returned ``status`` with ``message``."""
    cls = _BY_STATUS.get(status, InternalError)
    return cls(message or STATUS_NAMES.get(status, f"tcsolve status {status}"), status)
