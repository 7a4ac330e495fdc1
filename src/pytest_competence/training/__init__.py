"""Training data from a family: GRPO-ready rows, the paper's batch order, a ``datasets.Dataset``.

CBE paper, arXiv:2610.22894, App. B.3 trains GRPO on batches that hold every presentation of one instance, ``G = 4``
samples each. :func:`rows` renders a split's design as one row per prompt with the columns TRL
and :class:`~pytest_competence.training.rewards.GRPOReward` read; :func:`grpo_order` orders rows so that
each instance's presentations are adjacent (instances shuffled, seeded); :func:`dataset` returns
a ``datasets.Dataset`` (the ``train`` extra). Without ``datasets``, write the rows as JSON Lines
(``competence generate … --format hf``) and load them with ``datasets.load_dataset("json", …)``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pytest_competence.protocol import InvalidArgument, Item, Prompt, default_presentations
from pytest_competence.registry import FAMILIES
from pytest_competence.registry import family as make_family
from pytest_competence.training.splits import Split, split

__all__ = ["dataset", "grpo_order", "resolve_split", "row", "rows", "write_rows"]


def _instance_key(prompt: Prompt) -> str:
    # A family may render one latent instance in every vocabulary under one id; the rendered
    # instances differ, and agreement must not be pooled across them.
    vocabulary = prompt.params.get("vocabulary")
    return prompt.instance_id if vocabulary is None else f"{prompt.instance_id}/{vocabulary}"


def row(prompt: Prompt, *, conversational: bool = False) -> dict[str, Any]:
    """One prompt as a training row.

    ``prompt`` is the system prompt and the prompt text as one string (standard format) or the
    two as chat messages (conversational format); ``system`` and ``question`` keep them apart.
    ``instance_id`` is unique per rendered instance; ``answer_map`` lists ``[from, to]`` pairs.
    """
    text: Any = (
        [{"role": "system", "content": prompt.system}, {"role": "user", "content": prompt.text}]
        if conversational
        else f"{prompt.system}\n\n{prompt.text}"
    )
    return {
        "prompt": text,
        "system": prompt.system,
        "question": prompt.text,
        "gold": prompt.gold,
        "instance_id": _instance_key(prompt),
        "presentation": prompt.presentation,
        "answer_space": list(prompt.answer_space),
        "answer_map": [list(pair) for pair in prompt.answer_map.pairs],
        "family": prompt.family,
        "params": dict(prompt.params),
    }


def _items(
    family_name: str,
    chosen: Split,
    *,
    levels: Sequence[int],
    per_level: int,
    index: int,
    presentations: Sequence[str] | None,
    options: dict[str, Any],
) -> Iterator[list[Item]]:
    seed = chosen.seed(index)
    held = {k: v for k, v in chosen.options.items() if k not in options}
    for key, values in chosen.options.items():
        for value in [options[key]] if key in options else []:
            if not chosen.covers(key, value):
                raise InvalidArgument(
                    f"{key}={value!r} is outside split {chosen}: expected one of {list(values)}"
                )
    # One design per combination of held-out option values (for ordering: per vocabulary).
    combos: list[dict[str, Any]] = [{}]
    for key, values in held.items():
        combos = [{**c, key: v} for c in combos for v in values]
    for combo in combos:
        fam = make_family(family_name, **options, **combo)
        chosen_presentations = presentations or (
            FAMILIES.hooks(family_name).training_presentations or default_presentations(fam)
        )
        yield fam.design(
            levels=list(levels),
            pairs=per_level,
            seed=seed,
            presentations=list(chosen_presentations),
        )


def rows(
    family: str,
    *,
    split_name: str | None = None,
    levels: Sequence[int],
    per_level: int,
    index: int = 0,
    presentations: Sequence[str] | None = None,
    conversational: bool = False,
    **options: Any,
) -> list[dict[str, Any]]:
    """Rows of ``family``'s design on a split (default: its training split), in design order.

    The seed is the split's ``index``-th (training splits start at 1,000,000, away from every
    evaluation seed); ``options`` go to the family, and a held-out option (ordering's
    ``vocabulary``) not given takes every value of the split in turn. Presentations default to the
    family's ``training_presentations`` (ordering's: the four of the CBE paper, arXiv:2610.22894, App. B.3).
    """
    chosen = split(f"{family}:{split_name}" if split_name else family)
    if chosen.family != family:
        raise InvalidArgument(f"Split {chosen} is not a split of family={family!r}")
    out: list[dict[str, Any]] = []
    for items in _items(
        family,
        chosen,
        levels=levels,
        per_level=per_level,
        index=index,
        presentations=presentations,
        options=dict(options),
    ):
        out += [row(p, conversational=conversational) for item in items for p in item.prompts]
    return out


def grpo_order(records: Iterable[dict[str, Any]], *, seed: int = 0) -> list[dict[str, Any]]:
    """``records`` with each instance's rows adjacent and instances in a seeded random order.

    This is the CBE paper, arXiv:2610.22894, App. B.3's batching as an ordering of rows: with TRL's
    ``shuffle_dataset=False`` and a generation batch of ``k × presentations × num_generations``
    completions, every batch holds ``k`` whole instances. Within an instance, rows keep their
    order (the original presentation first).
    """
    groups: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        groups.setdefault(str(record["instance_id"]), []).append(record)
    keys = sorted(groups)
    return [r for position in _shuffled(len(keys), seed) for r in groups[keys[position]]]


def dataset(records: Sequence[dict[str, Any]]) -> Any:
    """``records`` as a ``datasets.Dataset`` (``pip install pytest-competence[train]``)."""
    try:
        import datasets
    except ImportError:
        raise ImportError(
            "dataset() needs the datasets package: pip install "
            "pytest-competence[train], or write JSON Lines with competence "
            "generate --format hf"
        ) from None
    return datasets.Dataset.from_list(list(records))


def write_rows(designs: Iterable[Sequence[Item]], out: Any, *, seed: int) -> int:
    """Write ``designs`` as training rows (JSON Lines) in :func:`grpo_order`; the row count.

    ``datasets.load_dataset("json", data_files=PATH)`` reads the file back as a ``Dataset``.
    The rows go to a temporary file as the designs stream in, then are copied out instance by
    instance in the shuffled order: memory holds a key and two offsets per instance, never the
    rows, so a design of any size writes in constant memory (and the same bytes as
    ``grpo_order`` of all rows).
    """
    import json
    import tempfile
    from array import array

    import numpy as np

    keys: list[np.ndarray] = []  # per chunk: each run's instance key, UTF-8 (sorts as str does)
    starts, ends = array("q"), array("q")  # each run's bytes in the spool
    count = 0
    with tempfile.TemporaryFile() as spool:
        for items in designs:
            chunk: list[bytes] = []
            for item in items:
                for prompt in item.prompts:
                    key = _instance_key(prompt).encode()
                    if not chunk or chunk[-1] != key:  # a new run of one instance's rows
                        chunk.append(key)
                        starts.append(spool.tell())
                        ends.append(spool.tell())
                    spool.write((json.dumps(row(prompt), ensure_ascii=False) + "\n").encode())
                    ends[-1] = spool.tell()
                    count += 1
            if chunk:
                keys.append(np.array(chunk, dtype=bytes))
        if not keys:
            return 0
        unique, key_of_run = np.unique(np.concatenate(keys), return_inverse=True)
        rank = np.empty(len(unique), dtype=np.int64)
        rank[_shuffled(len(unique), seed)] = np.arange(len(unique))
        for run in np.argsort(rank[key_of_run.ravel()], kind="stable").tolist():
            spool.seek(starts[run])
            out.write(spool.read(ends[run] - starts[run]).decode())
    return count


def _shuffled(count: int, seed: int) -> list[int]:
    """``range(count)`` in :func:`grpo_order`'s seeded order (a shuffle depends on the length
    alone, so shuffling positions orders sorted keys exactly as shuffling the keys does)."""
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return order


def resolve_split(args: Any) -> None:
    """``competence generate --split NAME``: check the seed; ``args.split_chosen`` is the split.

    Without ``--seed`` the design takes the split's first seed (1 without ``--split``); a seed
    outside the split's range is an error (the family's designs check its option values, e.g.
    ordering's vocabularies). Training rows (``--format hf``) without ``--split`` come from the
    family's training split, so that they never share an instance with an evaluation design by
    accident.
    """
    if args.split is None and args.format == "hf":
        args.split = split(args.family).name
    args.split_chosen = None
    if args.split is None:
        args.seed = 1 if args.seed is None else args.seed
        return
    chosen = args.split_chosen = split(f"{args.family}:{args.split}")
    args.seed = chosen.seeds.start if args.seed is None else args.seed
    if args.seed not in chosen.seeds:
        raise InvalidArgument(
            f"--seed {args.seed} is outside split {chosen} (seeds "
            f"{chosen.seeds.start}..{chosen.seeds.stop - 1})"
        )
