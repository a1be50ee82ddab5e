"""The comparator's progress bar (tqdm), one per run, counted in comparisons."""

from __future__ import annotations

from typing import Any

__all__ = ["progress_bar"]


def progress_bar(total: int, desc: str, enabled: bool) -> Any:
    """A tqdm bar of ``total`` comparisons, silent when ``enabled`` is false or there is nothing to do."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="cmp", disable=not enabled or total == 0,
                dynamic_ncols=True, smoothing=0.1)
