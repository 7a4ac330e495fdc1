"""Named training and evaluation splits: which vocabularies and which seeds a model may train on.

A split fixes a family, the values of the options held out (for ordering, the relation
vocabularies) and a range of design seeds. Training splits draw seeds from
:data:`TRAIN_SEEDS`, evaluation splits from :data:`EVAL_SEEDS`; the two ranges are disjoint, so a
training set and an evaluation design never share a latent instance by construction. The plugin
warns when a test evaluates a design that overlaps a split declared in ``competence_trained_on``.

Ordering (CBE paper, arXiv:2610.22894, §6, App. B.3): GRPO trains on 19 relations "without spatial-line vocabulary"
and evaluates on "the twelve clean held-out relations". The paper names neither list; of the 31
catalog relations, the 19 that are neither spatial-line nor nonce are the only 19 that fit
(vertical 2, temporal 4, comparative 7, rank and social 6), which leaves the ten spatial-line and
the two nonce relations, twelve, held out; Table 20's front/behind and nonce rows are among them.
The paper also excludes three evaluated relations that share words with above/below,
taller/shorter and higher/lower; which three is not said, so they are not modelled here.
Other families hold nothing out but the seeds: their ``train``/``eval`` splits share every option.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from pytest_competence.protocol import InvalidArgument
from pytest_competence.registry import FAMILIES

__all__ = ["EVAL_SEEDS", "SPLITS", "TRAIN_SEEDS", "Split", "overlap", "split"]

#: Design seeds for evaluation: the plugin's default seed is 1; every marker seed so far is small.
EVAL_SEEDS = range(0, 1_000_000)
#: Design seeds for training data; ``train/train_ordering.py`` draws from the same base.
TRAIN_SEEDS = range(1_000_000, 2**32)


@dataclass(frozen=True)
class Split:
    """A family, the option values it covers (empty: every value) and its seed range."""

    name: str
    family: str
    seeds: range
    options: Mapping[str, tuple[object, ...]] = field(default_factory=dict)
    description: str = ""

    @property
    def training(self) -> bool:
        """Whether the split's seeds are training seeds (:data:`TRAIN_SEEDS`)."""
        return self.seeds.start >= TRAIN_SEEDS.start

    def seed(self, index: int = 0) -> int:
        """The ``index``-th seed of the split: training data at offset ``index``."""
        if not 0 <= index < len(self.seeds):
            raise InvalidArgument(
                f"Expected 0 <= index < {len(self.seeds)} for split "
                f"{self.family}:{self.name}, got index={index!r}"
            )
        return self.seeds[index]

    def covers(self, option: str, value: object) -> bool:
        """Whether the split includes designs with ``option=value``."""
        return option not in self.options or value in self.options[option]

    def __str__(self) -> str:
        return f"{self.family}:{self.name}"


def _splits(family: str) -> tuple[Split, ...]:
    """The family's own named splits (``Family.named_splits``), then ``train`` and ``eval``."""
    own = tuple(
        Split(name, family, TRAIN_SEEDS if training else EVAL_SEEDS, dict(options), description)
        for name, training, options, description in FAMILIES.hooks(family).named_splits
    )
    return (
        *own,
        Split("train", family, TRAIN_SEEDS, description="every option, training seeds"),
        Split("eval", family, EVAL_SEEDS, description="every option, evaluation seeds"),
    )


SPLITS: dict[str, Split] = {str(s): s for name in FAMILIES for s in _splits(name)}


def split(spec: str) -> Split:
    """The split named ``FAMILY:NAME`` (or ``FAMILY``, its default training split)."""
    family, _, name = spec.partition(":")
    name = name or FAMILIES.hooks(family).training_split
    if not any(k.startswith(f"{family}:") for k in SPLITS) and family in FAMILIES:
        SPLITS.update({str(s): s for s in _splits(family)})  # a family registered since
    try:
        return SPLITS[f"{family}:{name}"]
    except KeyError:
        raise InvalidArgument(
            f"Unknown split {spec!r}. Expected one of: {', '.join(SPLITS)}"
        ) from None


def overlap(declared: Split, family: str, options: Mapping[str, object], seed: int) -> bool:
    """Whether a design of ``family`` with ``options`` at ``seed`` shares instances with ``declared``.

    Same family, a seed in the split's range and every held-out option value inside the split.
    """
    return (
        declared.family == family
        and seed in declared.seeds
        and all(declared.covers(k, options[k]) for k in declared.options if k in options)
    )
