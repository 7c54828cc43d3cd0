"""Batched inputs, as torch.linalg and NumPy take them: (..., n, n) systems for ``solve`` and
(..., m, k) @ (..., k, n) for ``matmul``, looped over the batch here (one library call per
member, each on a view of the caller's array), the results stacked in the array's own library.
The batch dimensions of the two operands must be equal (no broadcasting yet)."""

import itertools

from ._errors import InvalidInputError


def _shape(x):
    return tuple(getattr(x, "shape", ()))


def batch_of(a, core, name):
    """The batch shape of ``a`` (its dimensions before the last ``core``), or None for none."""
    shape = _shape(a)
    if len(shape) <= core:
        return None
    if 0 in shape[:-core]:
        raise InvalidInputError(f"{name} of shape {shape}: an empty batch")
    return shape[:-core]


def check_same(batch_a, b, core_b, name_b):
    shape = _shape(b)
    if len(shape) < core_b or shape[:len(shape) - core_b] != batch_a:
        raise InvalidInputError(f"{name_b} of shape {shape} does not carry the batch shape {batch_a} "
                                "(batch dimensions must be equal; no broadcasting)")


def indices(batch):
    return itertools.product(*(range(d) for d in batch))


def stack(like, parts, batch):
    """parts (in C order over the batch) stacked into batch + part shape, in like's library."""
    module = type(like).__module__.split(".")[0]
    if module == "torch":
        import torch
        out = torch.stack(parts)
    elif module == "cupy":
        import cupy
        out = cupy.stack(parts)
    else:
        import numpy
        out = numpy.stack(parts)
    return out.reshape(tuple(batch) + tuple(out.shape[1:]))
