"""tcsolve on torch tensors and CuPy arrays: each test skips when its library is not installed
(or, for CUDA, when no GPU is usable). On the GPU: solve on device arrays is bitwise the host
solve on the cuda backend (the C API's promise), on the array library's current stream, x of the
input's kind on its device; matmul with out= writes in place without allocating (the array
library's allocator unchanged) and is bitwise tcsolveSgemm called directly; KMeans fits device
data and returns device attributes. Larger GPU checks and timings: python/tests/gpu_checks.py."""

import numpy as np
import pytest

import tcsolve
from capi_direct import N, T, sgemm as sgemm_direct


def torch_or_skip():
    return pytest.importorskip("torch")


def torch_cuda_or_skip():
    torch = torch_or_skip()
    if not torch.cuda.is_available():
        pytest.skip("torch has no usable CUDA device")
    if not any(v.available_cuda for v in tcsolve.variants()):
        pytest.skip("tcsolve has no usable CUDA backend here")
    return torch


def cupy_or_skip():
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError
    except Exception:
        pytest.skip("CuPy has no usable CUDA device")
    if not any(v.available_cuda for v in tcsolve.variants()):
        pytest.skip("tcsolve has no usable CUDA backend here")
    return cupy


def system(n, nrhs=None, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1, 1, (n, n))
    b = rng.uniform(-1, 1, n if nrhs is None else (n, nrhs))
    return A, b


# --- torch on the CPU: host memory like NumPy -----------------------------------------------------

def test_torch_cpu_tensors_are_host_arrays():
    torch = torch_or_skip()
    A, b = system(40, 2)
    x_np, _ = tcsolve.solve(A, b)
    x, info = tcsolve.solve(torch.from_numpy(A), torch.from_numpy(b))
    assert isinstance(x, torch.Tensor) and x.device.type == "cpu" and info.converged
    assert np.array_equal(x.numpy(), x_np)
    a = torch.rand(8, 5)
    c = torch.rand(5, 3)
    out = tcsolve.matmul(a, c, variant="ec-fp16")
    assert isinstance(out, torch.Tensor) and np.array_equal(out.numpy(), tcsolve.matmul(a.numpy(), c.numpy(),
                                                                                        variant="ec-fp16"))
    ref = np.empty((8, 3), np.float32)
    sgemm_direct("cpu", "ec-fp16", N, N, 3, 8, 5, c.data_ptr(), 3, a.data_ptr(), 5, ref.ctypes.data, 3)
    assert np.array_equal(out.numpy(), ref)


# --- torch on the GPU ---------------------------------------------------------------------------

@pytest.mark.parametrize("order", ["C", "F"])
def test_torch_cuda_solve_is_bitwise_the_host_solve_on_cuda(order):
    torch = torch_cuda_or_skip()
    A, b = system(300, 3, seed=1)
    x_host, info_host = tcsolve.solve(A, b, backend="cuda")
    dA = torch.from_numpy(A).cuda()
    dB = torch.from_numpy(b).cuda()
    if order == "F":
        dA, dB = dA.t().contiguous().t(), dB.t().contiguous().t()
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):  # the library runs on the current (non-default) stream
        x, info = tcsolve.solve(dA, dB)
    stream.synchronize()
    assert isinstance(x, torch.Tensor) and x.is_cuda and x.device == dA.device and x.dtype == torch.float64
    assert info.backend == "cuda" and info.converged and info.iterations == info_host.iterations
    assert np.array_equal(x.cpu().numpy(), x_host)
    # a vector b: bitwise the host solve of that column alone (with three columns, refinement
    # runs until every column has converged, so column 0 may get more steps there)
    xv, _ = tcsolve.solve(dA, dB[:, 0])
    xv_host, _ = tcsolve.solve(A, b[:, 0], backend="cuda")
    assert xv.shape == (300,) and np.array_equal(xv.cpu().numpy(), xv_host)
    x32, _ = tcsolve.solve(dA.float(), dB.float())  # float32: converted on the device
    assert x32.dtype == torch.float64 and x32.is_cuda


def test_torch_cuda_matmul_out_in_place_without_allocation():
    torch = torch_cuda_or_skip()
    a = torch.rand(257, 300, device="cuda") * 2 - 1
    b = torch.rand(300, 129, device="cuda") * 2 - 1
    out = torch.empty(257, 129, device="cuda")
    tcsolve.matmul(a, b, variant="ec-fp16", out=out)  # warm-up: the library's own workspaces
    torch.cuda.synchronize()
    before = torch.cuda.memory_stats()["allocated_bytes.all.allocated"]
    assert tcsolve.matmul(a, b, variant="ec-fp16", out=out) is out
    torch.cuda.synchronize()
    assert torch.cuda.memory_stats()["allocated_bytes.all.allocated"] == before
    ref = torch.empty_like(out)
    # C-ordered out: C^T (129 x 257) = B^T A^T column-major, the row-major buffers as they are.
    sgemm_direct("cuda", "ec-fp16", N, N, 129, 257, 300, b.data_ptr(), 129, a.data_ptr(), 300, ref.data_ptr(), 129,
                 torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    assert torch.equal(out, ref)  # bitwise the C API's own call
    c = tcsolve.matmul(a, b, variant="ec-fp16")
    assert c.is_cuda and c.is_contiguous() and torch.equal(c, out)
    exact = a.double() @ b.double()  # and FP32-accurate: within sqrt(k) u32 (a few times) of FP64
    assert float((out.double() - exact).norm() / exact.norm()) < 4 * 300**0.5 * 2.0**-24


# --- CuPy -------------------------------------------------------------------------------------

def test_cupy_solve_and_matmul():
    cupy = cupy_or_skip()
    A, b = system(200, seed=2)
    x_host, _ = tcsolve.solve(A, b, backend="cuda")
    with cupy.cuda.Stream(non_blocking=True):
        x, info = tcsolve.solve(cupy.asarray(A), cupy.asarray(b))
        cupy.cuda.get_current_stream().synchronize()
    assert isinstance(x, cupy.ndarray) and info.converged and np.array_equal(x.get(), x_host)
    a = cupy.random.uniform(-1, 1, (64, 96), dtype=cupy.float32)
    bb = cupy.random.uniform(-1, 1, (96, 40), dtype=cupy.float32)
    out = cupy.empty((64, 40), cupy.float32, order="F")
    tcsolve.matmul(a, bb, variant="ec-tf32", out=out)
    pool = cupy.get_default_memory_pool()
    used = pool.used_bytes()
    assert tcsolve.matmul(a, bb, variant="ec-tf32", out=out) is out
    assert pool.used_bytes() == used
    # F-ordered out: C = A B column-major; the C-ordered operands' buffers are A^T and B^T: op T, T.
    ref = cupy.empty((64, 40), cupy.float32, order="F")
    sgemm_direct("cuda", "ec-tf32", T, T, 64, 40, 96, a.data.ptr, 96, bb.data.ptr, 40, ref.data.ptr, 64,
                 cupy.cuda.get_current_stream().ptr)
    cupy.cuda.get_current_stream().synchronize()
    assert bool((out == ref).all())  # bitwise the C API's own call


def test_cuda_kmeans_returns_device_attributes():
    torch = torch_cuda_or_skip()
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(c, 0.3, (200, 8)) for c in (-4, 0, 4)]).astype(np.float32)
    km = tcsolve.KMeans(3, variant="ec-fp16", random_state=1, tol=0).fit(torch.from_numpy(X).cuda())
    assert km.backend_ == "cuda" and km.labels_.is_cuda and km.cluster_centers_.is_cuda
    host = tcsolve.KMeans(3, variant="ec-fp16", random_state=1, tol=0, backend="cuda").fit(X)
    assert np.array_equal(km.labels_.cpu().numpy(), host.labels_)
    assert torch.equal(km.predict(torch.from_numpy(X).cuda()), km.labels_)
