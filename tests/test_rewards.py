"""The CBE paper (arXiv:2610.22894) GRPO reward (App. B.3, Eq. 4/5) and App. G's instance-grouped variant."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_competence.strategies import (
    FAMILIES,
    AnswerMap,
    InvalidArgument,
    default_presentations,
    family,
)
from pytest_competence.training.rewards import (
    EPSILON,
    GRPOReward,
    Sample,
    agreement_rewards,
    cosine,
    instance_advantages,
    nonzero_share,
    prompt_advantages,
    samples,
    score,
)


def batch(gold: str, answers: dict[str, list[str | None]], instance: str = "z") -> list[Sample]:
    return [Sample(instance, p, a, gold) for p, group in answers.items() for a in group]


# Gold yes; P1 answers yes, yes; P2 answers yes, no. Parsed: 3 yes of 4, q = 3/4, chance = 10/16.
HAND = batch("yes", {"P1": ["yes", "yes"], "P2": ["yes", "no"]})


def test_eq4_by_hand():
    # P1 yes: a = 1/2 (P2 says yes once of twice), b = max(0, 1/2 − 5/8) = 0       -> r = 1
    # P2 yes: a = 2/2,                           b = 1 − 5/8 = 3/8, r = 1 + 3/16 -> 1.1875
    # P2 no:  a = 0/2,                           b = 0,                            r = 0
    assert agreement_rewards(HAND).tolist() == [1.0, 1.0, 1.1875, 0.0]


def test_app_g_reward_is_unclipped_with_lambda():
    # correct + λ(agree − chance): P1 yes 1 + ½(½ − ⅝); P2 yes 1 + ½·⅜; P2 no 0 + ½(0 − ⅝).
    got = agreement_rewards(HAND, weight=0.5, clip=False)
    assert got.tolist() == [0.9375, 0.9375, 1.1875, -0.3125]


def test_unparseable_answers_earn_zero_and_are_left_out_of_agreement():
    # Gold no. P1: no, invalid; P2: no, yes. Parsed: no, no, yes -> q_yes = 1/3, chance = 5/9.
    got = agreement_rewards(batch("no", {"P1": ["no", None], "P2": ["no", "yes"]}))
    # P1 no: a = 1/2 < 5/9 -> 1. P1 invalid -> 0. P2 no: a = 1/1 (the invalid one is not counted)
    # -> 1 + ½(1 − 5/9) = 1 + 2/9. P2 yes: a = 0 -> 0.
    assert got == pytest.approx([1.0, 0.0, 1 + 2 / 9, 0.0])


def test_no_parsed_answer_elsewhere_means_no_bonus():
    got = agreement_rewards(batch("yes", {"P1": ["yes", "no"], "P2": [None, None]}), clip=False)
    assert got.tolist() == [1.0, 0.0, 0.0, 0.0]


def test_instances_do_not_mix_and_order_does_not_matter():
    other = batch("no", {"P1": ["no", "no"], "P2": ["no", "yes"]}, instance="w")
    mixed = [other[0], HAND[0], other[1], HAND[1], other[2], HAND[2], other[3], HAND[3]]
    got = agreement_rewards(mixed)
    assert got[1::2].tolist() == agreement_rewards(HAND).tolist()
    assert got[0::2].tolist() == agreement_rewards(other).tolist()


def test_three_valued_chance_is_the_agreement_probability():
    # Gold A. P1: A, B; P2: A, C. Parsed shares 1/2, 1/4, 1/4 -> chance = 1/4 + 1/16 + 1/16 = 3/8.
    got = agreement_rewards(batch("A", {"P1": ["A", "B"], "P2": ["A", "C"]}))
    # P1 A: a = 1/2 -> b = 1/8, r = 1 + 1/16; P1 B: a = 0; P2 A: same as P1 A; P2 C: a = 0.
    assert got.tolist() == [1.0625, 0.0, 1.0625, 0.0]


def test_agreement_undoes_declared_answer_maps():
    # A negated presentation (yes↔no): its "no" says what the original's "yes" says.
    flip = AnswerMap.swap("yes", "no")
    mapped = [
        Sample("z", "original", "yes", "yes"),
        Sample("z", "original", "no", "yes"),
        Sample("z", "negated", "no", "no", flip),
        Sample("z", "negated", "no", "no", flip),
    ]
    same = [
        Sample("z", "original", "yes", "yes"),
        Sample("z", "original", "no", "yes"),
        Sample("z", "other", "yes", "yes"),
        Sample("z", "other", "yes", "yes"),
    ]
    # Canonical answers yes, no, yes, yes: chance 5/8; original yes agrees 2/2 -> 1 + ½·⅜.
    expected = [1.1875, 0.0, 1.0, 1.0]
    assert agreement_rewards(mapped).tolist() == agreement_rewards(same).tolist() == expected


def test_eq5_by_hand():
    rewards = agreement_rewards(HAND)
    got = prompt_advantages(rewards, HAND)
    spread = 1.1875 / math.sqrt(2)  # sample standard deviation of (1.1875, 0)
    assert got[:2].tolist() == [0.0, 0.0]  # P1's two samples earned the same reward
    assert got[2:] == pytest.approx([0.59375 / (spread + EPSILON), -0.59375 / (spread + EPSILON)])
    population = prompt_advantages(rewards, HAND, ddof=0)
    assert population[2:] == pytest.approx(
        [0.59375 / (0.59375 + EPSILON), -0.59375 / (0.59375 + EPSILON)]
    )


def test_instance_advantages_by_hand():
    got = instance_advantages(agreement_rewards(HAND, weight=0.5, clip=False), HAND)
    assert got.tolist() == [0.25, 0.25, 0.5, -1.0]  # mean 0.6875, no scaling


answers = st.lists(
    st.lists(st.sampled_from(["yes", "no"]), min_size=4, max_size=4), min_size=4, max_size=4
)


@settings(max_examples=200, deadline=None)
@given(gold=st.sampled_from(["yes", "no"]), groups=answers)
def test_app_g_per_prompt_groups_make_the_bonus_inert(gold, groups):
    """CBE paper, arXiv:2610.22894, App. G: two-valued rewards per prompt -> λ = ½ and λ = 0 give equal advantages."""
    b = batch(gold, {f"P{k}": g for k, g in enumerate(groups)})
    with_bonus, without = score(b, weight=0.5), score(b, weight=0.0)
    assert np.allclose(with_bonus.advantages, without.advantages, atol=1e-3)
    assert with_bonus.reference.tolist() == without.advantages.tolist()
    if np.any(with_bonus.advantages):
        assert with_bonus.cosine == pytest.approx(1.0, abs=1e-6)
    else:
        assert math.isnan(with_bonus.cosine) and with_bonus.nonzero_share == 0


def test_app_g_instance_groups_let_the_bonus_act():
    # Four presentations × G = 4, gold yes, answers split so rewards take three or more values.
    b = batch(
        "yes",
        {
            "P0": ["yes"] * 4,
            "P1": ["yes", "yes", "yes", "no"],
            "P2": ["yes", "no", "no", "no"],
            "P3": ["yes", "yes", "no", "no"],
        },
    )
    grpo = score(b, weight=0.5)
    assert grpo.cosine == pytest.approx(1.0, abs=1e-6)  # per prompt: the bonus changes nothing
    ig = score(b, method="grpo-ig", weight=0.5)
    assert ig.cosine < 0.9999  # instance groups: the update direction moves
    assert not np.allclose(ig.advantages, ig.reference)
    assert ig.nonzero_share == 1.0 and grpo.nonzero_share == 0.75  # P0's four agree


def test_diagnostics():
    assert math.isnan(cosine([0, 0], [1, 0]))
    assert cosine([1, 0], [2, 0]) == 1.0
    assert nonzero_share([0, 0, 1, -1], ["a", "a", "b", "b"]) == 0.5
    log = score(HAND).log()
    assert set(log) == {"reward_mean", "nonzero_advantage_share", "cosine_to_correctness_only"}


def test_bad_arguments_name_themselves():
    with pytest.raises(InvalidArgument, match="method='ppo'"):
        score(HAND, method="ppo")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="weight='½'"):
        agreement_rewards(HAND, weight="½")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="one reward per sample"):
        prompt_advantages([1.0], HAND)


def test_samples_parse_with_the_family_parser():
    ordering = family("ordering")
    items = ordering.design(levels=[4], pairs=4, seed=1, presentations=["original", "equivalent"])
    prompts = items[0].prompts
    got = samples(ordering.parse, prompts, [["Yes.", "no"], ["I cannot say", prompts[1].gold]])
    assert [s.answer for s in got] == ["yes", "no", None, prompts[1].gold]
    assert [s.presentation for s in got] == ["original", "original", "equivalent", "equivalent"]
    with pytest.raises(InvalidArgument, match="one list of completions per prompt"):
        samples(ordering.parse, prompts, [["yes"]])


# -- the TRL reward function (its signature, without TRL) ---------------------------------------

COLUMNS = {
    "instance_id": [s.instance_id for s in HAND],
    "presentation": [s.presentation for s in HAND],
    "gold": [s.gold for s in HAND],
}
TEXTS = ["yes", "Yes.", "Answer: yes", "no"]


def test_trl_signature_standard_format():
    reward = GRPOReward(family("ordering").parse)
    params = inspect.signature(reward).parameters
    assert (
        list(params)[0] == "completions" and params["columns"].kind is params["columns"].VAR_KEYWORD
    )
    got = reward(
        prompts=["p"] * 4,
        completions=TEXTS,
        completion_ids=[[1]] * 4,
        trainer_state=None,
        answer_space=[["yes", "no"]] * 4,
        **COLUMNS,
    )
    assert got == [1.0, 1.0, 1.1875, 0.0] and all(type(r) is float for r in got)
    assert reward.__name__ == "competence_grpo"


def test_trl_signature_conversational_format_and_log_metric():
    logged: dict[str, float] = {}
    reward = GRPOReward(family("ordering").parse, method="grpo-ig")
    chats = [[{"role": "assistant", "content": t}] for t in TEXTS]
    got = reward(completions=chats, log_metric=logged.__setitem__, **COLUMNS)
    assert got == [0.9375, 0.9375, 1.1875, -0.3125]
    assert logged["competence_grpo_ig/nonzero_advantage_share"] == 1.0
    assert logged["competence_grpo_ig/cosine_to_correctness_only"] < 1


def test_trl_reward_checks_its_columns():
    reward = GRPOReward(family("ordering").parse)
    with pytest.raises(InvalidArgument, match="one gold per completion"):
        reward(completions=TEXTS, **{**COLUMNS, "gold": ["yes"]})
    with pytest.raises(InvalidArgument, match="weight=nan"):
        GRPOReward(family("ordering").parse, weight=float("nan"))


def test_presentations_with_another_gold_are_not_compared():
    # An edit that changes the oracle: "edited" has gold no while the original's is yes.
    edited = [
        Sample("z", "original", "yes", "yes"),
        Sample("z", "original", "no", "yes"),
        Sample("z", "edited", "no", "no"),
        Sample("z", "edited", "no", "no"),
    ]
    assert agreement_rewards(edited, clip=False).tolist() == [1.0, 0.0, 1.0, 1.0]


def _design(name: str):
    f = family(name)
    lo = getattr(f, "levels", (2, 2))[0]  # the rule-induction families declare their range
    level = 4 if name == "intervention" else max(lo, 2)
    return f, f.design(
        levels=[level],
        pairs=12,
        seed=1,  # 12: balanced over 2, 3, 4 or 6 cells
        presentations=list(default_presentations(f)),
    )


@pytest.mark.parametrize("name", sorted(FAMILIES))
@pytest.mark.parametrize("method", ["grpo", "grpo-ig"])
def test_every_family_a_correct_model_earns_exactly_one(name, method):
    """Every family's parser reads its golds back; an always-correct model gets no bonus."""
    f, items = _design(name)
    prompts = [p for item in items for p in item.prompts]
    got = score(samples(f.parse, prompts, [[p.gold] * 2 for p in prompts]), method=method)
    assert got.rewards.tolist() == [1.0] * 2 * len(prompts)
    assert not got.advantages.any() and got.nonzero_share == 0
