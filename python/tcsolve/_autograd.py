"""Autograd for torch tensors that require grad (``tcsolve.matmul`` and ``tcsolve.solve``): a
``torch.autograd.Function`` per operation whose backward runs the same corrected products and
solves, so a tensor's gradient is never dropped silently.

    matmul   C = a b:      dL/da = G b^T,   dL/db = a^T G        (two corrected products)
    solve    A x = b:      dL/db = A^-T G (a solve with A^T),    dL/dA = -(dL/db) x^T

The backward formulas are plain functions of arrays (``matmul_backward``, ``solve_backward``), so
that they are tested on NumPy against finite differences where torch is absent; the Functions
wrap them for torch. Imported by matmul.py and solve.py only when a torch tensor requires grad.
"""

from ._errors import InvalidInputError


def _t(x):
    """x^T over the last two dimensions, in x's library, contiguous (the products' operands)."""
    if type(x).__module__.split(".")[0] == "torch":
        return x.transpose(-1, -2).contiguous()
    import numpy as np
    return np.ascontiguousarray(np.swapaxes(x, -1, -2))


def matmul_backward(a, b, g, variant, need_a=True, need_b=True):
    """(dL/da, dL/db) of C = a b for the upstream gradient g = dL/dC (None where not needed)."""
    from .matmul import matmul
    ga = matmul(g, _t(b), variant) if need_a else None
    gb = matmul(_t(a), g, variant) if need_b else None
    return ga, gb


def solve_backward(A, x, g, solve_options, need_A=True):
    """(dL/dA, dL/db) of A x = b for g = dL/dx: dL/db = A^-T g (solved with A^T, refined to FP64
    accuracy), dL/dA = -(dL/db) x^T (an outer product per right-hand side)."""
    from .solve import solve
    gb, _ = solve(_t(A), g, **solve_options)
    if not need_A:
        return None, gb
    if getattr(x, "ndim", len(x.shape)) == 1:
        ga = -(gb[:, None] * x[None, :])
    else:
        ga = -(gb @ _t(x))
    return ga, gb


def _torch_functions():
    import torch

    class MatmulFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, variant):
            from .matmul import matmul
            ctx.save_for_backward(a, b)
            ctx.variant = variant
            return matmul(a.detach(), b.detach(), variant)

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            ga, gb = matmul_backward(a.detach(), b.detach(), g.contiguous(), ctx.variant, ctx.needs_input_grad[0],
                                     ctx.needs_input_grad[1])
            return ga, gb, None

    class SolveFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, A, b, options, infos):
            from .solve import solve
            x, info = solve(A.detach(), b.detach(), **options)
            infos.append(info)
            ctx.save_for_backward(A, x)
            ctx.options = options
            return x

        @staticmethod
        def backward(ctx, g):
            A, x = ctx.saved_tensors
            ga, gb = solve_backward(A.detach(), x.detach(), g.contiguous(), ctx.options, ctx.needs_input_grad[0])
            return ga, gb, None, None

    return MatmulFunction, SolveFunction


def requires_grad(*xs):
    """Whether autograd should record: a torch tensor among xs requires grad, with grad enabled."""
    for x in xs:
        if type(x).__module__.split(".")[0] == "torch" and getattr(x, "requires_grad", False):
            import torch
            return torch.is_grad_enabled()
    return False


def matmul(a, b, variant, out):
    if out is not None:
        raise InvalidInputError("out= with tensors that require grad: autograd cannot record an in-place product "
                                "(drop out=, or pass .detach()ed tensors)")
    return _torch_functions()[0].apply(a, b, variant)


def solve(A, b, options):
    infos = []
    x = _torch_functions()[1].apply(A, b, options, infos)
    return x, infos[0]
