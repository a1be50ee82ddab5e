"""What the engines that run a comparator elsewhere read of it: an endpoint, or Ray's actors.

:class:`~bayes_judge.comparator.comparator.Comparator` satisfies :class:`Judge`; the engines are
typed against this protocol, so they need not import the comparator back (it imports them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .store import JudgmentStore
    from .templates import PromptTemplate

__all__ = ["Judge"]


class Judge(Protocol):
    """A comparator's settings and runners, as an engine sees them."""

    mode: str
    template: PromptTemplate
    n_samples: int
    temperature: float
    max_new_tokens: int
    analysis_tokens: int
    tau: float
    endpoint: Any
    _spec: dict[str, Any]

    @property
    def judge_name(self) -> str: ...

    def _store_ids(self) -> tuple[str, str]: ...

    def _store_variants(self) -> dict[str, str]: ...

    def _seed_for(self, *key: str) -> int: ...

    def _run_prob(self, todo: Any, lookup: Any, ctx: Any, st: JudgmentStore, progress: bool) -> None: ...

    def _run_sample(self, todo: Any, lookup: Any, ctx: Any, st: JudgmentStore, progress: bool) -> None: ...

    def _run_likert(self, todo: Any, lookup: Any, ctx: Any, st: JudgmentStore, progress: bool) -> None: ...
