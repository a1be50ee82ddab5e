"""Which pairs to ask the judge next: random, no-repeat, symmetric and greedy D-optimal selection.

Four strategies, each returning only the *new* comparisons as a table with columns ``a``, ``b``
(candidate ids in the order the judge should see them):

``random``            Liusie, Manakul & Gales 2024 §3.4 / Liusie et al. 2024 (PoE) §4.2: ordered comparisons drawn uniformly from the
                      N(N-1) possible ones, no ordered comparison twice, every candidate in at least
                      one comparison.
``no-repeat``         Liusie, Manakul & Gales 2024 §3.4: if (x_i, x_j) is selected then (x_j, x_i) is not: k distinct
                      unordered pairs, each in a random order.
``symmetric``         Liusie, Manakul & Gales 2024 §3.4: if (x_i, x_j) is selected then (x_j, x_i) is too: k / 2
                      distinct unordered pairs, each asked in both orders.
``greedy-d-optimal``  Liusie et al. 2024 (PoE) §3.6 and A.6: add one comparison at a time, the one that maximizes
                      det(W̃ᵀW̃) (eq. 15-17), keeping A = (W̃ᵀW̃)⁻¹ up to date by Sherman-Morrison
                      (eq. 44), starting from the striped-diagonal design (eq. 45).

Notation (Liusie et al. 2024 (PoE) §3.3): the design W ∈ R^{K×N} has one row per comparison k of (i, j) with
W_ki = 1, W_kj = -1; W̃ prepends the anchoring expert's row e_1ᵀ (a prior on the first candidate's
score), so that W̃ᵀW̃ = e_1 e_1ᵀ + L, with L the comparison graph's Laplacian, is invertible
exactly when the comparisons connect all N candidates.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from scipy.linalg import blas
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

__all__ = ["select_comparisons", "METHODS"]

Method = Literal["greedy-d-optimal", "random", "no-repeat", "symmetric"]
METHODS: tuple[str, ...] = ("greedy-d-optimal", "random", "no-repeat", "symmetric")

try:  # a dependency of pymc, so present wherever bayes_judge is installed
    from threadpoolctl import threadpool_limits
except ImportError:  # pragma: no cover
    threadpool_limits = None

# rows whose stale upper bound is re-scored together in one lazy-greedy round (see _greedy)
_LAZY_BATCH = 8


# --------------------------------------------------------------------------------------------
# public entry point
# --------------------------------------------------------------------------------------------


def select_comparisons(
    candidates: int | Sequence,
    k: int,
    *,
    method: Method = "greedy-d-optimal",
    seed: int | np.random.Generator | None = 0,
    existing: pd.DataFrame | None = None,
    orient: Literal["balanced", "index"] = "balanced",
) -> pd.DataFrame:
    """Choose ``k`` new comparisons among ``candidates``.

    Parameters
    ----------
    candidates : int or sequence of hashable, length N
        The candidate ids.  An int ``N`` means the ids ``0, 1, ..., N-1``.  At least 2 candidates,
        no duplicates.  The first candidate carries the anchoring row of W̃ (Liusie et al. 2024 (PoE) §3.3).
    k : int
        How many new comparisons (rows of the result) to return; ``k >= 1``.  Per method:

        * ``random``: k ordered comparisons, all different, k <= N(N-1) minus the ordered
          comparisons already in ``existing``.  If k is too small for every candidate to appear in
          at least one comparison (counting ``existing``) a ValueError says so.
        * ``no-repeat``: k distinct unordered pairs, k <= N(N-1)/2 minus the unordered pairs already
          in ``existing``.
        * ``symmetric``: k ordered comparisons, that is k / 2 unordered pairs each asked in both
          orders, as Liusie, Manakul & Gales 2024 §3.4 counts them (R = number of LLM calls, so symmetric selection
          has half the distinct pairs of no-repeat at the same R).  k must be even and
          k <= N(N-1) minus twice the unordered pairs already in ``existing``.
        * ``greedy-d-optimal``: k distinct unordered pairs, *including* the comparisons of the
          striped-diagonal start (eq. 45) needed to connect the design: N-1 of them when
          ``existing`` is None, C-1 when ``existing`` leaves C connected components, 0 when it
          connects all candidates.  So k >= that number and k <= N(N-1)/2 minus the unordered pairs
          already in ``existing``.
    method : {"greedy-d-optimal", "random", "no-repeat", "symmetric"}
        Selection strategy (see the module docstring).
    seed : int, numpy.random.Generator or None
        Seed for ``numpy.random.default_rng``.  ``greedy-d-optimal`` is deterministic and ignores
        it.
    existing : DataFrame with columns ``a``, ``b``, optional
        Comparisons already made (any other columns are ignored; repeated rows count with their
        multiplicity in W̃).  New comparisons never repeat an unordered pair of ``existing``
        (an ordered one for ``random``); ``greedy-d-optimal`` continues its greedy search from the
        design W̃ that ``existing`` defines.
    orient : {"balanced", "index"}
        ``greedy-d-optimal`` only: which candidate of a pick is shown first (``a``).  D-optimality
        does not depend on it (the row of W̃ only changes sign), but an LLM judge's position bias
        does.  ``"balanced"`` (default) shows first the candidate that has been shown first less
        often so far (counting ``existing``; ties: the earlier candidate), so that no candidate
        sits in one position and a constant bias (β = E[p], Liusie et al. 2024 (PoE) eq. 13) is removable;
        ``"index"`` always shows the earlier candidate in ``candidates`` first.

    Returns
    -------
    DataFrame, shape (k, 2)
        Columns ``a``, ``b``: the new comparisons only (rows of ``existing`` are *not* repeated),
        in selection order for ``greedy-d-optimal`` (start links first, then greedy picks, each
        oriented by ``orient``); in random order otherwise, with the two orders of a pair in
        consecutive rows for ``symmetric``.

    Raises
    ------
    ValueError
        Fewer than 2 candidates, duplicate candidate ids, ``k < 1``, ``k`` larger than the number
        of distinct pairs still available (both numbers are given), an odd ``k`` for
        ``symmetric``, ``k`` too small to cover (``random``) or connect (``greedy-d-optimal``) the
        candidates, an unknown method, or ``existing`` without columns ``a``/``b``, naming an
        unknown candidate, or comparing a candidate with itself.

    See Also
    --------
    bayes_judge.rank : scores and ranks from the comparisons once judged.

    References
    ----------
    Liusie et al. 2024 (PoE): §3.6 eq. 14-17, Appendix A.6 eq. 37-45.
    Liusie, Manakul & Gales 2024: §3.4 (random, no-repeat, symmetric).

    Examples
    --------
    >>> import bayes_judge as bj
    >>> df = bj.select_comparisons(4, 5)
    >>> df.values.tolist()
    [[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]]
    >>> bj.select_comparisons(4, 1, existing=df).values.tolist()
    [[1, 3]]
    >>> bj.select_comparisons(["x", "y", "z"], 4, method="symmetric", seed=1).shape
    (4, 2)
    """
    ids = _candidate_index(candidates)
    n = len(ids)
    k = _check_k(k)
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not one of {list(METHODS)}")
    if orient not in ("balanced", "index"):
        raise ValueError(f"orient={orient!r} is not one of ['balanced', 'index']")
    ea, eb = _existing_indices(existing, ids)

    if method == "greedy-d-optimal":
        ai, bi = _greedy_selection(n, k, ea, eb)
        if orient == "balanced":
            ai, bi = _balance_positions(n, ai, bi, ea, eb)
    elif method == "random":
        ai, bi = _random_ordered(n, k, ea, eb, np.random.default_rng(seed))
    elif method == "no-repeat":
        ai, bi = _random_unordered(n, k, ea, eb, np.random.default_rng(seed), method)
    else:
        if k % 2:
            raise ValueError(
                f"k={k} is odd: method='symmetric' asks each selected pair in both orders, so k "
                "(the number of comparisons) must be even"
            )
        pa, pb = _random_unordered(n, k // 2, ea, eb, np.random.default_rng(seed), method)
        ai = np.column_stack([pa, pb]).ravel()
        bi = np.column_stack([pb, pa]).ravel()
    return pd.DataFrame({"a": ids.take(ai), "b": ids.take(bi)})


# --------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------


def _candidate_index(candidates: int | Sequence) -> pd.Index:
    """Candidate ids as a pandas Index (position = index into W̃'s columns)."""
    if isinstance(candidates, bool):
        raise ValueError(f"candidates must be an int or a sequence of ids, got {candidates!r}")
    if isinstance(candidates, int | np.integer):
        n = int(candidates)
        if n < 2:
            raise ValueError(f"candidates: need at least 2 candidates to compare, got N={n}")
        return pd.RangeIndex(n)
    if isinstance(candidates, str | bytes) or not hasattr(candidates, "__len__"):
        raise ValueError(
            f"candidates must be an int N or a sequence of candidate ids, got {type(candidates).__name__}"
        )
    ids = pd.Index(list(candidates))
    if len(ids) < 2:
        raise ValueError(f"candidates: need at least 2 candidates to compare, got {len(ids)}")
    if ids.isna().any():
        raise ValueError(f"candidates: missing id(s) at position(s) {[int(i) for i in np.flatnonzero(ids.isna())][:8]}")
    if ids.has_duplicates:
        dup = list(dict.fromkeys(ids[ids.duplicated()]))[:8]
        raise ValueError(f"candidates: duplicate candidate id(s) {dup}")
    from .schema import ids_as_text

    text = pd.Index(ids_as_text(pd.Series(list(ids), dtype=object)))
    if text.has_duplicates:  # 1 and "1" (or 1.0): one candidate once judged, as validate_judgments reads ids
        dup = [c for c in ids if text[list(ids).index(c)] in set(text[text.duplicated()])][:8]
        raise ValueError(f"candidates: ids {dup} are one candidate once written in a judgments table "
                         "(ids are read as text, 1.0 as '1'); keep one of each")
    return ids


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ValueError(f"k must be an integer number of comparisons, got {k!r}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got k={k}")
    return int(k)


def _existing_indices(
    existing: pd.DataFrame | None, ids: pd.Index
) -> tuple[np.ndarray, np.ndarray]:
    """Positions (into ``ids``) of the ``a`` and ``b`` of every row of ``existing``."""
    if existing is None:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    if not isinstance(existing, pd.DataFrame):
        raise ValueError(
            f"existing must be a DataFrame with columns a, b, got {type(existing).__name__}"
        )
    missing = [c for c in ("a", "b") if c not in existing.columns]
    if missing:
        raise ValueError(f"existing: missing column(s) {missing}; expected columns a, b")
    from .schema import ids_as_text

    # matched as text, as a judgments table reads ids (candidate 1 is the validated table's "1")
    text = pd.Index(ids_as_text(pd.Series(list(ids), dtype=object)))
    ea = text.get_indexer(pd.Index(ids_as_text(existing["a"].reset_index(drop=True))))
    eb = text.get_indexer(pd.Index(ids_as_text(existing["b"].reset_index(drop=True))))
    for col, pos in (("a", ea), ("b", eb)):
        bad = pos < 0
        if bad.any():
            rows = list(existing.index[bad][:8])
            vals = list(dict.fromkeys(existing[col][bad]))[:8]
            raise ValueError(
                f"existing: column '{col}' names unknown candidate(s) {vals} in row(s) {rows}; "
                "they are not in `candidates`"
            )
    same = ea == eb
    if same.any():
        rows = list(existing.index[same][:8])
        raise ValueError(f"existing: row(s) {rows} compare a candidate with itself (a == b)")
    return ea.astype(np.intp), eb.astype(np.intp)


def _too_many(
    k: int, available: int, method: str, n: int, n_existing: int, unit: str
) -> ValueError:
    return ValueError(
        f"k={k} is larger than the {available} distinct {unit} available to method={method!r} "
        f"(N={n} candidates, {n_existing} already in `existing`)"
    )


# --------------------------------------------------------------------------------------------
# pair indexing: unordered pairs i < j <-> 0 .. N(N-1)/2 - 1 (row-major upper triangle),
# ordered pairs (i, j), i != j <-> 0 .. N(N-1) - 1
# --------------------------------------------------------------------------------------------


def _rank_unordered(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    lo, hi = np.minimum(i, j).astype(np.int64), np.maximum(i, j).astype(np.int64)
    return lo * (2 * n - lo - 1) // 2 + (hi - lo - 1)


def _unrank_unordered(idx: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    idx = np.asarray(idx, dtype=np.int64)
    m = 2 * n - 1
    i = np.floor((m - np.sqrt(np.maximum(m * m - 8.0 * idx, 0.0))) / 2).astype(np.int64)
    i = np.clip(i, 0, n - 2)

    def start(r: np.ndarray) -> np.ndarray:
        return r * (2 * n - r - 1) // 2

    i -= start(i) > idx  # float rounding fix-ups, at most one step either way
    i += start(i + 1) <= idx
    return i, idx - start(i) + i + 1


def _rank_ordered(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
    return i * (n - 1) + j - (j > i)


def _unrank_ordered(idx: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    i, r = np.divmod(np.asarray(idx, dtype=np.int64), n - 1)
    return i, r + (r >= i)


def _sample_excluding(
    rng: np.random.Generator, population: int, size: int, excluded: np.ndarray
) -> np.ndarray:
    """``size`` distinct draws from ``range(population)`` minus ``excluded``, uniformly.

    A uniformly random ordered sample of ``size + len(excluded)`` without replacement, with the
    excluded values removed, keeps its first ``size`` entries: the first ``size`` of a uniform
    random ordering of the allowed values.
    """
    if size == 0:
        return np.zeros(0, dtype=np.int64)
    draw = rng.choice(population, size=min(population, size + excluded.size), replace=False)
    if excluded.size:
        draw = draw[~np.isin(draw, excluded)]
    return draw[:size].astype(np.int64)


# --------------------------------------------------------------------------------------------
# random, no-repeat, symmetric (Liusie, Manakul & Gales 2024 §3.4)
# --------------------------------------------------------------------------------------------


def _random_ordered(
    n: int, k: int, ea: np.ndarray, eb: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``random``: k new ordered comparisons, every candidate in >= 1 comparison.

    Candidates that ``existing`` leaves uncovered are first paired up by a uniformly random
    matching (the odd one out, if any, with a uniformly random other candidate), each pair in a
    random order; the remaining comparisons are uniform over the ordered comparisons not yet
    chosen.  (For k well above N/2 this is close to, not exactly, uniform over covering sets.)
    """
    taken = np.unique(_rank_ordered(ea, eb, n))
    available = n * (n - 1) - taken.size
    if k > available:
        raise _too_many(k, available, "random", n, taken.size, "ordered comparisons")
    covered = np.zeros(n, dtype=bool)
    covered[ea] = covered[eb] = True
    loose = rng.permutation(np.flatnonzero(~covered))
    n_cover = (loose.size + 1) // 2
    if k < n_cover:
        raise ValueError(
            f"k={k} is too small for method='random': {loose.size} candidate(s) are in no "
            f"comparison yet and covering them takes at least {n_cover} comparisons"
        )
    ca, cb = loose[0 : 2 * (loose.size // 2) : 2], loose[1 : 2 * (loose.size // 2) : 2]
    if loose.size % 2:
        last = loose[-1]
        other = rng.integers(n - 1)
        other += other >= last
        ca, cb = np.append(ca, last), np.append(cb, other)
    flip = rng.random(ca.size) < 0.5
    ca, cb = np.where(flip, cb, ca), np.where(flip, ca, cb)
    chosen = _rank_ordered(ca, cb, n)
    rest = _sample_excluding(rng, n * (n - 1), k - chosen.size, np.concatenate([taken, chosen]))
    order = rng.permutation(np.concatenate([chosen, rest]))
    return _unrank_ordered(order, n)


def _random_unordered(
    n: int, m: int, ea: np.ndarray, eb: np.ndarray, rng: np.random.Generator, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """``m`` new distinct unordered pairs, uniformly; ``no-repeat`` orients each by a fair coin."""
    taken = np.unique(_rank_unordered(ea, eb, n))
    available = n * (n - 1) // 2 - taken.size
    if m > available:
        if method == "symmetric":
            raise _too_many(
                2 * m,
                2 * available,
                method,
                n,
                taken.size,
                "ordered comparisons (both orders of the free pairs)",
            )
        raise _too_many(m, available, method, n, taken.size, "unordered pairs")
    i, j = _unrank_unordered(_sample_excluding(rng, n * (n - 1) // 2, m, taken), n)
    if method == "no-repeat":
        flip = rng.random(m) < 0.5
        i, j = np.where(flip, j, i), np.where(flip, i, j)
    return i, j


# --------------------------------------------------------------------------------------------
# greedy D-optimal selection (Liusie et al. 2024 (PoE) §3.6, A.6)
# --------------------------------------------------------------------------------------------


def _w_tilde(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """W̃, shape (K + 1, N): the anchoring row e_1ᵀ, then one row per comparison (+1 at a, -1 at b)."""
    w = np.zeros((len(a) + 1, n))
    w[0, 0] = 1.0
    rows = np.arange(1, len(a) + 1)
    w[rows, a] = 1.0
    w[rows, b] = -1.0
    return w


def _gram(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """W̃ᵀW̃ = e_1 e_1ᵀ + Laplacian of the comparisons, shape (N, N), without forming W̃."""
    g = np.zeros((n, n))
    g[0, 0] = 1.0
    np.add.at(g, (a, a), 1.0)
    np.add.at(g, (b, b), 1.0)
    np.add.at(g, (a, b), -1.0)
    np.add.at(g, (b, a), -1.0)
    return g


def _striped_start(n: int, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Comparisons that connect the design, eq. 45 generalized to a partial design.

    The connected components of the comparison graph, ordered by their first candidate, are
    chained: first of component c against first of component c + 1.  With no comparisons every
    candidate is its own component and the chain is (1, 2), (2, 3), ..., (N-1, N): with the
    anchoring row, W̃ is exactly the striped diagonal of eq. 45.
    """
    graph = coo_matrix((np.ones(len(a)), (a, b)), shape=(n, n))
    n_comp, labels = connected_components(graph, directed=False)
    first = np.full(n_comp, n, dtype=np.intp)
    np.minimum.at(first, labels, np.arange(n))
    first.sort()
    return first[:-1], first[1:]


def _greedy_selection(
    n: int, k: int, ea: np.ndarray, eb: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``greedy-d-optimal``: start links (eq. 45), then greedy picks (eq. 17); k rows in all."""
    taken = np.unique(_rank_unordered(ea, eb, n))
    available = n * (n - 1) // 2 - taken.size
    if k > available:
        raise _too_many(k, available, "greedy-d-optimal", n, taken.size, "unordered pairs")
    sa, sb = _striped_start(n, ea, eb)
    if k < sa.size:
        where = (
            "no comparisons yet" if ea.size == 0 else f"`existing` leaves {sa.size + 1} components"
        )
        raise ValueError(
            f"k={k} is too small for method='greedy-d-optimal': with {where}, connecting the "
            f"N={n} candidates (the striped-diagonal start, Liusie et al. 2024 (PoE) eq. 45) takes {sa.size} "
            "comparisons, and W̃ᵀW̃ is singular until then"
        )
    a0, b0 = np.concatenate([ea, sa]), np.concatenate([eb, sb])
    ga, gb, _ = _greedy(n, a0, b0, k - sa.size)
    return np.concatenate([sa, ga]), np.concatenate([sb, gb])


def _balance_positions(
    n: int, a: np.ndarray, b: np.ndarray, ea: np.ndarray, eb: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Orient each pick, in order, so that every candidate is shown first about as often as second.

    ``lead[c]`` = times ``c`` was shown first minus times shown second, starting from
    ``existing``; a pick shows first the candidate with the smaller ``lead`` (ties: the earlier
    candidate).  Sequential by nature, like the greedy picks it orients.
    """
    lead = np.bincount(ea, minlength=n) - np.bincount(eb, minlength=n)
    out_a, out_b = np.empty_like(a), np.empty_like(b)
    for t, (i, j) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        i, j = min(i, j), max(i, j)
        if lead[j] < lead[i]:
            i, j = j, i
        lead[i] += 1
        lead[j] -= 1
        out_a[t], out_b[t] = i, j
    return out_a, out_b


@contextlib.contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run BLAS on one thread: the rank-1 update is memory-bound, and a multi-threaded BLAS
    spinning on a busy machine made each O(N²) update 10-30x slower in our measurements."""
    if threadpool_limits is None:  # pragma: no cover
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _greedy(
    n: int, a0: np.ndarray, b0: np.ndarray, picks: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy D-optimal picks (see :func:`_greedy_loop`), with BLAS on one thread."""
    with _one_blas_thread():
        return _greedy_loop(n, a0, b0, picks)


def _greedy_loop(
    n: int, a0: np.ndarray, b0: np.ndarray, picks: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy D-optimal picks from the connected design (a0, b0), Liusie et al. 2024 (PoE) eq. 17 and 44.

    Parameters
    ----------
    n : int
        Number of candidates N.
    a0, b0 : ndarray of int, shape (K0,)
        Comparisons already in the design (they must connect all N candidates).
    picks : int
        Number of comparisons to add.

    Returns
    -------
    a, b : ndarray of int, shape (picks,)
        The picks in order, ``a < b``.
    A : ndarray, shape (N, N)
        (W̃ᵀW̃)⁻¹ of the final design, maintained by Sherman-Morrison (eq. 44).

    Notes
    -----
    Adding row r (r_i = 1, r_j = -1) multiplies det(W̃ᵀW̃) by 1 + rᵀAr (eq. 39), so the best pair
    maximizes S_ij = A_ii + A_jj - 2 A_ij (eq. 17), among the pairs not compared yet.  After a
    pick, A ← A - u uᵀ / (1 + rᵀAr) with u = A r (eq. 44, one BLAS rank-1 update, O(N²)), and
    every score falls by (u_i - u_j)² / (1 + rᵀAr) >= 0.  So a score computed earlier is an upper
    bound on its current value, and the search is lazy (Minoux's accelerated greedy): each
    candidate i keeps the bound ub_i on max_j S_ij; a round re-scores, vectorized over all j, the
    rows of the few largest bounds and stops when an exact row maximum is at least every other
    row's bound.  The pick is the same argmax as a full O(N²) scan (ties aside) at a fraction of
    the memory traffic.
    """
    g = _gram(n, a0, b0)
    a_inv = np.linalg.inv(g)
    a_inv = np.asfortranarray((a_inv + a_inv.T) / 2)  # A, symmetric; columns are contiguous
    d = np.diag(a_inv).copy()
    used = np.eye(n, dtype=bool)
    used[a0, b0] = used[b0, a0] = True

    def row_scores(rows: np.ndarray) -> np.ndarray:
        s = d[rows, None] + d[None, :] - 2.0 * a_inv[:, rows].T  # (B, N), eq. 17
        s[used[rows]] = -np.inf
        return s

    ub = row_scores(np.arange(n)).max(axis=1)  # exact row maxima of the starting design
    out_a = np.empty(picks, dtype=np.intp)
    out_b = np.empty(picks, dtype=np.intp)
    batch = min(_LAZY_BATCH, n)
    for t in range(picks):
        while True:
            rows = np.argpartition(ub, n - batch)[n - batch :]
            s = row_scores(rows)
            cols = s.argmax(axis=1)
            best = s[np.arange(batch), cols]
            ub[rows] = best
            top = int(best.argmax())
            if best[top] >= ub.max():
                i, j = int(rows[top]), int(cols[top])
                break
        i, j = min(i, j), max(i, j)
        u = a_inv[:, i] - a_inv[:, j]  # u = A r
        c = 1.0 + u[i] - u[j]  # 1 + rᵀAr
        a_inv = blas.dger(-1.0 / c, u, u, a=a_inv, overwrite_a=True)  # eq. 44, in place
        d -= u * u / c
        used[i, j] = used[j, i] = True
        out_a[t], out_b[t] = i, j
    return out_a, out_b, a_inv
