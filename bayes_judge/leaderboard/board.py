"""``bj.leaderboard``: N systems ranked across M prompts by judges (and people), with honest uncertainty."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..inference.settings import FAST_PATH, SAMPLING, Sampling
from .bridge import SCORE_BRIDGE, ScoreBridge, bridge_scores
from .encode import LeaderboardData, encode_leaderboard, judges_only, position_identified

if TYPE_CHECKING:  # pragma: no cover
    import arviz as az
    import pandas as pd

    from ..generative.priors import Priors

__all__ = ["leaderboard", "point_start", "LEADERBOARD_MODELS", "PositionBiasNotIdentifiedError"]

LEADERBOARD_MODELS = ("bt-judges", "bt")
# said in attrs["updated_from"] where transport_draws kept its weighted-mean shift
_SHIFTED = ", after one shift by the weighted mean (Paananen et al.'s first adaptive transformation)"


class PositionBiasNotIdentifiedError(ValueError):
    """A judge's position bias cannot be told apart from the systems' strengths in this design."""


def _warn_contradicted(data: LeaderboardData, min_labelled: int = 20) -> None:
    """Warn of a judge that people's labels contradict: on the labelled comparisons it names the
    answer people did not prefer more often than the one they did (its accuracy as the judges-only
    reading reports it, q, says otherwise: 0.79 for a judge agreeing with 21% of 159 labels)."""
    from .encode import H_A, H_B

    if not len(data.judges) or data.judges == ["human"]:
        return
    with_a, with_b = data.h == H_A, data.h == H_B
    agree = np.where(with_a, data.n[:, 0] + data.n[:, 3], 0.0) + np.where(with_b, data.n[:, 1] + data.n[:, 4], 0.0)
    against = np.where(with_a, data.n[:, 1] + data.n[:, 4], 0.0) + np.where(with_b, data.n[:, 0] + data.n[:, 3], 0.0)
    E = len(data.judges)
    a, d = np.bincount(data.judge, agree, E), np.bincount(data.judge, against, E)
    n = a + d
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n > 0, a / np.where(n > 0, n, 1), np.nan)
        upper = share + 1.96 * np.sqrt(share * (1 - share) / np.where(n > 0, n, 1))
    # below chance beyond its sampling error: a weak judge's 40% of 80 is not (its 95% bound reaches 0.51)
    bad = [(data.judges[e], share[e], int(round(n[e]))) for e in range(E) if n[e] >= min_labelled and upper[e] < 0.5]
    if bad:
        listed = ", ".join(f"{j!r} agrees with {share:.0%} of {n}" for j, share, n in bad)
        warnings.warn(f"leaderboard: people's labels contradict judge(s): {listed} labelled verdicts. Its accuracy "
                      "in judge_table (q) is the judges-only reading's and does not say this; the scores take the "
                      "labels' side only as far as the score bridge lets them: check the judge, or leave it out",
                      UserWarning, stacklevel=3)


class CountedTwiceWarning(UserWarning):
    """The joint model (labels without the score bridge) reads several judgments of one comparison
    as independent draws of the human preference: its intervals are too narrow."""


def _settings_of(previous: Any, position_bias: bool | None, system_bias: bool | None,
                 bridge: bool | ScoreBridge | None, priors: Priors | None) -> tuple:
    """The earlier fit's position bias, system bias and score bridge for an update where none is
    given; a contradicting one, or other priors, is an error (the update would be another model)."""
    import json

    from ..generative import get_model
    from ..generative.priors import priors_to_json

    a = dict(previous.attrs or {})
    was = {"position_bias": bool(int(a.get("position_bias", 0))), "system_bias": bool(int(a.get("system_bias", 0))),
           "bridge": "score_bridge" in a}
    given = {"position_bias": position_bias, "system_bias": system_bias,
             "bridge": None if bridge is None else (bridge is not False)}
    for name, value in given.items():
        if value is not None and value != was[name]:
            raise ValueError(f"previous= was fitted with {name}={was[name]}, this update asks {name}={value}: "
                             "that is another model; refit from all the rows")
    if priors is not None and "priors" in a and priors_to_json(priors) != a["priors"]:
        raise ValueError("previous= was fitted with other priors than the ones given; refit from all the rows")
    if priors is None and a.get("priors") not in (None, "{}"):
        model = get_model(str(a.get("model")), "leaderboard")
        if priors_to_json(model.default_priors()) != a["priors"]:
            raise ValueError("previous= was fitted with its own priors (attrs['priors']); pass the same priors= "
                             "to update it, or refit from all the rows")
    keep_bridge: bool | ScoreBridge | None = bridge
    if bridge is None:
        keep_bridge = None if was["bridge"] else False
        if was["bridge"] and a.get("score_bridge_json"):
            keep_bridge = ScoreBridge(**json.loads(a["score_bridge_json"]))
    judged = a.get("model") == "bt-judges"  # system_bias is that model's option only
    return (was["position_bias"] if position_bias is None else position_bias,
            was["system_bias"] if (system_bias is None and judged) else system_bias, keep_bridge)


def _check_split_labels(data: LeaderboardData) -> None:
    """In the joint model each judgment reads its comparison's human label (the cell's ``h``); an
    update cannot give that label to judgments counted in the other fit (the stored cells keep no
    comparison), so a comparison whose judgments and label fall into different fits would be read
    as unlabelled: refused, as is an earlier run that cannot say (written before its comparisons
    were kept)."""
    split = int(data.meta.get("split_labels", -1))
    if split > 0:
        raise ValueError(
            f"{split} comparison(s) have their judgments in one fit and their human label in the other (previous= and "
            "the new rows): in this model (labels without the score bridge) each judgment reads its own comparison's "
            "label, which an update cannot carry across fits; refit from all the rows, or use the score bridge (NUTS, "
            "bridge=None), whose update reads the labels apart from the judgments")
    if split < 0:
        raise ValueError("previous= was written before runs kept their comparisons, so this update cannot check that no "
                         "comparison has its judgments in one fit and its human label in the other (this model reads "
                         "each judgment's label); refit once from all the rows")


def _check_position(data: LeaderboardData, position_bias: bool | None) -> bool:
    ok = position_identified(data)
    if position_bias is False:
        return False
    if not ok.all():
        bad = [j for j, k in zip(data.judges, ok, strict=True) if not k]
        raise PositionBiasNotIdentifiedError(
            f"the position bias of judge(s) {bad} is not identified in this design: the order in which "
            "the systems are shown cannot be told apart from their strengths (e.g. a baseline that is always "
            "shown second, as in AlpacaEval, whose strength and the judge's preference for position A are the "
            "same number). Pass position_bias=False to fit without a position term (the scores then include "
            "whatever position preference the judge has), or judge both orders of some comparisons")
    return True


def point_start(data: LeaderboardData) -> np.ndarray:
    """Start of the chains' scores: Bradley-Terry (:func:`bayes_judge.ranking.bradley_terry`) on
    all the counts (judges' verdicts, ties half, soft sums; human labels), 0.05 prior wins per
    game so that it exists.

    At arena scale most of NUTS's warm-up from ``s = 0`` is spent walking to the mode (the
    gradient there is huge); starting at this point estimate, which is where the human scores
    are to the extent the judges are accurate, saves that walk.  The posterior is unchanged.
    """
    import warnings

    from ..ranking import bradley_terry, pairs_rank_data

    wins_a = data.n[:, 0] + 0.5 * data.n[:, 2] + data.n[:, 3]
    games = data.n.sum(axis=1)
    i, j = np.r_[data.sys_a, data.hum_a], np.r_[data.sys_b, data.hum_b]
    won, tot = np.r_[wins_a, data.hum_n[:, 0]], np.r_[games, data.hum_n.sum(axis=1)]
    rd = pairs_rank_data(i, j, np.divide(won, tot, out=np.full(len(tot), 0.5), where=tot > 0), len(data.systems))
    with warnings.catch_warnings():  # a start, not a result: an unconverged iteration is fine
        warnings.simplefilter("ignore")
        s = bradley_terry(rd, prior=0.05, tol=1e-3, max_iter=200, accelerate=True, weight=tot)
    return np.clip(s, -6.0, 6.0)


def leaderboard(
    df: pd.DataFrame,
    *,
    human: pd.DataFrame | None = None,
    model: str | None = None,
    estimand: str | None = None,
    position_bias: bool | None = None,
    system_bias: bool | None = None,
    difficulty: bool = False,
    covariates: Sequence[str] | None = None,
    priors: Priors | None = None,
    sampler: str = SAMPLING.sampler,
    chains: int = SAMPLING.chains,
    draws: int = SAMPLING.draws,
    tune: int | None = None,
    seed: int = SAMPLING.seed,
    target_accept: float | None = None,
    fast: bool = True,
    pointwise: bool | None = None,
    previous: Any = None,
    transport: bool = True,
    bridge: bool | ScoreBridge | None = None,
) -> az.InferenceData:
    """Posterior scores of N systems across prompts, on the logit scale of the human preference.

    Parameters
    ----------
    df : DataFrame
        Judgments table (``DESIGN.md``): ``item`` the prompt, ``a``, ``b`` the systems in the
        order the judge saw them, ``judge``, ``p_a`` and/or ``winner``; a filled ``human`` column
        gives human labels (a file in any format: :func:`bayes_judge.read_judgments`).
    human : DataFrame, optional
        Human labels as ``item, a, b, human`` (``"a"``/``"b"`` in that row's orientation), also
        on comparisons that no judge saw.  Each labelled comparison counts once.
    model : {"bt-judges", "bt"} or a registered leaderboard model, optional
        ``"bt-judges"`` (default): Bradley-Terry scores of the human preference, observed through
        judges with their own accuracy, position bias and ties
        (:mod:`bayes_judge.generative.leaderboard_models`); ``"bt"``: the judges' verdicts are
        the preference (Bradley-Terry-Davidson; the default when the only judge is ``"human"``,
        as in a Chatbot Arena export).
    estimand : {"human", "judges"}, optional
        Which scores.  ``"human"``: the Bradley-Terry scores of people's preference (model
        ``"bt-judges"``, the judges read through their accuracy and biases; or ``"bt"`` when the
        only judge is ``"human"``, people's own votes).  ``"judges"``: the scores of this panel's
        own preference, its verdicts taken as they are (model ``"bt"``).  Default: ``"human"``,
        or what ``model`` implies.  Without labels, people's scores are the judges' reading
        carried over by the score bridge (``bridge``); ``attrs["estimand"]`` names it.
    position_bias : bool, optional
        Fit a position bias per judge (default: yes).  Where the design cannot tell a judge's
        position bias from the systems' strengths (a system always in the same position) it is an
        error unless ``position_bias=False`` — never debiased silently.
    system_bias : bool, optional
        ``"bt-judges"``: each judge's own preference for some systems beyond the human one
        (partially pooled offsets ``δ``, told apart from the human scores by human labels).
        Default: on where the judges are fitted with human labels (``bridge=False``; real judges
        have such preferences: with 10% labels on SummEval the scores' 90% intervals cover the
        experts' Bradley-Terry scores for 10 to 12 of the 12 systems with them over three seeds,
        2 without; ``benchmarks/leaderboard_real.py``), off where they are fitted alone (no
        labels, or the score bridge learnt from the labels, the default), where nothing tells
        them from the human scores: a bias all judges share is what the bridge's ε allows for.
        With ``sampler="laplace"`` the default is off (its hierarchical scale has its mode at 0,
        where no Laplace approximation exists), and ``attrs["approximate"]`` says so.
    difficulty : bool
        A per-prompt scale of the score differences, ``d · exp(u_prompt)``, ``u ~ Normal(0, σ_u)``
        (prompts on which the systems differ more or less); cells are then kept per prompt.
    covariates : list of str
        Columns holding covariate differences of each comparison (A minus B, e.g. the difference
        of the answers' lengths, standardized by you), added to the score difference with a
        coefficient each: the scores are then adjusted for them (``arena-rank``'s style control).
    priors : Priors, optional
        The model's priors (``bayes_judge.generative.leaderboard_models.JudgedBTPriors`` /
        ``DavidsonPriors``); default the declaration's.
    sampler : {"nutpie", "pymc", "numpyro", "laplace"}
        NUTS in one of three samplers, or ``"laplace"``: the Laplace approximation of the same
        posterior, a Gaussian at its mode with the curvature there as precision (on the kernel's
        unconstrained coordinates: the accuracies and tie thresholds on the log scale), corrected
        by Pareto-smoothed importance resampling (:func:`bayes_judge.inference.laplace.laplace_draws`),
        ``chains × draws`` draws, so every summary, comparison and report reads it as it reads
        NUTS's draws. Approximate (``attrs["approximate"]`` says so with the weights' Pareto k-hat,
        and the summary's ``attrs``; a k-hat above 0.7 warns); a point fit's speed with the
        posterior kept. Needs the model's hand-written kernel and no hierarchical scale
        (``system_bias=False``).
    chains, draws, tune, seed, target_accept : NUTS settings (``tune`` and ``target_accept``
        unused by ``"laplace"``; its draws are seeded by ``seed``).  ``tune=None`` (default):
        300 tuning steps where ``"bt-judges"`` runs on its fast path (its chains start at the mode
        and sample through the Laplace shear; nutpie's own default, which gave the ESS, r_hat and
        coverage of 1000 steps in 0.58-0.77 of the time, ``benchmarks/results/bench_leaderboard_tune.md``),
        else 1000.  ``target_accept=None`` (default): 0.7 from 100 systems on, on the fast paths
        of ``"bt"`` and of ``"bt-judges"`` without ``system_bias``, whose posteriors are then near
        a Gaussian in hundreds of dimensions (bt-judges' through the shear), where HMC's best
        acceptance is about 0.65 (Beskos, Pillai, Roberts, Sanz-Serna & Stuart 2013, "Optimal
        tuning of the hybrid Monte Carlo algorithm", arXiv:1001.4460): with 200 systems a draw
        takes 7-8 leapfrog steps instead of 9-14, and a fit 0.65-0.83 of the time, with the same
        r_hat and coverage (``benchmarks/results/bench_leaderboard_accept.md``); else PyMC's 0.8
        (fewer systems, where 0.7 left more divergences on real leaderboards of a dozen; with
        ``system_bias``, a hierarchical scale; in the score bridge).  Raise it (0.8-0.95) when a
        fit reports divergences.  ``attrs`` keep the ``tuning_steps`` and ``target_accept`` the
        chains ran with.
    fast : bool
        With ``sampler="nutpie"``, use the model's registered fast path where it states the fit
        (``"bt-judges"`` without ``difficulty``: :mod:`bayes_judge.inference.kernels.leaderboard`, the same
        posterior from a hand-written log-density: 4x faster at 10,000 comparisons, 13 s against
        49 s for 4 x (1000 + 1000) draws, ``benchmarks/bench_leaderboard.py``; ``"bt"`` too);
        ``attrs["sampler"]`` says ``"nutpie (fast path)"`` then.
    pointwise : bool, optional
        Store the per-cell log-likelihood (``log_likelihood`` group, for ``az.loo``); default
        when it stays under ~2e7 values.
    previous : InferenceData or path of a saved run, optional
        An earlier leaderboard fit to update with ``df``'s new battles (and new systems): its cells
        (the sufficient statistics, kept with every run) are read back, not its rows re-encoded;
        the new rows' cells are added; the chains start from the earlier posterior's judges and
        the merged point estimate of the scores, and tune for ``min(tune, 300)`` steps. The model
        and the judges must be the earlier fit's (a new judge, or another model, is refused
        naming the difference); its position bias, system bias and score bridge are kept unless
        given (given otherwise: refused), and other priors than the earlier fit's are refused;
        rows and human labels it already counted are refused (each counts once; a row without a
        ``sample`` is sample 0); ``human=`` labels apply to the new rows; a comparison judged in
        both fits counts once in ``attrs["n_comparisons"]``; in the joint model (labels without
        the score bridge, where each judgment reads its comparison's label) a comparison whose
        judgments and label fall into different fits is refused (the stored cells cannot carry the
        label across); a judge is screened for naming one position over both fits, the
        diagnosis (``attrs["judge_diagnosis"]``) reads the new rows alone; ``difficulty`` and
        ``covariates`` are not updated (refit from the rows).
    transport : bool
        With ``previous=`` fitted by NUTS on a fast path and NUTS asked for again (default True):
        the earlier fit's draws are moved onto the new posterior by the map between the two
        posteriors' Laplace approximations and importance-resampled within each chain, instead of
        sampled afresh (:mod:`bayes_judge.inference.transport`; Paananen, Piironen, Bürkner &
        Vehtari 2021, "Implicitly adaptive importance sampling", arXiv:1906.08850).  At 1,000,000
        battles of 200 systems, 10% new, the update takes a tenth to a fifth of a cold fit's time
        and gives its posterior within Monte Carlo error
        (``benchmarks/results/bench_leaderboard_update.md``).  A new system's score is drawn from
        the new Laplace approximation given the moved draws, and weighed with them.  With the
        judges' own system preferences (``system_bias``) their hierarchical scale, which has no
        Laplace approximation, stays where each draw has it, and the other coordinates move
        between the two posteriors' modes given it.  Where the draws cannot serve, the update
        is sampled as above and ``attrs["updated_from"]`` says why: a judge's first ties (the
        draws have no such coordinate), other chains or draws, an earlier fit whose draws were
        themselves moved (moved again, they would repeat more draws), or weights under a Pareto
        k-hat of 0.7 or an importance ESS of half the draws.  With labels the score
        bridge learnt from them is moved likewise (from an importance ESS of a quarter of the
        draws), where the labels pin each system's score; ``attrs["updated_from"]`` says which.
        Where they serve, ``attrs["sampler"]`` and ``attrs["updated_from"]`` say so, with the
        weights' k-hat and importance ESS (``attrs["ess_importance"]``, which caps the summaries'
        ESS), and whether the moved draws were shifted once more by their weighted mean.
        ``False``: always sample afresh.
    bridge : bool or ScoreBridge, optional
        People's scores from LLM judges (``estimand="human"``, model ``"bt-judges"``): the
        verdicts do not tell how far the judges' reading lies from people's, so the judges are
        fitted alone and their reading is carried over by the score bridge
        (:mod:`bayes_judge.leaderboard.bridge`): ``s = λ × the reading + ε`` per system, λ and
        the spread of ε from a prior fitted to the bundled panels with known human scores
        (``benchmarks/leaderboard_bridge.py``).  Without labels the bridge is drawn from that
        prior (the order of the reading is kept, λ > 0, so the ranks widen by ε only); with
        labels λ and each system's ε are learnt from them
        (:func:`~bayes_judge.leaderboard.bridge.calibrate_bridge`: on every bundled panel with 1%
        or 10% of the comparisons labelled, higher coverage, lower error and narrower intervals than
        judges that read each label, ``benchmarks/leaderboard_few_labels.py``).  Default (``None``):
        on, with :data:`~bayes_judge.leaderboard.bridge.SCORE_BRIDGE` (with labels and
        ``sampler="laplace"``: off, as the bridge learnt from the labels is sampled by NUTS, about
        20 s for 200 systems with 100,000 labels, which a Laplace fit is asked for to avoid;
        ``bridge=True`` asks for it); a :class:`ScoreBridge` sets the prior; ``False`` keeps the judges' reading
        without labels and, with labels, fits one model in which each judge reads the label of the
        comparison it judged.  The reading stays in the posterior as ``s_judges`` (with labels also
        ``bridge_lambda``, ``bridge_tau``); ``attrs["score_bridge"]`` states the prior.

    Returns
    -------
    arviz.InferenceData
        ``posterior``: ``s`` (system; bridged without labels, see ``bridge``), the judges' ``alpha`` / ``q`` = σ(α) (accuracy),
        ``beta`` (position bias), ``tau`` (tie threshold, judges that tie) or ``nu``;
        ``observed_data``: the cell counts ``v`` (cell, outcome) and ``human`` (hcell,
        hum_outcome); ``constant_data``: the cells' systems, judge and label state.  ``attrs``:
        task ``"leaderboard"``, model, sampler, seed, data hash, priors, counts.

    Raises
    ------
    ValueError
        Bad tables, disconnected systems, a judge that always names one position, human labels on
        unknown systems, an unidentified position bias (:class:`PositionBiasNotIdentifiedError`).

    Examples
    --------
    >>> import bayes_judge as bj                                                    # doctest: +SKIP
    >>> from bayes_judge.datasets import summeval                                    # doctest: +SKIP
    >>> df = summeval.pairs("coherence", judge="gpt-4-0314/rts")                     # doctest: +SKIP
    >>> idata = bj.leaderboard(df.drop(columns="human"), sampler="laplace")          # doctest: +SKIP
    >>> later = bj.leaderboard(new_battles, previous=idata)                          # doctest: +SKIP
    """
    from ..generative import get_model
    from ..inference.fit import fit_model, pointwise_log_lik
    from ..inference.idata import build_idata

    if estimand not in (None, "human", "judges"):
        raise ValueError(f"estimand must be 'human' or 'judges', got {estimand!r}")
    sampling = Sampling(sampler, chains, draws, SAMPLING.tune if tune is None else tune, seed,
                        SAMPLING.target_accept if target_accept is None else target_accept)  # checked once
    if not (bridge is None or isinstance(bridge, bool | ScoreBridge)):
        raise TypeError(f"bridge must be True, False or a ScoreBridge, got {type(bridge).__name__}")
    # an update's new rows may connect only through the earlier fit's systems, and a judge's verdicts
    # are screened over both fits (a dozen new rows may all name A): merge_data and check_judges_cells
    data = encode_leaderboard(df, human=human, difficulty=difficulty, covariates=covariates,
                              connected=previous is None, check_judges=previous is None)
    from ..diagnose import diagnose_rows

    # a judge that follows a position or a constant is said so (in an update, of the new rows alone)
    diagnosis = diagnose_rows(df, "leaderboard" if previous is None else
                              f"leaderboard update (its {len(df)} new rows alone; the earlier fit's are not read again)",
                              ids=data.row_ids)  # the rows' codes from their reading
    prev_post = None
    if previous is not None:
        from .encode import check_judges_cells, data_of_run, merge_data

        if isinstance(previous, str | os.PathLike):
            from ..analysis.runs import load_run

            previous = load_run(previous)
        elif not hasattr(previous, "groups"):
            raise TypeError(f"previous= takes an earlier leaderboard fit (its InferenceData) or the path of a saved "
                            f"run, not a {type(previous).__name__}; to fit these rows together with new ones, "
                            "concatenate the tables and fit once")
        old_data = data_of_run(previous)  # refuses what is not a leaderboard run, before its settings are read
        if difficulty or covariates:
            raise ValueError("previous= updates a fit without difficulty or covariates; refit from the rows")
        old_model = (previous.attrs or {}).get("model")
        if model is not None and old_model is not None and model != old_model:
            raise ValueError(f"previous= was fitted with model {old_model!r}, not {model!r}: refit from the rows")
        model = model or old_model
        position_bias, system_bias, bridge = _settings_of(previous, position_bias, system_bias, bridge, priors)
        if sampler == "laplace" and system_bias:
            raise ValueError("previous= was fitted with the judges' own system preferences (system_bias=True, by NUTS), "
                             "whose hierarchical scale has no Laplace approximation: update it with NUTS (the default "
                             "sampler), or refit from all the rows with sampler='laplace'")
        data = merge_data(old_data, data)
        check_judges_cells(data)
        prev_post = previous["posterior"]
        sampling = sampling.replace(tune=min(sampling.tune, 300))
    _warn_contradicted(data)
    people = data.judges == ["human"]
    if "human" in data.judges and not people:  # votes fitted as one more LLM judge (q 0.96), "no labels" said
        raise ValueError(
            f"the table mixes people's votes (judge 'human') with LLM judges {[j for j in data.judges if j != 'human']}: "
            "people's votes are the preference itself, not a judge of it. Pass them as human= labels (one per "
            "comparison: item, a, b, human) beside the judges' rows, or fit the votes alone")
    if model is None:
        model = "bt" if (people or estimand == "judges") else "bt-judges"
    if estimand == "judges" and model != "bt":
        raise ValueError(f"estimand='judges' takes the panel's verdicts as they are (model 'bt'), not {model!r}")
    if estimand == "human" and model == "bt" and not people:
        raise ValueError("model 'bt' takes the judges' verdicts as the preference: that is estimand='judges'; "
                         "for people's preference use model 'bt-judges'")
    estimand = "human" if (model != "bt" or people) else "judges"
    spec = get_model(model, "leaderboard")
    n_labels = data.meta["n_labels"]
    judged_people = estimand == "human" and spec.name == "bt-judges"
    if bridge not in (None, False) and not judged_people:
        raise ValueError("bridge= carries LLM judges' reading over to people's scores (estimand='human', model "
                         f"'bt-judges'); this fit is model {spec.name!r}, estimand {estimand!r}")
    # with labels, the bridge learnt from them (by default with NUTS: the bridge's own model is
    # sampled by NUTS, which would take a Laplace fit its speed; bridge=True asks for it)
    calibrate = judged_people and n_labels > 0 and (
        bridge is True or isinstance(bridge, ScoreBridge) or (bridge is None and sampler != "laplace"))
    if previous is not None and judged_people and n_labels > 0 and not calibrate:
        _check_split_labels(data)
    labels = data
    if calibrate:  # the judges alone first; their reading is bridged to people's by the labels
        data = judges_only(data)
    use_bias = _check_position(data, position_bias)
    ties = data.has_ties
    tie_judges = tuple(int(e) for e in np.flatnonzero(ties))
    options: dict[str, Any] = {"position_bias": use_bias, "tie_judges": tie_judges, "n_judges": len(data.judges),
               "difficulty": bool(difficulty), "n_cov": len(data.covariates)}
    no_bias_note = ""
    if spec.name == "bt-judges":
        options["system_bias"] = (data.meta["n_labels"] > 0) if system_bias is None else bool(system_bias)
        if system_bias is None and options["system_bias"] and sampler == "laplace":
            # its hierarchical scale has its mode at 0, where no Laplace approximation exists
            options["system_bias"] = False
            no_bias_note = ("; without the judges' own system preferences (system_bias: their hierarchical scale "
                            "has no Laplace approximation; NUTS fits them)")
    elif system_bias is not None:
        raise ValueError(f"system_bias applies to model 'bt-judges' only, not {spec.name!r}")
    coords = data.coords()
    coords["tie_judge"] = [data.judges[e] for e in tie_judges] or ["none"]
    start = None
    if spec.name in LEADERBOARD_MODELS:
        from ..generative.leaderboard_models import leaderboard_start

        pri = spec.default_priors() if priors is None else priors
        start = {**leaderboard_start(data, pri), "s_raw": point_start(data)}
        if prev_post is not None:  # the earlier posterior's judges (same judges, same order)
            for name in ("alpha", "beta", "nu"):  # per judge, or one number (tau's judges may change)
                if name in prev_post:
                    start[name] = prev_post[name].mean(("chain", "draw")).to_numpy()
    arrays = data.arrays()
    # the score bridge's warm-up: its kernel's own where none was given (it starts at the mode,
    # sheared), else as asked; its acceptance target as the fit's
    bridge_tune, bridge_accept = sampling.tune, sampling.target_accept
    if tune is None and previous is None and sampling.sampler in ("nutpie", "laplace"):
        from ..inference.kernels.bridge import TUNE as bridge_tune
    if tune is None or target_accept is None:  # the fast path's own settings, where it runs and none was given
        from ..inference.fit import chosen_fast_path

        fp = chosen_fast_path(spec, sampling.sampler, fast, spec.default_priors() if priors is None else priors,
                              options, arrays)
        if tune is None and previous is None and getattr(fp, "tune", None) is not None:
            sampling = sampling.replace(tune=fp.tune)
        own = getattr(fp, "target_accept", lambda options, n_systems: None)(options, len(data.systems))
        if target_accept is None and own is not None:
            sampling = sampling.replace(target_accept=own)
    earlier, not_moved = None, None
    if prev_post is not None and transport and sampling.sampler == "nutpie" and fast:  # its draws moved, where they serve
        was = (previous.attrs or {}).get("sampler")
        if was != FAST_PATH:  # moved or resampled draws repeat some: moved again, they would repeat more
            not_moved = f"the earlier fit's draws are not NUTS draws of the fast path (sampler {was!r})"
        else:
            stats0 = previous["sample_stats"] if "sample_stats" in previous.groups() else {}
            earlier = {"arrays": (judges_only(old_data) if calibrate else old_data).arrays(),
                       "systems": [str(x) for x in prev_post["system"].to_numpy()],
                       "posterior": {k: prev_post[k].to_numpy() for k in prev_post.data_vars},
                       "stats": {k: stats0[k].to_numpy() for k in ("lp", "s_raw_mean", "delta_raw_mean")
                                 if k in stats0}}
    bridge_earlier, bridge_not_moved = None, None
    if calibrate and prev_post is not None and transport and sampling.sampler == "nutpie" and fast:
        pa = previous.attrs or {}
        if "bridge_lambda" not in prev_post or "s_judges" not in prev_post:
            bridge_not_moved = "the earlier fit learnt no bridge from labels"
        elif pa.get("bridge_moved"):
            bridge_not_moved = "the earlier fit's bridge draws were themselves moved"
        else:
            where = {name: i for i, name in enumerate(labels.systems)}
            bridge_earlier = {
                "reading": prev_post["s_judges"].to_numpy().reshape(-1, prev_post.sizes["system"]),
                "hum_a": old_data.hum_a, "hum_b": old_data.hum_b, "hum_n": old_data.hum_n,
                **{k: prev_post[k].to_numpy() for k in ("s", "bridge_lambda", "bridge_tau")},
                "kept": np.array([where[str(x)] for x in prev_post["system"].to_numpy()], dtype=np.int64)}
    fit = fit_model(spec, arrays, dims=LeaderboardData.DIMS, coords=coords, priors=priors,
                    sampling=sampling, options=options, init=start, fast=fast, earlier=earlier)
    moved = fit.info.get("transport") or ({"why": not_moved} if not_moved else None)
    transported = fit.moved
    # the raw coordinates, and the sign-expanded scale of δ (whose sign, with delta_raw's, is arbitrary)
    post = {k: v for k, v in fit.posterior.items() if k not in ("s_raw", "u_raw", "delta_raw", "system_bias_signed")}
    from ..generative.leaderboard_models import DIMS

    if spec.name in LEADERBOARD_MODELS and all(k in DIMS for k in post):  # no PyMC model built to ask
        dims = {k: list(DIMS[k]) for k in post}
    else:
        m = fit.entry.model
        dims = {k: list(m.named_vars_to_dims.get(k, ())) for k in post}
    C, D = post["s"].shape[:2]
    if pointwise is None:
        pointwise = C * D * (data.n_cells + len(data.hum_a)) <= 2e7
    loglik = None
    if pointwise:
        loglik = {"v": pointwise_log_lik(fit, "v").sum(axis=-1),
                  "human": pointwise_log_lik(fit, "human").sum(axis=-1)}
        dims.update({"v": ["cell"], "human": ["hcell"]})
    dims.update({"v_counts": ["cell", "outcome"], "human_counts": ["hcell", "hum_outcome"],
                 "sys_a": ["cell"], "sys_b": ["cell"], "cell_judge": ["cell"], "h": ["cell"],
                 "hum_a": ["hcell"], "hum_b": ["hcell"], "delta_raw_mean": ["judge"]})
    approx = {}
    if sampler == "laplace":
        from ..inference.laplace import approximate_attrs

        approx = approximate_attrs(fit.info, C * D, why_not=(
            " (a judge's accuracy trades against the scores' spread" + (", and no human label ties them down)"
                                                                          if data.meta["n_labels"] == 0 else ")")))
        approx["approximate"] += no_bias_note
    if previous is not None:
        approx["updated_from"] = f"a previous fit of {int((previous.attrs or {}).get('n_rows', 0))} rows"
        if transported and moved is not None:
            approx["updated_from"] += (
                f": its {C} x {D} NUTS draws moved onto this posterior by the map between the two posteriors' "
                f"Laplace approximations and importance-resampled within each chain (Pareto k-hat "
                f"{moved['pareto_k']:.2f}, importance ESS {moved['ess_importance']:.0f} of {C * D}"
                f"{_SHIFTED if moved.get('mean_shifted') else ''}); not new NUTS draws "
                "(transport=False samples afresh)")
            approx["ess_importance"] = round(float(moved["ess_importance"]), 1)  # what an ESS read off them is capped at
        elif moved is not None:
            approx["updated_from"] += f"; sampled afresh by NUTS, as the earlier draws could not serve: {moved['why']}"
    if sampler != "laplace" and not transported:  # as PyMC records it: the warm-up the chains ran
        approx["tuning_steps"] = int(sampling.tune)
        approx["target_accept"] = float(sampling.target_accept)
    attrs = {**approx, "n_rows": data.meta["n_rows"], "n_comparisons": data.meta["n_comparisons"],
             "n_labelled_rows": labels.meta.get("n_labelled_rows", 0),
             "n_labels": n_labels, "n_soft": data.meta["n_soft"], "n_ties": data.meta["n_ties"],
             "n_cells": data.n_cells, "position_bias": int(use_bias),
             "system_bias": int(options.get("system_bias", False)), "difficulty": int(bool(difficulty)),
             "covariates": ",".join(data.covariates), "estimand": estimand, "judge_diagnosis": diagnosis}
    unlabelled_judges = judged_people and n_labels == 0
    stats = dict(fit.stats)
    if calibrate:
        from .bridge import calibrate_bridge

        prior = bridge if isinstance(bridge, ScoreBridge) else SCORE_BRIDGE
        reading = post["s"]
        cal = calibrate_bridge(reading.reshape(C * D, -1), labels.hum_a, labels.hum_b, labels.hum_n, prior,
                               sampler=sampler, chains=C, draws=D, tune=bridge_tune, seed=seed,
                               target_accept=bridge_accept, pointwise=loglik is not None, earlier=bridge_earlier)
        bridge_moved = cal.get("moved") or ({"why": bridge_not_moved} if bridge_not_moved else None)
        if bridge_moved is not None and "updated_from" in attrs:
            if "pareto_k" in bridge_moved:
                attrs["updated_from"] += (
                    f"; the score bridge's draws moved likewise (Pareto k-hat {bridge_moved['pareto_k']:.2f}, "
                    f"importance ESS {bridge_moved['ess_importance']:.0f} of {C * D}"
                    f"{_SHIFTED if bridge_moved.get('mean_shifted') else ''})")
                attrs["bridge_moved"] = 1
                attrs["ess_importance"] = round(min(float(attrs.get("ess_importance", np.inf)),
                                                    bridge_moved["ess_importance"]), 1)
            else:
                attrs["updated_from"] += f"; the score bridge sampled afresh by NUTS: {bridge_moved['why']}"
        post["s_judges"], post["s"] = reading, cal["s"]
        post["bridge_lambda"], post["bridge_tau"] = cal["bridge_lambda"], cal["bridge_tau"]
        dims.update({"s_judges": dims["s"], "bridge_lambda": [], "bridge_tau": []})
        if "diverging" in stats:
            stats["diverging"] = np.asarray(stats["diverging"], bool) | cal["diverging"].astype(bool)
        if loglik is not None:
            loglik["human"] = cal["log_lik_human"]
        attrs["score_bridge"] = prior.describe()
        attrs["score_bridge_json"] = prior.to_json()
        attrs["estimand_note"] = (  # the figures: benchmarks/results/leaderboard_few_labels.md
            f"people's scores from the judges' reading and {n_labels} human label(s): the score bridge (people's "
            "scale against the judges', and each system's share of the judges' taste) learnt from the labels, "
            "from a prior fitted to ten panels with known human scores; the intervals narrow as labels come in")
    elif unlabelled_judges and bridge is not False:
        prior = bridge if isinstance(bridge, ScoreBridge) else SCORE_BRIDGE
        reading = post["s"]
        h = bridge_scores(reading.reshape(C * D, -1), prior, np.random.default_rng([seed, 7919]))
        post["s_judges"], post["s"] = reading, h.reshape(reading.shape)
        dims["s_judges"] = dims["s"]
        attrs["score_bridge"] = prior.describe()
        attrs["score_bridge_json"] = prior.to_json()
        attrs["estimand_note"] = (  # the figures: benchmarks/results/leaderboard_bridge.md
            "people's scores without labels: the judges' reading carried over by the score bridge (people's "
            "scale against the judges', and each system's share of the judges' taste), a prior fitted to ten "
            "panels with known human scores; the intervals are as wide as that prior makes them. Add labels "
            "(human=) to learn the judges' bias from people")
    elif unlabelled_judges:
        attrs["estimand_note"] = (  # the figures: benchmarks/results/leaderboard_real.md
            "the judges' reading of people's scores (bridge=False): without human labels a preference all "
            "judges share is not in the intervals (on SummEval and HANNA coherence they cover 0-9% of the "
            "experts' Bradley-Terry scores); add labels (human=) before reading these as people's")
    elif judged_people and n_labels > 0:  # the joint model: each judgment draws its own human preference
        per = data.meta["n_rows"] / max(data.meta["n_comparisons"], 1)
        attrs["estimand_note"] = (
            f"people's scores from one model of the judges and {n_labels} human label(s) (no score bridge: "
            + ("sampler='laplace'" if sampler == "laplace" else "bridge=False") + ")")
        if per > 1.2:  # several judges / both orders of one comparison counted as independent human draws
            why = (f"the comparisons carry {per:.1f} judgments each, and this model gives each judgment its own "
                   "draw of the human preference, so it counts one comparison's judgments as independent "
                   "evidence about people: its intervals are too narrow (two judges in both orders: 69% "
                   "coverage of 90% intervals); fit with NUTS and the default score bridge")
            attrs["estimand_note"] += "; " + why
            warnings.warn(f"leaderboard: {why}", CountedTwiceWarning, stacklevel=2)
    kept = labels.comparison_keys  # kept with the run for an update: its comparisons, its judges' positions
    comparison_keys: dict[str, np.ndarray] = {} if kept is None else {"comparison_key": kept}
    if labels.position_counts is not None:
        comparison_keys.update(judge_named_a=labels.position_counts[0], judge_decided=labels.position_counts[1])
    comparison_coord = {} if kept is None else {"comparison": np.arange(len(kept))}
    idata = build_idata(
        task="leaderboard", model=spec.name, seed=seed,
        sampler=fit.sampler_label,
        posterior=post, sample_stats=stats, log_likelihood=loglik,
        observed_data={"v_counts": data.n, "human_counts": labels.hum_n},
        constant_data={"sys_a": data.sys_a, "sys_b": data.sys_b, "cell_judge": data.judge, "h": data.h,
                       "hum_a": labels.hum_a, "hum_b": labels.hum_b,
                       "row_key": labels.row_keys, "label_key": labels.label_keys, **comparison_keys},
        coords={**coords, "hcell": np.arange(len(labels.hum_a)), "row": np.arange(len(labels.row_keys)),
                "label": np.arange(len(labels.label_keys)), **comparison_coord},
        dims={**dims, "row_key": ["row"], "label_key": ["label"],
              **{k: ["comparison" if k == "comparison_key" else "judge"] for k in comparison_keys}},
        priors=fit.priors, attrs=attrs,
    )
    from ..inference.convergence import warn_unconverged

    if sampler != "laplace":  # independent draws of a Gaussian: nothing to converge
        # the sampled scores: the bridge's own draws are independent and would hide a bad chain
        warn_unconverged(idata, ["s_judges", "s"] if calibrate else ["s_judges" if "s_judges" in post else "s"],
                         "leaderboard")
    return idata
