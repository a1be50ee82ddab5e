"""Kernel density estimate on a fine grid by binning and FFT convolution, and its mode.

``scipy.stats.gaussian_kde`` evaluated on a 1e5-point grid costs O(n * grid) (over a minute
for 10 000 draws); linear binning onto a regular grid followed by one FFT convolution with the
Gaussian kernel costs O(n + G log G) and gives the same density up to the binning error
(< grid step).

Draws of eq. 11 are heavy-tailed (q0 + q1 near 1 gives |p| in the thousands), which ruins a
KDE whose bandwidth comes from the standard deviation and whose grid spans min..max: the peak
is smeared away.  So the bandwidth is Scott's factor on a robust scale,
``min(sd, IQR / 1.349) * n**(-1/5)`` (Silverman's guard; equal to scipy's default for
Gaussian-like draws), and the grid spans the central 99.8% of the draws; draws beyond it still
count in the normalization but cannot move the mode.
"""

from __future__ import annotations

import numpy as np

__all__ = ["kde_grid", "kde_mode"]


def kde_grid(x: np.ndarray, grid_size: int = 4096, bw: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian KDE of the 1-D sample ``x`` on a regular grid.

    Parameters
    ----------
    x : (n,) finite draws
    grid_size : number of grid points
    bw : bandwidth; default Scott's rule

    Returns
    -------
    grid, density : (grid_size,) arrays; the density integrates to 1 over the grid.
    """
    x = np.asarray(x, dtype=float).ravel()
    x = x[np.isfinite(x)]
    n = x.size
    if n == 0:
        raise ValueError("kde: no finite draws")
    sd = x.std(ddof=1) if n > 1 else 0.0
    q_lo, q25, q75, q_hi = np.quantile(x, [0.001, 0.25, 0.75, 0.999])
    scale = min(sd, (q75 - q25) / 1.349) or sd
    if bw is None:
        bw = scale * n ** (-0.2)
    if not bw > 0:  # all draws equal
        return np.array([x[0]]), np.array([1.0])
    lo, hi = q_lo - 4 * bw, q_hi + 4 * bw
    step = (hi - lo) / (grid_size - 1)
    grid = lo + step * np.arange(grid_size)
    # linear binning: split each draw between its two neighbouring grid points
    inside = (x >= lo) & (x < hi - step)
    pos = (x[inside] - lo) / step
    left = np.floor(pos).astype(int)
    frac = pos - left
    counts = np.bincount(left, weights=1 - frac, minlength=grid_size + 1)[: grid_size + 1]
    counts += np.bincount(left + 1, weights=frac, minlength=grid_size + 1)[: grid_size + 1]
    counts = counts[:grid_size]
    # Gaussian kernel on the grid, convolved by FFT with zero padding (no wrap-around)
    half = int(min(np.ceil(4 * bw / step), grid_size - 1))
    k = np.exp(-0.5 * (np.arange(-half, half + 1) * step / bw) ** 2)
    L = grid_size + k.size - 1
    nfft = 1 << int(np.ceil(np.log2(L)))
    dens = np.fft.irfft(np.fft.rfft(counts, nfft) * np.fft.rfft(k, nfft), nfft)[half : half + grid_size]
    dens = np.clip(dens, 0, None)
    dens *= inside.mean() / (dens.sum() * step)  # mass beyond the grid is not lost
    return grid, dens


def kde_mode(x: np.ndarray, grid_size: int = 4096) -> float:
    """Mode of the Gaussian KDE of ``x`` (the seed's p_mode estimator, Gao et al. 2024 Alg. 1 l. 19)."""
    grid, dens = kde_grid(x, grid_size)
    return float(grid[int(np.argmax(dens))])
