"""A kernel compiled in a second process lands in numba's cache, and this process reads it."""

from __future__ import annotations

import importlib
import sys
import textwrap

import numpy as np
import pytest

from bayes_judge.inference import _compile_beside as cb

KERNEL = textwrap.dedent('''
    import numba

    @numba.njit(cache=True, nogil=True)
    def twice(x, buf, grad):
        s = 0.0
        for i in range(x.shape[0]):
            grad[i] = 2.0 * buf[0]
            s += 2.0 * buf[0] * x[i]
        return s
''')


@pytest.fixture
def kernel_module(tmp_path, monkeypatch):
    """A fresh module with one ``cache=True`` kernel (its cache next to it in ``tmp_path``: empty)."""
    name = f"_beside_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module(name)
    yield mod, name
    sys.modules.pop(name, None)


def test_a_kernel_compiled_beside_is_read_from_the_cache_here(kernel_module):
    """Not in the cache: a second process compiles it (importing the module from where this process
    did: it is on no path of the second's but the one ``compile_beside`` gives it); then it is in the
    cache, this process loads it from there (a cache hit, no compile here), and it computes;
    compiled or cached, nothing more is started."""

    mod, name = kernel_module
    assert not cb.in_cache(mod.twice, cb.KERNEL_SIG)
    proc = cb.compile_beside(mod.twice, cb.KERNEL_SIG, f"import {name} as m\nfrom numba import types\nm.twice.compile((types.float64[::1],) * 3)")
    assert proc is not None
    cb.wait(proc, timeout=120)
    assert proc.returncode == 0 and cb.in_cache(mod.twice, cb.KERNEL_SIG)
    g = np.empty(3)
    assert mod.twice(np.arange(3.0), np.array([1.5]), g) == pytest.approx(9.0) and np.all(g == 3.0)
    assert sum(mod.twice.stats.cache_hits.values()) == 1 and not mod.twice.stats.cache_misses
    assert cb.compile_beside(mod.twice, cb.KERNEL_SIG, "raise SystemExit(1)") is None


def test_nothing_is_started_when_told_not_to(kernel_module, monkeypatch):

    mod, name = kernel_module
    monkeypatch.setenv(cb.ENV, "0")
    assert cb.compile_beside(mod.twice, cb.KERNEL_SIG, f"import {name}") is None


def test_a_helper_that_fails_leaves_the_compile_here(kernel_module):
    """A second process that fails writes nothing: the kernel is compiled here, as before."""

    mod, _ = kernel_module
    proc = cb.compile_beside(mod.twice, cb.KERNEL_SIG, "raise SystemExit(3)")
    call = cb.AfterCompile(mod.twice, proc)
    g = np.empty(2)
    assert call(np.ones(2), np.array([1.0]), g) == pytest.approx(4.0)
    assert proc.returncode == 3 and sum(mod.twice.stats.cache_misses.values()) == 1
    assert cb.in_cache(mod.twice, cb.KERNEL_SIG)


def test_a_helper_no_longer_needed_is_stopped(kernel_module):
    """A fit that fails (or never calls the kernel) stops its helper and reaps it: no process is
    left running, and ``stop`` of nothing does nothing."""
    mod, _ = kernel_module
    proc = cb.compile_beside(mod.twice, cb.KERNEL_SIG, "import time\ntime.sleep(60)")
    assert proc is not None and proc.poll() is None
    cb.stop(proc)
    assert proc.returncode is not None and proc.returncode < 0
    cb.stop(None)
