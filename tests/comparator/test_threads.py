"""CPU threads of the in-process judge (issue 33, 4): a count that does not stall a busy machine."""

from __future__ import annotations

import pytest

from bayes_judge.comparator.threads import auto_threads, resolve_threads, torch_threads


@pytest.mark.parametrize("load, cores, want", [(0.0, 2, 2), (0.6, 2, 1), (1.2, 2, 1), (5.0, 2, 1),
                                               (0.4, 16, 16), (3.6, 16, 12), (20.0, 16, 1)])
def test_auto_threads_leaves_the_busy_cores_alone(load, cores, want):
    assert auto_threads(load=load, cores=cores) == want


def test_resolve_threads_checks_its_input():
    assert resolve_threads(None) is None and resolve_threads(3) == 3 and resolve_threads("auto") >= 1
    for bad in (0, -1, "all", 2.5, True):
        with pytest.raises(ValueError, match="threads must be"):
            resolve_threads(bad)


def test_compare_sets_the_threads_and_restores_them(lm, tiny):
    import torch

    from bayes_judge.comparator import Comparator

    texts, pairs, ctx = tiny
    before = torch.get_num_threads()
    df = Comparator(lm, threads=1).compare(pairs, texts, ctx, progress=False)
    assert df.attrs["threads"] == 1 and torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="threads must be"):
        Comparator(lm, threads=0)


def test_busy_cores_reads_the_machine():
    import os

    from bayes_judge.comparator.threads import busy_cores

    b = busy_cores(0.05)
    assert b is None or 0.0 <= b <= (os.cpu_count() or 1) + 1e-9
