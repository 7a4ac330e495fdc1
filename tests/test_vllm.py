"""The vLLM backend: its usage error without vLLM, and its work against a recording stand-in.

vLLM needs a CUDA machine, which CI has not; the stand-in below implements the few calls the
backend makes (``LLM``, ``SamplingParams``, ``get_tokenizer``, ``generate``) and records them, so
the tests can check what the backend sends: prefix caching on, prompts sorted so shared text sits
together, chunked calls, per-attempt seeds, answers mapped back to their prompts, candidate scores.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from dataclasses import replace

import pytest

from pytest_competence.models import resolve_model
from pytest_competence.strategies import Ordering

FAKE_VLLM = '''
"""A stand-in for vLLM's offline API that records what it is asked."""

ENGINES, CALLS = [], []
FAIL = []


class SamplingParams:
    def __init__(self, **settings):
        self.settings = settings


class _Logprob:
    def __init__(self, value):
        self.logprob = value


class _Output:
    def __init__(self, text, ids=None, logprobs=None):
        self.outputs = [type("Completion", (), {"text": text})()]
        self.prompt_token_ids, self.prompt_logprobs = ids, logprobs


class _Tokenizer:
    """Word lengths as ids; BOS (id 1) added unless told not to, as real tokenizers do."""

    chat_template = None

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": ([1] if add_special_tokens else []) + [len(w) for w in text.split()]}


class LLM:
    def __init__(self, **settings):
        ENGINES.append(settings)
        self.model = settings["model"]

    def get_tokenizer(self):
        import os

        if os.path.exists(os.path.join(self.model, "tokenizer.json")):  # a real checkpoint
            from transformers import AutoTokenizer

            return AutoTokenizer.from_pretrained(self.model, local_files_only=True)
        return _Tokenizer()

    def generate(self, prompts, params, use_tqdm=True):
        CALLS.append((list(prompts), params))
        if FAIL:
            raise RuntimeError(FAIL[0])
        scoring = isinstance(params, SamplingParams) and "prompt_logprobs" in params.settings
        if scoring:  # score every token by its id
            return [_Output("", p["prompt_token_ids"],
                            [None] + [{t: _Logprob(-0.1 * t)} for t in p["prompt_token_ids"][1:]])
                    for p in prompts]
        return [_Output(f"answer {sum(p['prompt_token_ids'])}") for p in prompts]
'''


@pytest.fixture(scope="module")
def prompts():
    family = Ordering(vocabulary="left_right")
    items = family.design(levels=[4, 8], pairs=4, seed=2, presentations=["original", "equivalent"])
    return [p for item in items for p in item.prompts]


@pytest.fixture
def fake_vllm(tmp_path, monkeypatch):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text(FAKE_VLLM)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "vllm", raising=False)
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    (checkpoint / "config.json").write_text("{}")
    yield checkpoint
    sys.modules.pop("vllm", None)


def rendered(p):
    return f"{p.system}\n\n{p.text}"


def ids(text):
    """What the stand-in's tokenizer gives a plain prompt: BOS, then the word lengths."""
    return [1] + [len(w) for w in text.split()]


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed")
def test_without_vllm_the_spec_is_a_usage_error_naming_the_extra(pytester):
    pytester.makepyfile(
        test_x="""
        import pytest

        @pytest.mark.competence(levels=[4], pairs=4)
        def test_x(competence):
            pass
    """
    )
    (pytester.path / "config.json").write_text("{}")  # a checkpoint: only vLLM is missing
    result = pytester.runpytest("--competence-model", f"vllm:{pytester.path}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    where = pytester.path
    assert result.stderr.lines[0] == (
        f"ERROR: --competence-model: 'vllm:{where}' needs vLLM, which is not installed: "
        f"pip install 'pytest-competence[vllm]' (a CUDA machine), or use 'hf:{where}' to run the "
        f"model with transformers"
    )


def test_prompts_go_sorted_in_chunks_with_prefix_caching(fake_vllm, prompts):
    import vllm

    tries = [replace(p, attempt=k) for p in prompts for k in range(2)]
    model = resolve_model(f"vllm:{fake_vllm}?chunk=5&seed=7&max_tokens=4")
    answers = model.generate(tries)
    assert answers == [f"answer {sum(ids(rendered(p)))}" for p in tries]
    assert vllm.ENGINES == [
        {
            "model": str(fake_vllm),
            "enable_prefix_caching": True,
            "dtype": "auto",
            "gpu_memory_utilization": 0.9,
            "tensor_parallel_size": 1,
            "seed": 7,
        }
    ]
    sent = [p["prompt_token_ids"] for batch, _ in vllm.CALLS for p in batch]
    assert all(len(batch) <= 5 for batch, _ in vllm.CALLS)
    # Token ids, in the order of the rendered texts: shared beginnings side by side.
    assert sent == [ids(t) for t in sorted(rendered(p) for p in tries)]
    seeds = {}
    for batch, params in vllm.CALLS:
        for prompt, sampling in zip(batch, params):
            seeds.setdefault(tuple(prompt["prompt_token_ids"]), []).append(
                sampling.settings["seed"]
            )
    assert all(sorted(s) == [7, 8] for s in seeds.values())  # seed + attempt
    model.generate(prompts[:2])
    assert len(vllm.ENGINES) == 1  # started once


def test_candidates_are_scored_from_prompt_logprobs(fake_vllm, prompts):
    model = resolve_model(f"vllm:{fake_vllm}?chunk=3")
    scores = model.score(prompts[:4], ["yes", "no thanks"])
    # The stand-in's token ids are word lengths, each scored -0.1 × id.
    assert scores == [{"yes": pytest.approx(-0.3), "no thanks": pytest.approx(-0.8)}] * 4
    readout = resolve_model(f"vllm:{fake_vllm}?readout=score")
    assert readout.generate(prompts[:2]) == ["no"] * 2  # -0.2 > -0.3


def test_an_engine_failure_is_recorded_for_each_prompt(fake_vllm, prompts):
    import vllm

    vllm.FAIL.append("CUDA error: device-side assert triggered")
    answers = resolve_model(f"vllm:{fake_vllm}").generate(prompts[:3])
    assert [str(a) for a in answers] == [
        "vLLM failed: RuntimeError: CUDA error: device-side assert triggered"
    ] * 3


def test_cache_identity_names_checkpoint_and_decoding(fake_vllm):
    a = resolve_model(f"vllm:{fake_vllm}")
    assert a.cache_identity == resolve_model(f"vllm:{fake_vllm}?chunk=9").cache_identity
    assert a.cache_identity != resolve_model(f"vllm:{fake_vllm}?temperature=0.5").cache_identity
    assert textwrap.dedent(repr(a)) == f"VLLMModel('vllm:{fake_vllm}')"


def test_hf_and_vllm_send_the_same_token_ids_with_a_template_that_writes_bos(
    fake_vllm, prompts, tmp_path
):
    """A tokenizer that adds BOS and a chat template that writes one (as Llama 3's does): both
    backends send one BOS, and the same ids for the same prompt, in generation and in scoring."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import vllm

    from tiny_llama import TEMPLATE, build

    checkpoint = build(tmp_path / "bos", prompts, "{{ bos_token }}" + TEMPLATE, bos=True)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(checkpoint)
    bos = tok.bos_token_id
    assert tok("left")["input_ids"][0] == bos  # the tokenizer adds BOS to text
    text = tok.apply_chat_template(
        [{"role": "user", "content": "left"}], add_generation_prompt=True, tokenize=False
    )
    assert tok(text)["input_ids"][:2] == [bos, bos]  # what vLLM's own tokenisation would send

    hf = resolve_model(f"hf:{checkpoint}?device=cpu&max_new_tokens=1")
    vl = resolve_model(f"vllm:{checkpoint}")
    seen = []  # hf's unpadded sequences, as they go to the model
    runner = hf.runner
    padded = runner._padded
    runner._padded = lambda seqs: seen.extend(list(s) for s in seqs) or padded(seqs)
    asked = prompts[:4]

    hf.generate(asked)
    vl.generate(asked)
    generated = [p["prompt_token_ids"] for batch, _ in vllm.CALLS for p in batch]
    assert sorted(seen) == sorted(generated)
    assert all(s[0] == bos and s[1] != bos for s in generated)

    seen.clear()
    vllm.CALLS.clear()
    candidates = ["yes please", "no thanks"]  # several tokens each: one row per candidate
    hf.score(asked, candidates)
    vl.score(asked, candidates)
    scored = [p["prompt_token_ids"] for batch, _ in vllm.CALLS for p in batch]
    assert len(scored) == len(asked) * len(candidates)
    assert sorted(seen) == sorted(scored)
    assert all(s[0] == bos and s[1] != bos for s in scored)
