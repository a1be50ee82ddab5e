"""The pieces a report page is made of: tables, images, notes and sections.

Sections build these plain objects; the Jinja2 template (``templates/report.html``) renders them.
Nothing here knows about models or HTML.
"""

from __future__ import annotations

import base64
import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

__all__ = [
    "Cell", "Table", "Image", "Text", "Section", "Run", "fmt", "table_from_frame", "image",
    "key_value_table", "FAIL", "WARN",
]

FAIL, WARN = "fail", "warn"  # CSS classes of highlighted cells and rows


@dataclass
class Cell:
    """One table cell: its text, and a CSS class (``"fail"``, ``"warn"``, ``"num"`` or empty)."""

    text: str
    cls: str = ""


@dataclass
class Table:
    """A table with a header row; ``row_cls`` highlights whole rows."""

    columns: list[str]
    rows: list[list[Cell]]
    caption: str = ""
    note: str = ""
    row_cls: list[str] = field(default_factory=list)
    kind: str = "table"


@dataclass
class Image:
    """A PNG embedded as a ``data:`` URI."""

    src: str
    alt: str
    caption: str = ""
    kind: str = "image"


@dataclass
class Text:
    """A paragraph; ``cls="fail"`` renders it as a problem, ``"note"`` as a muted note."""

    text: str
    cls: str = ""
    kind: str = "text"


@dataclass
class Section:
    """A titled part of a run's report.  ``omitted`` holds the one-line reason when it does not apply."""

    id: str
    title: str
    blocks: list = field(default_factory=list)
    omitted: str = ""


@dataclass
class Run:
    """Everything the template shows about one fit."""

    id: str
    name: str
    kind: str
    headline: list[tuple[str, str]]
    problems: list[str]
    sections: list[Section]


def fmt(x: object, digits: int = 3) -> str:
    """Format a number for a table: ``digits`` significant digits, integers plain, NaN as a dash."""
    if x is None:
        return "—"
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, int | np.integer):
        return f"{int(x):,}"
    if isinstance(x, float | np.floating):
        v = float(x)
        if math.isnan(v):
            return "—"
        if abs(v) >= 10 ** digits:
            return f"{v:,.0f}"
        return f"{v:.{digits}g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.2e}"
    return str(x)


def table_from_frame(
    df: pd.DataFrame,
    *,
    caption: str = "",
    note: str = "",
    index: bool = True,
    formats: Mapping[str, Callable[[object], str]] | None = None,
    cell_cls: Callable[[str, Any], str] | None = None,
    max_rows: int = 60,
) -> Table:
    """Turn a DataFrame into a :class:`Table`, at most ``max_rows`` rows (the rest counted in the note).

    Parameters
    ----------
    df : pandas.DataFrame
    caption, note : str
    index : bool
        Show the index as the first column.
    formats : mapping column -> formatter, optional
        Default :func:`fmt`.
    cell_cls : callable (column, value) -> css class, optional
        Highlights cells, e.g. failing diagnostics.
    max_rows : int
    """
    formats = dict(formats or {})
    shown = df.iloc[:max_rows]
    if len(df) > max_rows:
        extra = f"Showing the first {max_rows} of {len(df)} rows."
        note = f"{note} {extra}".strip()
    columns = ([str(df.index.name or "")] if index else []) + [str(c) for c in df.columns]
    rows = []
    for idx, rec in zip(shown.index, shown.itertuples(index=False), strict=True):
        cells = [Cell(fmt(idx))] if index else []
        for col, val in zip(df.columns, rec, strict=True):
            text = formats.get(col, fmt)(val)
            cls = cell_cls(col, val) if cell_cls else ""
            num = isinstance(val, int | float | np.number) and not isinstance(val, bool | np.bool_)
            cells.append(Cell(text, " ".join(c for c in (cls, "num" if num else "") if c)))
        rows.append(cells)
    row_cls = [FAIL if any(FAIL in c.cls for c in r) else "" for r in rows]
    return Table(columns=columns, rows=rows, caption=caption, note=note, row_cls=row_cls)


def image(fig: Figure, alt: str, caption: str = "", *, dpi: int = 96) -> Image:
    """Render ``fig`` to PNG and embed it; the figure is closed (its canvas released) afterwards."""
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    finally:
        _close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return Image(src=f"data:image/png;base64,{data}", alt=alt, caption=caption)


def _close(fig: Figure) -> None:
    """Release a figure: close it in pyplot (a no-op for figures pyplot never saw), drop its artists."""
    import matplotlib.pyplot as plt

    plt.close(fig)
    fig.clear()


def key_value_table(pairs: Sequence[tuple[str, str]], caption: str = "") -> Table:
    """A two-column table of (quantity, value) strings."""
    return Table(columns=["quantity", "value"], rows=[[Cell(k), Cell(v)] for k, v in pairs], caption=caption)
