"""Array interop: NumPy arrays (and anything numpy.asarray takes), torch tensors (CPU or CUDA)
and CuPy arrays, seen as one ``Array`` record (kind, pointer, shape, strides in elements, dtype,
device) that the C API calls are made from, without importing torch or CuPy unless the caller's
arrays come from them.

* NumPy: ``ndarray.ctypes.data`` and its strides; host memory.
* CuPy arrays: ``__cuda_array_interface__`` (pointer, shape, strides, typestr); torch tensors:
  ``data_ptr()``, ``stride()``, ``dtype`` (the same facts their __cuda_array_interface__ gives,
  without its refusal of some dtypes and of tensors that require grad, which are detached). CUDA
  ones are device memory, used in place (no copy); CPU tensors are host memory, like NumPy.
  The stream of device arrays is the array library's current stream on the array's device:
  ``torch.cuda.current_stream(device).cuda_stream``, ``cupy.cuda.get_current_stream().ptr``;
  the library's work is launched on it, so it is ordered after the work that produced the array
  and before the work that reads the result.

NumPy arrays in non-native byte order (big-endian '>f8' on a little-endian machine), with
unaligned elements or with strides that are no multiple of the element size are copied into
native ones first (``native``); the caller's array is never modified. Outputs (``out=``) are
written through ``Output``: a read-only array is refused, a non-native one written through a
native copy.

Outputs are made by the input's own library (``empty``), on its device, in the layout asked for.
BLAS layouts (``blas_layout``): a 2-D array is usable in place when one of its strides is 1 and
the other at least the extent of that dimension (C order, F order, and slices of them); any
other strides are copied by the callers into C order (documented where it happens).
"""

import contextlib

import numpy as np

from ._errors import InvalidInputError

_TYPESTR = {"<f4": "float32", "<f8": "float64", "<i4": "int32", "<i8": "int64", "<f2": "float16", "|b1": "bool"}


def _module_of(x):
    return type(x).__module__.split(".", 1)[0]


def is_torch(x):
    return _module_of(x) == "torch" and hasattr(x, "data_ptr")


def is_cupy(x):
    return _module_of(x) == "cupy" and hasattr(x, "__cuda_array_interface__")


class Array:
    """One array argument, as the C API sees it.

    kind     "numpy", "torch" or "cupy" (the library that makes outputs for it)
    obj      the array object (for NumPy input, the ndarray numpy.asarray made)
    name     the argument's name, for messages
    ptr      address of element [0, 0, ...] (host or device)
    shape    tuple of ints
    strides  tuple of ints, in elements
    dtype    "float32", "float64", ... (NumPy's names)
    device   CUDA device index, or None for host memory
    """

    def __init__(self, kind, obj, name, ptr, shape, strides, dtype, device):
        self.kind, self.obj, self.name = kind, obj, name
        self.ptr, self.shape, self.strides, self.dtype, self.device = ptr, tuple(shape), tuple(strides), dtype, device

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def on_device(self):
        return self.device is not None

    def where(self):
        """"numpy", "torch (cpu)", "torch (cuda:0)", "cupy (cuda:1)": for messages."""
        if self.kind == "numpy":
            return "numpy"
        return f"{self.kind} ({'cpu' if self.device is None else f'cuda:{self.device}'})"


def _itemsize(dtype):
    return np.dtype(dtype).itemsize


def _from_cai(kind, x, name, device):
    cai = x.__cuda_array_interface__
    typestr = cai["typestr"]
    dtype = _TYPESTR.get(typestr, typestr)
    shape = tuple(cai["shape"])
    item = np.dtype(typestr).itemsize
    if cai.get("strides") is None:  # C-contiguous
        strides, acc = [], 1
        for s in reversed(shape):
            strides.append(acc)
            acc *= s
        strides = tuple(reversed(strides))
    else:
        byte_strides = cai["strides"]
        if any(s % item for s in byte_strides):
            raise InvalidInputError(f"{name}: strides {byte_strides} (bytes) are not multiples of the element size")
        strides = tuple(s // item for s in byte_strides)
    return Array(kind, x, name, int(cai["data"][0] or 0), shape, strides, dtype, device)


def wrap(x, name):
    """The Array of argument ``x`` (named ``name`` in messages). NumPy and torch CPU inputs are
    host memory; CuPy arrays and torch CUDA tensors device memory. Anything else goes through
    numpy.asarray (lists, scalars, other array-likes); objects exposing only
    __cuda_array_interface__ are refused (no library to make their outputs)."""
    if is_torch(x):
        # the library reads the data only: matmul and solve record autograd themselves
        # (_autograd.py) before they get here, so a tensor's gradient is never dropped unseen
        t = x.detach() if getattr(x, "requires_grad", False) else x
        if str(t.layout) != "torch.strided":
            raise InvalidInputError(f"{name}: a torch tensor with layout {t.layout}, expected a dense (strided) tensor")
        dtype = str(t.dtype).replace("torch.", "")
        return Array("torch", t, name, t.data_ptr(), t.shape, t.stride(), dtype, t.device.index if t.is_cuda else None)
    if is_cupy(x):
        return _from_cai("cupy", x, name, x.device.id)
    if hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray):
        raise InvalidInputError(f"{name}: a {type(x).__module__}.{type(x).__name__} in device memory: tcsolve takes "
                                "CuPy arrays and torch tensors on the GPU (convert with cupy.asarray)")
    a = np.asarray(x)
    if a.dtype == object:
        raise InvalidInputError(f"{name}: not a numeric array (numpy made dtype object of it)")
    a = native(a)
    item = a.dtype.itemsize
    if any(s % item for s in a.strides):  # strides of no whole element (views of a structured array)
        a = a.copy(order="C")
    return Array("numpy", a, name, a.ctypes.data, a.shape, tuple(s // item for s in a.strides), a.dtype.name, None)


def is_native(a):
    """Whether the library can read the NumPy array ``a``'s memory as it is: native byte order,
    aligned elements, strides of whole elements (negative strides and other layouts are the
    callers' business: blas_layout)."""
    item = a.dtype.itemsize
    return a.dtype.isnative and a.flags.aligned and not any(s % item for s in a.strides)


def native(a):
    """The NumPy array ``a`` in native byte order with aligned elements: ``a`` itself when it is,
    else a copy (same values, same layout where NumPy keeps it). The library reads raw memory in
    the machine's byte order, so a big-endian array ('>f8' from FITS, np.fromfile(..., '>f8'),
    some HDF5 writers) read as it is would give wrong numbers silently. ``a`` is never modified."""
    if a.dtype.isnative and a.flags.aligned:
        return a
    return a.astype(a.dtype.newbyteorder("="), order="K")


class Output:
    """An ``out=`` argument (``output``): ``target`` is the Array the library writes, ``finish()``
    makes the result visible in the caller's array and returns the caller's object.

    target  out itself (in place), or for a NumPy array whose memory the library cannot write as
            it is (non-native byte order, unaligned) a native C-ordered array of its shape,
            copied into out by finish() with NumPy's conversion
    """

    def __init__(self, obj, target, through=None):
        self.obj, self.target, self._through = obj, target, through

    @property
    def in_place(self):
        return self._through is None

    def finish(self):
        if self._through is not None:
            self._through[...] = self.target.obj
        return self.obj


def output(x, name):
    """The Output of argument ``x`` (``out=``), named ``name`` in messages. Refused
    (InvalidInputError naming ``name``): anything but a NumPy array, torch tensor or CuPy array
    (a list would be converted into a copy nobody sees), and a read-only NumPy array
    (``flags.writeable`` False: np.load(..., mmap_mode="r"), np.broadcast_to, a frozen array);
    writing it in place would change data its owner declared constant, or crash the process
    on a read-only memory map."""
    if is_torch(x) or is_cupy(x):
        return Output(x, wrap(x, name))
    if not isinstance(x, np.ndarray):
        if hasattr(x, "__cuda_array_interface__"):
            wrap(x, name)  # the refusal of device memory of other libraries
        raise InvalidInputError(f"{name} must be an array to write into (a numpy.ndarray, torch tensor or CuPy "
                                f"array), got {type(x).__module__}.{type(x).__name__}")
    if not x.flags.writeable:
        raise InvalidInputError(f"{name} is read-only (flags.writeable is False, e.g. a memory map opened with "
                                "mode 'r' or a broadcast view): pass a writeable array, or none to get a new one")
    a = np.asarray(x)  # the ndarray of a subclass (np.memmap, ...), the same memory
    if a.dtype == object:
        raise InvalidInputError(f"{name}: not a numeric array (dtype object)")
    if is_native(a):
        return Output(x, wrap(a, name))
    return Output(x, wrap(np.empty(a.shape, a.dtype.newbyteorder("="), order="C"), name), a)


def same_place(first, *others):
    """Requires every Array to come from the same library and device as ``first``."""
    for o in others:
        if o.kind != first.kind or o.device != first.device:
            raise InvalidInputError(f"{first.name} is {first.where()} but {o.name} is {o.where()}: "
                                    "pass arrays of one library on one device")


def require_dtype(arr, allowed, hint):
    """InvalidInputError unless arr.dtype is one of ``allowed``."""
    if arr.dtype not in allowed:
        raise InvalidInputError(f"{arr.name}: dtype {arr.dtype} is not supported ({hint})")


def blas_layout(shape, strides):
    """How a 2-D array of ``shape`` and ``strides`` (elements) is stored for BLAS: ("row", ld)
    when rows are contiguous (C order or a slice of it: element (i, j) at i ld + j), ("col", ld)
    when columns are (F order: at i + j ld), None when neither (a copy is needed). ld is at
    least max(1, the contiguous extent), as BLAS requires; a dimension of extent 1 may have any
    stride. When both fit (a vector, an empty array), "row" comes first."""
    r, c = shape
    s0, s1 = strides
    if r == 0 or c == 0:  # no element: any layout, strides meaningless
        return "row", max(1, c)
    if (c <= 1 or s1 == 1) and (r <= 1 or s0 >= max(1, c)):
        return "row", (s0 if r > 1 else max(1, c))
    if (r <= 1 or s0 == 1) and (c <= 1 or s1 >= max(1, r)):
        return "col", (s1 if c > 1 else max(1, r))
    return None


def fits(shape, strides, layout):
    """The leading dimension when the 2-D array fits ``layout`` ("row" or "col"), else None."""
    r, c = shape
    s0, s1 = strides
    if r == 0 or c == 0:
        return max(1, c) if layout == "row" else max(1, r)
    if layout == "row" and (c <= 1 or s1 == 1) and (r <= 1 or s0 >= max(1, c)):
        return s0 if r > 1 else max(1, c)
    if layout == "col" and (r <= 1 or s0 == 1) and (c <= 1 or s1 >= max(1, r)):
        return s1 if c > 1 else max(1, r)
    return None


def extent_bytes(arr):
    """[first, last) byte addresses the array's elements span (empty arrays: an empty range)."""
    if arr.size == 0:
        return arr.ptr, arr.ptr
    item = _itemsize(arr.dtype)
    lo = hi = 0
    for n, s in zip(arr.shape, arr.strides):
        if s >= 0:
            hi += (n - 1) * s
        else:
            lo += (n - 1) * s
    return arr.ptr + lo * item, arr.ptr + (hi + 1) * item


def overlaps(a, b):
    """Whether the memory spans of two Arrays on one device intersect."""
    a0, a1 = extent_bytes(a)
    b0, b1 = extent_bytes(b)
    return a0 < b1 and b0 < a1


# --- making and converting arrays in the input's own library -----------------------------------

def _torch():
    import torch
    return torch


def _cupy():
    import cupy
    return cupy


def empty(like, shape, dtype, order="C"):
    """A new array of ``like``'s kind and device: ``shape``, ``dtype`` ("float64", ...), C or F
    order. Returns its Array (named like ``like``)."""
    if like.kind == "numpy":
        out = np.empty(shape, dtype=dtype, order=order)
    elif like.kind == "cupy":
        cp = _cupy()
        with cp.cuda.Device(like.device):
            out = cp.empty(shape, dtype=dtype, order=order)
    else:
        torch = _torch()
        strides, acc = [], 1
        dims = list(enumerate(shape))
        for i, n in (reversed(dims) if order == "C" else dims):
            strides.append((i, acc))
            acc *= max(1, n)
        stride = tuple(s for _, s in sorted(strides))
        device = "cpu" if like.device is None else f"cuda:{like.device}"
        out = torch.empty_strided(tuple(shape), stride, dtype=getattr(torch, dtype), device=device)
    return wrap(out, like.name)


def astype(arr, dtype):
    """``arr`` converted to ``dtype`` by its own library (a copy on its device), or ``arr``."""
    if arr.dtype == dtype:
        return arr
    if arr.kind == "numpy":
        out = arr.obj.astype(dtype)
    elif arr.kind == "cupy":
        cp = _cupy()
        with cp.cuda.Device(arr.device):
            out = arr.obj.astype(dtype)
    else:
        out = arr.obj.to(getattr(_torch(), dtype))
    return wrap(out, arr.name)


def contiguous(arr, order="C"):
    """``arr`` as a C- (or F-) ordered copy by its own library (``arr`` when it already is)."""
    if arr.kind == "numpy":
        out = np.ascontiguousarray(arr.obj) if order == "C" else np.asfortranarray(arr.obj)
    elif arr.kind == "cupy":
        cp = _cupy()
        with cp.cuda.Device(arr.device):
            out = cp.ascontiguousarray(arr.obj) if order == "C" else cp.asfortranarray(arr.obj)
    else:
        if order == "C":
            out = arr.obj.contiguous()
        else:  # F order: the transpose's C order, transposed back (2-D)
            out = arr.obj.t().contiguous().t() if arr.ndim == 2 else arr.obj.contiguous()
    return wrap(out, arr.name)


def to_host(arr):
    """A NumPy array with the values of ``arr`` (a copy for device arrays, in the array's stream
    order; the array itself for NumPy)."""
    if arr.kind == "numpy":
        return arr.obj
    if arr.kind == "cupy":
        return arr.obj.get()
    return arr.obj.detach().cpu().numpy()


def from_host(like, values):
    """A NumPy array's values as an array of ``like``'s kind and device."""
    if like.kind == "numpy":
        return values
    if like.kind == "cupy":
        cp = _cupy()
        with cp.cuda.Device(like.device):
            return cp.asarray(values)
    torch = _torch()
    device = "cpu" if like.device is None else f"cuda:{like.device}"
    return torch.from_numpy(np.ascontiguousarray(values)).to(device)


def current_stream(arr):
    """The cudaStream_t (as an int) work on ``arr`` should run on: its library's current stream
    on its device; 0 for host arrays."""
    if arr.device is None:
        return 0
    if arr.kind == "torch":
        torch = _torch()
        return int(torch.cuda.current_stream(arr.device).cuda_stream)
    cp = _cupy()
    with cp.cuda.Device(arr.device):
        return int(cp.cuda.get_current_stream().ptr)


def device_scope(arr):
    """A context manager making ``arr``'s device current (nothing for host arrays)."""
    if arr.device is None:
        return contextlib.nullcontext()
    if arr.kind == "torch":
        return _torch().cuda.device(arr.device)
    return _cupy().cuda.Device(arr.device)
