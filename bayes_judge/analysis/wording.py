"""The words a summary prints for an interval: which of two systems is better, or neither."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["verdict_labels"]


def verdict_labels(low: Iterable[float], high: Iterable[float], at: float, a: list, b: list) -> list[str]:
    """``"<a> better"``, ``"<b> better"`` or ``"cannot tell apart"`` (the HDI covers ``at``) per row."""
    return [
        f"{x} better" if lo > at else f"{y} better" if hi < at else "cannot tell apart"
        for lo, hi, x, y in zip(low, high, a, b, strict=True)
    ]
