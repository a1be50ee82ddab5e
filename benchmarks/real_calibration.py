"""Real-data calibration of win-rate estimators: do their 90% intervals cover a known truth?

Every later change to a win-rate estimator is measured against this benchmark.

Data.  The 7 LLMBar-family sets (``bj.load_dataset``): for every item two outputs, a human
label, and the verdicts of 8 (MT-Bench, LLMEval²) or 65 (LLMBar) LLM evaluators, each in both
presentation orders.  Two generators G0 / G1 are simulated from each set so that the true win
rate ``p`` of G0 is known exactly for every draw:

* protocol ``seed003`` (seed 003 §4.1, ``bj.assign_generators``): a uniformly random
  ``round(share * n)`` of the n items get their human-preferred output attributed to G0, the
  rest to G1; ``p = round(share * n) / n``.
* protocol ``length``: the same count ``n_G0 = round(share * n)`` of items give G0 the
  preferred output (so ``p`` is again exactly ``n_G0 / n``), but the items are drawn by
  weighted sampling without replacement (Efraimidis & Spirakis 2006: item i gets the key
  ``u_i ** (1 / w_i)``, ``u_i ~ U(0, 1)``, and the ``n_G0`` largest keys are taken) with weight
  ``w_i = tilt`` (``--length-tilt``, default 4) where the preferred output is strictly longer
  than the other (character length of the output text from ``bj.load_items``) and ``w_i = 1``
  otherwise.  G0 therefore holds the preferred-and-longer output more often than under
  ``seed003``, its outputs are longer on average, and a judge that favours long answers errs
  in G0's favour: judge errors now depend on which generator wrote what.

Labels.  For a label budget b > 0, ``max(2, round(b * n))`` items are drawn uniformly at random
(nested: the 5% items are among the 10% items, which are among the 30% ones); their human
labels are given to the estimators, every other label is hidden (the judgments' ``human``
column is emptied and the labels are passed as ``human=``).

Estimators (each a function ``(task) -> (estimate, low, high)`` for a 90% interval):

* label-free, run at budget 0 only (their answers do not depend on the budget): ``observed``
  (``bj.win_rate(method="observed")``, the judges' pooled share, seed 003 eq. 4), ``ds_none``
  (``method="dawid-skene", prior="none"``), ``onecoin_none`` and ``consensus_none`` (``ds_model="one-coin"``
  and ``"consensus"``, ``prior="none"``), ``transfer`` (``method="transfer"``, leave-one-set-out:
  the other six sets' own labelled tables weight and calibrate the judges' votes, no label of this
  set is used), and crowd-kit's ``ck_ds`` (DawidSkene),
  ``ck_onecoin`` (OneCoinDawidSkene), ``ck_glad`` (GLAD), ``ck_mace`` (MACE) and ``ck_mv``
  (MajorityVote): each (judge, presentation order) is a worker, ties are left out, every item
  is aggregated to G0 or G1 and ``p̂`` is the share of items aggregated to G0 (an item with
  aggregated probability exactly 1/2, or with no non-tie verdict, counts 1/2); they give no
  interval (NaN bounds).
* with labels, at budgets > 0: ``labels_only`` (Beta(1, 1) posterior mean, exact
  Clopper-Pearson interval), ``ppi`` (PPI, lam = 1) and ``ppi++`` (power-tuned lam), both from
  :mod:`bayes_judge.winrate.ppi` with the per-item prediction ``f_i`` = the share of item i's
  judge verdicts (all judges, both orders, ties 1/2) that prefer G0 and the unlabelled items'
  ``f`` as the unlabelled sample; ``ds_labels`` (``method="dawid-skene",
  prior="in-distribution"``); ``bwrs`` (``method="bwrs", prior="in-distribution"``: the
  median of its draws, the 90% HDI clipped to [0, 1], and the share of raw draws outside
  [0, 1] recorded).
* ``regression`` at budgets > 0 (``method="regression"`` with the labels; recorded as
  *unavailable* while ``bj.win_rate`` does not know the method), and at every budget
  ``default`` (``bj.win_rate(df, human=labels)`` with no method or prior, ``human=None`` at
  budget 0: whatever the package recommends).

Bayesian fits report the posterior mean and the 90% HDI of ``bj.win_rate_summary``; they use
``--chains`` 4, ``--draws`` 500, ``--tune`` 500 and the default backend.  Every interval is
clipped to [0, 1] before its width is taken (the truth lies in [0, 1], so coverage is
unchanged).  A failing call (ValueError or any other exception) is recorded with its message
as a failure; warnings are recorded with counts.  Wall time is measured per call (the first
Bayesian fit of a process includes compilation).

The costly estimators (MCMC fits and crowd-kit's GLAD and MACE, 5-20 s per call on the LLMBar
sets) run on the first ``--costly-reps`` draws of every cell only; the tables give the number
of draws behind each cell.

Seeding: every (set, protocol, share, rep) draws its assignment, labels and fit seeds from
``np.random.SeedSequence([seed, set, protocol, 1000 * share, rep])``, so the same flags give the
same numbers whatever ``--jobs`` is and whichever subset of the grid is run.

Usage::

    .venv/bin/python benchmarks/real_calibration.py                       # full grid (slow)
    .venv/bin/python benchmarks/real_calibration.py --reps 3 --out benchmarks/results/real_calibration_quick
    .venv/bin/python benchmarks/real_calibration.py --sets mtbench --shares 0.8 --budgets 0,0.3 \\
        --reps 2 --estimators observed,ppi,ppi++,labels_only
    .venv/bin/python benchmarks/real_calibration.py --render a.json b.json --out benchmarks/results/real_calibration

Writes ``<out>.json`` (every cell, every draw), ``<out>.md`` (tables) and ``<out>.png``
(coverage, error and width against the label budget).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import bayes_judge as bj  # noqa: E402
from bayes_judge.winrate.ppi import labels_only_interval, ppi_mean  # noqa: E402

ALPHA = 0.1
SETS = (
    "llmbar_natural",
    "llmbar_adversarial_gptinst",
    "llmbar_adversarial_gptout",
    "llmbar_adversarial_manual",
    "llmbar_adversarial_neighbor",
    "mtbench",
    "llmeval2",
)
SHORT = {
    "llmbar_natural": "natural",
    "llmbar_adversarial_gptinst": "adv-gptinst",
    "llmbar_adversarial_gptout": "adv-gptout",
    "llmbar_adversarial_manual": "adv-manual",
    "llmbar_adversarial_neighbor": "adv-neighbor",
    "mtbench": "mtbench",
    "llmeval2": "llmeval2",
}
SHARES = (0.5, 0.65, 0.8)
BUDGETS = (0.0, 0.05, 0.1, 0.3)
PROTOCOLS = ("seed003", "length")
G0, G1 = "G0", "G1"
DEFAULT_OUT = HERE / "results" / "real_calibration"


# --------------------------------------------------------------------------------------------
# tasks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FitSettings:
    """Sampler settings of the Bayesian fits."""

    chains: int = 4
    draws: int = 500
    tune: int = 500


@dataclass(frozen=True)
class Task:
    """One draw of one cell: what every estimator sees.

    Attributes
    ----------
    judgments : the generator-assigned judgments table (systems G0 / G1), ``human`` emptied
    items : item ids, the order of ``f`` and ``labelled``
    f : per-item share of judge verdicts preferring G0 (all judges, both orders, ties 1/2)
    labelled : bool mask over ``items``: the items whose human label is given
    y_labelled : their labels, 1 = a human prefers G0's output (same order as ``items[labelled]``)
    labels : the same labels as a ``human=`` table (item, a, b, human), None at budget 0
    p_true : the true win rate of G0 (known exactly by construction)
    seed : the seed for the estimators' own randomness
    extra : what an estimator wants recorded besides (estimate, low, high)
    """

    dataset: str
    protocol: str
    share: float
    budget: float
    rep: int
    judgments: pd.DataFrame
    items: np.ndarray
    f: np.ndarray
    labelled: np.ndarray
    y_labelled: np.ndarray
    labels: pd.DataFrame | None
    p_true: float
    seed: int
    fit: FitSettings = FitSettings()
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def n_labels(self) -> int:
        return int(self.labelled.sum())


@lru_cache(maxsize=8)
def _judgments(name: str) -> pd.DataFrame:
    return bj.load_dataset(name)


@lru_cache(maxsize=8)
def _items(name: str) -> pd.DataFrame:
    return bj.load_items(name)


def preferred_output(df: pd.DataFrame) -> pd.Series:
    """The human-preferred candidate (``output_1`` / ``output_2``) of every item of a raw set."""
    pref = np.where(df["human"].to_numpy() == "a", df["a"].to_numpy(), df["b"].to_numpy())
    per = pd.DataFrame({"item": df["item"].astype(str).to_numpy(), "pref": pref}).drop_duplicates()
    if per["item"].duplicated().any():
        raise ValueError(f"contradicting human labels for item(s) {per.loc[per['item'].duplicated(), 'item'].tolist()[:5]}")
    return per.set_index("item")["pref"]


def length_table(df: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Per item (in ``items`` order): the preferred candidate and whether it is strictly longer.

    Lengths are character lengths of ``output_1`` / ``output_2`` from ``bj.load_items``; the
    preferred candidate comes from the judgments' human labels and is checked against the
    items' ``human_label``.
    """
    it = items.assign(item=items["item"].astype(str)).set_index("item")
    pref = preferred_output(df)
    if set(pref.index) != set(it.index):
        raise ValueError("length protocol: the judgments and the items do not cover the same items")
    pref = pref.reindex(it.index)
    from_items = np.where(it["human_label"].to_numpy() == 1, "output_1", "output_2")
    if (pref.to_numpy() != from_items).any():
        raise ValueError("length protocol: the judgments' human labels disagree with load_items' human_label")
    len1 = it["output_1"].astype(str).str.len().to_numpy()
    len2 = it["output_2"].astype(str).str.len().to_numpy()
    pref_len = np.where(from_items == "output_1", len1, len2)
    other_len = np.where(from_items == "output_1", len2, len1)
    return pd.DataFrame(
        {"pref": pref.to_numpy(), "pref_len": pref_len, "other_len": other_len, "pref_longer": pref_len > other_len},
        index=it.index,
    )


def assign_by_length(
    df: pd.DataFrame, items: pd.DataFrame, *, share: float, seed: int, tilt: float = 4.0
) -> pd.DataFrame:
    """Protocol ``length``: G0 gets the preferred output of exactly ``round(share * n)`` items,
    favouring items where the preferred output is also the longer one.

    The items that give G0 their preferred output are drawn by weighted sampling without
    replacement (Efraimidis-Spirakis keys ``u ** (1 / w)``, the ``round(share * n)`` largest
    win) with ``w = tilt`` where the preferred output is strictly longer and ``w = 1`` elsewhere.
    ``tilt = 1`` is a uniform draw, the law of seed 003 §4.1.  The rest of the table is rewritten
    as ``bj.assign_generators`` does: candidate ids in ``a`` / ``b`` become G0 / G1 (kept in
    ``cand_a`` / ``cand_b``), ``winner`` and ``human`` keep their row orientation.

    Returns
    -------
    pandas.DataFrame with ``attrs["p_true"] = round(share * n) / n`` exactly.
    """
    if not (0.0 <= share <= 1.0):
        raise ValueError(f"share must lie in [0, 1], got {share!r}")
    if not (np.isfinite(tilt) and tilt > 0):
        raise ValueError(f"tilt must be a positive number, got {tilt!r}")
    lt = length_table(df, items)
    n = len(lt)
    n_g0 = int(round(share * n))
    rng = np.random.default_rng(seed)
    w = np.where(lt["pref_longer"].to_numpy(), float(tilt), 1.0)
    keys = rng.random(n) ** (1.0 / w)
    to_g0 = np.zeros(n, dtype=bool)
    to_g0[np.argsort(-keys, kind="stable")[:n_g0]] = True
    item = df["item"].astype(str)
    pref_of = item.map(lt["pref"]).to_numpy()
    flag = item.map(pd.Series(to_g0, index=lt.index)).to_numpy().astype(bool)
    a_is_g0 = (df["a"].to_numpy() == pref_of) == flag
    out = df.copy()
    out["cand_a"], out["cand_b"] = df["a"], df["b"]
    out["a"] = np.where(a_is_g0, G0, G1)
    out["b"] = np.where(a_is_g0, G1, G0)
    out.attrs["p_true"] = n_g0 / n
    return out


def assign(name: str, protocol: str, share: float, seed: int, tilt: float) -> pd.DataFrame:
    """The generator-assigned judgments table of one draw."""
    df = _judgments(name)
    if protocol == "seed003":
        return bj.assign_generators(df, share=share, seed=seed)
    if protocol == "length":
        return assign_by_length(df, _items(name), share=share, seed=seed, tilt=tilt)
    raise ValueError(f"unknown protocol {protocol!r}; expected one of {PROTOCOLS}")


def per_item(t: pd.DataFrame) -> pd.DataFrame:
    """Per item of an assigned table: f (judges' share for G0), y (1 = human prefers G0), and the
    row of the item that carries its label for a ``human=`` table."""
    w = t["winner"].to_numpy()
    a_g0 = t["a"].to_numpy() == G0
    score = np.where(w == "tie", 0.5, np.where((w == "a") == a_g0, 1.0, 0.0))
    h = t["human"].to_numpy()
    y = ((h == "a") == a_g0).astype(float)
    frame = pd.DataFrame({"item": t["item"].astype(str).to_numpy(), "score": score, "y": y})
    g = frame.groupby("item", sort=False)
    out = pd.DataFrame({"f": g["score"].mean(), "y": g["y"].first(), "y_n": g["y"].nunique()})
    if (out["y_n"] != 1).any():
        raise ValueError("contradicting human labels within an item")
    return out.drop(columns="y_n")


@dataclass(frozen=True)
class Unit:
    """One (set, protocol, share, rep): one generator assignment, all budgets."""

    dataset: str
    protocol: str
    share: float
    rep: int
    budgets: tuple[float, ...]
    estimators: tuple[str, ...]
    fit: FitSettings
    seed: int
    tilt: float
    costly_reps: int


def unit_seeds(u: Unit) -> dict[str, int]:
    ss = np.random.SeedSequence(
        [u.seed, SETS.index(u.dataset), PROTOCOLS.index(u.protocol), int(round(1000 * u.share)), u.rep]
    )
    s = ss.generate_state(3, dtype=np.uint32) % (2**31 - 1)
    return {"assign": int(s[0]), "labels": int(s[1]), "fit": int(s[2])}


def n_labels(budget: float, n: int) -> int:
    return 0 if budget <= 0 else max(2, int(round(budget * n)))


def build_tasks(u: Unit) -> tuple[list[Task], dict]:
    """The tasks of one unit (one per budget) and the unit's diagnostics."""
    seeds = unit_seeds(u)
    t = assign(u.dataset, u.protocol, u.share, seeds["assign"], u.tilt)
    pi = per_item(t)
    items = pi.index.to_numpy(dtype=object)
    p_true = float(t.attrs["p_true"])
    if abs(pi["y"].mean() - p_true) > 1e-12:
        raise AssertionError(f"{u}: the labels' mean {pi['y'].mean()} is not the assignment's p_true {p_true}")
    lt = length_table(_judgments(u.dataset), _items(u.dataset)).reindex(items)
    g0_pref = pi["y"].to_numpy() == 1
    longer = lt["pref_longer"].to_numpy()
    g0_longer = np.where(g0_pref, lt["pref_len"] > lt["other_len"], lt["other_len"] > lt["pref_len"])
    diag = {
        "dataset": u.dataset, "protocol": u.protocol, "share": u.share, "rep": u.rep, "n_items": len(items),
        "p_true": p_true, "mean_f": float(pi["f"].mean()),
        "share_g0_pref_and_longer": float((g0_pref & longer).mean()),
        "share_g0_longer": float(np.mean(g0_longer)),
        "seeds": seeds,
    }
    hidden = t.assign(human=None)
    first_row = t.drop_duplicates("item").assign(item=lambda d: d["item"].astype(str)).set_index("item")
    perm = np.random.default_rng(seeds["labels"]).permutation(len(items))
    tasks = []
    for b in u.budgets:
        m = n_labels(b, len(items))
        mask = np.zeros(len(items), dtype=bool)
        mask[perm[:m]] = True
        labels = None
        if m:
            lab = first_row.loc[items[mask], ["a", "b", "human"]]
            labels = lab.reset_index().rename(columns={"index": "item"})[["item", "a", "b", "human"]]
        tasks.append(
            Task(
                dataset=u.dataset, protocol=u.protocol, share=u.share, budget=b, rep=u.rep,
                judgments=hidden, items=items, f=pi["f"].to_numpy(), labelled=mask,
                y_labelled=pi["y"].to_numpy()[mask], labels=labels, p_true=p_true, seed=seeds["fit"],
                fit=u.fit,
            )
        )
    return tasks, diag


# --------------------------------------------------------------------------------------------
# estimators: (task) -> (estimate, low, high)
# --------------------------------------------------------------------------------------------

Result = tuple[float, float, float]


class Unavailable(Exception):
    """The estimator does not exist in this version of the package."""


def _fit_kw(task: Task) -> dict:
    return {"chains": task.fit.chains, "draws": task.fit.draws, "tune": task.fit.tune, "seed": task.seed}


def _summary(task: Task, idata) -> Result:
    s = bj.win_rate_summary(idata, hdi_prob=1 - ALPHA)
    row = s.iloc[0]
    if (str(row["system_a"]), str(row["system_b"])) != (G0, G1):
        raise AssertionError(f"unexpected pair orientation {row['system_a']} vs {row['system_b']}")
    task.extra["r_hat"] = float(row["r_hat"])
    return float(row["p_mean"]), float(row["hdi_low"]), float(row["hdi_high"])


def est_observed(task: Task) -> Result:
    return _summary(task, bj.win_rate(task.judgments, method="observed", **_fit_kw(task)))


def est_labels_only(task: Task) -> Result:
    r = labels_only_interval(task.y_labelled, alpha=ALPHA)
    return r.estimate, r.low, r.high


def _ppi(task: Task, lam) -> Result:
    r = ppi_mean(task.y_labelled, task.f[task.labelled], task.f[~task.labelled], alpha=ALPHA, lam=lam)
    task.extra.update(lam=r.lam, se=r.se, raw_low=r.low, raw_high=r.high)
    return r.estimate, r.low, r.high


def est_ppi(task: Task) -> Result:
    return _ppi(task, 1.0)


def est_ppipp(task: Task) -> Result:
    return _ppi(task, "tuned")


def est_ds_labels(task: Task) -> Result:
    idata = bj.win_rate(
        task.judgments, method="dawid-skene", prior="in-distribution", human=task.labels, **_fit_kw(task)
    )
    return _summary(task, idata)


def est_ds_none(task: Task) -> Result:
    return _summary(task, bj.win_rate(task.judgments, method="dawid-skene", prior="none", **_fit_kw(task)))


def est_hierarchical(task: Task) -> Result:
    return _summary(task, bj.win_rate(task.judgments, method="hierarchical", prior="none", **_fit_kw(task)))


@cache
def _source(name: str):
    """The labelled set ``name`` encoded once as a transfer source (its judges' votes and labels)."""
    return bj.transfer_sources({name: _judgments(name)})[0]


def est_transfer(task: Task) -> Result:
    """Leave-one-set-out: the other six labelled sets calibrate the judges; no label of this set."""
    sources = [_source(s) for s in SETS if s != task.dataset]
    return _summary(task, bj.win_rate(task.judgments, method="transfer", ood=sources, **_fit_kw(task)))


def est_onecoin_none(task: Task) -> Result:
    idata = bj.win_rate(task.judgments, method="dawid-skene", ds_model="one-coin", prior="none", **_fit_kw(task))
    return _summary(task, idata)


def est_consensus_none(task: Task) -> Result:
    idata = bj.win_rate(task.judgments, method="dawid-skene", ds_model="consensus", prior="none", **_fit_kw(task))
    return _summary(task, idata)


def est_bwrs(task: Task) -> Result:
    idata = bj.win_rate(task.judgments, method="bwrs", prior="in-distribution", human=task.labels, **_fit_kw(task))
    _, lo, hi = _summary(task, idata)
    p = idata.posterior["p"].to_numpy().ravel()
    task.extra.update(frac_outside_unit=float(np.mean((p < 0) | (p > 1))), raw_low=lo, raw_high=hi,
                      p_mean=float(p.mean()))
    return float(np.median(p)), lo, hi


def _unknown_method(e: Exception, method: str) -> bool:
    """Whether ``e`` is ``bj.win_rate``'s refusal of an unknown method name (not another error)."""
    msg = str(e).lower()
    return f"got {method!r}" in msg and ("must be one of" in msg or "unknown method" in msg)


def est_regression(task: Task) -> Result:
    kw = _fit_kw(task)
    try:
        idata = bj.win_rate(task.judgments, method="regression", human=task.labels, **kw)
        task.extra["call"] = "win_rate(df, method='regression', human=labels)"
    except ValueError as e:
        if _unknown_method(e, "regression"):
            raise Unavailable(str(e)) from e
        if task.labels is None or "prior='in-distribution'" not in str(e):
            raise
        # the method exists but, like the seed's estimators, reads human= only with this prior
        idata = bj.win_rate(task.judgments, method="regression", prior="in-distribution", human=task.labels, **kw)
        task.extra["call"] = "win_rate(df, method='regression', prior='in-distribution', human=labels)"
    return _summary(task, idata)


def est_default(task: Task) -> Result:
    idata = bj.win_rate(task.judgments, human=task.labels, **_fit_kw(task))
    task.extra["method"] = str(idata.attrs.get("method", "")) if hasattr(idata, "attrs") else ""
    task.extra["prior"] = str(idata.attrs.get("prior", "")) if hasattr(idata, "attrs") else ""
    return _summary(task, idata)


def crowd_frame(t: pd.DataFrame) -> pd.DataFrame:
    """crowd-kit's (task, worker, label) table: a worker per (judge, presentation order), ties left out."""
    w = t["winner"].to_numpy()
    a_g0 = t["a"].to_numpy() == G0
    label = np.where(w == "tie", None, np.where((w == "a") == a_g0, G0, G1))
    worker = t["judge"].astype(str).to_numpy() + np.where(a_g0, " [G0 in A]", " [G0 in B]")
    d = pd.DataFrame({"task": t["item"].astype(str).to_numpy(), "worker": worker, "label": label})
    return d[d["label"].notna()].reset_index(drop=True)


def _crowdkit(task: Task, make: Callable[[], object]) -> Result:
    d = crowd_frame(task.judgments)
    proba = make().fit_predict_proba(d)  # type: ignore[attr-defined]
    pg0 = proba[G0] if G0 in proba.columns else pd.Series(0.0, index=proba.index)
    pg0 = pg0.reindex(pd.Index(task.items, dtype=object))
    missing = int(pg0.isna().sum())
    vote = np.where(pg0 > 0.5, 1.0, np.where(pg0 < 0.5, 0.0, 0.5))  # NaN (no verdict) and 1/2 count 1/2
    task.extra.update(n_items_without_verdict=missing, n_aggregated_ties=int(np.sum(pg0.to_numpy() == 0.5)))
    return float(vote.mean()), math.nan, math.nan


def _ck(cls_name: str, **kw) -> Callable[[Task], Result]:
    def run(task: Task) -> Result:
        import crowdkit.aggregation as ck

        return _crowdkit(task, lambda: getattr(ck, cls_name)(**kw))

    run.__name__ = f"est_ck_{cls_name}"
    return run


@dataclass(frozen=True)
class Estimator:
    name: str
    fn: Callable[[Task], Result]
    budgets: str  # "zero" (label-free), "positive" (needs labels) or "all"
    costly: bool
    what: str

    def runs_at(self, budget: float) -> bool:
        return {"zero": budget == 0, "positive": budget > 0, "all": True}[self.budgets]


ESTIMATORS: dict[str, Estimator] = {
    e.name: e
    for e in (
        Estimator("observed", est_observed, "zero", False, "bj.win_rate(method='observed'): the judges' pooled share k"),
        Estimator("labels_only", est_labels_only, "positive", False, "labels alone: Beta(1,1) mean, Clopper-Pearson"),
        Estimator("ppi", est_ppi, "positive", False, "PPI (lam = 1), f = judges' share for G0"),
        Estimator("ppi++", est_ppipp, "positive", False, "PPI++ (power-tuned lam in [0, 1])"),
        Estimator("ds_labels", est_ds_labels, "positive", True, "dawid-skene, prior='in-distribution'"),
        Estimator("ds_none", est_ds_none, "zero", True, "dawid-skene, prior='none'"),
        Estimator("hierarchical", est_hierarchical, "zero", True,
                  "method='hierarchical' (judges' accuracies partially pooled), no labels"),
        Estimator("transfer", est_transfer, "zero", False,
                  "method='transfer', leave-one-set-out: the other 6 sets' labels calibrate the judges"),
        Estimator("onecoin_none", est_onecoin_none, "zero", True, "dawid-skene one-coin, prior='none'"),
        Estimator("consensus_none", est_consensus_none, "zero", True,
                  "dawid-skene consensus model (judges' errors shared through their consensus), prior='none'"),
        Estimator("bwrs", est_bwrs, "positive", False, "bwrs, prior='in-distribution': median, HDI clipped"),
        Estimator("regression", est_regression, "positive", True, "method='regression' with the labels"),
        Estimator("default", est_default, "all", True, "bj.win_rate(df, human=labels), no method / prior"),
        Estimator("ck_ds", _ck("DawidSkene"), "zero", False, "crowd-kit DawidSkene (no interval)"),
        Estimator("ck_onecoin", _ck("OneCoinDawidSkene"), "zero", False, "crowd-kit OneCoinDawidSkene (no interval)"),
        Estimator("ck_glad", _ck("GLAD"), "zero", True, "crowd-kit GLAD (no interval)"),
        Estimator("ck_mace", _ck("MACE"), "zero", True, "crowd-kit MACE (no interval)"),
        Estimator("ck_mv", _ck("MajorityVote"), "zero", False, "crowd-kit MajorityVote (no interval)"),
    )
}


def run_estimator(est: Estimator, task: Task) -> dict:
    """Run one estimator on one task; failures and warnings are recorded, never raised."""
    task.extra.clear()
    rec: dict = {
        "dataset": task.dataset, "protocol": task.protocol, "share": task.share, "budget": task.budget,
        "rep": task.rep, "n_items": len(task.items), "n_labels": task.n_labels, "p_true": task.p_true,
        "estimator": est.name, "status": "ok", "error": None,
        "estimate": math.nan, "low": math.nan, "high": math.nan,
    }
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est_, lo, hi = est.fn(task)
            rec["estimate"], rec["low"], rec["high"] = float(est_), float(lo), float(hi)
        except Unavailable as e:
            rec["status"], rec["error"] = "unavailable", str(e)
        except Exception as e:  # noqa: BLE001 - every failure is recorded with its message
            rec["status"], rec["error"] = "failed", f"{type(e).__name__}: {e}"
            rec["traceback"] = traceback.format_exc(limit=4)
    rec["wall_s"] = time.perf_counter() - t0
    counts: dict[str, int] = {}
    for w in caught:
        key = f"{w.category.__name__}: {str(w.message)[:160]}"
        counts[key] = counts.get(key, 0) + 1
    rec["warnings"] = counts
    rec["extra"] = dict(task.extra)
    if rec["status"] == "ok":
        lo_c = min(max(rec["low"], 0.0), 1.0) if np.isfinite(rec["low"]) else math.nan
        hi_c = min(max(rec["high"], 0.0), 1.0) if np.isfinite(rec["high"]) else math.nan
        rec["low"], rec["high"] = lo_c, hi_c
        rec["abs_err"] = abs(rec["estimate"] - task.p_true)
        has = np.isfinite(lo_c) and np.isfinite(hi_c)
        rec["covered"] = bool(lo_c <= task.p_true <= hi_c) if has else None
        rec["width"] = hi_c - lo_c if has else math.nan
    else:
        rec["abs_err"], rec["covered"], rec["width"] = math.nan, None, math.nan
    return rec


def run_unit(u: Unit) -> tuple[list[dict], dict]:
    """Every estimator at every budget of one unit."""
    t0 = time.perf_counter()
    tasks, diag = build_tasks(u)
    records = []
    for task in tasks:
        for name in u.estimators:
            est = ESTIMATORS[name]
            if not est.runs_at(task.budget) or (est.costly and u.rep >= u.costly_reps):
                continue
            records.append(run_estimator(est, task))
    diag["wall_s"] = time.perf_counter() - t0
    return records, diag


def _worker_init() -> None:
    warnings.simplefilter("ignore")  # outside the recorded estimator calls


def run_grid(
    *,
    sets: Sequence[str] = SETS,
    protocols: Sequence[str] = PROTOCOLS,
    shares: Sequence[float] = SHARES,
    budgets: Sequence[float] = BUDGETS,
    reps: int = 20,
    rep_start: int = 0,
    costly_reps: int | None = None,
    estimators: Sequence[str] = tuple(ESTIMATORS),
    fit: FitSettings = FitSettings(),
    seed: int = 0,
    tilt: float = 4.0,
    jobs: int = 1,
    progress: bool = False,
    checkpoint: Path | None = None,
) -> tuple[list[dict], list[dict]]:
    """Run the grid (draws ``rep_start .. reps - 1`` of every cell; the costly estimators on draws
    ``< costly_reps``); returns (records, unit diagnostics), both in grid order.

    Units run draw by draw (all protocols, shares and sets of draw 0 first), so that a run
    stopped early covers every set.  With ``checkpoint``, every finished unit is appended to that
    JSON-lines file (``--render`` reads it).
    """
    for s in sets:
        if s not in SETS:
            raise ValueError(f"unknown set {s!r}; expected some of {SETS}")
    for p in protocols:
        if p not in PROTOCOLS:
            raise ValueError(f"unknown protocol {p!r}; expected some of {PROTOCOLS}")
    for e in estimators:
        if e not in ESTIMATORS:
            raise ValueError(f"unknown estimator {e!r}; expected some of {list(ESTIMATORS)}")
    for b in budgets:
        if not 0 <= b < 1:
            raise ValueError(f"label budgets are fractions in [0, 1), got {b!r}")
    cr = reps if costly_reps is None else costly_reps
    units = [
        Unit(d, p, float(s), r, tuple(float(b) for b in budgets), tuple(estimators), fit, seed, tilt, cr)
        for r in range(rep_start, reps) for p in protocols for s in shares for d in sets
    ]
    out: list[tuple[list[dict], dict]] = []
    t0 = time.perf_counter()

    def report(i: int, res: tuple[list[dict], dict]) -> None:
        if checkpoint is not None:
            with checkpoint.open("a") as fh:
                fh.write(json.dumps(_jsonable({"records": res[0], "unit": res[1]})) + "\n")
        if progress:
            d = res[1]
            fails = sum(r["status"] == "failed" for r in res[0])
            print(
                f"[{i + 1}/{len(units)} {time.perf_counter() - t0:7.0f}s] {d['protocol']} {d['dataset']} "
                f"share={d['share']} rep={d['rep']}: {len(res[0])} calls, {fails} failed, {d['wall_s']:.1f}s",
                file=sys.stderr, flush=True,
            )

    if jobs <= 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for i, u in enumerate(units):
                res = run_unit(u)
                report(i, res)
                out.append(res)
    else:
        import multiprocessing as mp

        with ProcessPoolExecutor(max_workers=jobs, mp_context=mp.get_context("spawn"), initializer=_worker_init) as ex:
            for i, res in enumerate(ex.map(run_unit, units)):
                report(i, res)
                out.append(res)
    records = [r for recs, _ in out for r in recs]
    diags = [d for _, d in out]
    return records, diags


# --------------------------------------------------------------------------------------------
# aggregation and report
# --------------------------------------------------------------------------------------------

KEYS = ["protocol", "estimator", "budget"]


def summarize(records: list[dict], by_set: bool = False, by: str | None = None) -> pd.DataFrame:
    """One row per protocol × estimator × budget (× set): n, failures, error, coverage, width, time."""
    if not records:
        return pd.DataFrame()
    df = pd.DataFrame(records)
    extra_key = ["dataset"] if by_set else ([by] if by else [])
    keys = KEYS + extra_key
    ok = df["status"] == "ok"
    df["ok"] = ok
    df["failed"] = df["status"] == "failed"
    df["unavailable"] = df["status"] == "unavailable"
    df["cov"] = df["covered"].map(lambda c: np.nan if c is None else float(c))
    g = df.groupby(keys, sort=False)
    out = pd.DataFrame(
        {
            "n": g["ok"].sum().astype(int),
            "n_failed": g["failed"].sum().astype(int),
            "n_unavailable": g["unavailable"].sum().astype(int),
            "abs_err": g["abs_err"].mean(),
            "coverage": g["cov"].mean(),
            "n_intervals": g["cov"].count().astype(int),
            "width": g["width"].mean(),
            "wall_s": g["wall_s"].mean(),
            "mean_estimate": g["estimate"].mean(),
            "mean_p_true": g["p_true"].mean(),
        }
    ).reset_index()
    order = {e: i for i, e in enumerate(ESTIMATORS)}
    out["_o"] = out["estimator"].map(order)
    return out.sort_values(["protocol", "_o", "budget"] + extra_key, kind="stable").drop(columns="_o").reset_index(drop=True)


def _pct(x: float) -> str:
    return "–" if not np.isfinite(x) else f"{100 * x:.0f}%"


def _num(x: float, nd: int = 3) -> str:
    return "–" if not np.isfinite(x) else f"{x:.{nd}f}"


def _budget_label(b: float) -> str:
    return "0" if b == 0 else f"{100 * b:g}%"


def _cell_status(r: pd.Series) -> str:
    if r["n"] == 0 and r["n_unavailable"] > 0:
        return "unavailable"
    if r["n"] == 0 and r["n_failed"] > 0:
        return f"failed ×{int(r['n_failed'])}"
    return ""


def pivot_table(s: pd.DataFrame, metric: str, fmt: Callable[[float], str], *, with_n: bool = False) -> str:
    """Markdown: rows estimator, columns budget."""
    budgets = sorted(s["budget"].unique())
    lines = ["| estimator | " + " | ".join(_budget_label(b) for b in budgets) + " |",
             "|---|" + "---:|" * len(budgets)]
    for est in [e for e in ESTIMATORS if e in set(s["estimator"])]:
        cells = []
        for b in budgets:
            r = s[(s["estimator"] == est) & (s["budget"] == b)]
            if r.empty:
                cells.append("")
                continue
            r0 = r.iloc[0]
            st = _cell_status(r0)
            if st:
                cells.append(st)
                continue
            txt = fmt(float(r0[metric]))
            if with_n:
                txt += f" ({int(r0['n'])}"
                txt += f", {int(r0['n_failed'])} failed)" if r0["n_failed"] else ")"
            cells.append(txt)
        lines.append(f"| {est} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def per_set_table(s: pd.DataFrame, metric: str, fmt: Callable[[float], str], col: str = "dataset") -> str:
    """Markdown: rows estimator × budget, columns sets (or the values of ``col``)."""
    if col == "dataset":
        sets = [d for d in SETS if d in set(s["dataset"])]
        heads = [SHORT[d] for d in sets]
    else:
        sets = sorted(set(s[col]))
        heads = [f"{col} {v:g}" if isinstance(v, float) else f"{col} {v}" for v in sets]
    lines = ["| estimator | budget | " + " | ".join(heads) + " |",
             "|---|---:|" + "---:|" * len(sets)]
    for est in [e for e in ESTIMATORS if e in set(s["estimator"])]:
        for b in sorted(s.loc[s["estimator"] == est, "budget"].unique()):
            cells = []
            for d in sets:
                r = s[(s["estimator"] == est) & (s["budget"] == b) & (s[col] == d)]
                if r.empty:
                    cells.append("")
                    continue
                r0 = r.iloc[0]
                st = _cell_status(r0)
                cells.append(st if st else fmt(float(r0[metric])) + (f" ({int(r0['n_failed'])}✗)" if r0["n_failed"] else ""))
            if all(c in ("", "–") for c in cells):  # not run, or no interval (crowd-kit)
                continue
            lines.append(f"| {est} | {_budget_label(b)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def failure_table(records: list[dict]) -> str:
    df = pd.DataFrame(records)
    bad = df[df["status"] != "ok"]
    if bad.empty:
        return "No failures."
    bad = bad.assign(message=bad["error"].astype(str).str.slice(0, 180))
    g = bad.groupby(["protocol", "estimator", "status", "message"], sort=False)
    t = g.agg(n=("rep", "size"), budgets=("budget", lambda x: ", ".join(_budget_label(b) for b in sorted(set(x)))),
              sets=("dataset", lambda x: ", ".join(SHORT[d] for d in SETS if d in set(x)))).reset_index()
    t = t.sort_values("n", ascending=False)
    lines = ["| protocol | estimator | status | n | budgets | sets | message |", "|---|---|---|---:|---|---|---|"]
    for _, r in t.head(40).iterrows():
        msg = str(r["message"]).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r['protocol']} | {r['estimator']} | {r['status']} | {r['n']} | {r['budgets']} | {r['sets']} | {msg} |")
    if len(t) > 40:
        lines.append(f"\n({len(t) - 40} more distinct messages in the JSON)")
    return "\n".join(lines)


def warning_table(records: list[dict]) -> str:
    counts: dict[tuple[str, str], int] = {}
    calls: dict[tuple[str, str], int] = {}
    for r in records:
        for k, v in r.get("warnings", {}).items():
            key = (r["estimator"], k.split(":")[0])
            counts[key] = counts.get(key, 0) + v
            calls[key] = calls.get(key, 0) + 1
    if not counts:
        return "No warnings."
    lines = ["| estimator | warning | calls with it | total |", "|---|---|---:|---:|"]
    for (e, w), v in sorted(counts.items(), key=lambda kv: -calls[kv[0]]):
        lines.append(f"| {e} | {w} | {calls[(e, w)]} | {v} |")
    return "\n".join(lines)


def protocol_table(diags: list[dict]) -> str:
    d = pd.DataFrame(diags)
    if d.empty:
        return ""
    g = d.groupby(["protocol", "dataset"], sort=False).agg(
        n_items=("n_items", "first"), draws=("rep", "size"), p_true=("p_true", "mean"), mean_f=("mean_f", "mean"),
        g0_pref_longer=("share_g0_pref_and_longer", "mean"), g0_longer=("share_g0_longer", "mean"),
    ).reset_index()
    lines = ["| protocol | set | items | units | mean p | mean f (judges' share for G0) | G0 holds preferred & longer | G0's output longer |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for _, r in g.iterrows():
        lines.append(
            f"| {r['protocol']} | {SHORT[r['dataset']]} | {r['n_items']} | {r['draws']} | {r['p_true']:.3f} | "
            f"{r['mean_f']:.3f} | {r['g0_pref_longer']:.3f} | {r['g0_longer']:.3f} |"
        )
    return "\n".join(lines)


def main_tables(agg: pd.DataFrame, protocol: str) -> str:
    s = agg[agg["protocol"] == protocol]
    return "\n\n".join(
        [
            "**Coverage of the 90% interval** (draws with an interval; in brackets: draws, failures)\n\n"
            + pivot_table(s, "coverage", _pct, with_n=True),
            "**Mean |p̂ − p|**\n\n" + pivot_table(s, "abs_err", _num),
            "**Mean width of the 90% interval** (clipped to [0, 1])\n\n" + pivot_table(s, "width", _num),
            "**Mean wall time per call (s)**\n\n" + pivot_table(s, "wall_s", lambda x: _num(x, 2)),
        ]
    )


def write_markdown(path: Path, payload: dict, agg: pd.DataFrame, agg_set: pd.DataFrame) -> None:
    st = payload["settings"]
    records = payload["records"]
    parts = [
        "# Real-data calibration of win-rate estimators",
        "",
        f"Produced by `{payload['command']}`",
        "",
        f"{payload['created']}; git {payload['environment'].get('git', '?')}; "
        f"{payload['environment']['platform']}, Python {payload['environment']['python']}; "
        f"wall time {payload.get('wall_s', float('nan')):.0f} s"
        + (f" summed over {len(str(st.get('jobs')).split('+'))} runs (jobs {st.get('jobs')})" if "+" in str(st.get("jobs", ""))
           else f" with {st.get('jobs', 1)} job(s)") + ".",
        "",
        f"Grid: sets {', '.join(SHORT[s] for s in st['sets'])}; G0 shares {st['shares']}; label budgets "
        f"{[_budget_label(b) for b in st['budgets']]} of the items (at least 2 labels); {st['reps']} draws per "
        f"cell, the costly estimators ({', '.join(e for e in ESTIMATORS if ESTIMATORS[e].costly)}) on the first "
        f"{st['costly_reps']}; protocols {st['protocols']} (length tilt {st['tilt']}); Bayesian fits "
        f"{st['fit']['chains']} chains × ({st['fit']['tune']} tune + {st['fit']['draws']} draws), default backend; seed {st['seed']}.",
        "",
        "How it works: see the docstring of `benchmarks/real_calibration.py`.  In short: the true win rate p",
        "of G0 is known exactly for every draw (G0 is given the human-preferred output of exactly",
        "round(share · n) items); an estimator sees the judges' verdicts on all items and the human labels",
        "of a random subset of the items (the budget); a 90% interval covers when it contains p.  Label-free",
        "estimators run at budget 0 only: their answer does not depend on the budget.  Coverage is over the",
        "draws that returned an interval; failures (a raised error, e.g. all labels of one class) are",
        "counted apart and listed below.  Protocol `length`: the items whose preferred output goes to G0",
        "are drawn with weight `tilt` where the preferred output is also the longer one (see the table at",
        "the end for what that does to each set).",
        "",
        "## Estimators",
        "",
        "| name | what | budgets | costly |",
        "|---|---|---|---|",
    ]
    for e in ESTIMATORS.values():
        if e.name in st["estimators"]:
            parts.append(f"| {e.name} | {e.what} | {e.budgets} | {'yes' if e.costly else ''} |")
    for protocol in st["protocols"]:
        parts += ["", f"## Protocol `{protocol}`: all {len(st['sets'])} sets pooled", "", main_tables(agg, protocol)]
    agg_share = summarize(records, by="share")
    for protocol in st["protocols"]:
        s = agg_share[agg_share["protocol"] == protocol]
        parts += [
            "", f"## Protocol `{protocol}`: by true win rate (all sets pooled)", "",
            "The cells of the costly estimators hold fewer draws; compare them at equal shares.", "",
            "**Coverage of the 90% interval** (n✗: failed draws)", "",
            per_set_table(s, "coverage", _pct, col="share"), "",
            "**Mean |p̂ − p|**", "", per_set_table(s, "abs_err", _num, col="share"), "",
            "**Mean p̂** (truth: the share; the exact p per set is round(share · n) / n)", "",
            per_set_table(s, "mean_estimate", _num, col="share"),
        ]
    for protocol in st["protocols"]:
        s = agg_set[agg_set["protocol"] == protocol]
        parts += [
            "", f"## Protocol `{protocol}`: per set", "",
            "**Coverage of the 90% interval**", "", per_set_table(s, "coverage", _pct), "",
            "**Mean |p̂ − p|**", "", per_set_table(s, "abs_err", _num), "",
            "**Mean width**", "", per_set_table(s, "width", _num),
        ]
    parts += ["", "## Failures and unavailable estimators", "", failure_table(records),
              "", "## Warnings raised inside the calls", "", warning_table(records),
              "", "## What the protocols do to each set", "",
              "Means over the draws: p (truth), the judges' mean share for G0 (what `observed` and f see), the share",
              "of items where G0 holds the human-preferred output and it is the strictly longer one, and the share",
              "of items where G0's output is the strictly longer one.", "",
              protocol_table(payload["units"]), ""]
    path.write_text("\n".join(parts))


def write_plot(path: Path, agg: pd.DataFrame, protocols: Sequence[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    protocols = [p for p in protocols if p in set(agg["protocol"])]
    fig, axes = plt.subplots(3, len(protocols), figsize=(6.5 * len(protocols), 11), squeeze=False, sharex=True)
    palette = [plt.get_cmap("tab10")(i) for i in range(10)] + [plt.get_cmap("tab20")(2 * i + 1) for i in range(10)]
    names = [e for e in ESTIMATORS if e in set(agg["estimator"])]
    for j, protocol in enumerate(protocols):
        s = agg[(agg["protocol"] == protocol) & (agg["n"] > 0)]
        for i, (metric, label) in enumerate(
            (("coverage", "coverage of the 90% interval"), ("abs_err", "mean |p̂ − p|"), ("width", "mean width (clipped)"))
        ):
            ax = axes[i, j]
            for k, est in enumerate(names):
                r = s[s["estimator"] == est].sort_values("budget")
                r = r[np.isfinite(r[metric].to_numpy(dtype=float))]
                if r.empty:
                    continue
                x = 100 * r["budget"].to_numpy()
                # "default" may be the very call of another row: dashed, so that both stay visible
                style = {"ls": "--", "marker": "x", "ms": 7, "lw": 1.0} if est == "default" else {"marker": "o", "ms": 4, "lw": 1.8}
                ax.plot(x, r[metric], color=palette[k % 20], label=est, **style)
            if metric == "coverage":
                ax.axhline(0.9, color="k", ls="--", lw=1)
                ax.set_ylim(-0.02, 1.02)
            ax.set_ylabel(label)
            if i == 0:
                ax.set_title(f"protocol {protocol} (all sets pooled)")
            if i == 2:
                ax.set_xlabel("label budget (% of items)")
            ax.grid(alpha=0.3)
    handles, labels = axes[1, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(7, len(labels)), fontsize=8)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def _from_json(x):
    """NaN back where the JSON has null in the numeric fields of a record."""
    for k in ("estimate", "low", "high", "abs_err", "width"):
        if x.get(k) is None:
            x[k] = math.nan
    return x


def load_run(path: Path) -> dict:
    """A run's JSON, or the checkpoint (``.partial.jsonl``) of a run that was stopped early."""
    if not path.name.endswith(".jsonl"):
        return json.loads(path.read_text())
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    head, body = lines[0], lines[1:]
    done = 1 + max((b["unit"]["rep"] for b in body), default=-1)  # draws begun; the last may be partial
    settings = {**head["settings"], "reps": done, "costly_reps": min(head["settings"]["costly_reps"], done)}
    return {**head, "settings": settings, "command": head["command"] + f"  (stopped after {len(body)} units)",
            "records": [r for b in body for r in b["records"]], "units": [b["unit"] for b in body],
            "wall_s": sum(b["unit"].get("wall_s", 0.0) for b in body)}


def merge_runs(loaded: list[dict]) -> tuple[list[dict], list[dict]]:
    """Records and unit diagnostics of several runs of one grid, each draw once.

    Runs with the same seed draw the same assignments and labels for the same (set, protocol,
    share, rep), so the records of e.g. a cheap-estimator run and a costly-estimator run join
    into one grid.  A record present in two runs is an error (the runs overlap).
    """
    seen: set[tuple] = set()
    records = []
    for d in loaded:
        for r in d["records"]:
            key = (r["protocol"], r["dataset"], r["share"], r["rep"], r["budget"], r["estimator"])
            if key in seen:
                raise SystemExit(f"--render: record {key} appears in more than one run")
            seen.add(key)
            records.append(_from_json(r))
    units: dict[tuple, dict] = {}
    for d in loaded:
        for u in d["units"]:
            key = (u["protocol"], u["dataset"], u["share"], u["rep"])
            if key in units and units[key]["seeds"] != u["seeds"]:
                raise SystemExit(f"--render: unit {key} was drawn with different seeds in two runs")
            units.setdefault(key, u)
    return records, list(units.values())


def environment() -> dict:
    try:
        git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, timeout=10).stdout.strip()
        git += " (uncommitted changes)" if dirty else ""
    except Exception:  # noqa: BLE001
        git = "?"
    return {"platform": platform.platform(), "python": platform.python_version(), "git": git,
            "bayes_judge": bj.__version__, "cpus": os.cpu_count()}


def write_outputs(out: Path, payload: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``<out>.json``, ``<out>.md``, ``<out>.png`` from the records; returns the pooled and per-set tables."""
    out.parent.mkdir(parents=True, exist_ok=True)
    agg = summarize(payload["records"])
    agg_set = summarize(payload["records"], by_set=True)
    payload = {**payload, "cells": agg.to_dict("records"), "cells_by_set": agg_set.to_dict("records")}
    out.with_suffix(".json").write_text(json.dumps(_jsonable(payload), indent=None, separators=(",", ":")))
    write_markdown(out.with_suffix(".md"), payload, agg, agg_set)
    if not agg.empty:
        write_plot(out.with_suffix(".png"), agg, payload["settings"]["protocols"])
    return agg, agg_set


def _floats(s: str) -> list[float]:
    return [float(x) for x in s.split(",") if x.strip()]


def _names(s: str, universe: Sequence[str], what: str) -> list[str]:
    if s == "all":
        return list(universe)
    names = [x.strip() for x in s.split(",") if x.strip()]
    bad = [x for x in names if x not in universe]
    if bad:
        raise SystemExit(f"unknown {what} {bad}; choose from {list(universe)}")
    return names


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="all", help=f"comma-separated, or 'all': {', '.join(SETS)}")
    ap.add_argument("--shares", default=",".join(map(str, SHARES)), help="true win rates of G0 (default 0.5,0.65,0.8)")
    ap.add_argument("--budgets", default=",".join(map(str, BUDGETS)), help="label budgets as fractions (default 0,0.05,0.1,0.3)")
    ap.add_argument("--reps", type=int, default=20, help="draws per cell (default 20)")
    ap.add_argument("--rep-start", type=int, default=0, help="first draw to run (to extend an earlier run; join with --render)")
    ap.add_argument("--costly-reps", type=int, default=None, help="draws per cell for the costly estimators (default: --reps)")
    ap.add_argument("--protocols", default="all", help="seed003, length or all")
    ap.add_argument("--estimators", default="all", help=f"comma-separated, 'all', 'cheap' or 'costly': {', '.join(ESTIMATORS)}")
    ap.add_argument("--chains", type=int, default=4)
    ap.add_argument("--draws", type=int, default=500)
    ap.add_argument("--tune", type=int, default=500)
    ap.add_argument("--length-tilt", type=float, default=4.0, help="weight of preferred-and-longer items (protocol length)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="output path without suffix")
    ap.add_argument("--render", nargs="+", metavar="JSON", help="re-render the report from the records of these JSON files")
    args = ap.parse_args(argv)
    command = " ".join(shlex.quote(a) for a in [".venv/bin/python", "benchmarks/real_calibration.py", *(sys.argv[1:] if argv is None else argv)])
    out = Path(args.out)

    if args.render:
        loaded = [load_run(Path(p)) for p in args.render]
        records, units = merge_runs(loaded)
        settings = dict(loaded[0]["settings"])
        for d in loaded[1:]:
            for k in ("sets", "protocols", "estimators", "shares", "budgets"):
                settings[k] = list(dict.fromkeys([*settings[k], *d["settings"][k]]))
            if d["settings"]["fit"] != settings["fit"] or d["settings"]["seed"] != settings["seed"]:
                raise SystemExit("--render: the runs differ in their fit settings or seed; they do not describe one grid")
        settings["reps"] = max(d["settings"]["reps"] for d in loaded)
        costly = [min(d["settings"]["costly_reps"], d["settings"]["reps"]) for d in loaded
                  if any(ESTIMATORS[e].costly for e in d["settings"]["estimators"] if e in ESTIMATORS)]
        settings["costly_reps"] = max(costly) if costly else 0
        settings["jobs"] = "+".join(str(d["settings"].get("jobs", 1)) for d in loaded)
        payload = {"command": command + "   # from: " + "; ".join(d["command"] for d in loaded),
                   "created": time.strftime("%Y-%m-%d %H:%M:%S"), "environment": environment(), "settings": settings,
                   "wall_s": sum(d.get("wall_s", 0.0) for d in loaded), "records": records, "units": units}
    else:
        if args.estimators in ("cheap", "costly"):
            estimators = [e for e, v in ESTIMATORS.items() if v.costly == (args.estimators == "costly")]
        else:
            estimators = _names(args.estimators, list(ESTIMATORS), "estimator(s)")
        settings = {
            "sets": _names(args.sets, SETS, "set(s)"), "protocols": _names(args.protocols, PROTOCOLS, "protocol(s)"),
            "shares": _floats(args.shares), "budgets": _floats(args.budgets), "reps": args.reps,
            "rep_start": args.rep_start,
            "costly_reps": args.reps if args.costly_reps is None else min(args.costly_reps, args.reps),
            "estimators": estimators, "fit": {"chains": args.chains, "draws": args.draws, "tune": args.tune},
            "seed": args.seed, "tilt": args.length_tilt, "jobs": args.jobs, "alpha": ALPHA,
        }
        t0 = time.perf_counter()
        checkpoint = out.parent / (out.name + ".partial.jsonl")
        out.parent.mkdir(parents=True, exist_ok=True)
        checkpoint.write_text(json.dumps(_jsonable({"command": command, "created": time.strftime("%Y-%m-%d %H:%M:%S"),
                                                    "environment": environment(), "settings": settings})) + "\n")
        records, units = run_grid(
            sets=settings["sets"], protocols=settings["protocols"], shares=settings["shares"],
            budgets=settings["budgets"], reps=args.reps, rep_start=args.rep_start, costly_reps=settings["costly_reps"], estimators=estimators,
            fit=FitSettings(args.chains, args.draws, args.tune), seed=args.seed, tilt=args.length_tilt,
            jobs=args.jobs, progress=True, checkpoint=checkpoint,
        )
        payload = {"command": command, "created": time.strftime("%Y-%m-%d %H:%M:%S"), "environment": environment(),
                   "settings": settings, "wall_s": time.perf_counter() - t0, "records": records, "units": units}
    agg, _ = write_outputs(out, payload)
    if not args.render:
        checkpoint.unlink()
    for protocol in payload["settings"]["protocols"]:
        print(f"\n## protocol {protocol}: all sets pooled\n")
        print(main_tables(agg, protocol))
    print(f"\nwrote {out.with_suffix('.md')}, {out.with_suffix('.json')}, {out.with_suffix('.png')}")
    return payload


if __name__ == "__main__":
    main()
