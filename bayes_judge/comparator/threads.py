"""How many CPU threads the in-process judge uses.

torch sizes its intra-op pool to every core.  On a machine whose cores are busy (a second job,
a test worker, a notebook kernel), each forward pass then waits at every barrier for a thread
whose core another process holds: on a busy 2-core machine the embedded judge ran 3.9× slower
with torch's default than with one thread (135 s against 35 s for 20 comparisons).  ``"auto"``
takes the cores this process may use minus the ones other processes keep busy right now (the
machine's CPU time over 0.1 s from ``/proc/stat``, while this process waits; the 1-minute load
average where there is no ``/proc``, which also counts work that has just ended), at least one;
``benchmarks/bench_comparator_threads.py`` measures it side by side with torch's default on an
idle and a busy machine.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

__all__ = ["auto_threads", "busy_cores", "resolve_threads", "torch_threads"]


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _cpu_times() -> tuple[float, float] | None:
    """(busy, total) jiffies of the whole machine from ``/proc/stat``; None without it."""
    try:
        with open("/proc/stat") as fh:
            fields = [float(x) for x in fh.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_cores(interval: float = 0.1) -> float | None:
    """Cores kept busy by the machine over ``interval`` seconds (this process sleeps meanwhile);
    None where ``/proc/stat`` cannot be read."""
    import time

    a = _cpu_times()
    if a is None:
        return None
    time.sleep(interval)
    b = _cpu_times()
    if b is None or b[1] <= a[1]:
        return None
    return (b[0] - a[0]) / (b[1] - a[1]) * (os.cpu_count() or 1)


def auto_threads(load: float | None = None, cores: int | None = None) -> int:
    """Cores not kept busy by other processes: ``cores − round(busy)``, in [1, cores].

    Parameters
    ----------
    load : float, optional
        Cores busy with other work (default: :func:`busy_cores` now, else the 1-minute load
        average).
    cores : int, optional
        Cores this process may use (default: its CPU affinity).
    """
    n = _cores() if cores is None else int(cores)
    if load is None:
        load = busy_cores()
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (AttributeError, OSError):  # neither /proc nor a load average on this platform
            return n
    return int(min(n, max(1, n - round(float(load)))))


def resolve_threads(threads: int | str | None) -> int | None:
    """``None``: leave torch as it is; ``"auto"``: :func:`auto_threads`; an int >= 1 as given."""
    if threads is None:
        return None
    if isinstance(threads, str):
        if threads != "auto":
            raise ValueError(f"threads must be 'auto', None or a positive integer, not {threads!r}")
        return auto_threads()
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be 'auto', None or a positive integer, not {threads!r}")
    return threads


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op threads set to ``n`` inside the block (restored after); ``None``: untouched."""
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(before)
