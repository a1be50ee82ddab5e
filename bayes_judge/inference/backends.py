"""Run NUTS on either backend and hand back plain arrays of draws.

NumPyro: one ``MCMC`` object is kept per (model, data shapes, chains, draws, tune) and run with
``jit_model_args=True``, and data are padded to fixed bucket sizes so that refits have the same
shapes.  Measured here, this does not yet avoid the compile: a second fit of same-shaped data
still takes ~12 s whether it draws 150 or 1000 per chain (``benchmarks/bench_dawid_skene.py``
with and without ``--quick``), so NumPyro re-traces inside ``MCMC.run``.  Its NUTS loop also
costs ~100 µs per leapfrog step on a CPU.  The ``nutpie`` backend
(:mod:`bayes_judge.annotation.ds_fast`) is the fast path: ~0.4 s per refit.

PyMC: ``pm.sample`` with PyMC's own NUTS; PyTensor caches its compiled C code on disk.

Both return the posterior draws grouped by chain and the sampler statistics ArviZ expects
(``diverging``, ``energy``, ``tree_depth`` / ``n_steps``, ``acceptance_rate``, ``lp``).
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["sample_numpyro", "sample_pymc", "clear_sampler_cache", "BACKENDS"]

BACKENDS = ("nutpie", "numpyro", "pymc")
_MCMC_CACHE: dict[tuple, Any] = {}


def clear_sampler_cache() -> None:
    """Forget the compiled NumPyro samplers kept for refits."""
    _MCMC_CACHE.clear()


def _shape_key(args: tuple) -> tuple:
    return tuple((np.shape(a), np.asarray(a).dtype.str) for a in args)


def sample_numpyro(
    model: Callable,
    model_args: tuple,
    *,
    init_values: dict[str, np.ndarray] | None = None,
    chains: int = 4,
    draws: int = 1000,
    tune: int = 1000,
    seed: int = 0,
    target_accept: float = 0.8,
    chain_method: str | None = None,
    unconstrained_init: dict[str, np.ndarray] | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Sample ``model(*model_args)`` with NumPyro NUTS.

    Parameters
    ----------
    model : callable
        A NumPyro model whose sample sites are all Beta-distributed in (0, 1).
    model_args : tuple of arrays
        Data, passed as traced arguments (``jit_model_args=True``; see the module note on
        what that does and does not save).
    init_values : dict, optional
        Starting point of every chain for sites in (0, 1) (Beta sites; mapped by logit), per site
        (shape of the site).  Starting every chain from the same point near the prior mean keeps
        chains out of the label-switched mode of Dawid-Skene (see ``DESIGN.md``).
    unconstrained_init : dict, optional
        Starting point of every chain in NumPyro's unconstrained space, for other sites.
        Sites named in neither start by NumPyro's default (uniform in (-2, 2)).
    chain_method : {"vectorized", "sequential", "parallel"}, optional
        Default: ``"parallel"`` when JAX sees at least ``chains`` CPU devices, else
        ``"vectorized"``.

    Returns
    -------
    posterior : dict of (chains, draws, ...) arrays
    stats : dict of (chains, draws) arrays
    """
    import jax
    import jax.numpy as jnp
    from numpyro.infer import MCMC, NUTS

    if chain_method is None:
        chain_method = "parallel" if jax.local_device_count() >= chains else "vectorized"
    key = (model, _shape_key(model_args), chains, draws, tune, target_accept, chain_method)
    mcmc = _MCMC_CACHE.get(key)
    if mcmc is None:
        kernel = NUTS(model, target_accept_prob=target_accept)
        mcmc = MCMC(
            kernel,
            num_warmup=tune,
            num_samples=draws,
            num_chains=chains,
            chain_method=chain_method,
            progress_bar=False,
            jit_model_args=True,
        )
        _MCMC_CACHE[key] = mcmc
    # Beta sites: unconstrained value = logit(x); same start for every chain.
    init_params = {
        k: jnp.broadcast_to(jnp.log(v) - jnp.log1p(-v), (chains, *np.shape(v)))
        for k, v in (init_values or {}).items()
    }
    init_params.update(
        {k: jnp.broadcast_to(jnp.asarray(v), (chains, *np.shape(v))) for k, v in (unconstrained_init or {}).items()}
    )
    args = tuple(jnp.asarray(a) for a in model_args)
    mcmc.run(
        jax.random.PRNGKey(seed),
        *args,
        init_params=init_params or None,
        extra_fields=("diverging", "energy", "num_steps", "accept_prob", "potential_energy"),
    )
    samples = {k: np.asarray(v) for k, v in mcmc.get_samples(group_by_chain=True).items()}
    extra = mcmc.get_extra_fields(group_by_chain=True)
    stats = {
        "diverging": np.asarray(extra["diverging"]),
        "energy": np.asarray(extra["energy"]),
        "n_steps": np.asarray(extra["num_steps"]),
        "acceptance_rate": np.asarray(extra["accept_prob"]),
        "lp": -np.asarray(extra["potential_energy"]),
    }
    return samples, stats


def sample_pymc(
    model,
    *,
    var_names: list[str],
    init_values: dict[str, np.ndarray] | None = None,
    chains: int = 4,
    draws: int = 1000,
    tune: int = 1000,
    seed: int = 0,
    target_accept: float = 0.8,
    cores: int | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Sample a PyMC model with PyMC's own NUTS; same return layout as :func:`sample_numpyro`."""
    import pymc as pm

    if cores is None:
        # forking a process that already runs JAX's thread pool is unsafe (CPython warns, JAX
        # may deadlock): sample chains in this process once JAX is loaded.
        cores = 1 if "jax" in sys.modules else min(chains, os.cpu_count() or 1)
    with model, warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*The number of samples is too small.*")
        idata = pm.sample(
            draws=draws,
            tune=tune,
            chains=chains,
            cores=cores,
            random_seed=seed,
            initvals=init_values,
            init="adapt_diag",  # no jitter: every chain starts at the prior mean (label-switch guard)
            target_accept=target_accept,
            progressbar=False,
            compute_convergence_checks=False,
            return_inferencedata=True,
        )
    post = {k: idata.posterior[k].to_numpy() for k in var_names}
    ss = idata.sample_stats
    stats = {
        "diverging": ss["diverging"].to_numpy(),
        "energy": ss["energy"].to_numpy(),
        "n_steps": ss["n_steps"].to_numpy(),
        "acceptance_rate": ss["acceptance_rate"].to_numpy(),
        "lp": ss["lp"].to_numpy(),
    }
    return post, stats
