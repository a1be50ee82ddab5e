"""What a summary prints for an interval: its mass, and which of two systems is better, or neither."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["verdict_labels", "HDI_PROB", "check_hdi_prob"]

#: the mass of every interval the package shows (summaries, the report, the plots, the command
#: line) unless ``hdi_prob=`` says otherwise
HDI_PROB = 0.9


HDI_PROB_MIN = 0.01  # below it an interval of a few hundred draws holds none: a point at the lowest draw


def check_hdi_prob(hdi_prob: float, where: str = "") -> None:
    """An interval's mass must lie in [0.01, 1): 1 gives every value, and below 0.01 an interval of
    a few hundred draws holds none of them (it came back as a point at the lowest draw, away from
    the mean, and a verdict contradicting P(a better))."""
    if isinstance(hdi_prob, bool) or not isinstance(hdi_prob, int | float) or not HDI_PROB_MIN <= hdi_prob < 1:
        raise ValueError(f"{where}hdi_prob must lie in [{HDI_PROB_MIN}, 1), got {hdi_prob!r}")


def verdict_labels(low: Iterable[float], high: Iterable[float], at: float, a: list, b: list) -> list[str]:
    """``"<a> better"``, ``"<b> better"`` or ``"cannot tell apart"`` (the HDI covers ``at``) per row."""
    return [
        f"{x} better" if lo > at else f"{y} better" if hi < at else "cannot tell apart"
        for lo, hi, x, y in zip(low, high, a, b, strict=True)
    ]
