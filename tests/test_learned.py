"""The shipped learned model (issue #19) loads through ``hf:`` on the CPU and still has the
profile recorded when it was trained.

``train/record_profile.py`` ran ``train/learned_ordering_suite.py`` against the checkpoint right
after training and kept the figures in its ``training.json``; the slow test runs the same suite
through the plugin and compares. Greedy decoding is deterministic, but float32 arithmetic on
another CPU may round a near-tie the other way, so each accuracy may move by one answer.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from pytest_competence.models.hf import SHIPPED, SHIPPED_DIR, locate

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT = SHIPPED_DIR / SHIPPED["pytest-competence/learned-ordering"]
NAME = "hf:pytest-competence/learned-ordering"


def _record() -> dict:
    return json.loads((CHECKPOINT / "training.json").read_text())


def test_the_shipped_name_resolves_to_the_packaged_checkpoint():
    assert locate("pytest-competence/learned-ordering", NAME) == CHECKPOINT.resolve()
    files = {p.name for p in CHECKPOINT.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json", "training.json"} <= files
    assert sum(p.stat().st_size for p in CHECKPOINT.iterdir()) < 5_000_000  # a few MB


def test_training_json_records_how_it_was_made():
    record = _record()
    assert isinstance(record["seed"], int) and record["steps_run"] > 0
    assert record["wall_time_s"] > 0 and record["hardware"]["device"] == "cpu"
    assert record["hyperparameters"]["vocabularies"] == ["front_behind", "older_younger"]
    curve = record["learning_curve"]
    assert curve and curve[-1]["step"] == record["steps_run"]
    assert set(record["profile"]["tests"]) == {
        "test_trained_front_behind",
        "test_trained_older_younger",
        "test_held_out_left_right",
        "test_interior_front_behind",
    }


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "train" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_checkpoint_still_has_its_recorded_profile(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    recorder = _script("record_profile")
    recorded = _record()["profile"]
    assert recorded["decoding"] == recorder.DECODING
    now = recorder.figures(
        recorder.run_suite("pytest-competence/learned-ordering", tmp_path / "results.json")
    )
    assert set(now) == set(recorded["tests"])
    pairs = _script("learned_ordering_suite").PAIRS
    for test, then in recorded["tests"].items():
        for n, by_presentation in then["accuracy"].items():
            for presentation, accuracy in by_presentation.items():
                moved = abs(now[test]["accuracy"][n][presentation] - accuracy)
                assert moved <= 1 / pairs + 1e-9, (test, n, presentation)
        top_then = then["diagnosis"]["closest"][0][0]
        assert now[test]["diagnosis"]["closest"][0][0] == top_then, test
