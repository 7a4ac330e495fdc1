"""The ordering training script (train/train_ordering.py, issue #10) runs a few steps on the CPU.

Only what training guarantees is pinned: the saved checkpoint loads through the real ``hf:``
backend, answers ordering prompts with text the family's parser maps into the answer space or marks
invalid, is deterministic under greedy decoding, and ``training.json`` records the run. A few steps
of a tiny model learn nothing, so accuracy is not checked.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from pytest_competence.models import resolve_model  # noqa: E402
from pytest_competence.strategies import Ordering  # noqa: E402

SCRIPT = Path(__file__).resolve().parents[1] / "train" / "train_ordering.py"
ARGS = [
    "--steps",
    "4",
    "--batch-size",
    "8",
    "--layers",
    "1",
    "--d-model",
    "32",
    "--max-n",
    "4",
    "--seed",
    "7",
    "--lr",
    "0.001",
    "--device",
    "cpu",
    "--log-every",
    "2",
    "--vocabularies",
    "front_behind",
    "older_younger",
    "--presentations",
    "original",
    "--min-n",
    "3",
    "--heads",
    "2",
    "--eval-every",
    "2",
]


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("ordering-model") / "ckpt"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), *ARGS],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done.stdout


@pytest.mark.slow
def test_the_script_trains_logs_and_records_its_run(trained):
    out, log = trained
    assert "steps/s" in log and "loss" in log
    record = json.loads((out / "training.json").read_text())
    assert record["seed"] == 7
    hp = record["hyperparameters"]
    assert (hp["steps"], hp["batch_size"], hp["layers"], hp["d_model"], hp["max_n"]) == (
        4,
        8,
        1,
        32,
        4,
    )
    assert hp["lr"] == 0.001 and hp["vocabularies"] == ["front_behind", "older_younger"]
    assert record["wall_time_s"] > 0 and record["hardware"]["device"] == "cpu"
    assert hp["presentations"] == ["original"] and (hp["min_n"], hp["heads"]) == (3, 2)
    # The learning curve: greedy accuracy on a fixed evaluation set, original and equivalent.
    curve = record["learning_curve"]
    assert [point["step"] for point in curve] == [2, 4] and record["steps_run"] == 4
    assert set(curve[-1]["accuracy"]) == {
        f"{v}/n={n}/{p}"
        for v in ("front_behind", "older_younger")
        for n in (3, 4)
        for p in ("original", "equivalent")
    }
    assert all(0 <= a <= 1 for a in curve[-1]["accuracy"].values())
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {p.name for p in out.iterdir()}


@pytest.mark.slow
def test_the_checkpoint_answers_through_the_hf_backend_deterministically(trained):
    out, _ = trained
    # Trained and held-out vocabularies, inside and beyond the trained sizes.
    prompts = []
    for vocab, n in (("front_behind", 3), ("older_younger", 4), ("taller_shorter", 6)):
        family = Ordering(vocabulary=vocab)
        items = family.design(levels=[n], pairs=4, seed=1, presentations=["original", "equivalent"])
        prompts += [p for item in items for p in item.prompts]
    model = resolve_model(f"hf:{out}?max_new_tokens=3&batch_size=4")
    tok = model.runner.tok
    assert tok.pad_token is not None and tok.eos_token is not None
    assert tok.unk_token_id not in tok(prompts[-1].text)["input_ids"]  # a held-out vocabulary
    first, second = model.generate(prompts), model.generate(prompts)
    assert first == second  # greedy decoding is deterministic
    parser = Ordering()
    for answer in first:
        assert isinstance(answer, str), answer  # an answer, not a recorded error
        parsed = parser.parse(answer)
        assert parsed.answer in ("yes", "no") or (parsed.answer is None and parsed.reason)
    again = resolve_model(f"hf:{out}?max_new_tokens=3&batch_size=1")
    assert again.generate(prompts[:4]) == first[:4]


@pytest.mark.slow
def test_a_seed_gives_the_same_weights_on_the_cpu(trained, tmp_path):
    out, _ = trained
    again = tmp_path / "again"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(again), *ARGS],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (again / "model.safetensors").read_bytes() == (out / "model.safetensors").read_bytes()
    first, second = (json.loads((d / "training.json").read_text()) for d in (out, again))
    assert first["learning_curve"] == [
        {**p, "wall_time_s": q["wall_time_s"]}
        for p, q in zip(second["learning_curve"], first["learning_curve"])
    ]
