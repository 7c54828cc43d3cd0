"""torch autograd through tcsolve.matmul and tcsolve.solve (tcsolve/_autograd.py): gradients
against torch's own (torch.mm, torch.linalg.solve) on CPU tensors and, where present, CUDA
tensors; out= with a tensor that requires grad refused by name. Skipped without torch (Debian's CI
has none: the backward formulas are checked on NumPy in test_matmul.py and test_solve.py); run
on the GPU machine's python3 (pytest, or ``python3 test_autograd_torch.py``)."""

import pytest

torch = pytest.importorskip("torch")

import tcsolve  # noqa: E402


def devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", devices())
def test_matmul_gradients_match_torch(device):
    g = torch.Generator(device="cpu").manual_seed(1)
    a = torch.rand(64, 48, generator=g).to(device).requires_grad_()
    b = torch.rand(48, 32, generator=g).to(device).requires_grad_()
    w = torch.rand(64, 32, generator=g).to(device)
    (tcsolve.matmul(a, b, variant="fp32-simt") * w).sum().backward()
    ga, gb = a.grad.clone(), b.grad.clone()
    a.grad, b.grad = None, None
    (torch.mm(a, b) * w).sum().backward()
    assert torch.allclose(ga, a.grad, rtol=1e-5, atol=1e-5) and torch.allclose(gb, b.grad, rtol=1e-5, atol=1e-5)
    with pytest.raises(tcsolve.InvalidInputError, match="out="):
        tcsolve.matmul(a, b, out=torch.empty(64, 32, device=device))


@pytest.mark.parametrize("device", devices())
def test_solve_gradients_match_torch(device):
    g = torch.Generator(device="cpu").manual_seed(2)
    n = 40
    A = (torch.rand(n, n, generator=g, dtype=torch.float64) + n * torch.eye(n, dtype=torch.float64)).to(device)
    b = torch.rand(n, generator=g, dtype=torch.float64).to(device)
    w = torch.rand(n, generator=g, dtype=torch.float64).to(device)
    A1, b1 = A.clone().requires_grad_(), b.clone().requires_grad_()
    x, info = tcsolve.solve(A1, b1)
    assert info.converged
    (x * w).sum().backward()
    A2, b2 = A.clone().requires_grad_(), b.clone().requires_grad_()
    (torch.linalg.solve(A2, b2) * w).sum().backward()
    assert torch.allclose(A1.grad, A2.grad, rtol=1e-10, atol=1e-12)
    assert torch.allclose(b1.grad, b2.grad, rtol=1e-10, atol=1e-12)


if __name__ == "__main__":
    for d in devices():
        test_matmul_gradients_match_torch(d)
        test_solve_gradients_match_torch(d)
        print(f"autograd through tcsolve on {d}: gradients match torch's")
