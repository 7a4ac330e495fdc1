"""The in-process transformers backend on the CPU, with a tiny causal LM made in the session.

No download: the tokenizer is a word-level ``tokenizers`` model trained here on a few ordering
prompts and wrapped in ``PreTrainedTokenizerFast``; the model is a 2-layer Llama with random
weights (``tests/tiny_llama.py``). Its answers are nonsense, which is fine: the tests check that
batching, padding and scoring compute exactly what one prompt at a time would, not that the model
is competent.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from plugin_helpers import read_archive  # noqa: E402
from pytest_competence.models import ModelSpecError, NoAnswer, resolve_model  # noqa: E402
from pytest_competence.models._hf_batches import _device  # noqa: E402
from pytest_competence.strategies import Ordering  # noqa: E402
from tiny_llama import TEMPLATE, build  # noqa: E402


@pytest.fixture(scope="session")
def prompts():
    family = Ordering(vocabulary="front_behind")
    items = family.design(levels=[4, 8], pairs=8, seed=1, presentations=["original", "equivalent"])
    return [p for item in items for p in item.prompts]


@pytest.fixture(scope="session")
def checkpoint(tmp_path_factory, prompts) -> Path:
    return build(tmp_path_factory.mktemp("tiny-llama"), prompts)


@pytest.fixture(scope="session")
def chat_checkpoint(tmp_path_factory, prompts) -> Path:
    return build(tmp_path_factory.mktemp("tiny-llama-chat"), prompts, TEMPLATE)


def hf(path: Path, query: str = ""):
    return resolve_model(f"hf:{path}" + (f"?{query}" if query else ""))


def direct_logprobs(model, text: str, tail: str) -> torch.Tensor:
    """log p of each token of ``tail`` after ``text``: one unpadded forward pass, by hand."""
    tok, net = model.runner.tok, model.runner.model
    context = tok(text)["input_ids"]
    tail_ids = tok(tail, add_special_tokens=False)["input_ids"]
    ids = torch.tensor([context + tail_ids])
    with torch.inference_mode():
        logits = net(input_ids=ids).logits[0].float()
    rows = torch.log_softmax(logits, dim=-1)
    return torch.stack([rows[len(context) - 1 + j, t] for j, t in enumerate(tail_ids)])


def test_batched_greedy_generation_equals_one_prompt_at_a_time(checkpoint, prompts):
    batched = hf(checkpoint, "max_new_tokens=4&batch_size=5").generate(prompts)
    one = hf(checkpoint, "max_new_tokens=4&batch_size=1")
    alone = [one.generate([p])[0] for p in prompts]
    assert batched == alone
    assert all(isinstance(a, str) and a for a in batched)


def test_scores_are_the_summed_token_logprobs(checkpoint, prompts):
    model = hf(checkpoint, "batch_size=4")
    few = prompts[:6]
    single = model.score(few, ["yes", "no"])  # one forward pass per batch of prompts
    multi = model.score(few, ["yes no", "no"])  # a row per candidate
    for p, s, m in zip(few, single, multi):
        text = f"{p.system}\n\n{p.text}"
        assert s["yes"] == pytest.approx(float(direct_logprobs(model, text, " yes")[0]), abs=1e-4)
        assert s["no"] == pytest.approx(float(direct_logprobs(model, text, " no")[0]), abs=1e-4)
        both = float(direct_logprobs(model, text, " yes no").sum())
        assert m["yes no"] == pytest.approx(both, abs=1e-4) and m["no"] == pytest.approx(s["no"])


def test_margin_is_the_yes_no_logit_difference(checkpoint, prompts):
    model = hf(checkpoint)
    p = prompts[0]
    tok, net = model.runner.tok, model.runner.model
    ids = torch.tensor([tok(f"{p.system}\n\n{p.text}")["input_ids"]])
    with torch.inference_mode():
        last = net(input_ids=ids).logits[0, -1].float()
    yes, no = (tok(w, add_special_tokens=False)["input_ids"][0] for w in (" yes", " no"))
    assert model.margins([p])[0] == pytest.approx(float(last[yes] - last[no]), abs=1e-4)


def test_score_readout_answers_within_the_answer_space(checkpoint, prompts):
    model = hf(checkpoint, "readout=score")
    answers = model.generate(prompts)
    scores = model.score(prompts, ["yes", "no"])
    assert answers == [max(s, key=s.get) for s in scores]
    assert model.runner.model is hf(checkpoint).runner.model  # one copy of the weights


def test_the_chat_template_renders_the_prompt(chat_checkpoint, prompts):
    model = hf(chat_checkpoint, "max_new_tokens=3&batch_size=4")
    rendered = model.runner.render(prompts[0])
    assert rendered.startswith("<|system|> You are") and rendered.endswith("<|assistant|>")
    assert hf(chat_checkpoint, "chat_template=off").runner.render(prompts[0]).startswith("You are")
    alone = hf(chat_checkpoint, "max_new_tokens=3&batch_size=1")
    assert model.generate(prompts[:8]) == [alone.generate([p])[0] for p in prompts[:8]]


def test_a_prompt_beyond_the_context_is_recorded_and_the_rest_answered(checkpoint, prompts):
    model = hf(checkpoint, "max_new_tokens=4")
    long = replace(prompts[0], text=prompts[0].text * 12)
    answers = model.generate([long, *prompts[:4]])
    assert isinstance(answers[0], NoAnswer)  # the model's own limit: invalid, not an outage
    assert "exceeds the model's context of 512" in str(answers[0])
    assert answers[1:] == model.generate(prompts[:4])


def test_a_failing_batch_is_split_until_the_culprit_stands_alone(checkpoint, prompts, monkeypatch):
    model = hf(checkpoint, "max_new_tokens=2&batch_size=8")
    clean = model.generate(prompts[:8])
    poison = replace(prompts[3], text=prompts[3].text + " zzz zzz zzz")  # three unknown words
    unk = model.runner.tok.unk_token_id
    real = model.runner.model.generate

    def flaky(input_ids, **kwargs):
        if (input_ids[:, -3:] == unk).all(dim=1).any():
            raise RuntimeError("CUDA out of memory (simulated)")
        return real(input_ids=input_ids, **kwargs)

    monkeypatch.setattr(model.runner.model, "generate", flaky)  # shared weights: put it back
    answers = model.generate([*prompts[:3], poison, *prompts[4:8]])
    assert "CUDA out of memory (simulated)" in str(answers[3])
    assert answers[:3] + answers[4:] == clean[:3] + clean[4:]


def test_a_model_neither_local_nor_cached_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(ModelSpecError) as info:
        resolve_model("hf:nobody/no-such-model")
    message = str(info.value)
    assert (
        "neither a local checkpoint directory nor a model in the local Hugging Face cache"
        in message
    )
    assert "never downloads" in message
    assert "huggingface-cli download nobody/no-such-model" in message
    with pytest.raises(ModelSpecError, match="has no config.json"):
        resolve_model(f"hf:{tmp_path}")


def test_a_model_in_the_hub_cache_is_found_by_its_id(tmp_path, monkeypatch, checkpoint, prompts):
    repo = tmp_path / "hub" / "models--tiny--llama"
    shutil.copytree(checkpoint, repo / "snapshots" / "0123abcd")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    model = resolve_model("hf:tiny/llama?max_new_tokens=2")
    assert model.path == repo / "snapshots" / "0123abcd"
    assert model.generate(prompts[:2]) == hf(checkpoint, "max_new_tokens=2").generate(prompts[:2])


def test_a_missing_dependency_names_the_extra(monkeypatch, checkpoint):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a)
    )
    with pytest.raises(ImportError, match=r"needs torch.*pip install 'pytest-competence\[hf\]'"):
        hf(checkpoint)


def test_each_xdist_worker_takes_its_own_gpu(monkeypatch):
    fake = SimpleNamespace(
        device=lambda *a: a, cuda=SimpleNamespace(is_available=lambda: True, device_count=lambda: 2)
    )
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    assert _device(fake, "auto") == ("cuda", 1)
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert _device(fake, "auto") == ("cuda", 0)
    assert _device(fake, "cuda:1") == ("cuda:1",)
    fake.cuda.is_available = lambda: False
    assert _device(fake, "auto") == ("cpu",)


def test_the_cache_identity_follows_the_checkpoint_and_decoding(tmp_path, checkpoint):
    copy = shutil.copytree(checkpoint, tmp_path / "copy")
    before = hf(copy).cache_identity
    assert before == hf(copy).cache_identity != hf(copy, "max_new_tokens=3").cache_identity
    assert json.loads(before)["dtype"] == "float32"  # CPU
    weights = copy / "model.safetensors"
    stat = weights.stat()
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # "retrained"
    assert hf(copy).cache_identity != before


SUITE = """
    import pytest

    @pytest.mark.competence(levels=[4], pairs=8)
    def test_tiny(competence):
        pass
"""


@pytest.mark.slow
def test_the_plugin_runs_an_hf_model_and_caches_its_answers(pytester, checkpoint, prompts):
    pytester.makepyfile(test_tiny=SUITE)
    spec = f"hf:{checkpoint}?max_new_tokens=3"
    runs = []
    for name in ("one.json", "two.json"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--competence-model",
                spec,
                "--competence-json",
                name,
            ],
            cwd=pytester.path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 1, done.stdout + done.stderr  # nonsense answers fail
        assert "Competence condition failed" in done.stdout
        runs.append(read_archive(pytester.path / name))
    (first, first_records), (second, second_records) = (
        (doc["results"][0], records) for doc, records in runs
    )
    assert first_records == second_records and first["levels"] == second["levels"]
    (records,) = first_records.values()
    from pytest_competence.engine.cache import count_rows

    assert len(records) == 16
    # The design's 16 prompts, plus what minimising the failing case asked on the first run.
    assert count_rows(pytester.path / ".competence" / "cache.sqlite") >= 16
    sent = [replace(prompts[0], system=r["system"], text=r["prompt"]) for r in records]
    assert [r["raw"] for r in records] == hf(checkpoint, "max_new_tokens=3").generate(sent)
