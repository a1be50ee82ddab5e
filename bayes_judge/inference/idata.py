"""The one InferenceData builder: every fit carries the same attributes.

``attrs``: ``task`` (win-rate, ranking, leaderboard), ``model`` (the registered model or the
estimator's name), ``sampler`` (nutpie, nutpie (fast path), pymc, numpyro, or ``none`` for
closed forms and independent draws), ``seed``, ``data_hash`` (SHA-256 of the observed and
constant data), ``priors`` (JSON of the prior distributions, ``{}`` when there are none) and
``bayes_judge_version``, plus what the task adds.  Summaries, the report and saved runs read
these names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import arviz as az
import numpy as np

from ..generative.priors import Priors, priors_to_json

__all__ = ["build_idata", "data_hash", "ATTRS"]

ATTRS = ("task", "model", "sampler", "seed", "data_hash", "priors", "bayes_judge_version")


def data_hash(idata: az.InferenceData) -> str:
    """SHA-256 of the observed data (and constant data) of a fit: equal for fits of the same data."""
    h = hashlib.sha256()
    for group in ("observed_data", "constant_data"):
        if not hasattr(idata, group):
            continue
        ds = getattr(idata, group)
        for name in sorted(ds.data_vars):
            if group == "constant_data" and name.startswith(("alpha_", "beta_", "bwrs_weight")):
                continue  # prior parameters and derived weights are options, not data
            arr = np.ascontiguousarray(ds[name].to_numpy())
            h.update(name.encode())
            h.update(str(arr.dtype).encode() + str(arr.shape).encode())
            h.update(arr.tobytes())
    return h.hexdigest()

def build_idata(
    *,
    task: str,
    model: str,
    sampler: str,
    seed: int,
    posterior: Mapping[str, np.ndarray],
    coords: Mapping[str, Any],
    dims: Mapping[str, list[str]],
    sample_stats: Mapping[str, np.ndarray] | None = None,
    log_likelihood: Mapping[str, np.ndarray] | None = None,
    observed_data: Mapping[str, np.ndarray] | None = None,
    constant_data: Mapping[str, np.ndarray] | None = None,
    priors: Priors | None = None,
    attrs: Mapping[str, Any] | None = None,
) -> az.InferenceData:
    """ArviZ InferenceData of a fit, built by ``az.from_dict``, with the package's attributes."""
    from .._version import __version__

    used = {d for k, v in dims.items() if k in posterior or k in (log_likelihood or {})
            or k in (observed_data or {}) or k in (constant_data or {}) for d in v}
    all_attrs = {
        "task": task,
        "model": model,
        "sampler": sampler,
        "seed": int(seed),
        "priors": priors_to_json(priors) if priors is not None else "{}",
        "bayes_judge_version": __version__,
        **dict(attrs or {}),
    }
    idata = az.from_dict(
        posterior=dict(posterior),
        sample_stats=dict(sample_stats) if sample_stats else None,
        log_likelihood=dict(log_likelihood) if log_likelihood else None,
        observed_data=dict(observed_data) if observed_data else None,
        constant_data=dict(constant_data) if constant_data else None,
        coords={k: v for k, v in coords.items() if k in used},
        dims={k: v for k, v in dims.items()},
        attrs=all_attrs,
    )
    idata.attrs["data_hash"] = data_hash(idata)
    return idata
