"""A numba kernel compiled in a second process while this one compiles another.

A leaderboard's first fit after installing compiles two large kernels: the log density on cells
in double precision (the mode and the curvature) and the same on cells in single precision (the
sampler's and the importance weights' evaluations), each 15-18 s of numba and LLVM on a 2-core
machine at 1,000,000 comparisons.  numba compiles one function at a time in a process, so the
single-precision kernel is compiled by a second Python process (its output discarded) while this
one compiles the other; that process writes numba's on-disk cache (``cache=True``), which this
one reads when it needs the kernel (the second process imports the package from where this one
did: ``PYTHONPATH``).  Nothing is started where the kernel is already compiled
here or in the cache, or where ``$BAYES_JUDGE_COMPILE_BESIDE`` is ``0``; if the process cannot be
started, fails or takes longer than ``WAIT_S``, this process compiles the kernel itself, as before.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

from numba.core import types

#: a kernel's signature ``(x, buf, grad)``: three contiguous float64 vectors.  numba's cache keys an
#: overload by the signature as it was asked for: a call's (or ``dispatcher.compile`` given these
#: types) is found by a call; one compiled from a signature's text is not
KERNEL_SIG = (types.float64[::1],) * 3
#: set to ``0`` to compile every kernel in this process
ENV = "BAYES_JUDGE_COMPILE_BESIDE"
#: the longest wait for the second process (seconds); past it this process compiles the kernel
WAIT_S = 600.0


def in_cache(dispatcher: Any, sig: tuple) -> bool:
    """Whether ``dispatcher`` (a numba ``cache=True`` dispatcher) has ``sig`` compiled in this
    process or fresh in numba's on-disk cache (the cache index's entry for this source, this
    signature and this CPU).  True where it cannot tell (a numba without these internals)."""
    try:
        if sig in dispatcher.overloads:
            return True
        cache = dispatcher._cache
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 (numba's private API: where it differs, compile here as before)
        return True


def compile_beside(dispatcher: Any, sig: tuple, code: str) -> subprocess.Popen | None:
    """Start ``python -c code`` (which compiles ``dispatcher`` for ``sig``, writing numba's cache)
    unless that overload is compiled or cached already; the process, or None where nothing was
    started."""
    if os.environ.get(ENV, "1") == "0" or not sys.executable or in_cache(dispatcher, sig):
        return None
    env = dict(os.environ)
    root = _import_root(dispatcher)
    if root:  # the second process imports the kernel from where this one did (a checkout beside an install)
        env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    try:
        return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return None


def _import_root(dispatcher: Any) -> str | None:
    """The folder this process imported ``dispatcher``'s top-level package (or module) from."""
    top = sys.modules.get(str(getattr(dispatcher, "__module__", "")).split(".")[0])
    path = getattr(top, "__file__", None)
    if not path:
        return None
    where = os.path.dirname(os.path.abspath(path))
    return os.path.dirname(where) if hasattr(top, "__path__") else where


def wait(proc: subprocess.Popen | None, timeout: float = WAIT_S) -> None:
    """Wait for a :func:`compile_beside` process (at most ``timeout`` seconds, then stop it: this
    process compiles the kernel itself)."""
    if proc is None:
        return
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except BaseException:  # interrupted here: stop the helper too
        proc.kill()
        raise


def stop(proc: subprocess.Popen | None) -> None:
    """End a :func:`compile_beside` process that is no longer needed (the fit failed, or never called
    the kernel): stopped where it still runs, and reaped."""
    if proc is not None:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


class AfterCompile:
    """``kernel`` called after waiting, once, for the :func:`compile_beside` process ``proc`` (thread
    safe): for a kernel first called deep inside a routine, as the importance weights' is."""

    def __init__(self, kernel: Callable, proc: subprocess.Popen | None) -> None:
        self.kernel, self._proc, self._lock = kernel, proc, threading.Lock()

    def __call__(self, *args: Any) -> Any:
        if self._proc is not None:
            with self._lock:
                wait(self._proc)
                self._proc = None
        return self.kernel(*args)
