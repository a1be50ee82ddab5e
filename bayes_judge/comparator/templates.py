"""Prompt templates: the papers' prompts as named presets, and user templates, validated before any
model call.

A :class:`PromptTemplate` holds up to four prompts:

- ``pairwise`` (fields ``{context}``, ``{a}``, ``{b}``): the comparative prompt T(x_i, x_j, d) of
  Liusie, Manakul & Gales 2024 §3.2, answered by a label word (``labels``) after ``answer_prefix``;
- ``pointwise`` (``{context}``, ``{text}``): Likert scoring on ``scale`` (Jeong et al. 2024 §3.1, G-Eval's
  probability-weighted score);
- ``analysis`` (``{context}``, ``{text}``): PRePair's pointwise analysis of one output (Jeong et al. 2024
  §4), generated once per output;
- ``prepair`` (``{context}``, ``{a}``, ``{b}``, ``{analysis_a}``, ``{analysis_b}``): the pairwise
  judgment that reads both analyses.

Liusie, Manakul & Gales 2024's Figure 2 prompts did not survive the PDF extraction; the summary presets follow its text
("Which Summary is more consistent relative to the passage, Summary A or Summary B?", label words
'Summary A' / 'Summary B', the attribute word swapped per aspect, 'summary' → 'response' for
dialogue). The instruction-following preset follows LLMBar's rules prompt (Jeong et al. 2024 Fig. 5, 7).
Literal braces in a template are written ``{{`` and ``}}``.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field, replace

__all__ = ["PromptTemplate", "PRESETS", "get_template", "template_fields"]

_PAIR_FIELDS = {"context", "a", "b"}
_POINT_FIELDS = {"context", "text"}
_PREPAIR_FIELDS = _PAIR_FIELDS | {"analysis_a", "analysis_b"}
_DEFAULT_CHOICES = (("a",), ("b",), ("tie", "both", "neither", "equal"))  # PromptTemplate.choices' default


def template_fields(text: str) -> set[str]:
    """The ``{field}`` names of a format string (raises ValueError on malformed braces)."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as err:
        raise ValueError(f"malformed template ({err}); write literal braces as '{{{{' and '}}}}'") from err
    names = set()
    for _, name, spec, conv in parsed:
        if name is None:
            continue
        if name == "" or not name.isidentifier():
            raise ValueError(f"template field {{{name}}} is not a plain name; write literal braces as '{{{{' and '}}}}'")
        if spec or conv:
            raise ValueError(f"template field {{{name}}} has a format spec or conversion; use plain {{{name}}}")
        names.add(name)
    return names


def _check(kind: str, text: str | None, required: set[str], allowed: set[str], name: str) -> None:
    if text is None:
        return
    found = template_fields(text)
    missing = required - found
    if missing:
        raise ValueError(
            f"template {name!r}: the {kind} prompt is missing field(s) "
            + ", ".join("{" + m + "}" for m in sorted(missing))
        )
    unknown = found - allowed
    if unknown:
        raise ValueError(
            f"template {name!r}: the {kind} prompt has unknown field(s) "
            + ", ".join("{" + u + "}" for u in sorted(unknown))
            + f"; allowed: {', '.join('{' + a + '}' for a in sorted(allowed))}"
        )


@dataclass(frozen=True)
class PromptTemplate:
    """A judging prompt family (see the module docstring).

    Parameters
    ----------
    name : str
    pairwise : str, optional
        Comparative prompt with ``{a}`` and ``{b}`` (and optionally ``{context}``).
    labels : ((str, ...), (str, ...))
        Label words for "A is better" and "B is better"; only each word's first token is scored
        (Liusie, Manakul & Gales 2024 eq. 3), summed over the words of a set. The first tokens of the two sets must
        differ (checked against the tokenizer when the comparator starts).
    answer_prefix : str
        Text the answer starts with, appended after the prompt (and the chat template's
        assistant header), so that the next token is the label: e.g. ``"Summary"`` → ``" A"``.
    pointwise, scale, score_prefix : Likert prompt, its score values, and its answer prefix.
    analysis, prepair : PRePair's pointwise-analysis prompt and its pairwise prompt.
    system : optional system message for chat models.
    choices : words a free-text answer is parsed for in sampled mode (A-words, B-words, tie-words).
    """

    name: str
    pairwise: str | None = None
    labels: tuple[tuple[str, ...], tuple[str, ...]] = ((" A", "A"), (" B", "B"))
    answer_prefix: str = ""
    pointwise: str | None = None
    scale: tuple[int, ...] = (1, 2, 3, 4, 5)
    score_prefix: str = "Score: "
    analysis: str | None = None
    prepair: str | None = None
    system: str | None = None
    choices: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = (
        ("a",), ("b",), ("tie", "both", "neither", "equal"),
    )  # = _DEFAULT_CHOICES
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.pairwise is None and self.pointwise is None:
            raise ValueError(f"template {self.name!r} has neither a pairwise nor a pointwise prompt")
        _check("pairwise", self.pairwise, {"a", "b"}, _PAIR_FIELDS, self.name)
        _check("pointwise", self.pointwise, {"text"}, _POINT_FIELDS, self.name)
        _check("analysis", self.analysis, {"text"}, _POINT_FIELDS, self.name)
        _check("prepair", self.prepair, {"a", "b", "analysis_a", "analysis_b"}, _PREPAIR_FIELDS, self.name)
        if len(self.labels) != 2 or not all(len(w) for w in self.labels):
            raise ValueError(f"template {self.name!r}: labels must be two non-empty sets of words (A, B)")
        if len(self.scale) < 2:
            raise ValueError(f"template {self.name!r}: a Likert scale needs at least two values")

    @property
    def uses_context(self) -> bool:
        return any("context" in template_fields(t) for t in (self.pairwise, self.pointwise, self.analysis, self.prepair) if t)

    def key(self) -> str:
        """Identity of the prompts (for the run store): name plus a hash of every prompt field and of
        the sampled answers' words (``choices``). The choices enter the hash only where they differ
        from the name's own (a preset's, else the class default), so that the keys of stores written
        before they counted are unchanged; another set of choices is another key."""
        import hashlib

        fields: tuple = (self.pairwise, self.labels, self.answer_prefix, self.pointwise,
                         self.scale, self.score_prefix, self.analysis, self.prepair, self.system)
        own = PRESETS[self.name].choices if self.name in PRESETS else _DEFAULT_CHOICES
        choices = tuple(tuple(words) for words in self.choices)
        if choices != own:
            fields = (*fields, choices)
        h = hashlib.sha256(repr(fields).encode())
        return f"{self.name}@{h.hexdigest()[:10]}"

    def with_(self, **changes) -> PromptTemplate:
        """A copy with some fields changed (validated again)."""
        return replace(self, **changes)


def _summary(aspect: str, adjective: str, definition: str) -> PromptTemplate:
    return PromptTemplate(
        name=f"summeval-{aspect}",
        pairwise=(
            "Passage:\n{context}\n\nSummary A: {a}\n\nSummary B: {b}\n\n"
            f"Which Summary is more {adjective} relative to the passage, Summary A or Summary B?"
        ),
        answer_prefix="Summary",
        labels=((" A",), (" B",)),
        pointwise=(
            "Passage:\n{context}\n\nSummary: {text}\n\n"
            f"{definition}\nScore the {aspect} of the summary from 1 (worst) to 5 (best)."
        ),
        analysis=(
            "Passage:\n{context}\n\nSummary: {text}\n\n"
            f"{definition}\nBriefly describe the strengths and weaknesses of the summary's {aspect}."
        ),
        prepair=(
            "Passage:\n{context}\n\nSummary A: {a}\n\nSummary B: {b}\n\n"
            "Analysis of Summary A: {analysis_a}\n\nAnalysis of Summary B: {analysis_b}\n\n"
            f"Given the analyses, which Summary is more {adjective} relative to the passage, "
            "Summary A or Summary B?"
        ),
        choices=(("summary a", "a"), ("summary b", "b"), ("tie", "both", "neither", "equal")),
        description=f"SummEval {aspect} (Liusie, Manakul & Gales 2024 §3.2 comparative prompt)",
    )


def _response(task: str, aspect: str, adjective: str, context_name: str) -> PromptTemplate:
    return PromptTemplate(
        name=f"{task}-{aspect}",
        pairwise=(
            f"{context_name}:\n{{context}}\n\nResponse A: {{a}}\n\nResponse B: {{b}}\n\n"
            f"Which Response is more {adjective}, Response A or Response B?"
        ),
        answer_prefix="Response",
        labels=((" A",), (" B",)),
        pointwise=(
            f"{context_name}:\n{{context}}\n\nResponse: {{text}}\n\n"
            f"Score how {adjective} the response is from 1 (worst) to 5 (best)."
        ),
        analysis=(
            f"{context_name}:\n{{context}}\n\nResponse: {{text}}\n\n"
            f"Briefly describe the strengths and weaknesses of the response's {aspect}."
        ),
        prepair=(
            f"{context_name}:\n{{context}}\n\nResponse A: {{a}}\n\nResponse B: {{b}}\n\n"
            "Analysis of Response A: {analysis_a}\n\nAnalysis of Response B: {analysis_b}\n\n"
            f"Given the analyses, which Response is more {adjective}, Response A or Response B?"
        ),
        choices=(("response a", "a"), ("response b", "b"), ("tie", "both", "neither", "equal")),
        description=f"{task} {aspect} (Liusie, Manakul & Gales 2024 §3.2, 'summary' → 'response')",
    )


_LLMBAR_RULES = (
    "You are a helpful assistant in evaluating the quality of the outputs for a given instruction. "
    "Your goal is to select the best output for the given instruction.\n"
    "Here are some rules of the evaluation:\n"
    "(1) You should prioritize evaluating whether the output honestly/precisely/closely executes "
    "the instruction, then consider its helpfulness, accuracy, level of detail, harmlessness, etc.\n"
    "(2) Outputs should NOT contain more/less than what the instruction asks for, as such outputs "
    "do NOT precisely execute the instruction.\n"
    "(3) You should avoid any potential bias and your judgment should be as objective as possible. "
    "For example, the order in which the outputs were presented should NOT affect your judgment, "
    "as Output (a) and Output (b) are equally likely to be the better.\n"
)

_INSTRUCTION = PromptTemplate(
    name="instruction",
    pairwise=(
        _LLMBAR_RULES
        + "\n# Instruction:\n{context}\n\n# Output (a):\n{a}\n\n# Output (b):\n{b}\n\n"
        "# Which is better, Output (a) or Output (b)? Your response should be either "
        '"Output (a)" or "Output (b)":'
    ),
    answer_prefix="Output (",
    labels=(("a",), ("b",)),
    pointwise=(
        "You are a helpful assistant in evaluating the quality of an output for a given "
        "instruction. Prioritize whether the output honestly/precisely/closely executes the "
        "instruction, then its helpfulness, accuracy and level of detail.\n\n# Instruction:\n"
        "{context}\n\n# Output:\n{text}\n\nRate the output from 1 (worst) to 5 (best)."
    ),
    analysis=(
        "Analyze the output for the given instruction: does it precisely execute the instruction? "
        "List its strengths and weaknesses briefly.\n\n# Instruction:\n{context}\n\n# Output:\n{text}"
    ),
    prepair=(
        _LLMBAR_RULES
        + "\n# Instruction:\n{context}\n\n# Output (a):\n{a}\n\n# Output (b):\n{b}\n\n"
        "# Analysis of Output (a):\n{analysis_a}\n\n# Analysis of Output (b):\n{analysis_b}\n\n"
        "# Which is better, Output (a) or Output (b)? Your response should be either "
        '"Output (a)" or "Output (b)":'
    ),
    choices=(("output (a)", "(a)"), ("output (b)", "(b)"), ("tie", "both", "neither", "equal")),
    description="instruction following with LLMBar's rules (Jeong et al. 2024 Fig. 5, 7)",
)

PRESETS: dict[str, PromptTemplate] = {
    t.name: t
    for t in [
        _summary("coherence", "coherent", "Coherence: the summary is well-structured and well-organized."),
        _summary("consistency", "consistent", "Consistency: the summary states only facts supported by the passage."),
        _summary("fluency", "fluent", "Fluency: the summary is grammatical and reads naturally."),
        _summary("relevance", "relevant", "Relevance: the summary keeps only the important information of the passage."),
        _response("dialogue", "coherence", "coherent", "Dialogue"),
        _response("dialogue", "engagingness", "engaging", "Dialogue"),
        _response("dialogue", "naturalness", "natural", "Dialogue"),
        _response("story", "coherence", "coherent", "Story prompt"),
        _response("story", "engagement", "engaging", "Story prompt"),
        _response("story", "relevance", "relevant to the prompt", "Story prompt"),
        _INSTRUCTION,
    ]
}


def get_template(template: str | PromptTemplate) -> PromptTemplate:
    """A preset by name, a :class:`PromptTemplate`, or a pairwise format string with ``{a}``/``{b}``."""
    if isinstance(template, PromptTemplate):
        return template
    if not isinstance(template, str):
        raise TypeError(f"template must be a preset name, a format string or a PromptTemplate, not {type(template).__name__}")
    if template in PRESETS:
        return PRESETS[template]
    if "{" in template:
        return PromptTemplate(name="custom", pairwise=template)
    raise ValueError(f"unknown template {template!r}; presets: {', '.join(PRESETS)}; or pass a format string with {{a}} and {{b}}")
