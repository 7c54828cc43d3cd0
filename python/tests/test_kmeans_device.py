"""KMeans and kmeans_plusplus on device arrays read the points where they are (issue 32 item 5):
a torch CUDA tensor or CuPy array is passed to tcsolveKmeans / tcsolveKmeansPlusPlus as its own
device pointer (rows ldx apart included), never copied to the host (the host-copy helpers and
torch's .cpu()/.numpy() are spied on), on the array library's current stream and on the array's
device (a tensor on cuda:1 runs on GPU 1 whatever device is current); the labels and centroids
are bitwise those of the same data as a NumPy array on the cuda backend. Each test skips when torch
or CuPy is not installed or no GPU is usable; the cuda:1 test skips below two GPUs."""

import numpy as np
import pytest

import tcsolve
from tcsolve import _arrays, _lib
from tcsolve import kmeans as kmeans_module
from test_gpu_arrays import cupy_or_skip, torch_cuda_or_skip as gpu_torch_or_skip


def torch_cuda_or_skip(devices=1):
    """torch, or a skip when it is missing or sees fewer than ``devices`` CUDA devices."""
    torch = gpu_torch_or_skip()
    if torch.cuda.device_count() < devices:
        pytest.skip(f"{devices} CUDA devices needed, torch sees {torch.cuda.device_count()}")
    return torch


def blobs(n=6007, d=24, k=16, seed=5):
    """Gaussian blobs as float32 (n, d): k centres in [-10, 10]^d, unit noise."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-10, 10, (k, d))
    return (centres[rng.integers(0, k, n)] + rng.normal(size=(n, d))).astype(np.float32)


class Spy:
    """Records what the calls of a K-means run did with the points: the X pointer each C API call
    got, the streams set on the handles, and every host copy the package made (its helpers
    _arrays.to_host and kmeans._host_points; torch's Tensor.cpu and Tensor.numpy when torch is
    given) of an array whose memory starts at one of ``watched`` (device pointers)."""

    def __init__(self, monkeypatch, watched, torch=None):
        self.watched = set(watched)
        self.x_pointers, self.streams, self.host_copies = [], [], []
        for name, x_index in (("tcsolveKmeans", 4), ("tcsolveKmeansPlusPlus", 3)):
            monkeypatch.setattr(_lib.lib, name, self._c_call(getattr(_lib.lib, name), name, x_index))
        set_stream = _lib.lib.tcsolveSetStream

        def record_stream(h, stream):
            self.streams.append(stream.value or 0)
            return set_stream(h, stream)

        monkeypatch.setattr(_lib.lib, "tcsolveSetStream", record_stream)
        to_host, host_points = _arrays.to_host, kmeans_module._host_points
        monkeypatch.setattr(_arrays, "to_host", self._copy("to_host", to_host, lambda a: a.ptr))
        monkeypatch.setattr(kmeans_module, "_host_points", self._copy("_host_points", host_points, lambda a: a.ptr))
        if torch is not None:
            for method in ("cpu", "numpy"):
                original = getattr(torch.Tensor, method)
                monkeypatch.setattr(torch.Tensor, method, self._copy(f"Tensor.{method}", original,
                                                                     lambda t: t.data_ptr() if t.is_cuda else None))

    def _c_call(self, function, name, x_index):
        def call(*args):
            self.x_pointers.append((name, int(args[x_index])))
            return function(*args)
        return call

    def _copy(self, name, function, pointer):
        def copy(obj, *args, **kwargs):
            if pointer(obj) in self.watched:
                self.host_copies.append(name)
            return function(obj, *args, **kwargs)
        return copy


def params_of(**kw):
    """KMeans' parameters of these tests: k = 16, auto, 12 iterations, tol 0, seed 3, as overridden."""
    return {"n_clusters": 16, "variant": "auto", "max_iter": 12, "tol": 0, "random_state": 3, **kw}


def host_reference(X, **kw):
    """The same fit on NumPy data on the cuda backend (the C API's host-pointer path)."""
    return tcsolve.KMeans(**params_of(backend="cuda", **kw)).fit(X)


@pytest.mark.parametrize("variant", ["auto", "fp32-simt"])
def test_torch_cuda_fit_reads_the_points_in_place_on_the_current_stream(monkeypatch, variant):
    torch = torch_cuda_or_skip()
    X = blobs()
    want = host_reference(X, variant=variant)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        Xd = torch.from_numpy(X).to("cuda", non_blocking=True) * 1.0  # made on the stream, not waited for
        spy = Spy(monkeypatch, [Xd.data_ptr()], torch)
        km = tcsolve.KMeans(**params_of(variant=variant)).fit(Xd)
        monkeypatch.undo()
        stream.synchronize()
    assert spy.host_copies == []
    assert spy.x_pointers == [("tcsolveKmeans", Xd.data_ptr())]  # X itself, no copy of any kind
    assert spy.streams[-1] == stream.cuda_stream
    assert km.backend_ == "cuda" and km.labels_.is_cuda and km.cluster_centers_.is_cuda
    assert km.labels_.device == Xd.device and km.labels_.dtype == torch.int32
    assert np.array_equal(km.labels_.cpu().numpy(), want.labels_)
    assert np.array_equal(km.cluster_centers_.cpu().numpy(), want.cluster_centers_)
    assert km.n_iter_ == want.n_iter_ and km.stop_reason_ == want.stop_reason_
    assert km.inertia_ == pytest.approx(want.inertia_, rel=1e-12)


def test_torch_cuda_predict_fit_predict_and_kmeans_plusplus_make_no_host_copy(monkeypatch):
    torch = torch_cuda_or_skip()
    X = blobs(seed=6)
    Xd = torch.from_numpy(X).cuda()
    # ec-fp16: predict's unfused GEMM gives the fused assignment's labels bitwise (kmeans.hpp)
    want = host_reference(X, max_iter=300, variant="ec-fp16")
    C0 = tcsolve.kmeans_plusplus(X, 16, random_state=3)
    spy = Spy(monkeypatch, [Xd.data_ptr()], torch)
    km = tcsolve.KMeans(**params_of(max_iter=300, variant="ec-fp16"))
    labels = km.fit_predict(Xd)
    predicted = km.predict(Xd)
    start = tcsolve.kmeans_plusplus(Xd, 16, random_state=3)
    monkeypatch.undo()
    assert spy.host_copies == []
    assert ("tcsolveKmeansPlusPlus", Xd.data_ptr()) in spy.x_pointers
    assert km.stop_reason_ == "labels_unchanged"  # so predict on the training data gives labels_
    assert np.array_equal(labels.cpu().numpy(), want.labels_)
    assert torch.equal(predicted, labels)
    assert start.is_cuda and np.array_equal(start.cpu().numpy(), C0)  # bitwise the host's draw


def test_torch_cuda_float64_and_strided_points_match_numpy(monkeypatch):
    torch = torch_cuda_or_skip()
    X = blobs(seed=7)
    n, d = X.shape
    want = host_reference(X)
    # Rows ldx = d + 5 apart (a column slice of a wider tensor): passed in place, with that ldx.
    wide = torch.zeros(n, d + 5, device="cuda")
    wide[:, :d] = torch.from_numpy(X).cuda()
    view = wide[:, :d]
    spy = Spy(monkeypatch, [wide.data_ptr()], torch)
    km = tcsolve.KMeans(**params_of()).fit(view)
    monkeypatch.undo()
    assert spy.host_copies == [] and spy.x_pointers == [("tcsolveKmeans", wide.data_ptr())]
    assert np.array_equal(km.labels_.cpu().numpy(), want.labels_)
    # Columns contiguous (F order): copied into C order on the device; float64: rounded there.
    for Xd in (torch.from_numpy(X).cuda().t().contiguous().t(), torch.from_numpy(X.astype(np.float64)).cuda()):
        spy = Spy(monkeypatch, [Xd.data_ptr()], torch)
        km = tcsolve.KMeans(**params_of()).fit(Xd)
        monkeypatch.undo()
        assert spy.host_copies == []
        assert np.array_equal(km.labels_.cpu().numpy(), want.labels_)
        assert np.array_equal(km.cluster_centers_.cpu().numpy(), want.cluster_centers_)


def test_torch_tensor_on_device_1_runs_on_device_1_whatever_device_is_current(monkeypatch):
    torch = torch_cuda_or_skip(devices=2)
    X = blobs(seed=8)
    want = host_reference(X)
    with torch.cuda.device(0):
        X1 = torch.from_numpy(X).to("cuda:1")
        spy = Spy(monkeypatch, [X1.data_ptr()], torch)
        km = tcsolve.KMeans(**params_of()).fit(X1)
        predicted = km.predict(X1)
        monkeypatch.undo()
        assert torch.cuda.current_device() == 0  # the caller's device kept
    assert spy.host_copies == [] and spy.x_pointers == [("tcsolveKmeans", X1.data_ptr())]
    assert spy.streams[0] == torch.cuda.current_stream(1).cuda_stream
    assert km.labels_.device == X1.device and km.cluster_centers_.device == X1.device
    assert np.array_equal(km.labels_.cpu().numpy(), want.labels_)
    assert np.array_equal(km.cluster_centers_.cpu().numpy(), want.cluster_centers_)
    assert predicted.device == X1.device
    # the same data on device 0: the same labels
    km0 = tcsolve.KMeans(**params_of()).fit(torch.from_numpy(X).to("cuda:0"))
    assert torch.equal(km0.labels_.cpu(), km.labels_.cpu())


def test_cupy_fit_reads_the_points_in_place_on_the_current_stream(monkeypatch):
    cupy = cupy_or_skip()
    X = blobs(seed=9)
    want = host_reference(X)
    with cupy.cuda.Stream(non_blocking=True) as stream:
        Xd = cupy.asarray(X)
        spy = Spy(monkeypatch, [Xd.data.ptr])
        km = tcsolve.KMeans(**params_of()).fit(Xd)
        monkeypatch.undo()
        stream.synchronize()
    assert spy.host_copies == []
    assert spy.x_pointers == [("tcsolveKmeans", Xd.data.ptr)]
    assert spy.streams[-1] == stream.ptr
    assert isinstance(km.labels_, cupy.ndarray) and isinstance(km.cluster_centers_, cupy.ndarray)
    assert np.array_equal(km.labels_.get(), want.labels_)
    assert np.array_equal(km.cluster_centers_.get(), want.cluster_centers_)


def test_host_points_still_take_the_host_path(monkeypatch):
    """NumPy X (any host data) goes through the host helper and gives the labels it gave."""
    X = blobs(n=600, d=5, k=4, seed=10)
    calls = []
    host_points = kmeans_module._host_points

    def spy(x, *args, **kwargs):
        calls.append(x.name)
        return host_points(x, *args, **kwargs)

    monkeypatch.setattr(kmeans_module, "_host_points", spy)
    km = tcsolve.KMeans(4, variant="fp64", tol=0, random_state=1, backend="cpu").fit(X)
    assert calls == ["X"]
    assert isinstance(km.labels_, np.ndarray) and km.labels_.dtype == np.int32
    ref = tcsolve.KMeans(4, variant="fp64", tol=0, random_state=1, backend="cpu").fit(np.asfortranarray(X))
    assert calls == ["X", "X"]
    assert np.array_equal(km.labels_, ref.labels_)
