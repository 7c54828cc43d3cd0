"""``tcsolve.KMeans``: the project's K-means (``tcsolve kmeans``, tcsolve/cluster/kmeans.hpp)
in scikit-learn's estimator style, through tcsolveKmeans.

``fit`` runs the demo: Lloyd's algorithm whose distance step computes the cross terms x.c as one
GEMM of the variant, with the scores ||c||^2 - 2 x.c and the centroid update in FP64; for the same
data, start (``init`` array, or k-means++ with ``random_state`` as the seed), variant, backend,
``max_iter`` and ``tol`` its labels, centroids, inertia and iterations are bitwise the CLI's
(``tcsolve kmeans --seed S --tol T``; note the CLI's --tol defaults to 0, this class's tol to
scikit-learn's 1e-4).

Device data (CuPy arrays, torch CUDA tensors) is read where it is: tcsolveKmeans and
tcsolveKmeansPlusPlus take device pointers on a cuda handle of the array's device, launched on the
array library's current stream (tcsolveSetStream), so the points are never copied to the host
(``_device_points``; only host data goes through ``_host_points``).

Sample weights (``fit(X, sample_weight=w)``) go to tcsolveKmeansWeighted: weighted means, weighted
inertia and weighted k-means++, as scikit-learn's KMeans.

scikit-learn is not needed: ``get_params``/``set_params`` are implemented here, as
``sklearn.base.clone`` expects them. Input is checked with scikit-learn's words where its
``check_estimator`` looks for them ("Expected 2D array", "Complex data not supported", "sparse",
"0 sample(s)", "Input X contains NaN"), so that its 41 checks pass (KMeans's docstring).
"""

import ctypes
import inspect
import math
import numbers

import numpy as np

from . import _arrays, _handles, _lib
from ._errors import InvalidInputError
from .matmul import handle_for

# Points per distance GEMM in predict: the demo's chunking (kDistanceChunkBytes, 512 MiB of G on
# the cpu; kDistanceChunkBytesCuda, 4 GiB, on cuda), so that auto resolves per GEMM as in fit.
_CHUNK_BYTES = {"cpu": 512 << 20, "cuda": 4 << 30}
# Scores (FP64) formed per block of G in predict, in elements: bounds the temporary memory.
_SCORE_BLOCK = 1 << 24
_STOPS = {0: "labels_unchanged", 1: "tolerance", 2: "max_iterations"}


def _seed(random_state):
    """The k-means++ seed: None -> 1 (the CLI's default: runs are reproducible), an int >= 0 as
    given, a numpy RandomState or Generator -> one draw from it."""
    if random_state is None:
        return 1
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0 or random_state >= 2**64:
            raise InvalidInputError(f"random_state must be an integer in [0, 2^64), got {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63 - 1))
    raise InvalidInputError(f"random_state must be None, an int, a numpy RandomState or Generator, got {random_state!r}")


def _first_bad(values, original):
    """The first (row, column) where the float32 Array ``values`` is NaN or inf, in row-major
    order, and ``original``'s value there (a float): None when every value is finite."""
    with _arrays.device_scope(values):
        return _first_bad_here(values, original)


def _first_bad_here(values, original):
    f = values.obj
    if values.kind == "numpy":
        bad = ~np.isfinite(f)
        if not bad.any():
            return None
        where = np.argwhere(bad)[0]
    elif values.kind == "torch":
        bad = ~_arrays._torch().isfinite(f)
        if not bool(bad.any()):
            return None
        where = bad.nonzero()[0].tolist()
    else:
        cp = _arrays._cupy()
        bad = ~cp.isfinite(f)
        if not bool(bad.any()):
            return None
        where = cp.argwhere(bad)[0].get()
    index = tuple(int(i) for i in where)
    return index, float(original.obj[index])


def _beyond_fp32(name, index, value, what="kmeans"):
    return InvalidInputError(f"{what}: {name} has the value {value:.6g} at ({index[0]}, {index[1]}), beyond FP32's "
                             "range (|x| up to 3.4e38): the points are rounded to float32; scale the data")


def _to_float32(x, what, finite=False):
    """The Array ``x`` (float32 or float64, 2-D) as float32 (rounded by its own library; x itself
    when float32). A finite float64 value beyond FP32's range, which would round to inf, is
    refused naming the value (InvalidInputError); with ``finite`` NaN and inf are too (predict and
    score; fit leaves them to the library, whose message is the same)."""
    with np.errstate(over="ignore"):  # NumPy's warning for 1e39 -> inf: refused below instead
        f = _arrays.astype(x, "float32")
    if f is x and not finite:
        return f
    bad = _first_bad(f, x)
    if bad is not None:
        index, value = bad
        if np.isfinite(value):
            raise _beyond_fp32(x.name, index, value, what)
        if finite:
            raise InvalidInputError(f"{what}: {x.name} has a non-finite value ({value}) at ({index[0]}, {index[1]}) "
                                    f"(Input {x.name} contains {_contains(value)})")
    return f


def _scale_exponent(m):
    """kmeans.cpp's scale_exponent for the largest magnitude ``m`` of the points and centroids:
    0 when 2^-40 <= m < 2^41 (or m is 0), else the e that brings m to [2^-40, 2^-39) or
    [2^40, 2^41)."""
    if not m > 0:
        return 0
    b = math.frexp(m)[1] - 1  # ilogb, subnormal float32 values included (exact in a double)
    return -40 - b if b < -40 else 40 - b if b > 40 else 0


def _largest(x):
    """max |x| of a float32 Array of finite values (0 for an empty one); device arrays as
    max(max x, -min x), two reductions without a temporary of X's size."""
    if x.size == 0:
        return 0.0
    if x.kind == "numpy":
        return float(np.abs(x.obj).max())
    return max(float(x.obj.max()), -float(x.obj.min()))


def _is_sparse(X):
    """Whether X is a SciPy sparse matrix or array (without importing SciPy when it is absent)."""
    module = type(X).__module__ or ""
    if not module.startswith("scipy"):
        return False
    import scipy.sparse
    return scipy.sparse.issparse(X)


def _matrix(X, name="X"):
    """The Array of X, checked: a matrix (n_samples, n_features) of float32 or float64 with at
    least one sample and one feature; host integer data (scikit-learn's checks pass int64) and
    NumPy arrays of dtype object holding numbers are taken as float64 (a copy; an element that is
    no number raises NumPy's TypeError). Refusals (InvalidInputError, a ValueError) use
    scikit-learn's check_array words: sparse input, "Complex data not supported", "Expected 2D
    array, got 1D array instead", "Found array with 0 sample(s)" / "0 feature(s)"."""
    if _is_sparse(X):
        raise InvalidInputError(f"{name}: a sparse matrix ({type(X).__name__}) was passed, but dense data is required "
                                f"(KMeans takes dense arrays only): use {name}.toarray() to convert it")
    if isinstance(X, np.ndarray) and X.dtype == object:
        X = X.astype(np.float64)  # numbers stored as objects; anything else: NumPy's TypeError
    x = _arrays.wrap(X, name)
    if not x.on_device and x.kind == "numpy" and np.issubdtype(np.asarray(x.obj).dtype, np.integer):
        x = _arrays.wrap(np.asarray(x.obj, dtype=np.float64), name)
    if "complex" in str(x.dtype):
        raise InvalidInputError(f"{name}: Complex data not supported (dtype {x.dtype}; float32 or float64 expected)")
    if x.ndim != 2:
        got = {0: "scalar array", 1: "1D array"}.get(x.ndim, f"{x.ndim}D array")
        raise InvalidInputError(
            f"{name} must be a matrix (n_samples, n_features): Expected 2D array, got {got} instead (shape "
            f"{tuple(x.shape)}). Reshape your data either using {name}.reshape(-1, 1) if your data has a single "
            f"feature or {name}.reshape(1, -1) if it contains a single sample.")
    n, d = x.shape
    if n < 1:
        raise InvalidInputError(f"{name}: Found array with 0 sample(s) (shape=({n}, {d})) while a minimum of 1 is "
                                "required.")
    if d < 1:
        raise InvalidInputError(f"{name}: Found array with 0 feature(s) (shape=({n}, {d})) while a minimum of 1 is "
                                "required.")
    _arrays.require_dtype(x, ("float32", "float64"), "float32, or float64 (rounded to float32)")
    return x


def _contains(value):
    """scikit-learn's words for a non-finite value: "NaN" or "infinity"."""
    return "NaN" if math.isnan(value) else "infinity"


def _sample_weight(sample_weight, n):
    """The weights of fit and score as a float64 NumPy array of n values (host), or None when
    sample_weight is None. A number gives every sample that weight (scikit-learn's rule). Any
    other shape than (n,) is refused (InvalidInputError); the values (finite, >= 0, not all 0)
    are checked by the library (fit) or here (score)."""
    if sample_weight is None:
        return None
    w = _arrays.wrap(sample_weight, "sample_weight")
    if w.on_device or w.kind != "numpy":
        w = _arrays.wrap(_arrays.to_host(w), "sample_weight")
    w = np.asarray(w.obj)
    if w.ndim == 0:
        w = np.full(n, w)
    if w.shape != (n,):
        raise InvalidInputError(f"sample_weight.shape == {w.shape}, expected ({n},): one weight per sample")
    if not (np.issubdtype(w.dtype, np.floating) or np.issubdtype(w.dtype, np.integer) or w.dtype == bool):
        raise InvalidInputError(f"sample_weight: dtype {w.dtype} is not supported (real numbers)")
    w = np.ascontiguousarray(w, dtype=np.float64)  # a copy where needed: the caller's array is never changed
    bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
    if bad.size:
        raise InvalidInputError(f"sample_weight: weight {bad[0]} is {w[bad[0]]}: sample weights must be finite and "
                                ">= 0")
    if not (w > 0).any():
        raise InvalidInputError(f"sample_weight: every sample weight is 0 ({n} samples): at least one must be "
                                "positive")
    return w


def _host_points(x, what="kmeans"):
    """The host Array ``x`` (NumPy, torch CPU) as a C-ordered float32 NumPy array: any byte order
    and layout (a copy where needed; x is never modified); float64 beyond FP32's range is refused
    (_to_float32). Never given device data (``_device_points``)."""
    host = _arrays.wrap(_arrays.to_host(x), x.name)
    return np.ascontiguousarray(_to_float32(host, what).obj)


def _device_points(x, what="kmeans"):
    """The device Array ``x`` (CuPy, torch CUDA) as the C API reads it, on its device: (Array,
    ldx), float32 with rows contiguous -- x itself when it is so (C order, or rows of it ldx
    apart), else converted or copied by its own library on the device (float64 rounded to
    float32, beyond FP32's range refused; other strides copied into C order). Never copied to the
    host. Call inside _arrays.device_scope(x)."""
    f = _to_float32(x, what)
    ld = _arrays.fits(f.shape, f.strides, "row")
    if ld is None:
        f = _arrays.contiguous(f, "C")
        ld = _arrays.fits(f.shape, f.strides, "row")
    return f, ld


def _points_of(x, what="kmeans"):
    """The points of the checked Array ``x`` for tcsolveKmeans and tcsolveKmeansPlusPlus: (Array,
    ldx), device data where it is (_device_points), host data as a C-ordered float32 NumPy copy
    where needed (_host_points). Call inside _arrays.device_scope(x)."""
    if x.on_device:
        return _device_points(x, what)
    host = _host_points(x, what)
    return _arrays.wrap(host, x.name), max(1, host.shape[1])


def _handle(x, backend):
    """The handle a K-means call on ``x`` runs on: for device data the cuda handle of its device
    on its library's current stream (matmul.handle_for); for host data the ``backend`` handle
    ("auto", "cpu", "cuda") on the legacy default stream. Call inside _arrays.device_scope(x)."""
    if x.on_device:
        return handle_for(x)
    h = _handles.get(backend, None)
    h.set_stream(0)
    return h


def kmeans_plusplus(X, n_clusters, random_state=None):
    """The k-means++ start KMeans(n_clusters, random_state=...) begins from (tcsolveKmeansPlusPlus:
    Arthur and Vassilvitskii on the host in FP64, the CLI's start for ``--seed``): an
    (n_clusters, n_features) float32 array of X's kind, each row a point of X. Passing it as
    ``init`` gives the same run as the seed, without drawing it again.

    X : (n_samples, n_features) float32 or float64 array (NumPy, torch, CuPy). Host data is drawn
        from on the host (the cpu backend); device data on its GPU, read where it is (no host
        copy), on its library's current stream: bitwise the same centroids.
    n_clusters : int
    random_state : None (seed 1), int, numpy RandomState or Generator, as KMeans takes it
    """
    x = _matrix(X)
    n, d = x.shape
    with _arrays.device_scope(x):
        points, ld = _points_of(x, what="kmeans++")
        if not isinstance(n_clusters, numbers.Integral) or isinstance(n_clusters, bool) or not 1 <= n_clusters <= n:
            raise InvalidInputError(f"n_clusters must be an integer in [1, n_samples = {n}], got {n_clusters!r}")
        centers = np.empty((int(n_clusters), d), dtype=np.float32)
        h = _handle(x, "cpu")
        h.check(h.call(_lib.lib.tcsolveKmeansPlusPlus, h.raw, n, d, points.ptr, ld, centers.shape[0],
                       _seed(random_state), centers.ctypes.data, d, work=n * d * centers.shape[0]))
    return _arrays.from_host(x, centers)


# What fit sets (kept from the best of n_init runs).
_FITTED = ("_centers_host", "cluster_centers_", "labels_", "inertia_", "n_iter_", "n_features_in_", "stop_reason_",
           "resolved_variant_", "backend_", "empty_clusters_", "time_per_iteration_", "time_")


class KMeans:
    """K-means clustering with the distance step on a tcsolve GEMM variant.

    Parameters
    ----------
    n_clusters : int, default 8
        Number of clusters k.
    variant : str, default "auto"
        GEMM variant of the cross terms x.c (``tcsolve.variants()``): "fp64" is the FP64
        reference, "ec-fp16"/"ec-tf32" the FP32-accurate tensor-core products, "fp16-tc" plain
        FP16 tensor cores, ...
    init : "k-means++", "random" or array of shape (n_clusters, n_features), default "k-means++"
        The start: k-means++ (drawn in FP64 with ``random_state`` on the run's backend, as the
        CLI; the GPU's draw is bitwise the host's), "random" (n_clusters distinct rows of X drawn
        with ``random_state``, scikit-learn's) or these centroids (rounded to float32).
    n_init : int, default 1
        Runs from that many starts (seeds random_state, random_state + 1, ...; an array init runs
        once), keeping the lowest inertia (scikit-learn's n_init).
    max_iter : int, default 300
        At most this many iterations (assignments).
    tol : float, default 1e-4
        Also stop when the centroids' total squared movement is at most tol times the mean
        per-coordinate variance of X (scikit-learn's rule); 0: stop only when no label changes
        or after max_iter.
    random_state : None, int, numpy RandomState or Generator, default None
        Seed of k-means++. None means seed 1 (the CLI's default), so runs are reproducible.
    backend : {"auto", "cpu", "cuda"}, default "auto"
        Where host data runs: auto is cuda when a usable GPU is present, else cpu (the CLI's
        --backend auto). Device data (torch CUDA, CuPy) runs on cuda.

    Attributes (after fit)
    ----------------------
    cluster_centers_ : (n_clusters, n_features) float32, of X's kind and device
    labels_ : (n_samples,) int32, of X's kind and device
    inertia_ : float, sum of squared distances to the closest centroid, in FP64
    n_iter_ : int, iterations (assignments) run
    n_features_in_ : int
    stop_reason_ : "labels_unchanged", "tolerance" or "max_iterations"
    resolved_variant_ : what the first distance GEMM ran ("auto" resolved)
    backend_ : "cpu" or "cuda"
    empty_clusters_ : clusters without points in the last assignment (their centroid kept)
    time_per_iteration_ : seconds per iteration (the library's wall time, no seeding or copies)

    Data: X is float32 or float64 (float64 is rounded once to float32, as the CLI reads a file's
    float64 X), NumPy, torch or CuPy. Device X (a CuPy array, a torch CUDA tensor) is read where it
    is, never copied to the host: fit, predict, score and kmeans_plusplus run on X's device (a
    tensor on cuda:1 runs on GPU 1, whatever device is current) on its library's current stream
    (torch.cuda.current_stream(device), cupy.cuda.get_current_stream()), so they are ordered after
    the work that made X; float64 device X is rounded to float32 on the device, and X whose rows
    are not contiguous is copied into C order there. labels_ is written on X's device;
    cluster_centers_ (k x d) is copied there from the host. Host X (NumPy, torch CPU) runs on
    ``backend``; with cuda the library copies it to the device. Host and device X give bitwise
    the same labels and centroids. NumPy data in any byte order ('>f4', '>f8') and layout is
    taken (copied where needed; the caller's arrays are never modified).

    Values: NaN and inf are refused (InvalidInputError, "non-finite value ... at (i, j)") by
    fit, predict, score and kmeans_plusplus alike; a float64 value beyond FP32's range
    (|x| > 3.4e38), which would round to inf, is refused naming it. Data far from 1 in
    magnitude (float32 subnormals of order 1e-42, 1e-30, 1e30), whose cross terms x.c would
    leave FP32's range, runs scaled by a power of two (exactly; tcsolve/cluster/kmeans.hpp,
    "Scale"), so it clusters as the same data at scale 1; predict scales the same way.

    Ctrl-C (SIGINT) stops a cpu fit or kmeans_plusplus within about a second and raises
    KeyboardInterrupt (the call runs on a worker thread, interrupted through tcsolveInterrupt).

    Sample weights (``fit``, ``fit_predict``, ``fit_transform`` and ``score`` take
    ``sample_weight``, as scikit-learn's KMeans): None, a number (every sample that weight) or
    n_samples values, finite and >= 0, not all 0 (else InvalidInputError naming the first bad
    one). The fit runs the library's weighted K-means (tcsolveKmeansWeighted, both backends):
    centroids sum_i w_i x_i / sum_i w_i over each cluster's points (FP64 sums, rounded once to
    float32), ``inertia_`` = sum_i w_i ||x_i - c||^2, k-means++ drawn with probability
    w_i D(x_i)^2 (scikit-learn 1.3's rule; its first centroid with probability w_i; a sample of
    weight 0 is never a centroid), init="random" drawing rows with probability w_i; the tol test
    keeps the unweighted variance of X (scikit-learn's). A cluster whose weights sum to 0 keeps its
    centroid (empty_clusters_). Equal weights w run as the unweighted fit (bitwise its labels
    and centroids, the same means) with ``inertia_`` multiplied by w. Integer weights give the
    fit of X with sample i repeated w_i times (up to the order of the FP64 sums).

    scikit-learn's ``check_estimator`` (1.2.1): every check passes on the cpu backend except
    check_sample_weights_pandas_series, which skips itself where pandas is absent, and
    check_sample_weights_invariance, marked as expected to fail (``_more_tags``, skipped by
    check_estimator) as scikit-learn marks its own KMeans: its kind="zeros" case compares the
    labels of X with those of a shuffled X plus points of weight 0; the clusters are the same,
    but k-means++ walks the points in their order, so from the same seed the centroids come in
    another order and the label numbers differ. (Its kind="ones" case passes: equal weights run
    as the unweighted fit.) Input is
    refused in its words: sparse matrices ("sparse", dense data required), complex data
    ("Complex data not supported"), 1-D X ("Expected 2D array, got 1D array instead ... Reshape
    your data"), no samples or features ("Found array with 0 sample(s)" / "0 feature(s)"), NaN
    and inf ("... (Input X contains NaN)" / "infinity") in fit, predict, transform and score;
    NumPy arrays of dtype object holding numbers are taken (as float64).
    """

    def __init__(self, n_clusters=8, *, variant="auto", init="k-means++", n_init=1, max_iter=300, tol=1e-4,
                 random_state=None, backend="auto"):
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.variant = variant
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.backend = backend

    # --- scikit-learn's estimator protocol ----------------------------------------------------

    @classmethod
    def _get_param_names(cls):
        signature = inspect.signature(cls.__init__)
        return sorted(p.name for p in signature.parameters.values()
                      if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep=True):
        """The constructor's parameters as a dict (``deep`` is accepted for scikit-learn; no
        parameter is an estimator)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params):
        """Sets constructor parameters by name; returns self. Unknown names: InvalidInputError."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise InvalidInputError(f"invalid parameter {name!r} for KMeans (valid: {', '.join(valid)})")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = []
        for name in self._get_param_names():
            value = getattr(self, name)
            default = defaults.get(name)
            same = value is default or (type(value) is type(default) and not isinstance(value, np.ndarray)
                                        and value == default)
            if not same:
                changed.append(f"{name}={'array' + str(np.shape(value)) if hasattr(value, 'shape') else repr(value)}")
        return f"KMeans({', '.join(changed)})"

    def _more_tags(self):
        """scikit-learn's estimator tags (read by its check_estimator): the check that cannot pass,
        with its reason (the class docstring), as scikit-learn's KMeans lists it."""
        return {"_xfail_checks": {"check_sample_weights_invariance": (
            "zero sample_weight is not equivalent to removing samples: the same clusters, but k-means++ walks the "
            "points in their order, so the shuffled data's labels are numbered differently")}}

    # --- the work ----------------------------------------------------------------------------

    def _data(self, X, name="X"):
        return _matrix(X, name)

    def _params(self, n, d):
        p = _lib.KmeansParams()
        _lib.lib.tcsolveKmeansParamsDefault(ctypes.byref(p))
        p.variant = _lib.variant_value(self.variant)
        k = self.n_clusters
        if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 1:
            raise InvalidInputError(f"n_clusters must be an integer >= 1, got {k!r}")
        if k > n:
            raise InvalidInputError(f"n_clusters = {k} exceeds the number of samples ({n})")
        if not isinstance(self.max_iter, numbers.Integral) or isinstance(self.max_iter, bool) or self.max_iter < 1:
            raise InvalidInputError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        p.max_iterations = int(min(self.max_iter, 2**31 - 1))
        if not isinstance(self.tol, numbers.Real) or not np.isfinite(self.tol) or self.tol < 0:
            raise InvalidInputError(f"tol must be a finite number >= 0, got {self.tol!r}")
        p.tol = float(self.tol)
        centers = np.empty((int(k), d), dtype=np.float32)
        if isinstance(self.init, str):
            if self.init not in ("k-means++", "random"):
                raise InvalidInputError(f"init must be 'k-means++', 'random' or an array of shape ({k}, {d}), "
                                        f"got {self.init!r}")
            p.init = 1  # "random": fit replaces the start by rows of X (_random_start)
            p.seed = _seed(self.random_state)
        else:
            start = _arrays.wrap(_arrays.to_host(self._data(self.init, "init")), "init")
            if start.shape != (k, d):
                raise InvalidInputError(f"init has shape {start.shape}, expected (n_clusters, n_features) = ({k}, {d})")
            # float64 rounded to float32 (RN), as the CLI reads a file's init
            centers[...] = _to_float32(start, "kmeans").obj
            p.init = 0
        if self.backend not in _lib.BACKENDS:
            raise InvalidInputError(f"backend must be one of auto, cpu, cuda, got {self.backend!r}")
        return p, centers

    def fit(self, X, y=None, sample_weight=None):
        """Runs K-means on X (n_samples, n_features); returns self. y is ignored. Device X is read
        where it is (no host copy), on its device and its library's current stream. n_init > 1:
        that many runs from successive seeds, the lowest inertia kept. sample_weight: None, a
        number or n_samples weights (host or device; the class docstring, "Sample weights")."""
        x = self._data(X)
        weights = _sample_weight(sample_weight, x.shape[0])
        runs = self.n_init
        if not isinstance(runs, numbers.Integral) or isinstance(runs, bool) or runs < 1:
            raise InvalidInputError(f"n_init must be an integer >= 1, got {runs!r}")
        if runs == 1 or not isinstance(self.init, str):
            return self._fit_once(x, _seed(self.random_state), weights)
        first = _seed(self.random_state)
        best = None
        for i in range(int(runs)):
            self._fit_once(x, (first + i) % 2**64, weights)
            if best is None or self.inertia_ < best["inertia_"]:
                best = {name: getattr(self, name) for name in _FITTED}
        for name, value in best.items():
            setattr(self, name, value)
        return self

    def fit_transform(self, X, y=None, sample_weight=None):
        """fit(X, sample_weight=sample_weight).transform(X)."""
        return self.fit(X, y, sample_weight).transform(X)

    def transform(self, X):
        """The Euclidean distance of each point of X to each centroid, (n_samples, n_clusters)
        float64 of X's kind and device: sqrt(max(0, ||x||^2 + ||c||^2 - 2 x.c)) in FP64."""
        x = self._points(X, "transform")
        with _arrays.device_scope(x):
            c = _arrays.from_host(x, self._centers_host.astype(np.float64))
            if x.kind == "numpy":
                x64 = np.asarray(x.obj, dtype=np.float64)
                d2 = (x64 * x64).sum(1)[:, None] + (c * c).sum(1)[None, :] - 2.0 * (x64 @ c.T)
                return np.sqrt(np.maximum(d2, 0.0))
            x64 = x.obj.double() if x.kind == "torch" else x.obj.astype(_arrays._cupy().float64)
            d2 = (x64 * x64).sum(1)[:, None] + (c * c).sum(1)[None, :] - 2.0 * (x64 @ c.T)
            return d2.clamp(min=0).sqrt() if x.kind == "torch" else _arrays._cupy().sqrt(_arrays._cupy().maximum(d2, 0))

    def _random_start(self, x, seed, k, weights=None):
        """init="random": k distinct rows of X drawn with the seed (float32, host); with weights
        (unequal: _fit_once) row i with probability w_i / sum w, among the rows of positive weight."""
        if weights is None:
            rows = np.random.default_rng(seed).choice(x.shape[0], size=k, replace=False)
        else:
            positive = int(np.count_nonzero(weights))
            if positive < k:
                raise InvalidInputError(f"init='random': {positive} samples of positive weight for n_clusters = {k}")
            rows = np.random.default_rng(seed).choice(x.shape[0], size=k, replace=False, p=weights / weights.sum())
        picked = x.obj[rows.tolist()] if x.kind == "torch" else x.obj[rows]
        return np.asarray(_arrays.to_host(_arrays.wrap(picked, "init")), dtype=np.float32)

    def _fit_once(self, x, seed, weights=None):
        """One run on the checked Array x from `seed`; weights: None or _sample_weight's array."""
        # Equal weights w: the unweighted run (the same means; bitwise its labels and centroids),
        # its inertia times w.
        scale = 1.0
        if weights is not None and np.all(weights == weights[0]):
            scale, weights = float(weights[0]), None
        if x.on_device and self.backend == "cpu":
            raise InvalidInputError(f"backend='cpu' with X in device memory ({x.where()}): move it to the host")
        n, d = x.shape
        info = _lib.KmeansInfo()
        with _arrays.device_scope(x):
            points, ld = _points_of(x)
            params, centers = self._params(n, d)
            params.seed = seed
            if isinstance(self.init, str) and self.init == "random":
                centers[...] = self._random_start(points, seed, centers.shape[0], weights)
                params.init = 0
            labels = _arrays.empty(x, (n,), "int32") if x.on_device else _arrays.wrap(np.empty(n, np.int32), "labels")
            h = _handle(x, self.backend)
            work = n * d * centers.shape[0] * params.max_iterations
            # cpu: on a worker thread, so that Ctrl-C stops it (Handle.call, tcsolveInterrupt)
            if weights is None:
                status = h.call(_lib.lib.tcsolveKmeans, h.raw, ctypes.byref(params), n, d, points.ptr, ld,
                                centers.shape[0], centers.ctypes.data, d, labels.ptr, ctypes.byref(info), work=work)
            else:
                status = h.call(_lib.lib.tcsolveKmeansWeighted, h.raw, ctypes.byref(params), n, d, points.ptr, ld,
                                centers.shape[0], centers.ctypes.data, d, labels.ptr,
                                weights.ctypes.data_as(_lib.c_double_p), ctypes.byref(info), work=work)
            try:
                h.check(status)
            except InvalidInputError as e:
                # the library's "X has a non-finite value at (i, j)", with scikit-learn's words
                bad = _first_bad(points, x) if "non-finite value" in str(e) else None
                if bad is None:
                    raise
                raise type(e)(f"{e} (Input X contains {_contains(bad[1])})", e.status) from None
        self._centers_host = centers
        self.cluster_centers_ = _arrays.from_host(x, centers)
        self.labels_ = labels.obj if x.on_device else _arrays.from_host(x, labels.obj)
        self.inertia_ = info.inertia * scale
        self.n_iter_ = info.iterations
        self.n_features_in_ = d
        self.stop_reason_ = _STOPS.get(info.stop, str(info.stop))
        self.resolved_variant_ = _lib.variant_name(info.resolved_variant)
        self.backend_ = h.backend
        self.empty_clusters_ = info.empty_clusters
        self.time_per_iteration_ = info.time_per_iteration_s
        self.time_ = info.time_s
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        """fit(X, sample_weight=sample_weight).labels_."""
        return self.fit(X, sample_weight=sample_weight).labels_

    def _fitted(self):
        if not hasattr(self, "_centers_host"):
            raise InvalidInputError("this KMeans is not fitted yet: call fit first")

    def _points(self, X, what):
        """X checked against the fit, as float32 with rows contiguous (a copy otherwise). NaN, inf
        and float64 beyond FP32's range are refused, as fit refuses them (a NaN point would get
        label 0 silently)."""
        self._fitted()
        x = self._data(X)
        if x.shape[1] != self.n_features_in_:
            raise InvalidInputError(f"X has {x.shape[1]} features, the fit had {self.n_features_in_}")
        x = _to_float32(x, what, finite=True)
        if _arrays.fits(x.shape, x.strides, "row") is None:
            x = _arrays.contiguous(x, "C")
        return x

    def predict(self, X):
        """The closest centroid of each point, by the fit's assignment step: the cross terms by one
        GEMM of the variant per chunk of points (the demo's call and chunking: X^T C with op T, N),
        the scores ||c||^2 - 2 x.c in FP64, ties to the lowest index. So predict on the training
        data gives labels_ when the fit stopped because no label changed. Host X runs on the cpu
        backend (the emulation), device X on its GPU. Returns int32 labels of X's kind.

        X is refused as fit refuses it (InvalidInputError): NaN or inf ("non-finite"), float64
        beyond FP32's range."""
        return self._predict(self._points(X, "predict"))

    def _predict(self, x):
        n, d = x.shape
        k = self._centers_host.shape[0]
        variant = _lib.variant_value(self.variant)
        # Far from 1 in magnitude, points and centroids scaled by 2^e first, as fit's iterations
        # (kmeans.hpp, "Scale"): x.c in FP32's range. Exact (2^e is a float32 for every e).
        with _arrays.device_scope(x):
            e = _scale_exponent(max(_largest(x), float(np.abs(self._centers_host).max(initial=0))))
            centers = self._centers_host
            if e:
                factor = np.float32(2.0**e)
                centers = centers * factor
                x = _arrays.wrap(x.obj * (float(factor) if x.kind == "torch" else factor), "X")
        # ||c_j||^2 in FP64 with d ascending, as the demo (each addition rounded).
        cnorm = np.zeros(k)
        c64 = centers.astype(np.float64)
        for j in range(d):
            cnorm += c64[:, j] * c64[:, j]
        if x.on_device:
            return self._predict_device(x, variant, cnorm, centers)
        ld = _arrays.fits(x.shape, x.strides, "row")
        C = _arrays.wrap(centers, "centers")
        rows = max(1, min(n, _CHUNK_BYTES["cpu"] // (4 * k)))
        labels = np.empty(n, dtype=np.int32)
        h = handle_for(x)
        G = np.empty(k * rows, dtype=np.float32)
        for i0 in range(0, n, rows):
            r = min(rows, n - i0)
            g = G[:k * r].reshape(k, r)  # G (r x k) column-major, ld r
            h.check(h.call(_lib.lib.tcsolveSgemm, h.raw, variant, _lib.OP_T, _lib.OP_N, r, k, d,
                           ctypes.byref(ctypes.c_float(1)), x.ptr + 4 * i0 * ld, ld, C.ptr, d,
                           ctypes.byref(ctypes.c_float(0)), g.ctypes.data, r, work=r * k * d))
            for b0 in range(0, r, max(1, _SCORE_BLOCK // k)):
                b1 = min(r, b0 + max(1, _SCORE_BLOCK // k))
                s = cnorm[:, None] - 2.0 * g[:, b0:b1].astype(np.float64)
                s[np.isnan(s)] = np.inf  # a NaN score never wins
                labels[i0 + b0:i0 + b1] = np.argmin(s, axis=0)
        return labels

    def _predict_device(self, x, variant, cnorm, centers):
        n, d = x.shape
        k = centers.shape[0]
        ld = _arrays.fits(x.shape, x.strides, "row")
        rows = max(1, min(n, _CHUNK_BYTES["cuda"] // (4 * k)))
        C = _arrays.wrap(_arrays.from_host(x, centers), "centers")
        out = _arrays.empty(x, (n,), "int32")
        with _arrays.device_scope(x):
            h = handle_for(x)
            cn = _arrays.from_host(x, cnorm)
            G = _arrays.empty(x, (k * rows,), "float32")
            for i0 in range(0, n, rows):
                r = min(rows, n - i0)
                g = G.obj[:k * r].reshape(k, r)  # G (r x k) column-major, ld r
                h.check(_lib.lib.tcsolveSgemm(h.raw, variant, _lib.OP_T, _lib.OP_N, r, k, d,
                                              ctypes.byref(ctypes.c_float(1)), x.ptr + 4 * i0 * ld, ld, C.ptr, d,
                                              ctypes.byref(ctypes.c_float(0)), G.ptr, r))
                step = max(1, _SCORE_BLOCK // k)
                for b0 in range(0, r, step):
                    b1 = min(r, b0 + step)
                    block = g[:, b0:b1]
                    if x.kind == "torch":
                        s = cn[:, None] - 2.0 * block.double()
                        s = s.nan_to_num(nan=float("inf"), posinf=float("inf"))
                        out.obj[i0 + b0:i0 + b1] = s.argmin(0).int()
                    else:
                        cp = _arrays._cupy()
                        s = cn[:, None] - 2.0 * block.astype(cp.float64)
                        s[cp.isnan(s)] = cp.inf
                        out.obj[i0 + b0:i0 + b1] = cp.argmin(s, axis=0).astype(cp.int32)
        return out.obj

    def score(self, X, y=None, sample_weight=None):
        """Minus the inertia of X for the fitted centroids: -sum_i ||x_i - c_predict(i)||^2,
        computed in FP64 (scikit-learn's score); with sample_weight (as fit takes it)
        -sum_i w_i ||x_i - c_predict(i)||^2. y is ignored. X is refused as predict refuses it."""
        x = self._points(X, "score")
        weights = _sample_weight(sample_weight, x.shape[0])
        labels = self._predict(x)
        if not x.on_device:
            diff = np.asarray(x.obj, dtype=np.float64) - self._centers_host.astype(np.float64)[labels]
            if weights is None:
                return -float(np.einsum("ij,ij->", diff, diff))
            return -float(np.einsum("ij,ij->i", diff, diff) @ weights)
        with _arrays.device_scope(x):
            centers = _arrays.from_host(x, self._centers_host.astype(np.float64))
            if x.kind == "torch":
                diff = x.obj.double() - centers[labels.long()]
            else:
                diff = x.obj.astype(_arrays._cupy().float64) - centers[labels]
            if weights is None:
                return -float((diff * diff).sum())
            return -float(((diff * diff).sum(1) * _arrays.from_host(x, weights)).sum())
