"""``tcsolve.variants()``: the GEMM variant table (``tcsolve variants``) from the library."""

import collections
import ctypes

from . import _lib

Variant = collections.namedtuple(
    "Variant", ["name", "description", "input_format", "unit_roundoff", "available_cpu", "available_cuda"])
Variant.__doc__ = """One GEMM variant: its name (the ``variant=`` argument), one line of
description, the format its tensor cores (or CUDA cores) are fed, the unit roundoff expected of
its products, and whether it runs on the cpu and cuda backends in this build on this machine
(cuda: only with a usable GPU)."""


def _available(value, backend):
    flag = ctypes.c_int()
    _lib.check(_lib.lib.tcsolveVariantAvailable(value, backend, ctypes.byref(flag)))
    return bool(flag.value)


def variants():
    """The variant table, in the library's order: a list of ``Variant`` (name, description,
    input_format, unit_roundoff, available_cpu, available_cuda)."""
    lib = _lib.lib
    return [Variant(_lib.text(lib.tcsolveVariantName(v)), _lib.text(lib.tcsolveVariantDescription(v)),
                    _lib.text(lib.tcsolveVariantInputFormat(v)), lib.tcsolveVariantUnitRoundoff(v),
                    _available(v, _lib.BACKEND_CPU), _available(v, _lib.BACKEND_CUDA))
            for v in range(lib.tcsolveVariantCount())]
