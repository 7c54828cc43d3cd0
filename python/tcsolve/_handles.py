"""The C API handles the package works with: one per (thread, backend, CUDA device), made on
first use and kept, so that the library's device context (cuBLAS/cuSOLVER handles, workspaces)
is made once and not per call. A handle is used by one thread only (tcsolveHandle_t is not
thread-safe), hence the per-thread cache. Each call sets the handle's stream to the stream its
arrays live on (``tcsolveSetStream``) before it runs.

Cached handles are destroyed when their thread's cache is collected, except during interpreter
shutdown, when the process's end reclaims them (destroying CUDA state while the CUDA runtime or
the array libraries are being torn down is not safe).
"""

import ctypes
import sys
import threading

from . import _lib


class Handle:
    """One tcsolveHandle_t. ``backend``: "cpu" or "cuda" (auto resolved by the library)."""

    def __init__(self, backend):
        raw = ctypes.c_void_p()
        _lib.check(_lib.lib.tcsolveCreate(ctypes.byref(raw), _lib.BACKENDS[backend]))
        self.raw = raw
        resolved = ctypes.c_int()
        _lib.check(_lib.lib.tcsolveGetBackend(raw, ctypes.byref(resolved)), raw)
        self.backend = _lib.BACKEND_NAMES[resolved.value]

    def set_stream(self, stream):
        """Sets the handle's cudaStream_t (an int pointer value; 0 or None: the legacy default)."""
        _lib.check(_lib.lib.tcsolveSetStream(self.raw, ctypes.c_void_p(stream or None)), self.raw)

    def check(self, status):
        """_lib.check with this handle's message."""
        return _lib.check(status, self.raw)

    def __del__(self):
        raw = getattr(self, "raw", None)
        if raw is not None and raw.value and not sys.is_finalizing():
            _lib.lib.tcsolveDestroy(raw)
            self.raw = None


_local = threading.local()


def get(backend, device=None):
    """This thread's handle for ``backend`` ("cpu", "cuda" or "auto") on CUDA device ``device``
    (None for the cpu, and for "auto" until it resolves). "auto" resolves once per thread, as
    ``tcsolveCreate(TCSOLVE_BACKEND_AUTO)`` does: cuda when a usable GPU is present, else cpu.
    The caller makes ``device`` current first (the library's device context is made on the
    current device at its first use)."""
    cache = getattr(_local, "handles", None)
    if cache is None:
        cache = _local.handles = {}
    if backend == "auto":
        resolved = getattr(_local, "auto_backend", None)
        if resolved is None:
            h = Handle("auto")
            resolved = _local.auto_backend = h.backend
            cache.setdefault((resolved, 0 if resolved == "cuda" else None), h)
        backend = resolved
        if backend == "cuda" and device is None:
            device = 0
    key = (backend, device if backend == "cuda" else None)
    h = cache.get(key)
    if h is None:
        h = cache[key] = Handle(backend)
    return h


def auto_backend():
    """What "auto" resolves to on this machine: "cuda" or "cpu"."""
    return get("auto").backend
