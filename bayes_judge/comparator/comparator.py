"""The LLM comparator: texts in, the judgments table of DESIGN.md out.

>>> from bayes_judge.comparator import Comparator           # doctest: +SKIP
>>> judge = Comparator(template="summeval-coherence")        # the embedded default model
>>> df = judge.compare(pairs, texts=texts, contexts=contexts, symmetric=True, store="run.sqlite")

Four judgment modes, all returning ``p_a`` = P(the candidate shown first is better):

``"prob"``     prompt-based classifier, p = P(w_A) / (P(w_A) + P(w_B)) from the next-token
               distribution after the prompt (Liusie, Manakul & Gales 2024 eq. 3);
``"sample"``   ``n_samples`` sampled answers parsed to A / B / tie, p = share choosing A, ties
               counting half (Liusie, Manakul & Gales 2024 eq. 4-5); unparseable answers are counted, never guessed
               (none parseable: p_a = NaN, status "unparsed", a warning);
``"likert"``   pointwise probability-weighted Likert scores s = Σ_k k P(k) / Σ_k P(k) (Jeong et al. 2024
               §3.1, G-Eval), one per (item, candidate), then p = sigmoid((s_a − s_b) / tau);
``"prepair"``  PRePair (Jeong et al. 2024 §4): a pointwise analysis of each output, generated once per
               output and cached, is written into the pairwise prompt, read by the classifier.

The judge is a local model (transformers, in this process) or any OpenAI-compatible server
(``Comparator(endpoint="http://127.0.0.1:8000/v1", model="served-name")``, see :mod:`.endpoint`).
``compare(..., engine="ray")`` fans the comparisons out over Ray actors (:mod:`.ray_engine`).
After every run the judgments are checked for information (:mod:`.diagnose`).
"""

from __future__ import annotations

import json
import math
import os
import string
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from ..diagnose import diagnose_judgments, warn_if_uninformative
from ..schema import ids_as_text
from .bias import debias_position, position_bias
from .models import LoadedModel, load_model
from .parse import parse_choice
from .progress import progress_bar
from .store import MISSING_P, JudgmentStore, StoreChangedWarning, fingerprint, likert_table
from .templates import PromptTemplate, get_template

if TYPE_CHECKING:
    from .endpoint import EndpointJudge

__all__ = ["Comparator", "MODES", "ContextTooLongWarning"]

MODES = ("prob", "sample", "likert", "prepair")
LOW_LABEL_MASS = 0.05  # median probability of the label words below which a classifier's p_a is mostly noise


class ContextTooLongWarning(UserWarning):
    """A context was truncated so that the prompts fit the model."""


def _unique_columns(df: pd.DataFrame, what: str) -> None:
    """Refuse a table with two columns of one name (``df["text"]`` would be a table, not a column)."""
    dup = list(dict.fromkeys(df.columns[df.columns.duplicated()]))
    if dup:
        raise ValueError(f"{what} has more than one column named {dup}; keep one column of each name "
                         "(drop or rename the others)")


def _refuse_missing_ids(df: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    """Refuse rows whose id is missing (NaN, None): they would be judged under the id 'nan' and
    never found again."""
    bad = df[list(cols)].isna()
    rows = np.flatnonzero(bad.any(axis=1).to_numpy())
    if len(rows):
        named = [c for c in cols if bad[c].any()]
        raise ValueError(f"{what}: {len(rows)} row(s) have no {' / '.join(named)} id (NaN or None): row(s) "
                         f"{rows[:8].tolist()} (counted from 0); fill in the ids or drop those rows")


class Comparator:
    """A pairwise LLM judge.

    Parameters
    ----------
    model : path or hub name, optional
        ``None`` uses the embedded default (SmolLM2-135M-Instruct under ``models/``; install with
        ``bayes-judge models install``). A transformers folder, a ``.gguf`` file, or a hub name.
    template : preset name, format string with ``{a}``/``{b}``, or :class:`PromptTemplate`
    mode : one of :data:`MODES`
    batch_size : prompts per forward pass, or ``"auto"`` (default): on a GPU as many as half the free
        memory holds, with the prompts of many items packed into each pass (:mod:`.packed`); 8 on
        the CPU
    device, dtype : see :func:`~bayes_judge.comparator.models.load_model`
    max_length : prompt length cap (tokens); default the model's context size
    on_too_long : ``"truncate"`` the context (warning) or ``"raise"`` when a prompt is too long
    chat : apply the tokenizer's chat template (default: when it has one and the model is causal)
    n_samples, temperature, max_new_tokens : sampled mode
    analysis_tokens : PRePair analysis length (greedy decoding)
    tau : score scale of the Likert → pairwise mapping p = sigmoid((s_a − s_b) / tau)
    seed : sampled mode's randomness (per comparison, independent of batching and resumption)
    kv_cache : reuse the shared prefix (context, then first candidate) of each item's prompts
    endpoint : URL of an OpenAI-compatible API (``http://host:port/v1``); ``model`` is then the
        served model name and no local model is loaded (``lm`` is None; see :mod:`.endpoint`)
    api_key_env : environment variable holding the endpoint's API key (never stored)
    api : ``"chat"`` (the server applies the chat template) or ``"completions"``
    concurrency : endpoint requests in flight at once
    tokenizer : a local tokenizer (folder or ``.gguf``) of the served model: completions prompts
        rendered with its chat template (the in-process judge's exact prompt); label words checked
    no_logprobs : endpoint without log-probabilities: ``"raise"``, or ``"sample"`` (prob mode
        falls back to sampled answers, with a warning)
    request_options : endpoint client settings: ``timeout``, ``max_retries``, ``backoff``,
        ``max_backoff`` (:class:`~.endpoint.EndpointClient`), ``top_logprobs``
    threads : CPU threads of a local judge on the CPU during :meth:`compare`: ``"auto"`` (default:
        the cores the system's load leaves free, :mod:`.threads`), an int, or ``None`` (torch's
        own choice, every core); read when each ``compare`` starts, restored after it

    Examples
    --------
    >>> import bayes_judge as bj                                                     # doctest: +SKIP
    >>> from bayes_judge.comparator import Comparator                                 # doctest: +SKIP
    >>> texts, contexts = bj.datasets.summeval.texts(articles=1)                      # doctest: +SKIP
    >>> judge = Comparator(template="summeval-coherence")                             # doctest: +SKIP
    >>> df = judge.compare(pairs, texts, contexts, symmetric=True, store="run.sqlite")  # doctest: +SKIP
    """

    def __init__(
        self,
        model: str | os.PathLike | LoadedModel | None = None,
        *,
        template: str | PromptTemplate = "summeval-coherence",
        mode: str = "prob",
        batch_size: int | str = "auto",
        device: str = "auto",
        dtype: str | None = None,
        max_length: int | None = None,
        on_too_long: str = "truncate",
        chat: bool | None = None,
        n_samples: int = 5,
        temperature: float = 1.0,
        max_new_tokens: int = 8,
        analysis_tokens: int = 96,
        tau: float = 1.0,
        seed: int = 0,
        kv_cache: bool = True,
        endpoint: str | None = None,
        api_key_env: str | None = None,
        api: str = "chat",
        concurrency: int = 4,
        tokenizer: Any = None,
        no_logprobs: str = "raise",
        request_options: Mapping[str, Any] | None = None,
        threads: int | str | None = "auto",
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        if on_too_long not in ("truncate", "raise"):
            raise ValueError(f"on_too_long must be 'truncate' or 'raise', not {on_too_long!r}")
        if batch_size != "auto" and (isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer)
                                     or batch_size < 1):
            raise ValueError(f"batch_size must be 'auto' or an integer of at least 1, not {batch_size!r}")
        if n_samples < 1 or max_new_tokens < 1:
            raise ValueError("n_samples and max_new_tokens must be at least 1")
        if not tau > 0:
            raise ValueError(f"tau must be positive, not {tau}")
        self.template = get_template(template)
        need = {"prob": "pairwise", "sample": "pairwise", "likert": "pointwise", "prepair": "prepair"}[mode]
        if getattr(self.template, need) is None or (mode == "prepair" and self.template.analysis is None):
            raise ValueError(f"template {self.template.name!r} has no {need} prompt, which mode {mode!r} needs")
        self.mode, self.batch_size, self.on_too_long = mode, batch_size, on_too_long
        self.n_samples, self.temperature, self.max_new_tokens = n_samples, temperature, max_new_tokens
        self.analysis_tokens, self.tau, self.seed, self.kv_cache = analysis_tokens, tau, seed, kv_cache
        from .threads import resolve_threads

        resolve_threads(threads)  # checked now, read again at each compare (the load changes)
        self.threads = threads
        self._spec = {"model": model, "template": self.template, "mode": mode, "batch_size": batch_size,
                      "device": device, "dtype": dtype, "max_length": max_length, "on_too_long": on_too_long,
                      "chat": chat, "n_samples": n_samples, "temperature": temperature,
                      "max_new_tokens": max_new_tokens, "analysis_tokens": analysis_tokens, "tau": tau,
                      "seed": seed, "kv_cache": kv_cache, "endpoint": endpoint, "api_key_env": api_key_env,
                      "api": api, "concurrency": concurrency, "tokenizer": tokenizer, "no_logprobs": no_logprobs,
                      "request_options": dict(request_options or {}),
                      "threads": threads}  # how a Ray actor rebuilds this judge
        self.endpoint: EndpointJudge | None = None
        if endpoint is not None:
            self._init_endpoint(endpoint, model, api_key_env=api_key_env, api=api, concurrency=concurrency,
                                tokenizer=tokenizer, no_logprobs=no_logprobs, options=dict(request_options or {}))
            return
        self.lm = model if isinstance(model, LoadedModel) else load_model(model, device=device, dtype=dtype, max_length=max_length)
        self.max_length = int(max_length) if max_length is not None else self.lm.max_length
        self.chat = (self.lm.has_chat_template and not self.lm.is_seq2seq) if chat is None else bool(chat)
        if self.chat and not self.lm.has_chat_template:
            raise ValueError(f"chat=True but the tokenizer of {self.lm.name} has no chat template")
        self._label_ids = self._first_tokens(self.template.labels, "label words")
        self._scale_ids = self._first_tokens(tuple((str(k), f" {k}") for k in self.template.scale), "Likert scale values")

    def _init_endpoint(self, endpoint: str, model, *, api_key_env, api, concurrency, tokenizer, no_logprobs,
                       options: dict) -> None:
        """An endpoint judge: check the server, the label words and the log-probabilities now."""
        from .endpoint import (
            EndpointClient,
            EndpointJudge,
            LogprobsFallbackWarning,
            LogprobsUnavailableError,
        )

        if model is None or isinstance(model, LoadedModel) or not isinstance(model, str):
            raise ValueError("an endpoint judge needs model= naming the served model (a string; see GET /v1/models)")
        top = int(options.pop("top_logprobs", 20))
        unknown = set(options) - {"timeout", "max_retries", "backoff", "max_backoff"}
        if unknown:
            raise ValueError(f"request_options: unknown key(s) {sorted(unknown)}; "
                             "allowed: timeout, max_retries, backoff, max_backoff, top_logprobs")
        client = EndpointClient(endpoint, model, api_key_env=api_key_env, **options)
        self.endpoint = ep = EndpointJudge(client, self.template, api=api, concurrency=concurrency, top_logprobs=top,
                                           tokenizer=tokenizer, no_logprobs=no_logprobs)
        self.lm = cast(LoadedModel, None)  # no local model
        self.max_length = cast(int, None)
        self.chat = api == "chat"
        if self.mode in ("prob", "prepair", "likert") and not ep.probe_logprobs():
            if no_logprobs == "sample" and self.mode == "prob":
                warnings.warn(f"{client.base_url} ({model}) returns no log-probabilities; judging by "
                              f"{self.n_samples} sampled answers per comparison instead (mode 'sample', Liusie, Manakul & Gales 2024 eq. 4-5)",
                              LogprobsFallbackWarning, stacklevel=3)
                self.mode = self._spec["mode"] = "sample"
            else:
                raise LogprobsUnavailableError(
                    f"{client.base_url} ({model}, {api} API) returns no log-probabilities, which mode {self.mode!r} "
                    "needs; use mode='sample'" + (" or no_logprobs='sample'" if self.mode == "prob" else ""))
        if self.mode in ("prob", "prepair"):
            ep.check_labels(self.template.labels, "label words")
        elif self.mode == "likert":
            ep.check_labels([[str(k)] for k in self.template.scale], "Likert scale values")

    # -- identity ---------------------------------------------------------------------------
    @property
    def judge_name(self) -> str:
        name = self.endpoint.name if self.endpoint is not None else self.lm.name
        return f"{name}/{self.template.name}/{self.mode}"

    def _store_ids(self) -> tuple[str, str]:
        if self.endpoint is not None:
            return self.endpoint.store_model_id(), self.template.key()
        return f"{self.lm.name}@{self.lm.fingerprint}", self.template.key()

    def _store_variants(self) -> dict[str, str]:
        """The settings that change a mode's results, kept with them in the store (a run of 6 samples
        a comparison does not read a run of 2 as done; see :class:`.store.JudgmentStore`).

        A local judge's prompts rendered otherwise than the model's default (``chat`` on a model
        whose default is off, or off where it is on) mark every mode and pointwise kind; the
        default adds no mark, so that stores written before ``chat`` counted are still read. (The
        context cut that ``max_length`` makes is in the fingerprint of what was judged, see
        :meth:`_expect`; the dtype is in the model's fingerprint; the sampled answers' words in the
        template's key.)"""
        variants = {"sample": f"n={self.n_samples},T={self.temperature},seed={self.seed},new={self.max_new_tokens}",
                    "likert": f"tau={self.tau}",
                    "prepair": f"analysis={self.analysis_tokens}",  # its verdicts read the analyses
                    "point:analysis": f"tokens={self.analysis_tokens}"}
        if self.endpoint is None and self.chat != (self.lm.has_chat_template and not self.lm.is_seq2seq):
            mark = f"chat={'on' if self.chat else 'off'}"
            for kind in ("prob", "sample", "likert", "prepair", "point:likert", "point:analysis"):
                variants[kind] = f"{variants[kind]},{mark}" if kind in variants else mark
        return variants

    def _expect(self, st: JudgmentStore, plan: pd.DataFrame, lookup, ctx) -> None:
        """Tell the store what this run judges (texts and contexts), so that results stored from
        other texts are judged again rather than returned. ``ctx`` holds the contexts as judged, cut
        to fit the model (:meth:`_fit_contexts`): a result made with another cut (another
        ``max_length``, or an item planned with longer candidates) is judged again too."""
        cols = [plan[c].tolist() for c in ("item", "a", "b", "order", "first", "second")]
        st.expect(self.mode, {(i, a, b, o): fingerprint(lookup(i, f), lookup(i, s), ctx[i])
                              for i, a, b, o, f, s in zip(*cols, strict=True)})
        cands = dict.fromkeys((i, c) for i, f, s in zip(cols[0], cols[4], cols[5], strict=True) for c in (f, s))
        points = {k: fingerprint(lookup(*k), ctx[k[0]]) for k in cands}
        for kind in ("likert", "analysis"):
            st.expect_points(kind, points)

    def _warn_stale(self, st: JudgmentStore, store) -> None:
        if st.stale:
            n = sum(st.stale.values())
            warnings.warn(f"{n} result(s) in the store {store} were made on other texts or contexts than this run's "
                          f"({', '.join(f'{k}: {v}' for k, v in st.stale.items())}; a context cut otherwise to fit "
                          "max_length counts as another); they were judged again",
                          StoreChangedWarning, stacklevel=3)

    # -- tokens and prompts -----------------------------------------------------------------
    def _first_tokens(self, sets: Sequence[Sequence[str]], what: str) -> list[list[int]]:
        tok = self.lm.tokenizer
        ids = []
        for words in sets:
            firsts = []
            for w in words:
                t = tok.encode(w, add_special_tokens=False)
                if not t:
                    raise ValueError(f"{what}: {w!r} tokenizes to nothing")
                # a variant whose first token is bare whitespace (" 1" → " ", "1") says nothing
                if len(words) > 1 and not tok.decode(t[:1]).strip():
                    continue
                firsts.append(t[0])
            if not firsts:
                raise ValueError(f"{what}: every word of {list(words)} starts with a whitespace token")
            ids.append(sorted(set(firsts)))
        seen: dict[int, int] = {}
        for k, s in enumerate(ids):
            for t in s:
                if t in seen and seen[t] != k:
                    raise ValueError(
                        f"{what}: {list(sets[seen[t]])} and {list(sets[k])} share the first token "
                        f"{tok.decode([t])!r} (id {t}); the classifier could not tell them apart. "
                        "Choose label words whose first tokens differ."
                    )
                seen[t] = k
        return ids

    def _render(self, text: str, answer_prefix: str) -> list[int]:
        return self._render_many([text], answer_prefix)[0]

    def _render_many(self, texts: Sequence[str], answer_prefix: str) -> list[list[int]]:
        """Token ids of the prompts for ``texts``, tokenized in one call (the fast tokenizer encodes a
        list on all cores; one prompt at a time was ~2 ms a comparison, the GPU's pace)."""
        tok = self.lm.tokenizer
        if self.chat:
            head = [{"role": "system", "content": self.template.system}] if self.template.system else []
            strings = [tok.apply_chat_template([*head, {"role": "user", "content": t}], tokenize=False,
                                               add_generation_prompt=True) + answer_prefix for t in texts]
            return tok(strings, add_special_tokens=False)["input_ids"]
        if self.lm.is_seq2seq:
            return tok(list(texts))["input_ids"]
        return tok([t + ("\n" + answer_prefix if answer_prefix else "\n") for t in texts])["input_ids"]

    def _decoder_prefix(self, answer_prefix: str) -> list[int]:
        if not self.lm.is_seq2seq or not answer_prefix:
            return []
        return self.lm.tokenizer.encode(answer_prefix, add_special_tokens=False)

    def _fit(self, item: str, context: str | None, render) -> tuple[str | None, list]:
        """Render an item's prompts; truncate its context when the longest prompt is too long.

        The runs' contexts come cut already (:meth:`_fit_contexts`, on all of an item's planned
        prompts), so that their prompts fit here as rendered; this cut is a safety net (PRePair
        analyses longer than their room) and what direct callers of the modes get."""
        context, prompts, keep = self._cut(item, context, render)
        if keep is not None:
            warnings.warn(
                f"item {item!r}: context truncated to {keep} tokens so that every prompt fits the "
                f"model's {self.max_length} tokens", ContextTooLongWarning, stacklevel=4,
            )
        return context, prompts

    def _cut(self, item: str, context: str | None, render, reserve: int = 0) -> tuple[str | None, list, int | None]:
        """``render(context)``, the context cut when the longest prompt is longer than ``max_length``
        less ``reserve`` tokens: the context, its prompts, and how many context tokens were kept
        (None: not cut)."""
        prompts = render(context)
        limit = self.max_length - reserve
        room = f" (and {reserve} tokens kept for the PRePair analyses)" if reserve else ""
        longest = max(len(p) for p in prompts)
        if longest <= limit:
            return context, prompts, None
        if self.on_too_long == "raise" or not context:
            raise ValueError(
                f"item {item!r}: a prompt has {longest} tokens{room}, more than the model's {self.max_length}"
                + ("" if context else " (the candidate texts alone are too long)")
                + "; shorten the texts, raise max_length, or use on_too_long='truncate'"
            )
        tok = self.lm.tokenizer
        ctx_ids = tok.encode(context, add_special_tokens=False)
        for _ in range(4):
            keep = len(ctx_ids) - (longest - limit) - 8
            if keep < 16:
                raise ValueError(
                    f"item {item!r}: even with the context truncated the prompts exceed {self.max_length} "
                    f"tokens{room}; the candidate texts are too long for this model"
                )
            ctx_ids = ctx_ids[:keep]
            short = tok.decode(ctx_ids) + " ..."
            prompts = render(short)
            longest = max(len(p) for p in prompts)
            if longest <= limit:
                return short, prompts, keep
        raise ValueError(f"item {item!r}: could not truncate the context to fit {self.max_length} tokens{room}")

    def _fit_contexts(self, ctx: Mapping[str, str | None], lookup, kinds: Sequence[str], *,
                      pairs: pd.DataFrame | None = None, cands: pd.DataFrame | None = None) -> dict[str, str | None]:
        """The context each item is judged with: its own, or cut once so that every prompt this call
        plans for the item fits ``max_length``, whichever of them are stored already or judged in
        another batch (a resumed run, ``budget=``, ``engine="ray"``: all cut it the same way).

        Parameters
        ----------
        ctx : item -> context (None: the template has none)
        lookup : the candidates' texts (:meth:`_text_lookup`)
        kinds : the prompts to fit: ``"pairwise"``, ``"prepair"`` (``analysis_tokens`` per
            analysis kept free: the analyses are written later), ``"pointwise"``, ``"analysis"``
        pairs : the planned comparisons (item, first, second); their candidates are the pointwise
            prompts' too
        cands : planned (item, candidate) rows, for the pointwise kinds

        Returns
        -------
        item -> context, cut (``"<first tokens> ..."``, one :class:`ContextTooLongWarning` naming
        the items) or not; a prompt that no cut makes fit raises ValueError before anything is
        judged. An item's prompts are rendered here only when they could reach the limit: the
        template's frame (empty context and candidates) plus its context and its longest candidate
        in each field, each tokenized alone (all items in one call), plus 8 tokens a field for the
        joins.
        """
        if self.endpoint is not None:  # the server takes the whole prompt or says why not
            return dict(ctx)
        tpl = self.template
        by_pair: dict[str, list[tuple[str, str]]] = {}
        by_cand: dict[str, dict[str, None]] = {}
        if pairs is not None:
            for i, f, sec in zip(pairs["item"], pairs["first"], pairs["second"], strict=True):
                by_pair.setdefault(i, []).append((f, sec))
                by_cand.setdefault(i, {}).update({f: None, sec: None})
        if cands is not None:
            for i, c in zip(cands["item"], cands["candidate"], strict=True):
                by_cand.setdefault(i, {})[c] = None

        def n_tokens(strings: list[str]) -> list[int]:
            got = self.lm.tokenizer(strings, add_special_tokens=False)["input_ids"] if strings else []
            return [len(t) for t in got]

        texts = {(i, c): lookup(i, c) for i, cs in by_cand.items() for c in cs}
        uniq = list(dict.fromkeys(texts.values()))
        text_len = dict(zip(uniq, n_tokens(uniq), strict=True))
        longest = {i: max(text_len[texts[(i, c)]] for c in cs) for i, cs in by_cand.items()}
        has_ctx = [i for i in by_cand if ctx[i] is not None]
        ctx_len = dict(zip(has_ctx, n_tokens([cast(str, ctx[i]) for i in has_ctx]), strict=True))
        specs = {"pairwise": (tpl.pairwise, tpl.answer_prefix), "prepair": (tpl.prepair, tpl.answer_prefix),
                 "pointwise": (tpl.pointwise, tpl.score_prefix), "analysis": (tpl.analysis, "")}
        cut: dict[str, tuple[str | None, int]] = {}  # the shortest cut of an item: it fits every kind
        for kind in kinds:
            text, prefix = specs[kind]
            if text is None:
                continue
            fields = Counter(name for _, name, _, _ in string.Formatter().parse(text) if name)
            pointwise = kind in ("pointwise", "analysis")
            blank = dict.fromkeys(("context", "text") if pointwise else ("context", "a", "b", "analysis_a", "analysis_b"), "")
            reserve = (self.analysis_tokens + 8) * (fields["analysis_a"] + fields["analysis_b"])
            frame = len(self._render_many([text.format(**blank)], prefix)[0])
            n = fields["text"] if pointwise else fields["a"] + fields["b"]
            for item in by_cand:
                bound = (frame + fields["context"] * ctx_len.get(item, 0) + n * longest[item] + reserve
                         + 8 * (n + fields["context"] + 1))
                if bound <= self.max_length or (not pointwise and item not in by_pair):
                    continue  # no planned prompt reaches the limit

                def render(c, text=text, prefix=prefix, item=item, pointwise=pointwise, blank=blank):
                    more = {} if c is None else {"context": c}
                    if pointwise:
                        return self._render_many([text.format(text=texts[(item, x)], **more) for x in by_cand[item]],
                                                 prefix)
                    return self._render_many([text.format(**{**blank, **more, "a": texts[(item, f)], "b": texts[(item, sec)]})
                                              for f, sec in by_pair[item]], prefix)

                short, _, keep = self._cut(item, ctx[item], render, reserve)
                if keep is not None and (item not in cut or keep < cut[item][1]):
                    cut[item] = (short, keep)
        if cut:
            named = ", ".join(f"{i!r} to {k} tokens" for i, (_, k) in list(cut.items())[:5])
            warnings.warn(
                f"context truncated for {len(cut)} item(s) so that every prompt planned for them fits the model's "
                f"{self.max_length} tokens: {named}{f' and {len(cut) - 5} more' if len(cut) > 5 else ''}. The cut "
                "is made on all of an item's planned prompts (a resumed run and engine='ray' make the same); "
                "raise max_length up to the model's context size to keep more of it",
                ContextTooLongWarning, stacklevel=3)
        return {**ctx, **{i: c for i, (c, _) in cut.items()}}

    # -- inputs -----------------------------------------------------------------------------
    @staticmethod
    def _text_lookup(texts, name_items: bool = True) -> Any:
        """``lookup(item, cand) -> text``; its errors name the item unless the pairs named none
        (``name_items=False``: the run's one item is a placeholder the user never wrote)."""
        keyed: dict[tuple[str, ...] | str, Any]
        if isinstance(texts, pd.DataFrame):
            _unique_columns(texts, "the texts table")
            missing = {"item", "candidate", "text"} - set(texts.columns)
            if missing:
                raise ValueError(f"texts table is missing column(s) {sorted(missing)}; expected item, candidate, text")
            _refuse_missing_ids(texts, ("item", "candidate"), "the texts table")
            items, cands = ids_as_text(texts["item"]).tolist(), ids_as_text(texts["candidate"]).tolist()  # 1.0 is item "1"
            keyed = {}
            clash = set()
            for i, c, t in zip(items, cands, texts["text"], strict=True):
                if (i, c) in keyed and keyed[(i, c)] != t:
                    clash.add((i, c))
                keyed[(i, c)] = t
            if clash:
                raise ValueError(f"texts table: (item, candidate) {sorted(clash)[:5]} have two different texts; "
                                 "keep one row each")
        elif isinstance(texts, Mapping):
            keyed = {(tuple(map(str, k)) if isinstance(k, tuple) else str(k)): v for k, v in texts.items()}
        else:
            raise TypeError("texts must map candidate id (or (item, candidate)) to text, or be a table with item, candidate, text")

        def lookup(item: str, cand: str) -> str:
            t = keyed.get((item, cand), keyed.get(cand))
            where = f" (item {item!r})" if name_items else ""
            if t is None:
                raise ValueError(f"no text for candidate {cand!r}{where}")
            if not isinstance(t, str):
                raise ValueError(f"the text of candidate {cand!r}{where} is not a string but "
                                 f"{type(t).__name__} {t!r}")
            if not t.strip():
                raise ValueError(f"the text of candidate {cand!r}{where} is empty")
            return t

        return lookup

    def _contexts(self, contexts, items: Sequence[str]) -> dict[str, str | None]:
        """item -> context (None for every item of a template without ``{context}``, with a
        UserWarning when contexts were given anyway: the judge would never see them)."""
        if not self.template.uses_context:
            if contexts is not None:
                warnings.warn(
                    f"contexts were given but template {self.template.name!r} has no {{context}} field, so the "
                    "judge never sees them (ignored); use a template with {context} (e.g. 'summeval-coherence', "
                    "or add {context} to your own), or leave contexts out", UserWarning, stacklevel=3)
            return dict.fromkeys(items)
        if contexts is None:
            raise ValueError(f"template {self.template.name!r} uses {{context}}: pass contexts= (item → context text)")
        if isinstance(contexts, str):
            contexts = dict.fromkeys(items, contexts)
        if isinstance(contexts, pd.Series):
            contexts = contexts.to_dict()
        if isinstance(contexts, pd.DataFrame):
            _unique_columns(contexts, "the contexts table")
            if not {"item", "context"} <= set(contexts.columns):
                raise ValueError(f"a contexts table needs columns item and context; it has {list(contexts.columns)}")
            contexts = dict(zip(ids_as_text(contexts["item"]), contexts["context"], strict=True))
        if not isinstance(contexts, Mapping):
            raise TypeError(f"contexts must be one string, a mapping item -> context, a Series or a table with item "
                            f"and context; got {type(contexts).__name__}")
        ctx = {str(k): v for k, v in contexts.items()}
        missing = [i for i in items if i not in ctx]
        if missing:
            raise ValueError(f"no context for item(s) {missing[:5]}")
        empty = [i for i in items if not isinstance(ctx[i], str) or not ctx[i].strip()]
        if empty:
            raise ValueError(f"the context of item(s) {empty[:5]} is empty")
        return {i: ctx[i] for i in items}

    @staticmethod
    def _plan(pairs, symmetric: bool, budget: int | None, default_item: str | None) -> pd.DataFrame:
        if isinstance(pairs, pd.DataFrame):
            _unique_columns(pairs, "the pairs table")
            df = pairs.copy()
        else:
            df = pd.DataFrame(list(pairs))
            if df.shape[1] == 2:
                df.columns = ["a", "b"]
            elif df.shape[1] == 3:
                df.columns = ["item", "a", "b"]
        if not {"a", "b"} <= set(df.columns):
            raise ValueError("pairs must have columns a and b (and item)")
        items_given = True
        if "item" not in df.columns:
            if default_item is None:
                raise ValueError("pairs has no 'item' column and contexts name more than one item; add the item column")
            df["item"] = default_item
            items_given = False
        if df.empty:
            raise ValueError("pairs is empty")
        df = df[["item", "a", "b"]].reset_index(drop=True)
        _refuse_missing_ids(df, ("item", "a", "b"), "pairs")  # before ids_as_text, which keeps NaN
        for c in ("item", "a", "b"):  # ids as the judgments table reads them (1.0 is item "1")
            df[c] = ids_as_text(df[c])
        same = df.index[df["a"] == df["b"]]
        if len(same):
            raise ValueError(f"pairs: a candidate is compared with itself in row(s) {list(same[:8])}")
        df["order"] = "ab"
        if symmetric:
            df = pd.concat([df, df.assign(order="ba")]).sort_index(kind="stable").reset_index(drop=True)
        first = np.where(df["order"] == "ab", df["a"], df["b"])
        second = np.where(df["order"] == "ab", df["b"], df["a"])
        shown = pd.DataFrame({"item": df["item"], "first": first, "second": second})
        dup = shown.duplicated(keep=False)
        if dup.any():
            hint = (" (pairs already holds both orders; pass symmetric=False, or leave out --symmetric in the "
                    "shell)") if symmetric else ""
            raise ValueError(f"pairs: the same comparison is planned twice in row(s) {list(df.index[dup][:8])}{hint}")
        df["first"], df["second"] = first, second
        df.attrs["items_given"] = items_given  # False: the one item is a placeholder (no error names it)
        return Comparator._take_budget(df, budget)

    @staticmethod
    def _take_budget(plan: pd.DataFrame, budget: int | None) -> pd.DataFrame:
        """The first ``budget`` comparisons of a plan (all for None)."""
        if budget is None:
            return plan
        if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget < 1:
            raise ValueError(f"budget must be a whole number of comparisons, at least 1; got {budget!r}")
        out = plan.iloc[:budget].reset_index(drop=True)
        out.attrs = dict(plan.attrs)
        return out

    # -- the public calls -------------------------------------------------------------------
    def compare(
        self,
        pairs,
        texts,
        contexts: Mapping[str, str] | str | None = None,
        *,
        symmetric: bool = False,
        store: str | os.PathLike | None = None,
        allow_mixed: bool = False,
        budget: int | None = None,
        debias: str | None = None,
        progress: bool = True,
        engine: str = "local",
        ray_options: Mapping[str, Any] | None = None,
    ) -> pd.DataFrame:
        """Judge pairs of texts; returns the judgments table.

        Parameters
        ----------
        pairs : table with columns ``item``, ``a``, ``b`` (e.g. from
            :func:`bayes_judge.select_comparisons`, all pairs, ...), or a list of (item, a, b)
        texts : candidate id → text, (item, candidate) → text, or a table item, candidate, text
        contexts : item → shared context (article, prompt, dialogue); a single string for all
        symmetric : also judge every pair in the opposite order (Liusie, Manakul & Gales 2024 §3.4)
        store : SQLite file that makes the run resumable (see :mod:`.store`)
        allow_mixed : reuse a store written by another model / template
        budget : stop after this many comparisons (rows of the plan, in plan order)
        debias : ``None``, ``"reweight"`` (eq. 9) or ``"threshold"`` (eq. 10)
        progress : show a progress bar with rate and ETA
        engine : ``"local"`` (this process) or ``"ray"``: the comparisons as a Ray Dataset,
            ``map_batches`` over actors that each hold one judge (:mod:`.ray_engine`); the same table
        ray_options : for ``engine="ray"``: ``num_actors``, ``batch_size``, ``num_cpus``,
            ``num_gpus`` per actor (see :func:`.ray_engine.run_ray`; with ``num_gpus`` and no
            ``num_actors``, one actor per GPU)

        Returns
        -------
        DataFrame with ``item``, ``a``, ``b`` (shown first, second), ``judge``, ``p_a``,
        ``winner``, ``order`` and ``pair_a``, ``pair_b`` (the planned pair), plus per mode
        ``n_a, n_b, n_tie, n_unparsed`` (sample) or ``score_a, score_b`` (likert); endpoint judges
        and the sample mode add ``status`` (``"ok"``, or why ``p_a`` is NaN: ``"missing"``,
        ``"missing_a"``, ``"missing_b"``, ``"unparsed"``: no sampled answer named a choice, with
        a :class:`~.endpoint.MissingLabelsWarning`). ``attrs`` hold ``position_bias`` (P(A), eq. 8, over the
        rows with a probability), ``diagnosis`` (:func:`.diagnose.diagnose_judgments`; an
        :class:`~.diagnose.UninformativeJudgeWarning` when a check fires), ``endpoint``
        (requests, cache hits, retries, tokens, misses) for endpoint judges, ``ray`` (actors,
        resources, the GPUs they held) when this call judged on Ray, and, when debiased, what was
        done.
        """
        if engine not in ("local", "ray"):
            raise ValueError(f"engine must be 'local' or 'ray', not {engine!r}")
        if debias not in (None, "reweight", "threshold"):  # before any judging, not after it
            raise ValueError(f"debias must be None, 'reweight' or 'threshold', not {debias!r}")
        single = None
        if isinstance(contexts, Mapping) and len(contexts) == 1:
            single = str(next(iter(contexts)))
        elif contexts is None or isinstance(contexts, str):
            single = "0"
        full = self._plan(pairs, symmetric, None, single)
        plan = self._take_budget(full, budget)
        # a budget stops the plan early; an item it reaches has its context cut on all of the item's
        # planned prompts (so a later call with more budget cuts it alike); items it does not reach
        # need neither texts nor contexts yet
        scope = full if budget is None else full[full["item"].isin(set(plan["item"]))]
        lookup = self._text_lookup(texts, name_items=bool(full.attrs.get("items_given", True)))
        ctx = self._contexts(contexts, list(dict.fromkeys(scope["item"])))
        for i, a, b in zip(scope["item"], scope["a"], scope["b"], strict=True):
            lookup(i, a), lookup(i, b)
        kinds = {"prob": ("pairwise",), "sample": ("pairwise",), "likert": ("pointwise",),
                 "prepair": ("analysis", "prepair")}[self.mode]
        ctx = self._fit_contexts(ctx, lookup, kinds, pairs=scope)
        model_id, template_id = self._store_ids()
        st = JudgmentStore(store if store is not None else ":memory:", model=model_id, template=template_id,
                           allow_mixed=allow_mixed, variants=self._store_variants())
        usage0 = self.endpoint.client.usage.snapshot() if self.endpoint is not None else None
        self._threads_used: int | None = None
        ray_run: dict[str, Any] | None = None
        try:
            if store is not None:  # a fresh in-memory store holds nothing stale
                self._expect(st, plan, lookup, ctx)
            done = st.done(self.mode)
            done_keys = set(zip(done["item"], done["a"], done["b"], done["order"], strict=True))
            todo = plan[[k not in done_keys for k in zip(plan["item"], plan["a"], plan["b"], plan["order"], strict=True)]]
            if len(todo) and engine == "ray":
                from .ray_engine import run_ray

                ray_run = run_ray(self, todo, lookup, ctx, st, progress, **dict(ray_options or {}))
            elif len(todo):
                run = ({"prob": self._run_prob, "prepair": self._run_prob, "sample": self._run_sample,
                        "likert": self._run_likert}[self.mode] if self.endpoint is None
                       else partial(self.endpoint.runner(self.mode), self))
                from .threads import resolve_threads, torch_threads

                on_cpu = self.endpoint is None and str(self.lm.device).startswith("cpu")
                n_threads = resolve_threads(self.threads) if on_cpu else None
                self._threads_used = n_threads
                with torch_threads(n_threads):
                    run(todo, lookup, ctx, st, progress)
            out = self._collect(plan, st.done(self.mode))
            self._warn_stale(st, store)
        finally:
            st.close()
        if ray_run is not None:
            out.attrs["ray"] = ray_run
        return self._finish(out, debias, usage0, n_new=len(todo), engine=engine)

    def _finish(self, out: pd.DataFrame, debias: str | None, usage0: dict | None, *, n_new: int,
                engine: str) -> pd.DataFrame:
        """attrs (position bias, diagnosis, endpoint usage), warnings, debiasing."""
        scored = out["p_a"].notna().to_numpy()
        n_missing = int((~scored).sum())
        if self.endpoint is not None and usage0 is not None:
            from .endpoint import MissingLabelsWarning, usage_delta

            status = out["status"].value_counts().to_dict() if "status" in out.columns else {}
            out.attrs["endpoint"] = {
                "url": self.endpoint.client.base_url, "model": self.endpoint.client.model, "api": self.endpoint.api,
                "concurrency": self.endpoint.concurrency, "top_logprobs": self.endpoint.top_logprobs,
                "label_check": self.endpoint.label_check, "engine": engine, "n_judged_now": int(n_new),
                **usage_delta(usage0, self.endpoint.client.usage.snapshot()),
                "n_missing": n_missing, "status": {str(k): int(v) for k, v in status.items()},
            }
            if engine == "ray":
                out.attrs["endpoint"]["note"] = "requests were made by the Ray actors; their counts are not included"
            if n_missing:
                warnings.warn(
                    f"{n_missing} of {len(out)} comparisons by {self.judge_name} have no probability (p_a = NaN): "
                    f"{out.attrs['endpoint']['status']}; 'missing*' means a label was not among the top "
                    f"{self.endpoint.top_logprobs} log-probabilities (bounds in p_a_low / p_a_high), 'unparsed' "
                    "that no sampled answer named a choice. Drop or re-judge those rows before fitting.",
                    MissingLabelsWarning, stacklevel=3)
        elif n_missing and self.mode == "sample":  # as the endpoint judges say it: counted, never guessed
            from .endpoint import MissingLabelsWarning

            warnings.warn(
                f"{n_missing} of {len(out)} comparisons by {self.judge_name} have no parseable sampled answer "
                f"(p_a = NaN, status 'unparsed'): none of their {self.n_samples} answers named one of the "
                f"template's choices {[list(c) for c in self.template.choices]} (the column 'answers' shows up to "
                "three of them). Raise max_new_tokens, make the prompt ask for one of those words or set "
                "PromptTemplate(choices=...) to the words the model answers with; drop or re-judge those rows "
                "before fitting.", MissingLabelsWarning, stacklevel=3)
        elif n_missing:
            raise RuntimeError(f"internal error: {n_missing} comparisons of an in-process judge have no probability")
        ok = out[scored]
        if self.endpoint is None:
            out.attrs["threads"] = getattr(self, "_threads_used", None)  # None: torch's own choice or none run
            self._warn_label_mass(out)
        out.attrs["position_bias"] = position_bias(ok) if len(ok) else None
        out.attrs["diagnosis"] = diagnose_judgments(out)
        warn_if_uninformative(out.attrs["diagnosis"], self.judge_name, stacklevel=4)
        if debias is not None:
            if n_missing:
                deb = debias_position(ok, debias)
                attrs = {**out.attrs, "debias": deb.attrs["debias"]}
                out = out.assign(p_a_raw=out["p_a"])
                out.loc[deb.index, ["p_a", "winner"]] = deb[["p_a", "winner"]]
                out.attrs = attrs
            else:
                out = debias_position(out, debias)
        return out

    def _warn_label_mass(self, out: pd.DataFrame) -> None:
        """A classifier judge (prob, prepair) whose label words get almost none of the next token's
        probability: P(A) / (P(A) + P(B)) then compares two answers the model does not give."""
        if self.mode not in ("prob", "prepair") or "label_mass" not in out.columns:
            return
        mass = pd.to_numeric(out["label_mass"], errors="coerce").dropna()
        if len(mass) and (median := float(mass.median())) < LOW_LABEL_MASS:
            from ..diagnose import UninformativeJudgeWarning

            warnings.warn(
                f"{self.judge_name}: the label words {[list(w) for w in self.template.labels]} get a median "
                f"probability of {median:.2g} as the next token (column label_mass, over {len(mass)} comparisons; "
                f"below {LOW_LABEL_MASS}): the model mostly answers with other tokens, so p_a = P(A) / "
                "(P(A) + P(B)) compares two answers it does not give and mostly reflects noise. Use label words "
                "the model answers with (PromptTemplate(labels=...)), an answer_prefix that leads to them, or a "
                "template that asks for them (e.g. 'Answer with A or B').", UninformativeJudgeWarning, stacklevel=4)

    def _collect(self, plan: pd.DataFrame, done: pd.DataFrame) -> pd.DataFrame:
        got = plan.merge(done, on=["item", "a", "b", "order"], how="left", validate="one_to_one")
        if got["p_first"].isna().any():
            raise RuntimeError("internal error: some planned comparisons have no stored result")
        p = got["p_first"].to_numpy(float)
        extras = [json.loads(e) if isinstance(e, str) else {} for e in got["extra"]]
        for k, e in enumerate(extras):  # stored by an earlier version as ½ with this note: no probability
            if e.pop("note", None) == "unparsed":
                p[k], e["status"] = MISSING_P, "unparsed"
            elif "n_unparsed" in e:
                e.setdefault("status", "ok")
        p = np.where(p < 0, np.nan, p)  # stored -1: no probability (see store.py); its extra says why
        winner = np.full(p.shape, None, dtype=object)
        winner[p > 0.5], winner[p < 0.5], winner[p == 0.5] = "a", "b", "tie"
        out = pd.DataFrame({
            "item": got["item"], "a": got["first"], "b": got["second"], "judge": self.judge_name,
            "p_a": p, "winner": winner,
            "order": got["order"], "pair_a": got["a"], "pair_b": got["b"],
        })
        keys = sorted({k for e in extras for k in e})
        for k in keys:
            out[k] = [e.get(k) for e in extras]
        return out

    # -- modes ------------------------------------------------------------------------------
    def _pair_prompts(self, todo: pd.DataFrame, lookup, ctx, st: JudgmentStore):
        """Token ids per item for the pairwise (or PRePair) prompt of every planned comparison."""
        tpl = self.template
        analyses = self._analyses(todo, lookup, ctx, st) if self.mode == "prepair" else None
        groups, subgroups, rows = [], [], []
        for item, sub in todo.groupby("item", sort=False):
            firsts, seconds = sub["first"].tolist(), sub["second"].tolist()

            def render(context, item=item, firsts=firsts, seconds=seconds):
                out = []  # prompt texts, tokenized together below
                for f, s in zip(firsts, seconds, strict=True):
                    fields = {"a": lookup(item, f), "b": lookup(item, s)}
                    if context is not None:
                        fields["context"] = context
                    if analyses is not None:
                        fields.update(analysis_a=analyses[(item, f)], analysis_b=analyses[(item, s)])
                        text = tpl.prepair.format(**fields)
                    else:
                        text = tpl.pairwise.format(**fields)
                    out.append(text)
                return self._render_many(out, tpl.answer_prefix)

            _, prompts = self._fit(cast(str, item), ctx[item], render)  # item ids are str: _plan casts them
            groups.append(prompts)
            subgroups.append(firsts)
            rows.append(sub)
        return groups, subgroups, rows

    def _run_prob(self, todo, lookup, ctx, st, progress) -> None:
        from .engine import label_logprobs

        groups, subgroups, rows = self._pair_prompts(todo, lookup, ctx, st)
        bar = progress_bar(len(todo), self.judge_name, progress)
        keys = [list(zip(r["item"], r["a"], r["b"], r["order"], strict=True)) for r in rows]  # per group, once

        def on_batch(g, idx, lp):  # called per group and pass: no pandas indexing here
            la, lb = lp[:, 0], lp[:, 1]
            p = 1.0 / (1.0 + np.exp(lb - la))  # Liusie, Manakul & Gales 2024 eq. 3
            mass = np.exp(np.logaddexp(la, lb))
            st.add(self.mode, [(*keys[g][k], float(pp), {"label_mass": float(f"{m:.6g}")})  # 6 digits, tiny ones too
                               for k, pp, m in zip(idx.tolist(), p, mass, strict=True)])
            bar.update(len(idx))

        try:
            label_logprobs(self.lm, groups, self._label_ids, subgroups=subgroups, batch_size=self.batch_size,
                           kv_cache=self.kv_cache, decoder_prefix=self._decoder_prefix(self.template.answer_prefix),
                           on_batch=on_batch)
        finally:
            bar.close()

    def _seed_for(self, *key: str) -> int:
        import hashlib

        h = hashlib.sha256(("\x1f".join((str(self.seed), *key))).encode()).digest()
        return int.from_bytes(h[:4], "little")

    def _gen_batch(self) -> int:
        """Prompts per generation batch: ``batch_size``, or for ``"auto"`` 8 on the CPU and 64 on a GPU."""
        if self.batch_size != "auto":
            return int(self.batch_size)
        lm = getattr(self, "lm", None)
        return 64 if lm is not None and str(lm.device).startswith("cuda") else 8

    def _run_sample(self, todo, lookup, ctx, st, progress) -> None:
        from .engine import generate

        groups, _, rows = self._pair_prompts(todo, lookup, ctx, st)
        bar = progress_bar(len(todo), self.judge_name, progress)
        prompts = [p for g in groups for p in g]
        meta = pd.concat(rows, ignore_index=True) if rows else todo.iloc[:0]
        order = np.argsort([len(p) for p in prompts], kind="stable")  # similar lengths share a batch
        step = self._gen_batch()
        try:
            for start in range(0, len(order), step):
                idx = order[start:start + step]
                sub = meta.iloc[idx]
                seeds = [self._seed_for(i, a, b, o)
                         for i, a, b, o in zip(sub["item"], sub["a"], sub["b"], sub["order"], strict=True)]
                outs = generate(self.lm, [prompts[int(k)] for k in idx], max_new_tokens=self.max_new_tokens,
                                n_samples=self.n_samples, temperature=self.temperature, seeds=seeds)
                batch = []
                for (i, a, b, o), answers in zip(zip(sub["item"], sub["a"], sub["b"], sub["order"], strict=True),
                                                 outs, strict=True):
                    parsed = [parse_choice(t, self.template.choices, prefix=self.template.answer_prefix) for t in answers]
                    n = {k: sum(x == k for x in parsed) for k in ("a", "b", "tie")}
                    n_ok = n["a"] + n["b"] + n["tie"]
                    # Liusie, Manakul & Gales 2024 eq. 5; no parseable answer: no probability (NaN), never a guessed ½
                    p = (n["a"] + 0.5 * n["tie"]) / n_ok if n_ok else MISSING_P
                    extra: dict[str, Any] = {"n_a": n["a"], "n_b": n["b"], "n_tie": n["tie"],
                                             "n_unparsed": len(parsed) - n_ok, "status": "ok" if n_ok else "unparsed"}
                    if n_ok == 0:
                        extra["answers"] = answers[:3]
                    batch.append((i, a, b, o, p, extra))
                st.add(self.mode, batch)
                bar.update(len(idx))
        finally:
            bar.close()

    def score(self, candidates, texts, contexts=None, *, store: str | os.PathLike | None = None,
              allow_mixed: bool = False, progress: bool = True) -> pd.DataFrame:
        """Pointwise probability-weighted Likert scores (Jeong et al. 2024 §3.1).

        Parameters
        ----------
        candidates : table with ``item``, ``candidate`` (or a list of (item, candidate))
        texts, contexts : as in :meth:`compare`

        Returns
        -------
        DataFrame item, candidate, score (E[k] under the renormalized scale probabilities),
        p_<k> for every scale value, label_mass (probability the scale tokens received).
        """
        cands = pd.DataFrame(candidates) if not isinstance(candidates, pd.DataFrame) else candidates.copy()
        if cands.shape[1] == 2 and not {"item", "candidate"} <= set(cands.columns):
            cands.columns = ["item", "candidate"]
        cands = cands[["item", "candidate"]].astype(str).drop_duplicates().reset_index(drop=True)
        lookup = self._text_lookup(texts)
        items = list(dict.fromkeys(cands["item"]))
        ctx = self._fit_contexts(self._contexts(contexts, items), lookup, ("pointwise",), cands=cands)
        model_id, template_id = self._store_ids()
        st = JudgmentStore(store if store is not None else ":memory:", model=model_id, template=template_id,
                           allow_mixed=allow_mixed, variants=self._store_variants())
        try:
            if store is not None:
                st.expect_points("likert", {(i, c): fingerprint(lookup(i, c), ctx[i])
                                            for i, c in zip(cands["item"], cands["candidate"], strict=True)})
            out = self._scores(cands, lookup, ctx, st, progress)
            self._warn_stale(st, store)
            return out
        finally:
            st.close()

    def _scores(self, cands: pd.DataFrame, lookup, ctx, st: JudgmentStore, progress: bool) -> pd.DataFrame:
        if self.endpoint is not None:
            return self.endpoint.scores(self, cands, lookup, ctx, st, progress)
        from .engine import label_logprobs

        tpl = self.template
        if tpl.pointwise is None:
            raise ValueError(f"template {tpl.name!r} has no pointwise prompt")
        keys = list(zip(cands["item"], cands["candidate"], strict=True))
        cached = st.pointwise("likert", keys)
        todo = cands[[k not in cached for k in keys]]
        if len(todo):
            groups, rows = [], []
            for item, sub in todo.groupby("item", sort=False):
                cs = sub["candidate"].tolist()

                def render(context, item=item, cs=cs):
                    return self._render_many([tpl.pointwise.format(text=lookup(item, c), **({"context": context} if context is not None else {}))
                                              for c in cs], tpl.score_prefix)

                _, prompts = self._fit(cast(str, item), ctx[item], render)  # item ids are str: score, _run_likert cast them
                groups.append(prompts)
                rows.append(sub)
            bar = progress_bar(len(todo), f"{self.lm.name}/{tpl.name}/likert", progress)
            scale = np.asarray(tpl.scale, float)

            keys_of = [list(zip(r["item"], r["candidate"], strict=True)) for r in rows]

            def on_batch(g, idx, lp):
                out = []
                for k, lps in zip(idx.tolist(), lp, strict=True):
                    w = np.exp(lps - lps.max())
                    probs = w / w.sum()
                    out.append((*keys_of[g][k], json.dumps({
                        "score": float(probs @ scale), "probs": probs.round(8).tolist(),
                        "label_mass": float(np.exp(lps).sum()),
                    })))
                st.add_pointwise("likert", out)
                bar.update(len(idx))

            try:
                label_logprobs(self.lm, groups, self._scale_ids, batch_size=self.batch_size, kv_cache=self.kv_cache,
                               decoder_prefix=self._decoder_prefix(tpl.score_prefix), on_batch=on_batch)
            finally:
                bar.close()
            cached = st.pointwise("likert", keys)
        return likert_table(tpl.scale, keys, cached)

    def _run_likert(self, todo, lookup, ctx, st, progress) -> None:
        cands = pd.concat([todo[["item", "first"]].set_axis(["item", "candidate"], axis=1),
                           todo[["item", "second"]].set_axis(["item", "candidate"], axis=1)]).drop_duplicates()
        sc = self._scores(cands, lookup, ctx, st, progress)
        s = {(i, c): v for i, c, v in zip(sc["item"], sc["candidate"], sc["score"], strict=True)}
        rows = []
        for i, a, b, o, f, se in zip(todo["item"], todo["a"], todo["b"], todo["order"], todo["first"], todo["second"], strict=True):
            d = (s[(i, f)] - s[(i, se)]) / self.tau
            rows.append((i, a, b, o, 1.0 / (1.0 + math.exp(-d)), {"score_a": s[(i, f)], "score_b": s[(i, se)]}))
        st.add(self.mode, rows)

    def analyze(self, candidates, texts, contexts=None, *, store: str | os.PathLike | None = None,
                allow_mixed: bool = False) -> pd.DataFrame:
        """PRePair's pointwise analyses (Jeong et al. 2024 §4), one per (item, candidate), cached in the store."""
        cands = pd.DataFrame(candidates) if not isinstance(candidates, pd.DataFrame) else candidates.copy()
        if cands.shape[1] == 2 and not {"item", "candidate"} <= set(cands.columns):
            cands.columns = ["item", "candidate"]
        cands = cands[["item", "candidate"]].astype(str).drop_duplicates()
        todo = pd.DataFrame({"item": cands["item"], "first": cands["candidate"], "second": cands["candidate"]})
        lookup = self._text_lookup(texts)
        ctx = self._fit_contexts(self._contexts(contexts, list(dict.fromkeys(cands["item"]))), lookup, ("analysis",),
                                 cands=cands)
        model_id, template_id = self._store_ids()
        st = JudgmentStore(store if store is not None else ":memory:", model=model_id, template=template_id,
                           allow_mixed=allow_mixed, variants=self._store_variants())
        try:
            if store is not None:
                st.expect_points("analysis", {(i, c): fingerprint(lookup(i, c), ctx[i])
                                              for i, c in zip(cands["item"], cands["candidate"], strict=True)})
            got = self._analyses(todo, lookup, ctx, st)
            self._warn_stale(st, store)
        finally:
            st.close()
        return pd.DataFrame([{"item": i, "candidate": c, "analysis": got[(i, c)]}
                             for i, c in zip(cands["item"], cands["candidate"], strict=True)])

    def _analyses(self, todo: pd.DataFrame, lookup, ctx, st: JudgmentStore) -> dict[tuple[str, str], str]:
        if self.endpoint is not None:
            return self.endpoint.analyses(self, todo, lookup, ctx, st)
        from .engine import generate

        tpl = self.template
        if tpl.analysis is None:
            raise ValueError(f"template {tpl.name!r} has no analysis prompt (PRePair)")
        keys = list(dict.fromkeys(list(zip(todo["item"], todo["first"], strict=True))
                                  + list(zip(todo["item"], todo["second"], strict=True))))
        cached = st.pointwise("analysis", keys)
        need = [k for k in keys if k not in cached]
        by_item: dict[str, list[str]] = {}
        for i, c in need:
            by_item.setdefault(i, []).append(c)
        for item, cs in by_item.items():
            def render(context, item=item, cs=cs):
                return self._render_many([tpl.analysis.format(text=lookup(item, c), **({"context": context} if context is not None else {}))
                                          for c in cs], "")

            _, prompts = self._fit(item, ctx[item], render)
            step = self._gen_batch()
            for start in range(0, len(cs), step):
                chunk = cs[start:start + step]
                outs = generate(self.lm, prompts[start:start + step], max_new_tokens=self.analysis_tokens,
                                n_samples=1, temperature=0.0)
                st.add_pointwise("analysis", [(item, c, o[0].strip() or "(no analysis)") for c, o in zip(chunk, outs, strict=True)])
        return st.pointwise("analysis", keys)
