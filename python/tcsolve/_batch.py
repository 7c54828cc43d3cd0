"""Batched inputs, as torch.linalg and NumPy take them: (..., n, n) systems for ``solve`` and
(..., m, k) @ (..., k, n) for ``matmul``, looped over the batch here (one library call per
member, each on a view of the caller's array), the results stacked in the array's own library.
The batch dimensions broadcast as NumPy's and torch's do (a missing or size-1 dimension repeats
the member)."""

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


def shape_of(x):
    return _shape(x)


def broadcast(first, second, names):
    """The broadcast of two batch shapes (NumPy's rule), or InvalidInputError naming both."""
    a, b = tuple(first), tuple(second)
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            raise InvalidInputError(f"the batch shapes {tuple(first)} of {names[0]} and {tuple(second)} of {names[1]} "
                                    "do not broadcast")
        out.append(max(x, y))
    return tuple(out)


def member(batch, idx):
    """The index into an operand of batch shape ``batch`` for the broadcast index ``idx``."""
    skip = len(idx) - len(batch)
    return tuple(0 if d == 1 else idx[skip + i] for i, d in enumerate(batch))


def check_same(batch_a, b, core_b, name_b):
    shape = _shape(b)
    if len(shape) < core_b or shape[:len(shape) - core_b] != batch_a:
        raise InvalidInputError(f"{name_b} of shape {shape} does not carry the batch shape {batch_a}")


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
