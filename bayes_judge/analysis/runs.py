"""Saved runs: a fitted InferenceData as NetCDF plus a JSON manifest, so that reports and
comparisons can be made later from files alone.

A run is two files side by side: ``NAME.nc`` (ArviZ's NetCDF) and ``NAME.json`` (the manifest:
what was fitted, with which options and seed, on which data, by which package version).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import arviz as az
import numpy as np

from ..inference.idata import data_hash

__all__ = ["save_run", "load_run", "data_hash", "RUN_FORMAT"]

RUN_FORMAT = 1  # bump when the layout of a saved run changes incompatibly


def _paths(path: str | os.PathLike) -> tuple[Path, Path]:
    p = Path(path)
    stem = p.with_suffix("") if p.suffix in (".nc", ".json") else p
    # append, never replace, a suffix: "fit.seed1" must not become "fit.nc"
    return Path(f"{stem}.nc"), Path(f"{stem}.json")


def save_run(idata: az.InferenceData, path: str | os.PathLike) -> Path:
    """Write ``idata`` to ``PATH.nc`` and its manifest to ``PATH.json``.

    Parameters
    ----------
    idata : arviz.InferenceData
        A fit from :func:`bayes_judge.win_rate` or :func:`bayes_judge.rank` (``bayesian=True``);
        it must have a posterior.
    path : path
        Target without or with the ``.nc`` suffix; missing folders are created.

    Returns
    -------
    pathlib.Path of the ``.nc`` file.

    Raises
    ------
    ValueError
        ``idata`` has no posterior group.
    PermissionError / OSError
        The folder cannot be created or written (the message names it).

    Examples
    --------
    >>> import bayes_judge as bj                                              # doctest: +SKIP
    >>> path = bj.save_run(idata, "models/my_run")     # models/my_run.nc + models/my_run.json  # doctest: +SKIP
    """
    from .._version import __version__

    if not isinstance(idata, az.InferenceData) or not hasattr(idata, "posterior"):
        raise ValueError("save_run needs an InferenceData with a posterior group")
    nc, js = _paths(path)
    try:
        nc.parent.mkdir(parents=True, exist_ok=True)
        if not os.access(nc.parent, os.W_OK):
            raise PermissionError(f"cannot write a run into {nc.parent}: the folder is not writable")
    except OSError as err:
        raise type(err)(f"cannot write a run to {nc}: {err}") from err
    attrs = dict(idata.attrs) if idata.attrs else dict(idata.posterior.attrs)
    manifest = {
        "format": RUN_FORMAT,
        "bayes_judge_version": __version__,
        "model": attrs.get("method") or attrs.get("model"),
        "options": {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in attrs.items()
                    if isinstance(v, str | int | float | bool | list | np.ndarray)},
        "seed": attrs.get("seed"),
        "data_hash": data_hash(idata),
        "groups": list(idata.groups()),
        "posterior_vars": sorted(idata.posterior.data_vars),
        "shape": {"chains": int(idata.posterior.sizes["chain"]), "draws": int(idata.posterior.sizes["draw"])},
    }
    # netCDF has no boolean attribute: written as 0 / 1, the manifest keeps the bool (load_run restores it)
    bools = {k: v for k, v in (idata.attrs or {}).items() if isinstance(v, bool | np.bool_)}
    try:
        for k, v in bools.items():
            idata.attrs[k] = int(v)
        idata.to_netcdf(str(nc))
    finally:
        for k, v in bools.items():
            idata.attrs[k] = v
    js.write_text(json.dumps(manifest, indent=2, default=str))
    return nc


def load_run(path: str | os.PathLike) -> az.InferenceData:
    """Read a run written by :func:`save_run`; the manifest is in ``idata.attrs["manifest"]``.

    Raises
    ------
    FileNotFoundError
        Either file is missing.
    ValueError
        Either file is truncated or not a run (the message names it), the manifest's format is
        newer or older than this package reads, or the data hash does not match the stored data
        (the files were changed or mixed up).

    Examples
    --------
    >>> import bayes_judge as bj                                              # doctest: +SKIP
    >>> idata = bj.load_run("models/my_run")                                     # doctest: +SKIP
    >>> idata.attrs["method"]                                                    # doctest: +SKIP
    """
    nc, js = _paths(path)
    for f in (nc, js):
        if not f.is_file():
            raise FileNotFoundError(f"run file {f} not found (a run is NAME.nc plus NAME.json)")
    try:
        manifest = json.loads(js.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:  # JSONDecodeError is a ValueError
        raise ValueError(f"run manifest {js} is not valid JSON ({err}): the file is truncated or not a "
                         "bayes_judge run manifest") from err
    if not isinstance(manifest, dict):
        raise ValueError(f"run manifest {js} holds a {type(manifest).__name__}, not a bayes_judge run manifest")
    fmt = manifest.get("format")
    if fmt != RUN_FORMAT:
        raise ValueError(
            f"run {nc} has format {fmt!r} (written by bayes_judge "
            f"{manifest.get('bayes_judge_version', '?')}); this version reads format {RUN_FORMAT}"
        )
    # eager: a lazily opened file would stay open and block saving to the same path
    try:
        with az.rc_context({"data.load": "eager"}):
            idata = az.from_netcdf(str(nc))
    except (OSError, ValueError, KeyError) as err:  # h5py / netCDF4 on a truncated or foreign file
        raise ValueError(f"run file {nc} cannot be read as InferenceData ({type(err).__name__}: {err}): "
                         "the file is truncated or not a run saved by bj.save_run") from err
    if data_hash(idata) != manifest.get("data_hash"):
        raise ValueError(f"run {nc}: the stored data do not match the manifest's data_hash")
    # netCDF reads a one-element list attribute back as a scalar and a bool as 0 / 1: the manifest says which
    for k, v in (manifest.get("options") or {}).items():
        got = idata.attrs.get(k)
        if isinstance(v, bool) and not isinstance(got, bool):
            idata.attrs[k] = bool(got)
        elif isinstance(v, list) and got is not None and np.ndim(got) == 0:
            idata.attrs[k] = [got.item() if isinstance(got, np.generic) else got]
    idata.attrs["manifest"] = json.dumps(manifest)
    return idata
