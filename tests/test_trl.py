"""A few TRL ``GRPOTrainer`` steps on the CPU with the CBE paper (arXiv:2610.22894) reward and a tiny random model.

Skipped when the ``train`` extra (trl, datasets) or torch/transformers is missing. The model
answers nonsense; the test checks the wiring: rows in the paper's batch order reach the reward
function whole (every presentation of an instance, ``G`` samples each, in one call), TRL accepts
the rewards and logs the diagnostics.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("torch", reason="the TRL test needs torch (pip install torch)")
pytest.importorskip("transformers", reason="the TRL test needs transformers")
trl = pytest.importorskip(
    "trl", reason="trl is not installed: pip install pytest-competence[train]"
)
pytest.importorskip(
    "datasets", reason="datasets is not installed: pip install pytest-competence[train]"
)

import tiny_llama  # noqa: E402
from pytest_competence.strategies import Ordering, family  # noqa: E402
from pytest_competence.training import dataset, grpo_order, rows  # noqa: E402
from pytest_competence.training.rewards import GRPOReward  # noqa: E402

G = 4  # samples per prompt, as in the CBE paper, arXiv:2610.22894, App. B.3


@pytest.mark.slow
def test_grpo_trainer_runs_with_the_competence_reward(tmp_path: Path):
    records = grpo_order(rows("ordering", levels=[4], per_level=4, vocabulary="older_younger"))
    # The tokenizer learns the words of the prompts as rendered ("system\n\nquestion").
    prompts = [SimpleNamespace(system=r["system"], text=r["question"]) for r in records]
    checkpoint = tiny_llama.build(tmp_path / "tiny", prompts)
    reward = GRPOReward(family("ordering").parse)
    calls: list[Counter] = []

    def competence_reward(completions, **columns):
        calls.append(Counter(zip(columns["instance_id"], columns["presentation"])))
        return reward(completions, **columns)

    instance = len(Ordering.training_presentations) * G  # one instance's completions
    config = trl.GRPOConfig(
        output_dir=str(tmp_path / "out"),
        use_cpu=True,
        report_to=[],
        seed=0,
        num_generations=G,
        per_device_train_batch_size=instance,
        max_steps=2,
        max_completion_length=2,
        shuffle_dataset=False,
        beta=0.0,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        bf16=False,
    )
    trainer = trl.GRPOTrainer(
        model=str(checkpoint),
        reward_funcs=competence_reward,
        args=config,
        train_dataset=dataset(records),
    )
    trainer.train()
    assert len(calls) == 2
    for call in calls:  # one whole instance per call: four presentations, G samples each
        assert len({i for i, _ in call}) == 1 and sorted(call.values()) == [G] * 4
    logged = [k for entry in trainer.state.log_history for k in entry]
    assert any(k.startswith("rewards/competence_reward") for k in logged)
    assert any("competence_grpo/reward_mean" in k for k in logged)
