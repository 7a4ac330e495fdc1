"""Training rows, the paper's batch order, named splits and ``competence generate --format hf``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_competence.cli import main
from pytest_competence.strategies import CATALOG, FAMILIES, InvalidArgument, Ordering
from pytest_competence.training import (
    dataset,
    grpo_order,
    rows,
)
from pytest_competence.training.splits import (
    EVAL_SEEDS,
    SPLITS,
    TRAIN_SEEDS,
    overlap,
    split,
)

COLUMNS = {
    "prompt",
    "system",
    "question",
    "gold",
    "instance_id",
    "presentation",
    "answer_space",
    "answer_map",
    "family",
    "params",
}


def test_paper_splits_partition_the_catalog():
    held_in = split("ordering:paper-heldin").options["vocabulary"]
    held_out = split("ordering:paper-heldout").options["vocabulary"]
    # CBE paper, arXiv:2610.22894, App. B.3 and App. G
    assert len(held_in) == 19 and len(held_out) == 12
    assert set(held_in).isdisjoint(held_out)
    assert set(held_in) | set(held_out) == {v.name for v in CATALOG}
    assert "front_behind" in held_out and "more_less_zorbic" in held_out
    assert split("ordering") is SPLITS["ordering:paper-heldin"]  # the family's default


def test_training_and_evaluation_seeds_are_disjoint_for_every_family():
    assert EVAL_SEEDS.stop <= TRAIN_SEEDS.start
    for name in FAMILIES:
        assert split(f"{name}:train").training and not split(f"{name}:eval").training
        assert split(name).training
    with pytest.raises(InvalidArgument, match="Unknown split 'ordering:nope'"):
        split("ordering:nope")
    with pytest.raises(InvalidArgument, match="index=-1"):
        split("horn").seed(-1)


def test_overlap_needs_the_same_seeds_and_a_held_in_value():
    held_in = split("ordering:paper-heldin")
    assert overlap(held_in, "ordering", {"vocabulary": "older_younger"}, TRAIN_SEEDS.start + 3)
    assert not overlap(held_in, "ordering", {"vocabulary": "older_younger"}, 1)
    assert not overlap(held_in, "ordering", {"vocabulary": "front_behind"}, TRAIN_SEEDS.start)
    assert not overlap(held_in, "horn", {}, TRAIN_SEEDS.start)
    assert overlap(split("horn:eval"), "horn", {"vary": "rules"}, 1)


def test_rows_have_the_training_columns_and_the_paper_presentations():
    got = rows("ordering", levels=[4], per_level=4, vocabulary="older_younger")
    assert len(got) == 4 * len(Ordering.training_presentations)
    assert set(got[0]) == COLUMNS
    assert got[0]["prompt"] == f"{got[0]['system']}\n\n{got[0]['question']}"
    assert {r["params"]["vocabulary"] for r in got} == {"older_younger"}
    assert all(f"seed={TRAIN_SEEDS.start}/" in r["instance_id"] for r in got)
    assert Counter(r["instance_id"] for r in got) == Counter({r["instance_id"]: 4 for r in got})
    chat = rows(
        "ordering", levels=[4], per_level=4, vocabulary="older_younger", conversational=True
    )[0]["prompt"]
    assert [m["role"] for m in chat] == ["system", "user"]


def test_rows_of_a_split_cover_its_vocabularies_with_distinct_instances():
    got = rows("ordering", levels=[4], per_level=4)  # the 19 held-in relations
    assert {r["params"]["vocabulary"] for r in got} == set(
        split("ordering:paper-heldin").options["vocabulary"]
    )
    assert len({r["instance_id"] for r in got}) == 19 * 4  # one latent order, 19 renderings
    with pytest.raises(InvalidArgument, match="vocabulary='front_behind' is outside split"):
        rows("ordering", levels=[4], per_level=4, vocabulary="front_behind")
    evaluation = rows("horn", split_name="eval", levels=[4], per_level=4, index=1)
    assert all("seed=1/" in r["instance_id"] for r in evaluation)


def test_grpo_order_keeps_instances_together():
    got = grpo_order(
        rows("ordering", levels=[4, 8], per_level=4, vocabulary="older_younger"), seed=7
    )
    k = len(Ordering.training_presentations)
    blocks = [got[i : i + k] for i in range(0, len(got), k)]
    assert all(len({r["instance_id"] for r in b}) == 1 for b in blocks)
    assert all(
        [r["presentation"] for r in b] == list(Ordering.training_presentations) for b in blocks
    )
    ids = [b[0]["instance_id"] for b in blocks]
    assert len(set(ids)) == 8 and ids != sorted(ids)  # shuffled, seeded
    assert got == grpo_order(got, seed=7)


def _generate(tmp_path: Path, *argv: str) -> list[dict]:
    out = tmp_path / "rows.jsonl"
    assert main(["generate", *argv, "-o", str(out)]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_generate_format_hf_with_a_split(tmp_path: Path):
    got = _generate(
        tmp_path,
        "ordering",
        "--levels",
        "4",
        "--per-level",
        "4",
        "--format",
        "hf",
        "--split",
        "paper-heldin",
    )
    assert len(got) == 19 * 4 * 4 and set(got[0]) == COLUMNS
    assert all(f"seed={TRAIN_SEEDS.start}/" in r["instance_id"] for r in got)
    assert [r["presentation"] for r in got[:4]] == list(Ordering.training_presentations)
    horn = _generate(
        tmp_path,
        "horn",
        "--levels",
        "4",
        "--per-level",
        "4",
        "--format",
        "hf",
        "--split",
        "train",
        "--seed",
        str(TRAIN_SEEDS.start + 5),
    )
    assert all(f"seed={TRAIN_SEEDS.start + 5}/" in r["instance_id"] for r in horn)
    default = _generate(tmp_path, "raven", "--levels", "1", "--per-level", "4", "--format", "hf")
    assert all(f"seed={TRAIN_SEEDS.start}/" in r["instance_id"] for r in default)  # raven:train
    plain = _generate(tmp_path, "ordering", "--levels", "4", "--per-level", "4")
    assert plain[0]["schema"] == "pytest-competence/dataset/1"  # the audit records, unchanged
    assert (
        plain[0]["params"]["vocabulary"] == "front_behind" and "seed=1/" in plain[0]["instance_id"]
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--split", "paper-heldin", "--seed", "1"],
            "--seed 1 is outside split ordering:paper-heldin",
        ),
        (["--split", "paper-heldout", "--vocabulary", "older_younger"], "outside split"),
        (["--split", "nope"], "Unknown split 'ordering:nope'"),
    ],
)
def test_generate_rejects_a_design_outside_its_split(argv, message, capsys):
    with pytest.raises(SystemExit):
        main(["generate", "ordering", "--levels", "4", "--per-level", "4", "--format", "hf", *argv])
    assert message in capsys.readouterr().err


def test_dataset_reads_rows_and_jsonl(tmp_path: Path):
    datasets = pytest.importorskip("datasets", reason="the train extra is not installed")
    got = rows("ordering", levels=[4], per_level=4, vocabulary="older_younger")
    ds = dataset(got)
    assert ds.num_rows == len(got) and set(ds.column_names) == COLUMNS
    _generate(
        tmp_path,
        "ordering",
        "--levels",
        "4",
        "--per-level",
        "4",
        "--format",
        "hf",
        "--vocabulary",
        "older_younger",
    )
    loaded = datasets.load_dataset("json", data_files=str(tmp_path / "rows.jsonl"), split="train")
    assert loaded.num_rows == 16 and loaded[0]["gold"] in ("yes", "no")


GUARDED = """
import pytest

@pytest.mark.competence(levels=[4], pairs=4, seed=1_000_003, vocabulary="older_younger")
def test_held_in(competence):
    pass

@pytest.mark.competence(levels=[4], pairs=4, seed=1_000_003, vocabulary="front_behind")
def test_held_out(competence):
    pass

@pytest.mark.competence(levels=[4], pairs=4, vocabulary="older_younger")
def test_evaluation_seed(competence):
    pass
"""


def test_a_design_overlapping_a_declared_training_split_warns(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\ncompetence_trained_on = ordering:paper-heldin\n")
    pytester.makepyfile(test_guarded=GUARDED)
    result = pytester.runpytest("-p", "no:cacheprovider", "--competence-model=ref:ideal")
    result.assert_outcomes(passed=3, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*CompetenceTrainingOverlap: test_guarded.py::test_held_in*"
            "(ordering:paper-heldin: seed 1000003 vocabulary=older_younger)*"
        ]
    )


def test_an_unknown_training_split_is_a_usage_error(pytester: pytest.Pytester):
    pytester.makeini("[pytest]\ncompetence_trained_on = ordering:nope\n")
    pytester.makepyfile(test_guarded=GUARDED)
    result = pytester.runpytest("-p", "no:cacheprovider", "--competence-model=ref:ideal")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*competence_trained_on: Unknown split 'ordering:nope'*"])
