"""The CBE paper (arXiv:2610.22894) GRPO reward and advantages, for training with a competence family.

CBE paper, arXiv:2610.22894, §6 and App. B.3 train with ``G = 4`` samples per prompt and the four presentations of
one instance in a batch. A parsed answer ``i`` earns (App. B.3, Eq. 4)

    r_i = c_i + ½·b_i,    b_i = max{0, a_i − [q_z² + (1 − q_z)²]}

with ``c_i`` one for a correct answer, ``a_i`` the fraction of *parsed* answers on the instance's
*other* presentations that match answer ``i`` and ``q_z`` the yes-rate among all parsed samples of
the instance; an unparseable answer earns 0. Advantages are normalised per prompt (Eq. 5):
``A_i = (r_i − μ_p) / (σ_p + 10⁻⁴)`` over the prompt's samples. App. G shows that with per-prompt
groups the bonus cannot change the advantages (a group's reward takes two values), and defines the
*grpo-ig* variant: all samples of an instance in one group, the instance's mean reward as the
baseline without scaling, and ``r = correct + λ·(agree − chance)`` without the clip at zero.

Beyond yes/no, ``chance`` is the probability that two answers drawn from the instance's parsed
answers agree, ``Σ_k q_k²`` (for two answers exactly ``q² + (1 − q)²``), and answers are compared
exactly, in the original presentation's frame: a presentation that declares an answer map (a
negation flip, a relabelling) has its answers mapped back before they are compared, and only
presentations whose golds then coincide are compared at all (an edit that changes the oracle,
or a rule-induction variation with its own answer, is not a rewording of the same question).
For the paper's ordering presentations every map is the identity, every gold the same, and
this is Eq. 4 as printed.

This module imports numpy only; :func:`grpo_reward` builds the callable TRL's ``GRPOTrainer``
takes, and still imports nothing from TRL.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from pytest_competence.protocol import AnswerMap, InvalidArgument, Prompt

__all__ = [
    "EPSILON",
    "METHODS",
    "Floats",
    "GRPOReward",
    "Method",
    "Sample",
    "Scores",
    "agreement_rewards",
    "cosine",
    "instance_advantages",
    "nonzero_share",
    "prompt_advantages",
    "samples",
    "score",
]

#: The constant added to the group's standard deviation in Eq. 5 (CBE paper, arXiv:2610.22894, App. B.3).
EPSILON = 1e-4

Method = Literal["grpo", "grpo-ig"]
#: Rewards or advantages, one per sample: a list or a numpy array.
Floats = Sequence[float] | np.ndarray
METHODS = ("grpo", "grpo-ig")


@dataclass(frozen=True)
class Sample:
    """One sampled completion of one presentation of one instance, parsed.

    ``answer`` is the parsed answer (``None``: unparseable), ``gold`` the presentation's gold, both
    in the presentation's own frame; ``answer_map`` is the presentation's declared map from the
    original's answers to its own, undone by :attr:`canonical` before answers are compared.
    """

    instance_id: str
    presentation: str
    answer: str | None
    gold: str
    answer_map: AnswerMap = field(default_factory=AnswerMap)

    @property
    def correct(self) -> bool:
        """``c_i = 1[parse(o_i) = y*(z)]``; an unparseable answer is not correct."""
        return self.answer is not None and self.answer == self.gold

    @property
    def canonical(self) -> str | None:
        """The answer in the original presentation's frame (the declared answer map undone)."""
        return None if self.answer is None else self._undo(self.answer)

    @property
    def canonical_gold(self) -> str:
        """The gold in the original presentation's frame."""
        return self._undo(self.gold)

    def _undo(self, answer: str) -> str:
        inverse = {dst: src for src, dst in self.answer_map.pairs}
        return inverse.get(answer, answer)


def samples(
    parse: Callable[[str], Any], prompts: Sequence[Prompt], completions: Sequence[Sequence[str]]
) -> list[Sample]:
    """Parse ``completions[k]`` (the samples of ``prompts[k]``) with ``parse``, flattened in order.

    ``parse`` is a family's :meth:`~pytest_competence.strategies.Family.parse` (anything returning
    an object with an ``answer`` attribute, ``None`` when invalid).
    """
    if len(prompts) != len(completions):
        raise InvalidArgument(
            f"Expected one list of completions per prompt, got "
            f"{len(completions)} lists for {len(prompts)} prompts"
        )
    return [
        Sample(p.instance_id, p.presentation, parse(text).answer, p.gold, p.answer_map)
        for p, texts in zip(prompts, completions)
        for text in texts
    ]


def _groups(keys: Sequence[Hashable]) -> list[list[int]]:
    """The indices of each distinct key, in order of first appearance."""
    members: dict[Hashable, list[int]] = defaultdict(list)
    for index, key in enumerate(keys):
        members[key].append(index)
    return list(members.values())


def _check_weight(weight: object) -> float:
    if (
        isinstance(weight, bool)
        or not isinstance(weight, (int, float))
        or not math.isfinite(weight)
    ):
        raise InvalidArgument(f"Expected a finite number for weight, got weight={weight!r}")
    return float(weight)


def agreement_rewards(
    batch: Sequence[Sample], *, weight: float = 0.5, clip: bool = True
) -> np.ndarray:
    """Each sample's reward, ``c_i + weight·b_i`` (CBE paper, arXiv:2610.22894, App. B.3, Eq. 4).

    With ``clip=True`` (Eq. 4, ``weight = ½``) ``b_i = max{0, a_i − chance_z}``; with ``clip=False``
    the bonus is ``a_i − chance_z`` as in App. G's grpo-ig reward ``correct + λ(agree − chance)``.
    ``a_i`` counts the parsed answers on the instance's other presentations that match answer
    ``i``, over all parsed answers there; when there is none, agreement is undefined and the bonus
    is 0. Unparseable answers earn 0. Samples of one instance may come in any order.

    Only presentations whose golds coincide in the original frame are compared (and make up
    ``q_z``): a presentation whose answer changes in a way no answer map declares (an edit of
    the instance, a rule-induction variation with its own answer) is its own group, and there
    earns correctness only. For the paper's ordering presentations this is the whole instance.
    """
    weight = _check_weight(weight)
    out = np.zeros(len(batch))
    for members in _groups([(s.instance_id, s.canonical_gold) for s in batch]):
        parsed = [i for i in members if batch[i].answer is not None]
        if not parsed:
            continue
        answers = Counter(batch[i].canonical for i in parsed)
        chance = sum((k / len(parsed)) ** 2 for k in answers.values())
        # Parsed answers per presentation, to leave the sample's own presentation out of a_i.
        per_presentation: dict[str, Counter[str | None]] = defaultdict(Counter)
        for i in parsed:
            per_presentation[batch[i].presentation][batch[i].canonical] += 1
        for i in parsed:
            own = per_presentation[batch[i].presentation]
            others = len(parsed) - sum(own.values())
            bonus = 0.0
            if others:
                agree = (answers[batch[i].canonical] - own[batch[i].canonical]) / others
                bonus = max(0.0, agree - chance) if clip else agree - chance
            out[i] = float(batch[i].correct) + weight * bonus
    return out


def _rewards_array(rewards: Floats, batch: Sequence[Sample]) -> np.ndarray:
    values = np.asarray(rewards, dtype=float)
    if values.shape != (len(batch),):
        raise InvalidArgument(
            f"Expected one reward per sample ({len(batch)}), got shape {values.shape}"
        )
    return values


def prompt_advantages(
    rewards: Floats, batch: Sequence[Sample], *, epsilon: float = EPSILON, ddof: int = 1
) -> np.ndarray:
    """Per-prompt normalised advantages ``(r_i − μ_p)/(σ_p + ε)`` (CBE paper, arXiv:2610.22894, App. B.3, Eq. 5).

    A prompt is one presentation of one instance. The paper does not say which standard deviation;
    ``ddof=1`` (the sample standard deviation) is what TRL's ``GRPOTrainer`` uses, ``ddof=0`` the
    population one. A one-sample group has advantage 0.
    """
    values = _rewards_array(rewards, batch)
    out = np.zeros_like(values)
    for members in _groups([(s.instance_id, s.presentation) for s in batch]):
        group = values[members]
        spread = float(group.std(ddof=ddof)) if len(group) > ddof else 0.0
        out[members] = (group - group.mean()) / (spread + epsilon)
    return out


def instance_advantages(rewards: Floats, batch: Sequence[Sample]) -> np.ndarray:
    """App. G's grpo-ig advantages: ``r_i`` minus the instance's mean reward, not scaled."""
    values = _rewards_array(rewards, batch)
    out = np.zeros_like(values)
    for members in _groups([s.instance_id for s in batch]):
        out[members] = values[members] - values[members].mean()
    return out


def cosine(a: Floats, b: Floats) -> float:
    """The cosine between two advantage vectors; ``nan`` when either is zero (no update)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    norms = float(np.linalg.norm(x) * np.linalg.norm(y))
    return float(x @ y / norms) if norms > 0 else float("nan")


def nonzero_share(advantages: Floats, keys: Sequence[Hashable]) -> float:
    """The share of groups (samples with one key) whose advantage is nonzero somewhere."""
    values = np.asarray(advantages, dtype=float)
    groups = _groups(keys)
    if not groups:
        return float("nan")
    return sum(bool(np.any(values[m] != 0)) for m in groups) / len(groups)


@dataclass(frozen=True)
class Scores:
    """Rewards, advantages and the diagnostics a trainer logs for one batch (CBE paper, arXiv:2610.22894, App. G).

    ``reference`` holds the advantages the same method gives with weight 0 (correctness only);
    ``cosine`` is the paper's check, the cosine between ``advantages`` and ``reference`` (1 when the
    agreement bonus leaves the update direction unchanged, ``nan`` when either vector is zero);
    ``nonzero_share`` the share of advantage groups with a nonzero advantage (a group whose
    samples all earn the same reward contributes no gradient).
    """

    method: str
    weight: float
    rewards: np.ndarray
    advantages: np.ndarray
    reference: np.ndarray
    cosine: float
    nonzero_share: float

    def log(self) -> dict[str, float]:
        """Scalars for a trainer's logger."""
        return {
            "reward_mean": float(self.rewards.mean()) if self.rewards.size else float("nan"),
            "nonzero_advantage_share": self.nonzero_share,
            "cosine_to_correctness_only": self.cosine,
        }


def score(batch: Sequence[Sample], *, method: Method = "grpo", weight: float = 0.5) -> Scores:
    """Rewards and advantages of ``batch`` under ``method``, with the App. G diagnostics.

    ``"grpo"``: Eq. 4 rewards (clipped bonus), Eq. 5 per-prompt advantages (CBE paper, arXiv:2610.22894, App. B.3).
    ``"grpo-ig"``: App. G's variant, unclipped bonus, advantages against the instance's mean.
    """
    if method not in METHODS:
        raise InvalidArgument(f"Unknown method={method!r}. Expected one of: {', '.join(METHODS)}")
    clip = method == "grpo"

    def advantages(rewards: np.ndarray) -> np.ndarray:
        return prompt_advantages(rewards, batch) if clip else instance_advantages(rewards, batch)

    rewards = agreement_rewards(batch, weight=weight, clip=clip)
    used = advantages(rewards)
    reference = advantages(agreement_rewards(batch, weight=0.0, clip=clip))
    keys: list[Hashable] = (
        [(s.instance_id, s.presentation) for s in batch] if clip else [s.instance_id for s in batch]
    )
    return Scores(
        method,
        float(weight),
        rewards,
        used,
        reference,
        cosine(used, reference),
        nonzero_share(used, keys),
    )


def _completion_text(completion: object) -> object:
    """The text of a TRL completion: a string (standard) or a list of messages (conversational)."""
    if isinstance(completion, list):  # conversational: the assistant's message(s)
        return "".join(
            str(m.get("content", ""))
            for m in completion
            if isinstance(m, dict) and m.get("role", "assistant") == "assistant"
        )
    return completion


class GRPOReward:
    """A reward function with the signature TRL's ``GRPOTrainer`` calls, for one family.

    ``reward(completions, *, instance_id, presentation, gold, answer_map=None, **columns)`` returns
    one float per completion. TRL passes every dataset column as a keyword argument, one value per
    completion; the columns named here are those of :func:`pytest_competence.training.rows`.
    Completions are strings (standard format) or message lists (conversational format).

    The agreement bonus needs every sample of an instance in one call: order the rows with
    :func:`pytest_competence.training.grpo_order`, set ``shuffle_dataset=False`` and make the
    generation batch hold whole instances (``generation_batch_size`` a multiple of presentations ×
    ``num_generations``; on several processes each calls the reward on its own share of the
    batch, so each share must hold whole instances). TRL forms its advantage groups per prompt: there, CBE paper, arXiv:2610.22894, App. G shows
    the bonus cannot change the advantages; ``method="grpo-ig"`` returns App. G's rewards, whose
    instance-grouped advantages (:func:`instance_advantages`) need a trainer that groups by
    instance. With ``log_metric`` from TRL the diagnostics of :class:`Scores` are logged.
    """

    def __init__(
        self, parse: Callable[[str], Any], *, method: Method = "grpo", weight: float = 0.5
    ) -> None:
        if method not in METHODS:
            raise InvalidArgument(
                f"Unknown method={method!r}. Expected one of: {', '.join(METHODS)}"
            )
        self.parse = parse
        self.method: Method = method
        self.weight = _check_weight(weight)
        self.__name__ = f"competence_{method.replace('-', '_')}"  # TRL names its log columns so

    def __repr__(self) -> str:
        return f"GRPOReward({self.parse!r}, method={self.method!r}, weight={self.weight!r})"

    def __call__(
        self,
        completions: Sequence[object],
        *,
        instance_id: Sequence[str],
        presentation: Sequence[str],
        gold: Sequence[str],
        answer_map: Sequence[Sequence[Sequence[str]]] | None = None,
        **columns: Any,
    ) -> list[float]:
        n = len(completions)
        for name, column in (
            ("instance_id", instance_id),
            ("presentation", presentation),
            ("gold", gold),
        ):
            if len(column) != n:
                raise InvalidArgument(
                    f"Expected one {name} per completion ({n}), got {len(column)}"
                )
        maps = (
            [AnswerMap(tuple((a, b) for a, b in pairs)) for pairs in answer_map]
            if answer_map is not None
            else [AnswerMap()] * n
        )
        batch = [
            Sample(i, p, self.parse(_completion_text(c)).answer, g, m)  # type: ignore[arg-type]
            for c, i, p, g, m in zip(completions, instance_id, presentation, gold, maps)
        ]
        scores = score(batch, method=self.method, weight=self.weight)
        log_metric = columns.get("log_metric")
        if callable(log_metric):
            for name, value in scores.log().items():
                if not math.isnan(value):
                    log_metric(f"{self.__name__}/{name}", value)
        return [float(r) for r in scores.rewards]
