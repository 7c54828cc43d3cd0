"""The C API handles the package works with: one per (thread, backend, CUDA device), made on
first use and kept, so that the library's device context (cuBLAS/cuSOLVER handles, workspaces)
is made once and not per call. A handle is used by one thread only (tcsolveHandle_t is not
thread-safe), hence the per-thread cache. Each call sets the handle's stream to the stream its
arrays live on (``tcsolveSetStream``) before it runs.

Cached handles are destroyed when their thread's cache is collected, except during interpreter
shutdown, when the process's end reclaims them (destroying CUDA state while the CUDA runtime or
the array libraries are being torn down is not safe).

Ctrl-C (``Handle.call``): Python runs signal handlers on the main thread between bytecodes, never
inside a C call, so a long call made directly would hold off KeyboardInterrupt until it returns.
Long cpu calls made from the main thread therefore run on a worker thread (ctypes releases the
GIL) while the main thread waits in short slices; on KeyboardInterrupt (or any exception a
signal handler raises there, such as a SIGALRM timeout's) it calls tcsolveInterrupt on the handle
(the running call stops at its next check, within about a second, with
TCSOLVE_STATUS_INTERRUPTED), waits for the worker and raises that exception, whatever the call
returned. The handle is used by one thread at a time throughout.
"""

import ctypes
import sys
import threading

from . import _lib

# Work (multiply-adds) below which a call runs on the caller's thread: a few milliseconds at most,
# where a thread's start would cost more than Ctrl-C gains.
THREAD_MIN_WORK = 1 << 22
# Seconds the main thread waits at a time for a call's worker (the latency of Ctrl-C).
_SLICE = 0.05


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

    def call(self, function, *args, work=None):
        """``function(*args)``, a C API call on this handle, returning its status such that Ctrl-C
        stops it: on a worker thread when the handle is the cpu backend's, the caller is the main
        thread and ``work`` (multiply-adds; None: large) is at least THREAD_MIN_WORK; else on
        this thread (the cuda backend's calls stay on the thread whose device is current)."""
        if (self.backend != "cpu" or (work is not None and work < THREAD_MIN_WORK)
                or threading.current_thread() is not threading.main_thread()):
            return function(*args)
        outcome = []
        done = threading.Event()  # set by the worker once the C call has returned (or was skipped)
        state = {"cancelled": False, "running": False}
        lock = threading.Lock()

        def run():
            try:
                with lock:
                    if state["cancelled"]:  # Ctrl-C came before the call started: never make it
                        return
                    state["running"] = True
                outcome.append((True, function(*args)))
            except BaseException as e:  # a ctypes argument error: raised on the caller's thread
                outcome.append((False, e))
            finally:
                done.set()

        try:
            threading.Thread(target=run, name="tcsolve-call", daemon=True).start()
            # Not Thread.join: in Python 3.11 a join interrupted by KeyboardInterrupt can mark a
            # running thread as stopped (bpo-45274's fix), and the handle would be reused while
            # the call still runs on it.
            while not done.wait(_SLICE):
                pass
        except BaseException:  # KeyboardInterrupt, or whatever another signal handler raised
            with lock:
                state["cancelled"] = True
                running = state["running"]
            if running:
                self._stop(done)
            raise  # the call's result, interrupted or complete, is dropped
        ok, value = outcome[0]
        if not ok:
            raise value
        return value

    def _stop(self, done):
        """Interrupts the call running on the worker and waits until it has returned (``done``
        set), so that the handle is free for the next call. The interrupt is repeated every
        slice: a call clears the flag when it starts, so one sent just before the worker entered
        it would be lost (a flag left set after the call is cleared by the next one). A further
        Ctrl-C (or other exception from a signal handler) meanwhile changes nothing: the first
        one is raised once the call has returned."""
        while True:
            try:
                _lib.lib.tcsolveInterrupt(self.raw)
                if done.wait(_SLICE):
                    return
            except BaseException:
                continue

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
