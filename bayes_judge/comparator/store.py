"""A resumable local store for comparator runs (SQLite).

Judgments stream in as they are made, one transaction per batch, keyed by
``(model, template, mode, item, a, b, order)``: ``a, b`` is the planned pair and ``order`` says
which was shown first (``"ab"`` or ``"ba"``). Re-running skips what is stored; a run killed at
any point (SIGKILL included) loses at most the batch in flight and never duplicates a row (the key
is the table's primary key, written with ``INSERT OR IGNORE``). Pointwise results (Likert scores,
PRePair analyses) are cached per ``(model, template, kind, item, candidate)``.

A judgment with no probability (an endpoint judge whose label tokens were missing from the top
log-probabilities, or a sampled judgment, local or endpoint, whose answers were all unparseable) is
stored with ``p_first = -1`` (:data:`MISSING_P`) and its ``extra`` saying why (``status``); the
comparator turns it into ``p_a = NaN``, never 0.5.

Endpoint judges (:mod:`.endpoint`) also keep every HTTP response in ``requests``, keyed by a hash
of the endpoint, the served model, the template and the exact request body (prompt and sampling
parameters, never the API key): a rerun sends no request whose answer is stored.

The store remembers the model and template that created it and refuses to be reused by another
unless asked (``allow_mixed=True``), so that one file never silently mixes judges.

Each stored judgment also keeps a fingerprint of what it judged (a hash of the two texts and the
context; of the text and the context for a pointwise result), in ``fingerprints``. A run that
states what it expects (:meth:`JudgmentStore.expect`) gets back only the stored results made on
the same texts: one made on other texts or another context is deleted and judged again, and
:attr:`JudgmentStore.stale` counts them (the comparator warns with
:class:`StoreChangedWarning`). A result stored before fingerprints existed is kept and adopts
the run's fingerprint. The settings that change a mode's results (samples, temperature and seed of
``sample``, ``tau`` of ``likert``, the analyses' length, a local judge's prompts rendered with or
without the chat template against the model's default) are kept with them as the mode's variant
(``variants``): one file holds runs of several settings, and a run reads only its own. The
comparator fingerprints the context as judged, so a context cut otherwise to fit ``max_length``
is judged again; the model's dtype is part of its identity (refused), the sampled answers' words
part of the template's.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

__all__ = ["JudgmentStore", "StoreMismatchError", "StoreChangedWarning", "likert_table", "fingerprint", "MISSING_P"]

_SEP = "\x1f"
MISSING_P = -1.0  # stored p_first of a judgment with no probability (read back as p_a = NaN)


def fingerprint(*parts: str | None) -> str:
    """A short hash of what a judgment judged (texts and context; ``None`` as no context)."""
    import hashlib

    return hashlib.sha256(_SEP.join("\x00" if p is None else str(p) for p in parts).encode()).hexdigest()[:20]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS judgments (
    model TEXT NOT NULL, template TEXT NOT NULL, mode TEXT NOT NULL,
    item TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, "order" TEXT NOT NULL,
    p_first REAL NOT NULL, extra TEXT,
    PRIMARY KEY (model, template, mode, item, a, b, "order")
);
CREATE TABLE IF NOT EXISTS pointwise (
    model TEXT NOT NULL, template TEXT NOT NULL, kind TEXT NOT NULL,
    item TEXT NOT NULL, candidate TEXT NOT NULL, value TEXT NOT NULL,
    PRIMARY KEY (model, template, kind, item, candidate)
);
CREATE TABLE IF NOT EXISTS fingerprints (
    model TEXT NOT NULL, template TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, hash TEXT NOT NULL,
    PRIMARY KEY (model, template, kind, key)
);
CREATE TABLE IF NOT EXISTS requests (
    key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, model TEXT NOT NULL, template TEXT NOT NULL,
    path TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL
);
"""


class StoreMismatchError(ValueError):
    """A store written by another model or template was opened without ``allow_mixed=True``."""


class StoreChangedWarning(UserWarning):
    """Stored results were made on other texts or contexts than this run's, and are judged again."""


class JudgmentStore:
    """SQLite store of comparator outputs (see the module docstring).

    Parameters
    ----------
    path : path of the ``.sqlite`` file (created with its folder when missing)
    model, template : identities of the judge (model fingerprint, template key)
    allow_mixed : accept a store created by another model / template
    variants : per pairwise mode (``"sample"``) or pointwise kind (``"point:analysis"``), the
        settings that change its results (``"n=6,T=1.0,seed=0,new=8"``): results of other
        settings are kept apart in the same file (a rerun with 6 samples does not read the 2-sample
        judgments as done)
    """

    def __init__(self, path: str | os.PathLike, *, model: str, template: str, allow_mixed: bool = False,
                 variants: dict[str, str] | None = None):
        self.path = Path(path)
        if self.path.is_dir():
            raise ValueError(f"store path {self.path} is a directory; give a file such as run.sqlite")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(self.path, timeout=30)
        except (OSError, sqlite3.Error) as err:
            raise ValueError(f"cannot open the store {self.path}: {err}") from err
        self.model, self.template = model, template
        self._variants = dict(variants or {})
        self._expected: dict[str, dict[tuple, str]] = {}
        self.stale: dict[str, int] = {}  # per kind: stored results dropped as made on other texts
        meta = self._initialise(model, template)
        if (meta.get("model"), meta.get("template")) != (model, template) and not allow_mixed:
            self._con.close()
            old = str(meta.get("model"))
            dtype_only = "-" in model and model.rsplit("-", 1)[0] == old  # same weights, dtype now recorded
            raise StoreMismatchError(
                f"the store {self.path} was written by model {old!r} with template "
                f"{meta.get('template')!r}; this run uses model {model!r} with template {template!r}. "
                + (f"The same weights: the store was written before the dtype they are loaded in was part of "
                   f"the model's identity (this run loads them in {model.rsplit('-', 1)[1]}), and another "
                   "precision judges differently. " if dtype_only else "")
                + "Use another store file, or pass allow_mixed=True to add to it anyway."
            )

    def _initialise(self, model: str, template: str, wait: float = 60.0) -> dict[str, str]:
        """WAL mode, the schema and the creator's meta, waiting out another process that is
        creating or recovering the same file (SQLite answers BUSY / "locked" then, which is not a
        damaged file); the first creator's meta wins."""
        import time

        deadline, pause = time.monotonic() + wait, 0.01
        while True:
            try:
                self._con.execute("PRAGMA journal_mode=WAL")
                self._con.execute("PRAGMA synchronous=NORMAL")
                self._con.executescript(_SCHEMA)
                with self._con:
                    self._con.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)",
                                          [("model", model), ("template", template), ("format", "1")])
                return dict(self._con.execute("SELECT key, value FROM meta").fetchall())
            except sqlite3.OperationalError as err:
                busy = "locked" in str(err) or "busy" in str(err)
                if busy and time.monotonic() < deadline:
                    time.sleep(pause)
                    pause = min(0.5, pause * 2)
                    continue
                self._con.close()
                if busy:
                    raise ValueError(f"the store {self.path} stayed locked by another process for {wait:.0f} s: "
                                     f"{err}") from err
                raise ValueError(f"{self.path} is not a bayes_judge store: {err}") from err
            except sqlite3.DatabaseError as err:
                self._con.close()
                raise ValueError(f"{self.path} is not a bayes_judge store: {err}") from err

    def _checkpoint(self) -> None:
        """Copy the write-ahead log into the main file (PASSIVE: never waits for readers), so that
        a copy of the ``.sqlite`` alone, made after a kill, holds every batch written so far."""
        try:
            self._con.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.OperationalError:
            pass  # another connection is checkpointing; its copy will do

    # -- fingerprints -----------------------------------------------------------------------
    def _mode(self, mode: str) -> str:
        """A pairwise mode as the judgments table stores it: with its settings' variant."""
        v = self._variants.get(mode)
        return f"{mode}|{v}" if v else mode

    def _kind(self, kind: str) -> str:
        """A pointwise kind as the pointwise table stores it: with its settings' variant."""
        v = self._variants.get(f"point:{kind}")
        return f"{kind}|{v}" if v else kind

    def expect(self, mode: str, prints: dict[tuple, str]) -> None:
        """What this run judges in pairwise ``mode``, per ``(item, a, b, order)``: its
        :func:`fingerprint`. Stored judgments whose fingerprint differs are dropped as they are
        read, and new ones keep theirs."""
        self._expected["pair:" + self._mode(mode)] = {tuple(str(x) for x in k): v for k, v in prints.items()}

    def expect_points(self, kind: str, prints: dict[tuple, str]) -> None:
        """:meth:`expect` for a pointwise ``kind`` (``"likert"``, ``"analysis"``), per ``(item, candidate)``."""
        self._expected["point:" + self._kind(kind)] = {tuple(str(x) for x in k): v for k, v in prints.items()}

    def _reconcile(self, kind: str, keys: list[tuple], table: str, columns: tuple[str, ...]) -> set[tuple]:
        """Of the stored ``keys`` of ``kind`` (``"pair:<mode>"`` or ``"point:<kind>"``, variants
        included), those made on other texts than expected (deleted here, with their
        fingerprints); the stored keys without a fingerprint adopt the expected one."""
        want = self._expected.get(kind)
        stored = kind.split(":", 1)[1]  # the mode / kind column's value
        if not want or not keys:
            return set()
        have = dict(self._con.execute("SELECT key, hash FROM fingerprints WHERE model=? AND template=? AND kind=?",
                                      (self.model, self.template, kind)).fetchall())
        stale, adopt = set(), []
        for k in keys:
            exp = want.get(k)
            if exp is None:
                continue
            got = have.get(_SEP.join(k))
            if got is None:
                adopt.append((self.model, self.template, kind, _SEP.join(k), exp))
            elif got != exp:
                stale.add(k)
        with self._con:
            if stale:
                where = " AND ".join(f'"{c}"=?' for c in columns)
                self._con.executemany(f"DELETE FROM {table} WHERE model=? AND template=? AND "
                                      f"{'mode' if table == 'judgments' else 'kind'}=? AND {where}",
                                      [(self.model, self.template, stored, *k) for k in stale])
                self._con.executemany("DELETE FROM fingerprints WHERE model=? AND template=? AND kind=? AND key=?",
                                      [(self.model, self.template, kind, _SEP.join(k)) for k in stale])
            self._con.executemany("INSERT OR REPLACE INTO fingerprints VALUES (?,?,?,?,?)", adopt)
        if stale:
            name = stored.split("|", 1)[0]
            self.stale[name] = self.stale.get(name, 0) + len(stale)
        return stale

    def _keep_prints(self, kind: str, keys: Iterable[tuple]) -> None:
        want = self._expected.get(kind)
        if not want:
            return
        rows = [(self.model, self.template, kind, _SEP.join(k), want[k]) for k in keys if k in want]
        with self._con:
            self._con.executemany("INSERT OR REPLACE INTO fingerprints VALUES (?,?,?,?,?)", rows)

    # -- pairwise ---------------------------------------------------------------------------
    def done(self, mode: str) -> pd.DataFrame:
        """Stored judgments of this model/template/mode: item, a, b, order, p_first, extra (those
        made on other texts than :meth:`expect` states are dropped)."""
        mode = self._mode(mode)
        rows = self._con.execute(
            'SELECT item, a, b, "order", p_first, extra FROM judgments WHERE model=? AND template=? AND mode=?',
            (self.model, self.template, mode),
        ).fetchall()
        stale = self._reconcile("pair:" + mode, [tuple(r[:4]) for r in rows], "judgments", ("item", "a", "b", "order"))
        if stale:
            rows = [r for r in rows if tuple(r[:4]) not in stale]
        return pd.DataFrame(rows, columns=["item", "a", "b", "order", "p_first", "extra"])

    def add(self, mode: str, rows: Iterable[tuple[str, str, str, str, float, dict | None]]) -> int:
        """Insert ``(item, a, b, order, p_first, extra)`` rows in one transaction; returns how many
        were new (existing keys are kept unchanged)."""
        mode = self._mode(mode)
        data = [
            (self.model, self.template, mode, str(i), str(a), str(b), o, float(p),
             json.dumps(e) if e else None)
            for i, a, b, o, p, e in rows
        ]
        with self._con:
            before = self._con.total_changes
            self._con.executemany("INSERT OR IGNORE INTO judgments VALUES (?,?,?,?,?,?,?,?,?)", data)
            added = self._con.total_changes - before
        self._keep_prints("pair:" + mode, [tuple(d[3:7]) for d in data])
        self._checkpoint()
        return added

    # -- pointwise --------------------------------------------------------------------------
    def pointwise(self, kind: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
        kind = self._kind(kind)
        got = self._con.execute(
            "SELECT item, candidate, value FROM pointwise WHERE model=? AND template=? AND kind=?",
            (self.model, self.template, kind),
        ).fetchall()
        want = {(str(i), str(c)) for i, c in keys}
        got = [(i, c, v) for i, c, v in got if (i, c) in want]
        stale = self._reconcile("point:" + kind, [(i, c) for i, c, _ in got], "pointwise", ("item", "candidate"))
        return {(i, c): v for i, c, v in got if (i, c) not in stale}

    def add_pointwise(self, kind: str, rows: Iterable[tuple[str, str, str]]) -> None:
        kind = self._kind(kind)
        data = [(self.model, self.template, kind, str(i), str(c), v) for i, c, v in rows]
        with self._con:
            self._con.executemany("INSERT OR IGNORE INTO pointwise VALUES (?,?,?,?,?,?)", data)
        self._keep_prints("point:" + kind, [(d[3], d[4]) for d in data])
        self._checkpoint()

    # -- endpoint requests ------------------------------------------------------------------
    def responses(self, keys: Iterable[str]) -> dict[str, dict]:
        """Stored endpoint responses by request key (see :func:`.endpoint.request_key`)."""
        want = list(dict.fromkeys(keys))
        got: dict[str, dict] = {}
        for start in range(0, len(want), 500):
            chunk = want[start:start + 500]
            rows = self._con.execute(
                f"SELECT key, response FROM requests WHERE key IN ({','.join('?' * len(chunk))})", chunk,
            ).fetchall()
            got.update((k, json.loads(v)) for k, v in rows)
        return got

    def add_response(self, key: str, *, endpoint: str, model: str, template: str, path: str,
                     request: dict, response: dict) -> None:
        """Keep one endpoint response (the request body is stored for audit; it holds no key)."""
        with self._con:
            self._con.execute("INSERT OR IGNORE INTO requests VALUES (?,?,?,?,?,?,?)",
                              (key, endpoint, model, template, path, json.dumps(request, sort_keys=True),
                               json.dumps(response)))

    def close(self) -> None:
        self._checkpoint()
        self._con.close()

    def __enter__(self) -> JudgmentStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def likert_table(scale, keys, cached) -> pd.DataFrame:
    """The stored Likert readings of ``keys`` ((item, candidate) pairs) as a table.

    Columns item, candidate, score, ``p_<value>`` per scale value, label_mass, and ``status``
    where the readings carry one (endpoint judges: ``"missing"`` when no scale value was among the
    top log-probabilities; its score and probabilities are then NaN).
    """
    recs = []
    for i, c in keys:
        v = json.loads(cached[(i, c)])
        rec = {"item": i, "candidate": c, "score": math.nan if v["score"] is None else v["score"],
               **{f"p_{k}": math.nan if p is None else p for k, p in zip(scale, v["probs"], strict=True)},
               "label_mass": v["label_mass"]}
        if "status" in v:
            rec["status"] = v["status"]
        recs.append(rec)
    return pd.DataFrame(recs)

