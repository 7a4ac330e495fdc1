"""A vocabulary of one's own: checked when it is made, read by every reference policy.

A :class:`Vocabulary` whose templates cannot render a readable prompt is refused at
construction, naming the template and what it must look like; any other is read by ``ref:ideal``
(which then answers every prompt right) and by the ordering shortcut policies, which behave on
it as on the catalog. A configuration a reference policy still cannot parse is ``n/a`` for that
test × model, never a model the suite caught.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_competence.engine.evaluate import evaluate
from pytest_competence.engine.profile import profile
from pytest_competence.models import reads_prompts, resolve_model
from pytest_competence.policy import UNREADABLE
from pytest_competence.protocol import InvalidArgument
from pytest_competence.strategies import CATALOG, PRESENTATIONS, Ordering, Phrase, Vocabulary

ALL = list(PRESENTATIONS)
ORDERING_SHORTCUTS = ("ref:endpoint", "ref:forward-reader", "ref:names-order", "ref:threshold?n=6")

LIKES = Vocabulary(
    name="likes_more",
    group="custom",
    forward=Phrase(
        "{a} likes more than {b}",
        "{a} does not like more than {b}",
        "Does {a} like more than {b}?",
    ),
    converse=Phrase(
        "{a} likes less than {b}",
        "{a} does not like less than {b}",
        "Does {a} like less than {b}?",
    ),
    setting="who like things differently",
    order="Their liking",
)
#: No spaces between the names and the words, no question mark, a context holding the
#: reader's own markers.
CHINESE = Vocabulary(
    name="zh_earlier",
    group="custom",
    forward=Phrase("{a}先于{b}", "{a}不先于{b}", "{a}先于{b}吗"),
    converse=Phrase("{a}晚于{b}", "{a}不晚于{b}", "{a}晚于{b}吗"),
    setting="站成一排. Their names are [x]",
    order="他们的顺序 can be described by the following set of rules: no",
)
#: The phrases of the catalog's front_behind swapped, under its name: the prompt's own phrases
#: are read, not the catalog's of that name.
SWAPPED = replace(
    CATALOG[0], forward=CATALOG[0].converse, converse=CATALOG[0].forward, setting="in a row"
)
#: Each question reads as a premise does, with words after it.
LIKE_A_PREMISE = replace(
    LIKES,
    forward=replace(LIKES.forward, question="{a} likes more than {b}. Right?"),
    converse=replace(LIKES.converse, question="{a} likes less than {b}. Right?"),
)
CUSTOM = {"likes": LIKES, "chinese": CHINESE, "swapped": SWAPPED, "like-a-premise": LIKE_A_PREMISE}

# -- checked when made -----------------------------------------------------------------------------

GOOD = ("{a} is before {b}", "{a} is not before {b}", "Is {a} before {b}?")


@pytest.mark.parametrize(
    ("templates", "expected"),
    [
        (
            ("{a}在{b}前面", "{a}不在{b}前面", "{a}在{b}前面吗？"),
            "Expected statement to read '{a} ... {b}' (starting with {a}, ending with {b}, the "
            "relation's words between and no other fields), but got statement='{a}在{b}前面', "
            "which has '前面' after {b}; e.g. statement='{a} is in front of {b}'",
        ),
        (
            ("{a} is before {b}", "Not: {a} before {b}", GOOD[2]),
            "but got negation='Not: {a} before {b}', which has 'Not: ' before {a}",
        ),
        (("{b} is after {a}", *GOOD[1:]), "statement='{b} is after {a}', which holds {b}, {a}"),
        (("{a} is before", *GOOD[1:]), "statement='{a} is before', which holds {a};"),
        (("{a} is {c} {b}", *GOOD[1:]), "hold {a} and {b} and no other braces"),
        (("{a} is {{not}} {b}", *GOOD[1:]), "hold {a} and {b} and no other braces"),
        (("{a} is before {b", *GOOD[1:]), "hold {a} and {b} and no other braces"),
        (("{a} {b}", *GOOD[1:]), "Expected statement to have the relation's words between"),
        (("{a}is before {b}", *GOOD[1:]), "Expected statement to set {a} and {b} apart"),
        ((*GOOD[:2], "Is {b} before {a}?"), "question='Is {b} before {a}?' ({b}, {a})"),
        ((*GOOD[:2], "Is {a} before?"), "question='Is {a} before?' ({a})"),
        ((*GOOD[:2], "{a}{b}?"), "(no words between {a} and {b})"),
        ((*GOOD[:2], "Is {a} before {b}s?"), "Expected question to set {a} and {b} apart"),
        ((*GOOD[:2], 3), "Expected question to be a string template with {a} and {b}, but got "),
    ],
    ids=[
        "after-b",
        "before-a",
        "b-first",
        "no-b",
        "other-field",
        "escaped-brace",
        "unmatched-brace",
        "no-words",
        "touching-name",
        "question-b-first",
        "question-no-b",
        "question-no-words",
        "question-touching-name",
        "not-a-string",
    ],
)
def test_a_phrase_template_is_checked_when_made(templates, expected):
    with pytest.raises(InvalidArgument) as raised:
        Phrase(*templates)
    assert expected in str(raised.value)


def test_a_vocabulary_is_checked_when_made():
    good = Phrase(*GOOD)
    converse = Phrase("{a} is after {b}", "{a} is not after {b}", "Is {a} after {b}?")
    with pytest.raises(InvalidArgument, match=r"forward.statement and converse.statement to diff"):
        Vocabulary("same", "custom", good, good, "in a row", "Their order")
    with pytest.raises(InvalidArgument, match=r"forward.question and converse.question to differ"):
        Vocabulary("q", "custom", good, replace(converse, question=GOOD[2]), "in a row", "Order")
    with pytest.raises(InvalidArgument, match=r"Expected name to be a non-empty string"):
        Vocabulary("", "custom", good, converse, "in a row", "Their order")
    with pytest.raises(InvalidArgument, match=r"Expected converse to be a Phrase"):
        Vocabulary("x", "custom", good, "is after", "in a row", "Their order")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"Expected setting to be a string"):
        Vocabulary("x", "custom", good, converse, None, "Their order")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"statement to read"):  # replace() checks too
        replace(good, statement="{a}在{b}前面")


def test_the_catalog_is_valid_and_known_by_value():
    assert all(v.in_catalog for v in CATALOG)
    assert not SWAPPED.in_catalog and not LIKES.in_catalog
    assert "phrases" not in Ordering().prompt(Ordering().instance(4, 0), "original").params
    prompt = Ordering(vocabulary=SWAPPED).prompt(Ordering().instance(4, 0), "original")
    assert prompt.params["phrases"] == SWAPPED.phrases


# -- read by every reference policy ----------------------------------------------------------------


def _prompts(family, levels=(5, 7), pairs=8, presentations=ALL):
    items = family.design(levels=list(levels), pairs=pairs, presentations=list(presentations))
    return [p for item in items for p in item.prompts]


@pytest.mark.parametrize("name", list(CUSTOM))
@pytest.mark.parametrize(
    "options", [{}, {"distance": 2, "distractors": 1.0, "names": "random", "protocol": "L"}]
)
def test_ideal_answers_every_prompt_of_a_vocabulary_of_ones_own(name, options):
    prompts = _prompts(Ordering(vocabulary=CUSTOM[name], **options))
    assert resolve_model("ref:ideal").generate(prompts) == [p.gold for p in prompts]
    for spec in ORDERING_SHORTCUTS:
        assert UNREADABLE not in resolve_model(spec).generate(prompts), spec


#: The words of a template: any characters but braces, with neither end an ASCII letter or digit.
words = st.builds(
    "".join,
    st.tuples(
        st.sampled_from(" -·先"),
        st.text(st.sampled_from("abz XYZ.,?!'-先于在"), max_size=6),
        st.sampled_from(" -·于"),
    ),
)


@st.composite
def vocabularies(draw):
    templates = []
    for _ in range(2):
        before = draw(st.sampled_from(["", "Is ", "¿"]))
        after = draw(st.sampled_from(["", "?", " ?", ". Right?"]))
        statement, negation, between = draw(words), draw(words), draw(words)
        templates.append(
            (
                f"{{a}}{statement}{{b}}",
                f"{{a}}{negation}{{b}}",
                f"{before}{{a}}{between}{{b}}{after}",
            )
        )
    try:
        phrases = [Phrase(*t) for t in templates]
        return Vocabulary("drawn", "custom", *phrases, "in a row", "Their order")
    except InvalidArgument:  # blank words, or two templates the same
        assume(False)


@settings(max_examples=40, deadline=None)
@given(vocabulary=vocabularies())
def test_ideal_reads_any_vocabulary_the_checks_accept(vocabulary):
    prompts = _prompts(Ordering(vocabulary=vocabulary), levels=(2, 5), pairs=4)
    assert resolve_model("ref:ideal").generate(prompts) == [p.gold for p in prompts]


def _outcomes(spec, family):
    items = family.design(levels=[5, 9], pairs=20, presentations=ALL)
    levels = profile(evaluate(family, items, resolve_model(spec)))
    return [(lv.level, lv.accuracy_by_presentation) for lv in levels]


@pytest.mark.parametrize("spec", ORDERING_SHORTCUTS)
@pytest.mark.parametrize("options", [{}, {"distance": 2}, {"names_line": "chain"}])
def test_a_shortcut_answers_a_vocabulary_of_ones_own_as_it_answers_the_catalog(spec, options):
    # Every vocabulary renders the same instances, names lines and premise orders: a policy
    # that reads the phrases answers them the same in any vocabulary.
    catalog = _outcomes(spec, Ordering(**options))
    assert _outcomes(spec, Ordering(vocabulary=LIKES, **options)) == catalog
    assert _outcomes(spec, Ordering(vocabulary=CHINESE, **options)) == catalog


@pytest.mark.parametrize("vocabulary", [v.name for v in CATALOG])
def test_the_forward_reader_reads_each_catalog_vocabulary_by_its_own_phrases(vocabulary):
    # behind_front, right_left and shorter_taller are other entries' phrases swapped: read as
    # those, every original premise looked reworded and every answer flipped.
    family = Ordering(vocabulary=vocabulary)
    original = _prompts(family, presentations=["original"])
    answers = resolve_model("ref:forward-reader").generate(original)
    assert answers == [p.gold for p in original]


@pytest.mark.parametrize("vocabulary", [v.name for v in CATALOG[:3]])
def test_ideal_reads_a_prompt_that_follows_the_system_prompt(vocabulary):
    """A completions endpoint receives the system prompt, a blank line, then the text: a server
    answering with the ideal policy (the tests' fake server) reads the text there too."""
    from pytest_competence.strategies.ordering.policies import ordering_ideal

    prompts = _prompts(Ordering(vocabulary=vocabulary))
    texts = [f"{p.system}\n\n{p.text}" for p in prompts]
    assert [ordering_ideal(t) for t in texts] == [p.gold for p in prompts]


# -- what a reference policy cannot parse is n/a -----------------------------------------------------


def test_a_reference_policy_says_which_prompts_it_reads():
    family = Ordering(vocabulary=LIKES)
    prompts = _prompts(family, levels=(4,), pairs=4)
    unread = [replace(p, text=p.text.replace("There are ", "Picture ", 1)) for p in prompts]
    for spec in ("ref:ideal", "ref:noisy", "ref:sampled", *ORDERING_SHORTCUTS):
        model = resolve_model(spec)
        assert reads_prompts(model, prompts) and not reads_prompts(model, unread), spec
    for spec in ("ref:always-yes", "ref:coin", "ref:iw-letter"):
        assert reads_prompts(resolve_model(spec), unread), spec
    assert not reads_prompts(resolve_model("ref:iw-stuck"), prompts)


def test_asking_whether_a_policy_reads_changes_none_of_its_answers():
    prompts = _prompts(Ordering(), levels=(4,), pairs=4)
    asked, fresh = resolve_model("ref:sampled"), resolve_model("ref:sampled")
    assert reads_prompts(asked, prompts)
    assert asked.generate(prompts) == fresh.generate(prompts)


def test_a_model_that_cannot_tell_reads_every_prompt_and_is_never_asked():
    class Plain:
        name = "plain"

        def generate(self, prompts):
            return ["yes" for _ in prompts]

    def never():
        raise AssertionError("a model without reads() needs no prompts")
        yield

    assert reads_prompts(Plain(), never())


# -- the plugin ------------------------------------------------------------------------------------

SUITE = """
import pytest
from pytest_competence.strategies import Ordering, Phrase, Vocabulary

LIKES = Vocabulary(
    name="likes_more",
    group="custom",
    forward=Phrase(
        "{a} likes more than {b}", "{a} does not like more than {b}", "Does {a} like more than {b}?"
    ),
    converse=Phrase(
        "{a} likes less than {b}", "{a} does not like less than {b}", "Does {a} like less than {b}?"
    ),
    setting="who like things differently",
    order="Their liking",
)


class Prefixed(Ordering):
    # A rendering of one's own, which no reference reader parses.
    def render(self, z, view):
        return super().render(z, view).replace("There are ", "Picture ", 1)


@pytest.mark.competence(family="ordering", levels=[4, 8], pairs=8)
def test_catalog(competence):
    pass


@pytest.mark.competence(family="ordering", vocabulary=LIKES, levels=[4, 8], pairs=8)
def test_likes(competence):
    pass


@pytest.mark.competence(family=Prefixed(vocabulary=LIKES), levels=[4], pairs=4)
def test_prefixed(competence):
    pass
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_suite_on_a_vocabulary_of_ones_own_never_catches_a_policy_for_not_reading_it(
    pytester: pytest.Pytester, xdist: list[str]
):
    pytester.makepyfile(test_suite=SUITE)
    out = pytester.path / "results.json"
    result = pytester.runpytest_subprocess(
        *xdist,
        "-p",
        "no:cacheprovider",
        "-rs",
        "-o",
        "competence_database=none",
        "--competence-json",
        str(out),
        "--competence-model",
        "ref:ideal,ref:shortcuts,ref:always-yes",
    )
    document = json.loads(out.read_text("utf-8"))
    verdicts = {
        (r["test"].split("::")[1].split("[")[0], r["model"]): r["condition_met"]
        for r in document["results"]
    }
    ordering = ["ref:ideal", *ORDERING_SHORTCUTS[:3], "ref:threshold?n=64", "ref:always-yes"]
    for model in ordering:  # each policy: the same verdict on both vocabularies
        assert verdicts[("test_likes", model)] == verdicts[("test_catalog", model)], model
    assert verdicts[("test_likes", "ref:ideal")] is True
    assert verdicts[("test_prefixed", "ref:always-yes")] is False  # it reads nothing: caught
    records = pytester.path / "results.records.jsonl"
    assert UNREADABLE not in records.read_text("utf-8")
    # Where the policies cannot parse the prompts: n/a, with the reason, never caught.
    unread = sorted(
        r["model"]
        for r in document["not_applicable"]
        if "test_prefixed" in r["test"] and r["family"] == "ordering" and "parse" in r["reason"]
    )
    assert unread == sorted(ordering[:-1])
    reasons = {
        r["model"]: r["reason"] for r in document["not_applicable"] if "prefixed" in r["test"]
    }
    for model in ("ref:ideal", "ref:endpoint"):  # n/a pairs report as n/a, their reasons here
        assert reasons[model] == (
            f"{model} does not read the ordering prompts of Ordering(vocabulary='likes_more') "
            f"(it cannot parse the design's first instance)"
        )
    result.stdout.fnmatch_lines(["    test_suite.py::test_prefixed[[]*[]]  *n/a  *FAIL"])
    assert ("test_prefixed", "ref:ideal") not in verdicts
