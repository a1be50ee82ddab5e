import pytest

from bayes_judge.comparator.templates import PRESETS, PromptTemplate, get_template, template_fields


def test_presets_are_valid_and_cover_the_papers():
    for name in ["summeval-coherence", "summeval-consistency", "summeval-fluency", "summeval-relevance",
                 "dialogue-coherence", "story-coherence", "instruction"]:
        t = PRESETS[name]
        assert {"a", "b"} <= template_fields(t.pairwise)
        assert {"analysis_a", "analysis_b"} <= template_fields(t.prepair)
        assert "text" in template_fields(t.pointwise)


def test_custom_format_string_becomes_a_template():
    t = get_template("Q: {context}\nA1: {a}\nA2: {b}\nBetter:")
    assert t.name == "custom" and t.uses_context


@pytest.mark.parametrize("text, msg", [
    ("Compare {a} with nothing", r"missing field\(s\) \{b\}"),
    ("{a} vs {b} on {topic}", r"unknown field\(s\) \{topic\}"),
    ("{a} vs {b} {", "malformed template"),
    ("{a} vs {b} {0}", "not a plain name"),
    ("{a!r} vs {b}", "format spec or conversion"),
])
def test_bad_templates_are_refused_before_any_model_call(text, msg):
    with pytest.raises(ValueError, match=msg):
        PromptTemplate(name="t", pairwise=text)


def test_unknown_preset_names_the_presets():
    with pytest.raises(ValueError, match="presets: summeval-coherence"):
        get_template("summeval-coherance")


def test_prepair_prompt_needs_both_analyses():
    with pytest.raises(ValueError, match=r"\{analysis_b\}"):
        PromptTemplate(name="t", pairwise="{a} {b}", prepair="{a} {b} {analysis_a}")


def test_key_changes_with_the_prompt():
    t = PRESETS["summeval-coherence"]
    assert t.key() != t.with_(answer_prefix="Answer:").key()
    assert t.key() == t.with_().key()


def test_the_key_counts_the_sampled_answers_words():
    """Another set of choices is another template key (a store of the other refuses the run); the
    presets' own choices and the class default leave the keys of existing stores unchanged."""
    preset = get_template("summeval-coherence")
    assert preset.key() == "summeval-coherence@1d16aae339"  # the key stores were written with
    assert PromptTemplate(name="custom", pairwise="{a} or {b}?").key() == "custom@11cc18e9cc"
    other = preset.with_(choices=(("first",), ("second",), ("tie",)))
    assert other.key() != preset.key()
    assert other.with_(choices=preset.choices).key() == preset.key()
    as_lists = preset.with_(choices=[list(c) for c in preset.choices])
    assert as_lists.key() == preset.key()
