"""tcsolve.KMeans: scikit-learn's labels on iris and wine with the fp64 variant (and at least 99.5%
of them with ec-fp16), the loss of clustering README.md shows for fp16-tc on iris_shifted, the
CLI's own results (``tcsolve kmeans``) bit for bit, and scikit-learn's estimator protocol."""

import re

import numpy as np
import pytest

import tcsolve

sklearn_cluster = pytest.importorskip("sklearn.cluster")  # scripts/bootstrap installs python3-sklearn
sklearn_base = pytest.importorskip("sklearn.base")


def points(hdf5, inputs, name):
    """X of inputs/<name>.h5 rounded to float32 (as the demo and the CLI read it)."""
    return hdf5.read(inputs / f"{name}.h5", "X").astype(np.float32)


@pytest.mark.parametrize("name", ["iris", "wine"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fp64_labels_equal_sklearn_lloyd_and_ec_fp16_nearly(hdf5, inputs, name, seed):
    # The same start C0 (scikit-learn's k-means++ with seed `seed`) and the same points: the
    # float32 values, widened for scikit-learn so that it computes in float64 on exactly them.
    X = points(hdf5, inputs, name)
    X64 = X.astype(np.float64)
    C0, _ = sklearn_cluster.kmeans_plusplus(X64, 3, random_state=seed)
    sk = sklearn_cluster.KMeans(3, init=C0, n_init=1, algorithm="lloyd", tol=0).fit(X64)
    ours = tcsolve.KMeans(3, variant="fp64", init=C0, tol=0).fit(X)
    assert np.array_equal(ours.labels_, sk.labels_)
    assert ours.n_iter_ == sk.n_iter_
    # Same labels, so the centroids differ only by ours being rounded to float32: c + d with
    # |d| <= 2^-24 |c| per coordinate. At the mean the inertia's first-order term in d vanishes,
    # leaving n ||d||^2 <= n 2^-48 max ||x||^2; the FP64 sums add at most n eps64 relative.
    n = len(X)
    rel = n * 2.0**-53 + n * 2.0**-48 * (X64**2).sum(axis=1).max() / sk.inertia_
    assert ours.inertia_ == pytest.approx(sk.inertia_, rel=rel)
    ec = tcsolve.KMeans(3, variant="ec-fp16", init=C0, tol=0).fit(X)
    assert np.mean(ec.labels_ == sk.labels_) >= 0.995


def readme_example(testdata, variant):
    """The README's `tcsolve kmeans --input inputs/iris_shifted.h5 --k 3 --variant V --backend cpu`
    output: {"inertia", "iterations", "agreement", "inertia_fp64"}."""
    text = (testdata / "README.md").read_text()
    start = text.index(f"$ tcsolve kmeans --input inputs/iris_shifted.h5 --k 3 --variant {variant} --backend cpu")
    block = text[start:text.index("\n$ ", start + 1)]
    return {
        "iterations": int(re.search(r"after (\d+) iteration", block).group(1)),
        "inertia": float(re.search(r"inertia +([0-9.e+-]+)", block).group(1)),
        "agreement": float(re.search(r"vs fp64 +([0-9.]+) of the labels equal", block).group(1)),
        "inertia_fp64": float(re.search(r"fp64: inertia ([0-9.e+-]+)", block).group(1)),
    }


@pytest.mark.parametrize("variant", ["fp16-tc", "ec-fp16"])
def test_iris_shifted_reproduces_the_readme(hdf5, inputs, testdata, variant):
    # README: fp16-tc loses the clustering of iris moved far from the origin (26% of the labels
    # agree with FP64), ec-fp16 keeps all of it. The CLI's run: k-means++ with seed 1, tol 0.
    shown = readme_example(testdata, variant)
    X = hdf5.read(inputs / "iris_shifted.h5", "X")
    km = tcsolve.KMeans(3, variant=variant, random_state=1, tol=0, backend="cpu").fit(X)
    ref = tcsolve.KMeans(3, variant="fp64", random_state=1, tol=0, backend="cpu").fit(X)
    assert km.inertia_ == shown["inertia"] and km.n_iter_ == shown["iterations"]
    assert ref.inertia_ == shown["inertia_fp64"]
    assert round(float(np.mean(km.labels_ == ref.labels_)), 6) == shown["agreement"]
    if variant == "fp16-tc":
        assert shown["agreement"] < 0.5 and km.stop_reason_ == "max_iterations" and km.empty_clusters_ == 1


@pytest.mark.parametrize("name, variant, seed, tol", [("iris", "ec-fp16", 4, 0.0), ("wine", "fp16-tc", 2, 0.0),
                                                      ("iris_shifted", "ec-tf32", 1, 1e-4)])
def test_results_are_bitwise_the_cli(cli, hdf5, inputs, tmp_path, name, variant, seed, tol):
    out = tmp_path / "km.h5"
    report = cli("kmeans", "--input", inputs / f"{name}.h5", "--k", 3, "--variant", variant, "--seed", seed,
                 "--tol", tol, "--backend", "cpu", "--output", out, "--no-agreement")
    assert report["_exit"] == 0, report
    km = tcsolve.KMeans(3, variant=variant, random_state=seed, tol=tol, backend="cpu").fit(
        hdf5.read(inputs / f"{name}.h5", "X"))
    assert np.array_equal(km.labels_, hdf5.read(out, "labels", np.int32))
    assert np.array_equal(km.cluster_centers_.view(np.uint32), hdf5.read(out, "centroids", np.float32).view(np.uint32))
    assert km.inertia_ == report["inertia"] and km.n_iter_ == report["iterations"]
    assert km.stop_reason_ == report["stop"] and km.resolved_variant_ == report["resolved_variant"]


def test_explicit_start_is_rounded_to_float32_once(hdf5, inputs):
    # An init array (and X) in float64 is rounded once to float32, as the CLI reads a file's
    # init and X: the same run as from the float32 values.
    X = hdf5.read(inputs / "wine.h5", "X")
    C0 = X[[5, 60, 150]]
    a = tcsolve.KMeans(3, variant="ec-fp16", init=C0, tol=0).fit(X)
    b = tcsolve.KMeans(3, variant="ec-fp16", init=C0.astype(np.float32), tol=0).fit(X.astype(np.float32))
    assert np.array_equal(a.labels_, b.labels_) and a.inertia_ == b.inertia_
    assert np.array_equal(a.cluster_centers_, b.cluster_centers_)
    with pytest.raises(ValueError, match="init has shape"):
        tcsolve.KMeans(4, init=C0).fit(X)


def test_kmeans_plusplus_is_the_seeded_start(hdf5, inputs):
    X = points(hdf5, inputs, "wine")
    for seed in (1, 7):
        C0 = tcsolve.kmeans_plusplus(X, 3, random_state=seed)
        assert C0.shape == (3, 13) and C0.dtype == np.float32
        assert all((X == row).all(axis=1).any() for row in C0)  # each a point of X
        a = tcsolve.KMeans(3, variant="ec-fp16", random_state=seed, tol=0).fit(X)
        b = tcsolve.KMeans(3, variant="ec-fp16", init=C0, tol=0).fit(X)
        assert np.array_equal(a.labels_, b.labels_) and a.inertia_ == b.inertia_ and a.n_iter_ == b.n_iter_
    rng = np.random.RandomState(5)
    assert np.array_equal(tcsolve.kmeans_plusplus(X, 3, random_state=np.random.RandomState(5)),
                          tcsolve.kmeans_plusplus(X, 3, random_state=rng))


def test_predict_in_chunks_is_predict_at_once(hdf5, inputs, monkeypatch):
    # The distance GEMM runs per chunk of points (the demo's chunking) and the scores per block:
    # with tiny chunks (7 points, the last one partial) and blocks, the same labels.
    X = points(hdf5, inputs, "iris")
    km = tcsolve.KMeans(3, variant="fp64", random_state=2).fit(X)
    whole = km.predict(X)
    monkeypatch.setitem(tcsolve.kmeans._CHUNK_BYTES, "cpu", 4 * 3 * 7)
    monkeypatch.setattr(tcsolve.kmeans, "_SCORE_BLOCK", 3 * 5)
    assert np.array_equal(km.predict(X), whole)


def test_estimator_protocol_and_clone(hdf5, inputs):
    X = points(hdf5, inputs, "iris")
    km = tcsolve.KMeans(3, variant="ec-fp16", random_state=1, backend="cpu")  # predict runs on the cpu
    params = km.get_params()
    assert params == {"n_clusters": 3, "variant": "ec-fp16", "init": "k-means++", "n_init": 1, "max_iter": 300,
                      "tol": 1e-4, "random_state": 1, "backend": "cpu"}
    twin = sklearn_base.clone(km)
    assert twin is not km and twin.get_params() == params and not hasattr(twin, "labels_")
    C0 = X[:3].copy()
    km2 = sklearn_base.clone(tcsolve.KMeans(3, init=C0))
    assert np.array_equal(km2.init, C0)
    assert km.set_params(max_iter=50, tol=0.0) is km and km.max_iter == 50
    with pytest.raises(ValueError, match="invalid parameter"):
        km.set_params(n_jobs=10)
    assert km.set_params(n_init=1) is km
    labels = km.fit_predict(X)
    assert labels.dtype == np.int32 and labels.shape == (150,) and km.cluster_centers_.shape == (3, 4)
    assert km.stop_reason_ == "labels_unchanged"
    # Stopped on unchanged labels: the centroids' own assignment is labels_, and score = -inertia.
    assert np.array_equal(km.predict(X), km.labels_)
    assert km.score(X) == pytest.approx(-km.inertia_, rel=1e-12)
    assert "variant='ec-fp16'" in repr(km) and "n_clusters" not in repr(tcsolve.KMeans())
    with pytest.raises(ValueError, match="not fitted"):
        tcsolve.KMeans(2).predict(X)


def test_sklearn_style_options_transform_random_init_n_init_int_input_weights():
    # issue 36: transform/fit_transform, init="random", n_init, integer input, sample_weight
    rng = np.random.default_rng(11)
    centres = rng.uniform(-10, 10, (4, 3))
    X = (centres[rng.integers(0, 4, 400)] + rng.normal(0, 0.5, (400, 3))).astype(np.float32)
    km = tcsolve.KMeans(4, variant="fp32-simt", backend="cpu").fit(X)
    D = km.transform(X)
    ref = np.sqrt(((X.astype(np.float64)[:, None, :] - km.cluster_centers_.astype(np.float64)[None]) ** 2).sum(-1))
    assert D.shape == (400, 4) and np.allclose(D, ref, rtol=1e-9, atol=1e-9)
    assert np.array_equal(np.argmin(D, axis=1), km.labels_)
    assert np.allclose(tcsolve.KMeans(4, variant="fp32-simt", backend="cpu").fit_transform(X), D)
    r1 = tcsolve.KMeans(4, init="random", random_state=3, variant="fp32-simt", backend="cpu").fit(X)
    r2 = tcsolve.KMeans(4, init="random", random_state=3, variant="fp32-simt", backend="cpu").fit(X)
    assert np.array_equal(r1.labels_, r2.labels_)
    best = tcsolve.KMeans(4, init="random", n_init=5, random_state=3, variant="fp32-simt", backend="cpu").fit(X)
    singles = [tcsolve.KMeans(4, init="random", random_state=3 + i, variant="fp32-simt", backend="cpu").fit(X).inertia_
               for i in range(5)]
    assert best.inertia_ == min(singles)
    Xi = np.rint(X).astype(np.int64)
    ki = tcsolve.KMeans(4, variant="fp32-simt", backend="cpu").fit(Xi)
    kf = tcsolve.KMeans(4, variant="fp32-simt", backend="cpu").fit(Xi.astype(np.float64))
    assert np.array_equal(ki.labels_, kf.labels_)
    same = tcsolve.KMeans(4, variant="fp32-simt", backend="cpu").fit(X, sample_weight=np.full(400, 2.0))
    assert np.array_equal(same.labels_, km.labels_)
    with pytest.raises(tcsolve.NotSupportedError, match="sample_weight"):
        tcsolve.KMeans(4, backend="cpu").fit(X, sample_weight=np.arange(400.0))
    with pytest.raises(tcsolve.InvalidInputError, match="n_init"):
        tcsolve.KMeans(4, n_init=0, backend="cpu").fit(X)
