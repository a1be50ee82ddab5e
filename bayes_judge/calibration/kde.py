"""Kernel density estimate on a fine grid by binning and FFT convolution, and its mode.

``scipy.stats.gaussian_kde`` evaluated on a 1e5-point grid costs O(n * grid) (over a minute
for 10 000 draws); linear binning onto a regular grid followed by one FFT convolution with the
Gaussian kernel costs O(n + G log G) and gives the same density up to the binning error
(< grid step).  The bandwidth is Scott's rule, ``sd * n**(-1/5)``, scipy's default.
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
    if bw is None:
        bw = sd * n ** (-0.2)
    if not bw > 0:  # all draws equal
        return np.array([x[0]]), np.array([1.0])
    lo, hi = x.min() - 4 * bw, x.max() + 4 * bw
    step = (hi - lo) / (grid_size - 1)
    grid = lo + step * np.arange(grid_size)
    # linear binning: split each draw between its two neighbouring grid points
    pos = (x - lo) / step
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
    dens /= dens.sum() * step
    return grid, dens


def kde_mode(x: np.ndarray, grid_size: int = 4096) -> float:
    """Mode of the Gaussian KDE of ``x`` (the seed's p_mode estimator, seed 003 Alg. 1 l. 19)."""
    grid, dens = kde_grid(x, grid_size)
    return float(grid[int(np.argmax(dens))])
