"""A resumable local store for comparator runs (SQLite).

Judgments stream in as they are made, one transaction per batch, keyed by
``(model, template, mode, item, a, b, order)``: ``a, b`` is the planned pair and ``order`` says
which was shown first (``"ab"`` or ``"ba"``). Re-running skips what is stored; a run killed at
any point (SIGKILL included) loses at most the batch in flight and never duplicates a row (the key
is the table's primary key, written with ``INSERT OR IGNORE``). Pointwise results (Likert scores,
PRePair analyses) are cached per ``(model, template, kind, item, candidate)``.

A judgment with no probability (an endpoint judge whose label tokens were missing from the top
log-probabilities, or whose sampled answers were all unparseable) is stored with ``p_first = -1``
and its ``extra`` saying why (``status``); the comparator turns it into ``p_a = NaN``, never 0.5.

Endpoint judges (:mod:`.endpoint`) also keep every HTTP response in ``requests``, keyed by a hash
of the endpoint, the served model, the template and the exact request body (prompt and sampling
parameters, never the API key): a rerun sends no request whose answer is stored.

The store remembers the model and template that created it and refuses to be reused by another
unless asked (``allow_mixed=True``), so that one file never silently mixes judges.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

__all__ = ["JudgmentStore", "StoreMismatchError", "likert_table"]

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
CREATE TABLE IF NOT EXISTS requests (
    key TEXT PRIMARY KEY, endpoint TEXT NOT NULL, model TEXT NOT NULL, template TEXT NOT NULL,
    path TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL
);
"""


class StoreMismatchError(ValueError):
    """A store written by another model or template was opened without ``allow_mixed=True``."""


class JudgmentStore:
    """SQLite store of comparator outputs (see the module docstring).

    Parameters
    ----------
    path : path of the ``.sqlite`` file (created with its folder when missing)
    model, template : identities of the judge (model fingerprint, template key)
    allow_mixed : accept a store created by another model / template
    """

    def __init__(self, path: str | os.PathLike, *, model: str, template: str, allow_mixed: bool = False):
        self.path = Path(path)
        if self.path.is_dir():
            raise ValueError(f"store path {self.path} is a directory; give a file such as run.sqlite")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._con = sqlite3.connect(self.path, timeout=30)
        except (OSError, sqlite3.Error) as err:
            raise ValueError(f"cannot open the store {self.path}: {err}") from err
        self.model, self.template = model, template
        meta = self._initialise(model, template)
        if (meta.get("model"), meta.get("template")) != (model, template) and not allow_mixed:
            self._con.close()
            raise StoreMismatchError(
                f"the store {self.path} was written by model {meta.get('model')!r} with template "
                f"{meta.get('template')!r}; this run uses model {model!r} with template {template!r}. "
                "Use another store file, or pass allow_mixed=True to add to it anyway."
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

    # -- pairwise ---------------------------------------------------------------------------
    def done(self, mode: str) -> pd.DataFrame:
        """Stored judgments of this model/template/mode: item, a, b, order, p_first, extra."""
        rows = self._con.execute(
            'SELECT item, a, b, "order", p_first, extra FROM judgments WHERE model=? AND template=? AND mode=?',
            (self.model, self.template, mode),
        ).fetchall()
        return pd.DataFrame(rows, columns=["item", "a", "b", "order", "p_first", "extra"])

    def add(self, mode: str, rows: Iterable[tuple[str, str, str, str, float, dict | None]]) -> int:
        """Insert ``(item, a, b, order, p_first, extra)`` rows in one transaction; returns how many
        were new (existing keys are kept unchanged)."""
        data = [
            (self.model, self.template, mode, str(i), str(a), str(b), o, float(p),
             json.dumps(e) if e else None)
            for i, a, b, o, p, e in rows
        ]
        with self._con:
            before = self._con.total_changes
            self._con.executemany("INSERT OR IGNORE INTO judgments VALUES (?,?,?,?,?,?,?,?,?)", data)
            added = self._con.total_changes - before
        self._checkpoint()
        return added

    # -- pointwise --------------------------------------------------------------------------
    def pointwise(self, kind: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
        got = self._con.execute(
            "SELECT item, candidate, value FROM pointwise WHERE model=? AND template=? AND kind=?",
            (self.model, self.template, kind),
        ).fetchall()
        want = {(str(i), str(c)) for i, c in keys}
        return {(i, c): v for i, c, v in got if (i, c) in want}

    def add_pointwise(self, kind: str, rows: Iterable[tuple[str, str, str]]) -> None:
        data = [(self.model, self.template, kind, str(i), str(c), v) for i, c, v in rows]
        with self._con:
            self._con.executemany("INSERT OR IGNORE INTO pointwise VALUES (?,?,?,?,?,?)", data)
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

