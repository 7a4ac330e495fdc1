"""Layer probes, logit lens and patching on tiny CPU models whose internals are known.

A random 4-layer Llama (``tests/tiny_llama.py``) gets a known answer written into its residual
stream at the answer position from block 2 on (``tests/planted.py``): originals carry the
answer that the independent solver reads from the prompt's own text, along the direction the
unembedding reads as yes − no; equivalents say "yes" whatever the instance, with the solver's
answer decodable along an orthogonal direction (the readout default of CBE paper,
arXiv:2610.22894, App. I). Then the probe must find AUROC ≈ 1 from layer 2 on and chance
before it, inside a null band at chance; patching an original's layer-ℓ state into its
equivalent must restore the original's answer on every disagreeing pair from layer 2 on and on
none before; the logit lens must read the planted answer from layer 2 on.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from planted import Plant, solver_sign, yes_default  # noqa: E402
from pytest_competence.models import resolve_model  # noqa: E402
from pytest_competence.probe import (  # noqa: E402
    ProbeUnavailable,
    StateReader,
    patch_pairs,
    probe_model,
    read_answer_states,
)
from pytest_competence.strategies import Ordering  # noqa: E402
from tiny_llama import TEMPLATE, build  # noqa: E402

PLANTED_AT = 2


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny matrices: two threads on a shared 2-core machine only wait for each other."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def items():
    family = Ordering(vocabulary="front_behind")
    return family.design(levels=[4, 6], pairs=48, seed=3, presentations=["original", "equivalent"])


@pytest.fixture(scope="module")
def prompts(items):
    return [p for item in items for p in item.prompts]


@pytest.fixture(scope="module")
def model(tmp_path_factory, prompts):
    folder = build(tmp_path_factory.mktemp("tiny-llama-4"), prompts, layers=4)
    return resolve_model(f"hf:{folder}?batch_size=16&readout=score")


@pytest.fixture(scope="module")
def planted(model, items, prompts):
    with Plant(model, prompts, PLANTED_AT, yes_default(100.0)):
        return probe_model(model, items, permutations=50, B=200, keep_states=True)


# -- the readings are the backend's --------------------------------------------------------------


def test_states_are_the_residual_stream_at_the_answer_position(model, prompts):
    states = read_answer_states(model, prompts[:7])
    runner = model.runner
    for k, p in enumerate(prompts[:7]):
        ids = torch.tensor([runner.encode(runner.render(p))])
        with torch.inference_mode():
            hidden = runner.model(input_ids=ids, output_hidden_states=True).hidden_states
        for layer in range(4):  # transformers' last entry is after the final norm
            assert torch.allclose(
                torch.from_numpy(states.states[k, layer]), hidden[layer][0, -1], atol=1e-5
            )
    assert states.layers == (0, 1, 2, 3, 4) and states.model_layers == 4
    assert states.states.shape == (7, 5, 32) and states.states.dtype == np.float32


def test_answer_logits_are_the_score_readouts_margins_and_the_lens_ends_on_them(model, prompts):
    states = read_answer_states(model, prompts)
    assert np.abs(states.margins - np.array(model.margins(prompts))).max() < 1e-4
    assert states.single_token and states.lens_gap < 1e-4
    lens_margin = states.lens[:, -1, 0] - states.lens[:, -1, 1]
    assert np.abs(lens_margin - states.margins).max() < 1e-4
    assert (states.device, states.dtype) == ("cpu", "float32")


def test_batches_and_chunks_do_not_change_a_reading(model, prompts):
    whole = read_answer_states(model, prompts[:20])
    one = resolve_model(f"hf:{model.path}?batch_size=1")
    alone = read_answer_states(one, prompts[:20])
    assert np.abs(whole.states - alone.states).max() < 1e-4
    reader = StateReader(model)  # chunks joined at the end
    for start in range(0, 20, 6):
        reader.add(prompts[start : min(start + 6, 20)])
    joined = reader.finish()
    assert np.abs(joined.states - whole.states).max() < 1e-4
    assert list(joined.rows.instance) == list(whole.rows.instance)


def test_a_chat_template_moves_the_answer_position_with_it(tmp_path_factory, prompts):
    folder = build(tmp_path_factory.mktemp("tiny-llama-chat-4"), prompts, TEMPLATE, layers=2)
    chat = resolve_model(f"hf:{folder}?batch_size=4")
    states = read_answer_states(chat, prompts[:8])
    assert np.abs(states.margins - np.array(chat.margins(prompts[:8]))).max() < 1e-4


def test_fewer_layers_and_half_precision_keep_what_was_asked(model, prompts):
    full = read_answer_states(model, prompts[:8])
    half = read_answer_states(model, prompts[:8], layers=[1, 4], precision="float16")
    assert half.states.dtype == np.float16 and half.layers == (1, 4)
    assert np.abs(half.states.astype(np.float32) - full.states[:, [1, 4]]).max() < 1e-2
    assert np.array_equal(half.lens, full.lens[:, [1, 4]])
    assert half.lens_gap == full.lens_gap  # the final layer is read for the check regardless


def test_a_prompt_over_the_context_is_one_unread_row(model, prompts):
    from dataclasses import replace

    long = replace(prompts[0], text=" ".join([prompts[0].text] * 12))
    states = read_answer_states(model, [prompts[1], long, prompts[2]])
    assert states.ok.tolist() == [True, False, True]
    assert "exceeds the model's context of 512" in states.errors[1]
    assert np.isnan(states.states[1]).all() and np.isfinite(states.states[[0, 2]]).all()


def test_models_without_internals_are_not_applicable(prompts):
    for spec in ("ref:ideal", "ref:always-yes"):
        with pytest.raises(ProbeUnavailable, match="has no in-process internals"):
            read_answer_states(resolve_model(spec), prompts[:2])


def test_bad_reader_arguments_name_themselves(model, prompts):
    with pytest.raises(ValueError, match="precision must be one of float32, float16"):
        StateReader(model, precision="bfloat16")
    with pytest.raises(ValueError, match=r"layers must be distinct residual indices in 0 … 4"):
        StateReader(model, layers=[0, 5])
    with pytest.raises(ValueError, match="2 prompts were added, total=3 expected"):
        reader = StateReader(model, total=3)
        reader.add(prompts[:2])
        reader.finish()
    with pytest.raises(TypeError, match=r"unknown settings \['permutation'\]"):
        probe_model(model, [], permutation=3)


# -- the planted answer is found where it was planted ---------------------------------------------


def test_planted_outputs_follow_the_plant(planted, prompts):
    by = {(c.presentation, c.level): c for c in planted.decomposition}
    assert by["original", None].accuracy.estimate == 1.0
    assert by["equivalent", None].yes_rate.estimate == 1.0
    # originals: signal, no default; equivalents: a default, no signal (App. I's pattern)
    assert by["original", None].signal.estimate > 10 * abs(by["original", None].default.estimate)
    equivalent = by["equivalent", None]
    assert equivalent.default.estimate > 10 * abs(equivalent.signal.estimate)


def test_probe_is_at_one_from_the_planted_layer_and_at_chance_before(planted):
    for cell in planted.probes:
        curve = cell.curve
        assert curve.first_layer == PLANTED_AT, (cell.presentation, cell.level)
        assert np.all(curve.auroc[PLANTED_AT:] > 0.99)
        assert curve.auroc[0] == 0.5  # the last token is the same in every prompt
        assert np.all(curve.auroc[:PLANTED_AT] < 0.8)
        assert np.all(np.abs(curve.null_mean - 0.5) < 0.06)
        assert np.all(curve.null_high[1:] < 0.8) and np.all(curve.null_low[1:] > 0.2)
        assert np.all(curve.p_value[PLANTED_AT:] == 1 / 51)


def test_logit_lens_reads_the_planted_answer_from_its_layer(planted):
    for cell in planted.lens:
        if cell["presentation"] == "original":
            assert np.all(cell["accuracy"][PLANTED_AT:] == 1.0)
            assert np.all(cell["accuracy"][:PLANTED_AT] == 0.5)  # every prompt alike
        else:  # the equivalent's lens says "yes" from the planted layer on
            assert np.all(cell["accuracy"][PLANTED_AT:] == 0.5)
            assert np.all(cell["default"][PLANTED_AT:] > 0.3)


def test_patching_restores_the_original_from_the_planted_layer_on(planted, items):
    patching = planted.patching
    # the pairs that disagree are exactly those the solver answers "no" (the equivalent says yes)
    expected = sum(solver_sign(item.prompts[0]) < 0 for item in items)
    hits, disagreeing = patching.restored()
    assert disagreeing == expected > 0
    assert hits.tolist() == [0] * PLANTED_AT + [disagreeing] * (5 - PLANTED_AT)
    for level in (4, 6):
        hits, total = patching.restored(level)
        assert total > 0 and hits[PLANTED_AT:].tolist() == [total] * (5 - PLANTED_AT)
    said = patching.patched_logits[:, PLANTED_AT:]
    assert np.all(said[..., 1] > said[..., 0])  # every patched pair now says the original's "no"


def test_patch_pairs_on_its_own_reruns_only_what_disagrees(model, items, prompts):
    before = model.runner.model.model.layers[PLANTED_AT]._forward_pre_hooks.copy()
    pairs = [(item.prompts[0], item.prompts[1]) for item in items[:24]]
    with Plant(model, prompts, PLANTED_AT, yes_default(100.0)):
        result = patch_pairs(model, pairs, layers=[1, 3])
    agree = ~result.disagreeing
    assert np.all(result.patched[agree] == -2) and np.isnan(result.patched_logits[agree]).all()
    assert result.restored()[0].tolist() == [0, int(result.disagreeing.sum())]
    assert model.runner.model.model.layers[PLANTED_AT]._forward_pre_hooks == before  # removed


def test_the_report_is_plain_json(planted):
    assert planted.states is not None and planted.states.states.shape == (192, 5, 32)
    document = json.loads(json.dumps(planted.to_dict()))
    assert document["layers"] == [0, 1, 2, 3, 4] and document["unread"] == 0
    assert document["probes"][0]["first_layer"] == PLANTED_AT
    assert document["patching"]["pooled"]["share"][PLANTED_AT:] == [1.0] * (5 - PLANTED_AT)
