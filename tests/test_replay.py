"""Saved minimal cases are a regression corpus: a passing design still has to pass them."""

from __future__ import annotations

import pytest

SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4, 16], pairs=8)
    def test_order(competence):
        pass
"""

ONLY_NINE = """
    from pytest_competence.models.reference import POLICIES

    _ideal = POLICIES["ideal"]()

    def answer(prompts):
        # Right everywhere except on chains of exactly 9 people: the design (n = 4, 16) never
        # draws one, the case an earlier run saved (n* = 9) is one.
        flip = {"yes": "no", "no": "yes"}
        return [flip[_ideal(p)] if p.startswith("There are 9 people") else _ideal(p)
                for p in prompts]
"""


def test_a_saved_case_fails_a_checkpoint_whose_design_passes(pytester: pytest.Pytester):
    pytester.makepyfile(test_suite=SUITE)
    pytester.makepyfile(only_nine=ONLY_NINE)
    pytester.syspathinsert()
    first = pytester.runpytest("--competence-model", "ref:threshold?n=8")
    first.assert_outcomes(failed=1)
    first.stdout.fnmatch_lines(["*n=9*"])
    # Without the corpus the new checkpoint passes: its design never draws n = 9.
    clean = pytester.runpytest("--competence-model", "py:only_nine:answer",
                               "-o", "competence_database=none")
    clean.assert_outcomes(passed=1)
    second = pytester.runpytest("--competence-model", "py:only_nine:answer")
    second.assert_outcomes(failed=1)
    second.stdout.fnmatch_lines([
        "*every instance of the design passed, but a case saved in the example database by an "
        "earlier run fails*",
    ])
    # The ideal solver passes the design and the saved case alike.
    pytester.runpytest("--competence-model", "ref:ideal").assert_outcomes(passed=1)


# -- model identity --------------------------------------------------------------------------------

def test_a_model_identity_names_the_model_behind_the_name(tmp_path):
    from pytest_competence.models import ModelWrapper, resolve_model
    from pytest_competence.models.identity import model_identity

    threshold = model_identity(resolve_model("ref:threshold?n=10"))
    assert threshold == model_identity(resolve_model("ref:threshold?n=10"))
    assert threshold != model_identity(resolve_model("ref:threshold?n=9"))
    # An alias is renamed to what the user typed; its identity is still the target's.
    aliased = resolve_model("qwen", {"qwen": "ref:threshold?n=10"})
    assert aliased.name == "qwen" and model_identity(aliased) == threshold
    assert model_identity(ModelWrapper(aliased)) == threshold  # the cache, the progress line
    # A py: model is its source file: edited under the same spec, it is another model.
    source = tmp_path / "checkpoint.py"
    source.write_text("def answer(prompts):\n    return ['yes'] * len(prompts)\n")
    before = model_identity(resolve_model(f"py:{source}:answer"))
    source.write_text("def answer(prompts):\n    return ['no'] * len(prompts)\n")
    after = model_identity(resolve_model(f"py:{source}:answer"))
    assert None not in (before, after) and before != after
    # An HTTP model is its served model name, endpoint and decoding.
    served = model_identity(resolve_model("openai:qwen@http://localhost:9/v1"))
    assert served == model_identity(resolve_model("openai:qwen@http://localhost:9/v1"))
    assert served != model_identity(resolve_model("openai:qwen@http://localhost:9/v1?temperature=1"))


def test_a_checkpoint_directory_identity_needs_no_weights(tmp_path):
    from pytest_competence.models.hf import HFModel
    from pytest_competence.models.identity import model_identity

    (tmp_path / "model.safetensors").write_bytes(b"step 1000")
    model = HFModel("hf:ckpt", tmp_path)
    before = model_identity(model)
    (tmp_path / "model.safetensors").write_bytes(b"step 2000 (retrained)")
    assert model_identity(model) != before and model._runner is None
