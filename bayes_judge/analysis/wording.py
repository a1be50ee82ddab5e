"""What a summary prints for an interval: its mass, and which of two systems is better, or neither."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["verdict_labels", "HDI_PROB"]

#: the mass of every interval the package shows (summaries, the report, the plots, the command
#: line) unless ``hdi_prob=`` says otherwise
HDI_PROB = 0.9


def verdict_labels(low: Iterable[float], high: Iterable[float], at: float, a: list, b: list) -> list[str]:
    """``"<a> better"``, ``"<b> better"`` or ``"cannot tell apart"`` (the HDI covers ``at``) per row."""
    return [
        f"{x} better" if lo > at else f"{y} better" if hi < at else "cannot tell apart"
        for lo, hi, x, y in zip(low, high, a, b, strict=True)
    ]
