"""Every registered fast path against its declaration: the same log-density (up to a constant)
and the same gradient, at random points of the declaration's unconstrained space.

This one test replaces the per-model copies that kept hand-written kernels in step with the
NumPyro and PyMC functions: a new fast path needs only a data case below.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayes_judge as bj
from bayes_judge.generative import get_model
from bayes_judge.inference.fastpaths import fast_paths
from bayes_judge.inference.fit import _build


def _win_rate_case(labelled: bool):
    from bayes_judge.winrate.encode import VerdictPatterns, verdict_patterns

    df = bj.simulate_win_rate(120, p=0.65, q0=[0.85, 0.7, 0.8], q1=[0.7, 0.8, 0.6], swap=True, seed=3)
    if labelled:
        df = df.assign(human=df["human"].where(df["item"] % 4 == 0, None))
    data = bj.encode_win_rate(df, swap="none", seed=0)
    pat = verdict_patterns(data, use_labels=labelled)
    coords = {"pair": data.pair_labels, "judge": list(data.judges)}
    return pat.arrays(), VerdictPatterns.DIMS, coords, {}


def _ranking_case(name: str, options: dict):
    """Two items of soft (or hard, with ties) comparisons in both orders."""
    from bayes_judge.ranking.encode import RankData, encode_ranking

    rng = np.random.default_rng(1)
    rows = []
    for item in ("x", "y"):
        s = rng.normal(0, 1, 5)
        for _ in range(40):
            i, j = rng.choice(5, size=2, replace=False)
            p = 1 / (1 + np.exp(-(s[i] - s[j])))
            rows.append({"item": item, "a": f"c{i}", "b": f"c{j}", "p_a": p})
    df = pd.DataFrame(rows).assign(sample=lambda d: np.arange(len(d)))
    if name == "bt":  # hard decisions, ties where the probability is near 1/2
        u = rng.random(len(df))
        df["winner"] = np.where(np.abs(df["p_a"] - 0.5) < 0.08, "tie", np.where(u < df["p_a"], "a", "b"))
        df = df.drop(columns="p_a")
    data = encode_ranking(df)
    coords = {"candidate": np.arange(data.n_candidates)}
    return data.arrays(), RankData.DIMS, coords, dict(options)


def _leaderboard_case(name: str, options: dict):
    """Five systems, three judges (judge 1 or judges 0 and 2 tie), a third of the comparisons
    human-labelled, a fifth of the rows with soft probabilities, and a covariate where asked."""
    from bayes_judge.leaderboard.encode import LeaderboardData, encode_leaderboard
    from bayes_judge.leaderboard.simulate import simulate_leaderboard

    ties = options.get("tie_judges", ())
    df, _ = simulate_leaderboard(5, 60, alpha=(1.5, 1.0, 0.5), beta=(0.3, -0.2, 0.0),
                                    tau=[0.6 if e in ties else 0.0 for e in range(3)], label_share=0.3, seed=2)
    rng = np.random.default_rng(4)
    soft = (rng.random(len(df)) < 0.2) & (df["winner"] != "tie").to_numpy()
    df["p_a"] = np.where(soft, rng.uniform(0.05, 0.95, len(df)), np.nan)
    df["winner"] = df["winner"].where(~soft, None)
    cov = None
    if options.get("n_cov"):
        df["len_diff"] = rng.normal(0.0, 1.0, len(df))
        df["human"] = df["human"]
        cov = ["len_diff"]
    data = encode_leaderboard(df, covariates=cov)
    assert tuple(int(e) for e in np.flatnonzero(data.has_ties)) == tuple(ties)
    coords = data.coords()
    coords["tie_judge"] = [data.judges[e] for e in ties] or ["none"]
    return data.arrays(), LeaderboardData.DIMS, coords, dict(options)


#: (model, task, labelled) cases a fast path declines by design: the consensus kernel is written
#: for unlabelled data (a labelled item's likelihood needs p and c apart)
DECLINED = {("consensus", "win-rate", True)}


def cases():
    out = []
    for (task, name), fn in sorted(fast_paths().items()):
        if task == "win-rate":
            for lab in (False, True):
                for opt in getattr(fn, "option_cases", [{}]):
                    label = "".join(f",{k}={v}" for k, v in opt.items())
                    out.append(pytest.param(task, name, (lab, opt),
                                            id=f"{task}:{name}:{'labels' if lab else 'none'}{label}"))
        else:
            for opt in getattr(fn, "option_cases", [{}]):
                label = ",".join(f"{k}={v}" for k, v in opt.items()) or "default"
                out.append(pytest.param(task, name, opt, id=f"{task}:{name}:{label}"))
    return out


@pytest.mark.parametrize(("task", "name", "variant"), cases())
def test_fast_path_equals_the_declaration(task, name, variant):
    fn = fast_paths()[(task, name)]
    spec = get_model(name, task)
    if task == "win-rate":
        arrays, dims, coords, options = _win_rate_case(variant[0])
        options = dict(variant[1])
    elif task == "ranking":
        arrays, dims, coords, options = _ranking_case(name, variant)
    elif task == "leaderboard":
        arrays, dims, coords, options = _leaderboard_case(name, variant)
    else:  # a fast path for a task this test has no data for must not pass silently
        pytest.fail(f"no data case for fast paths of task {task!r}: add one to this test")
    priors = spec.default_priors()
    if not getattr(fn, "accepts", lambda p, o, a: True)(priors, options, arrays):
        # a declined case is sampled on the declaration: only where the kernel says so
        assert (name, task, bool(variant[0])) in DECLINED, (task, name, variant)
        return
    model = _build(spec, arrays, dims, coords, priors, False, options)
    logp = model.compile_logp()
    dlogp = model.compile_dlogp()
    ip = model.initial_point()
    names = [v.name for v in model.value_vars]
    sizes = [int(np.size(ip[n])) for n in names]
    rng = np.random.default_rng(0)
    kw = {"options": options} if options else {}
    ref0 = got0 = None
    for _ in range(6):
        x = rng.normal(0.0, 0.8, size=sum(sizes))
        point, o = {}, 0
        for n, k in zip(names, sizes, strict=True):
            point[n] = x[o:o + k].reshape(np.shape(ip[n]))
            o += k
        ref_lp, ref_g = float(logp(point)), np.asarray(dlogp(point))
        lp, g = fn.logp_grad(x, arrays, coords, priors, **kw)
        np.testing.assert_allclose(g, ref_g, rtol=1e-7, atol=1e-8)
        if ref0 is None:
            ref0, got0 = ref_lp, lp
        else:  # equal up to an additive constant
            assert lp - got0 == pytest.approx(ref_lp - ref0, rel=1e-9, abs=1e-8)
