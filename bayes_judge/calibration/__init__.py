"""Win rates from judge verdicts: observed k (Gao et al. 2024 eq. 4) and BWRS (Algorithm 1)."""

from .bwrs import bwrs_draws
from .kde import kde_grid, kde_mode
from .observed import observed_draws

__all__ = ["bwrs_draws", "observed_draws", "kde_grid", "kde_mode"]
