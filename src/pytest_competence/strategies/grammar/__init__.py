"""Grammar-based instruction learning (systematicity paper, arXiv:2609.13948, §4.1, App. C Fig. 11; Lake & Baroni, 2023).

Each task is a generated artificial language (:mod:`._lang`): pseudoword primitives
that mean colour tokens, and function rules that duplicate, reorder or delete their arguments,
under a strict precedence order with left-to-right reduction, so every input has exactly one
translation. The support set shows lexical anchors, template resolvers, precedence proofs and
``extra_support`` nested compositions; the ``queries`` ask for further compositions with at
least two function applications (:mod:`._grammar_support`).

**Level** ``n`` is the number of function rules (1–4): each adds a template to infer, a
precedence level and, with more than one, precedence proofs to read. Primitives stay
``primitives`` (default 4) at every level, so only the grammar's size grows.

**Answer**: a JSON list with one string per query, the output tokens separated by spaces.
:meth:`Grammar.element` folds runs of whitespace to one space and letters to upper case (the
colour tokens are upper case; neither changes which tokens were meant), and reads a list of
token strings as those tokens in order; anything else is invalid.

**Isomorphisms** (systematicity paper, arXiv:2609.13948, §3.4), applied to the latent task,
answers recomputed by the interpreter: ``reorder`` (``π``, ``σ``); ``substitute`` (``φ`` onto fresh
pseudowords, ``ψ`` onto fresh colours, order kept so each type's gap is its own); ``recompose``
(a bijection ``ρ`` on the primitives of every query input, the language and support unchanged:
the same rules applied the same way to other leaves, redrawn until some query changes and none
equals a support input, else the task is kept).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from pytest_competence.protocol import InvalidArgument

from .._induction import REORDER, RuleInduction, Task
from .._rng import stream_rng
from ._lang import COLOURS, PSEUDOWORDS, Language, sample_language
from ._support import build_examples

__all__ = ["GRAMMAR_SYSTEM", "Grammar", "recompose", "substitute"]

#: App. C Fig. 11, verbatim; ``n_query`` is filled in with the number of queries.
GRAMMAR_SYSTEM = """\
Your task is to discover the grammatical rules of an artificial language. In the following, \
you will be presented with examples of input and output string pairs. These pairs demonstrate \
how sequences of primitive tokens are transformed by grammatical rules. Afterwards, you will \
be presented with n_query new input sequence(s), and you have to translate them into output \
sequences based on the grammatical rules you have inferred. Try to identify the simplest \
deterministic rules that govern these transformations and apply them to the new input \
sequences.

Every artificial language consists of:
1. Primitive rules: Simple one-to-one mappings from an input token to an output token.
2. Function rules: These operate on one or two arguments. Functions are represented by \
specific tokens and apply to their adjacent arguments.
- A 1-argument function appears after its argument (e.g., "arg1 func"). A 2-argument \
function appears between its arguments (e.g., "arg1 func arg2").
- Each argument is either a single primitive token or a sequence of tokens.
- A function transforms its evaluated arguments into a new sequence by duplicating and/or \
rearranging them.
- When the same 2-argument function is chained with itself, it evaluates left-to-right \
(e.g., "arg1 func arg2 func arg3" is evaluated as "[arg1 func arg2] func arg3") otherwise \
functions that accept sequences follow a strict priority order: If Rule A evaluates before \
Rule B, and Rule B before Rule C, then Rule A always evaluates before Rule C."""

_LANGUAGE_TRIES = 50
_RECOMPOSE_TRIES = 32
_STREAM_LANGUAGE, _STREAM_EXAMPLES = 0, 1


def _count(name: str, value: object, lo: int, hi: int, hint: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise InvalidArgument(
            f"Expected {name} to be an integer in [{lo}, {hi}] ({hint}), but got {name}={value!r}"
        )
    return value


class Grammar(RuleInduction):
    """Grammar-based instruction learning: translate compositions of a generated language.

    Args:
        variations: ``K``, isomorphic variations per type and task (systematicity paper, arXiv:2609.13948, §5: 5).
        extra_support: nested compositions shown besides the anchors, resolvers and proofs
            (systematicity paper, arXiv:2609.13948, App. B Fig. 8 compares 4 and 8).
        queries: query inputs per task (App. C's ``n_query``); a task is solved when all are.
        primitives: primitive words per language (each means one colour; at least 3, as a
            precedence proof needs three distinct primitives).
    """

    name = "grammar"
    level_name = "functions"
    isomorphisms = (REORDER, "substitute", "recompose")
    levels = (1, 4)

    def __init__(
        self, *, variations: int = 5, extra_support: int = 4, queries: int = 2, primitives: int = 4
    ) -> None:
        super().__init__(variations=variations)
        self.extra_support = _count(
            "extra_support", extra_support, 0, 32, "composed support examples; try extra_support=4"
        )
        self.queries = _count("queries", queries, 1, 16, "queries per task; try queries=2")
        self.primitives = _count(
            "primitives", primitives, 3, 8, "primitive words per language; try primitives=4"
        )
        self.system = GRAMMAR_SYSTEM.replace("n_query", str(queries))

    def options(self) -> dict[str, Any]:
        """The constructor keywords that rebuild this family."""
        return {
            **super().options(),
            "extra_support": self.extra_support,
            "queries": self.queries,
            "primitives": self.primitives,
        }

    def task(self, n: int, index: int, seed: int) -> Task:
        """Task ``index`` of level ``n``: a language with ``n`` functions, support and queries."""
        self.check_level(n)
        language_rng = stream_rng(seed, n, index, _STREAM_LANGUAGE)
        examples_rng = stream_rng(seed, n, index, _STREAM_EXAMPLES)
        for _ in range(_LANGUAGE_TRIES):
            language = sample_language(language_rng, functions=int(n), primitives=self.primitives)
            built = build_examples(
                examples_rng, language, extra=self.extra_support, queries=self.queries
            )
            if built is not None:
                support, query = built
                return Task(language, support, query, tuple(language.translate(q) for q in query))
        raise InvalidArgument(
            f"Could not draw {self.extra_support} extra support examples and {self.queries} "
            f"queries of distinct nested compositions at n={n} in {_LANGUAGE_TRIES} languages; "
            f"lower extra_support or queries, or raise n or primitives"
        )

    def vary(self, task: Task, kind: str, rng: np.random.Generator) -> Task:
        """``τ(task)`` for ``"substitute"`` or ``"recompose"`` (see the module docstring)."""
        if kind == "substitute":
            return substitute(task, rng)
        if kind == "recompose":
            return recompose(task, rng)
        raise InvalidArgument(
            f"Unknown isomorphism {kind!r} for grammar; expected one of {list(self.isomorphisms)!r}"
        )

    def render(self, task: Task) -> str:
        """Support pairs as ``input -> output`` lines, numbered queries, the answer format."""
        m = len(task.query)
        lines = [f"Here are {len(task.support)} examples of input and output sequences:"]
        lines += [f"{x} -> {y}" for x, y in task.support]
        lines += ["", f"Translate {m} new input sequence(s):"]
        lines += [f"{j}. {x} -> ?" for j, x in enumerate(task.query, 1)]
        example = ", ".join(['"TOKEN TOKEN"'] * m)
        lines += [
            "",
            f'End your answer with a line "Answer: " followed by a JSON list of {m} '
            f"string(s), the output sequence of each new input in the order given, its "
            f"tokens separated by single spaces, e.g. Answer: [{example}]",
        ]
        return "\n".join(lines)

    def element(self, value: object) -> object:
        """One output sequence, whitespace folded to single spaces, upper case."""
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = " ".join(value)
        if not isinstance(value, str):
            raise ValueError(f"{value!r} is not a string of output tokens")
        return " ".join(value.split()).upper()

    def __repr__(self) -> str:
        return (
            f"Grammar(variations={self.variations}, extra_support={self.extra_support}, "
            f"queries={self.queries}, primitives={self.primitives})"
        )


def substitute(task: Task, rng: np.random.Generator) -> Task:
    """``φ`` on input words, ``ψ`` on colours, both onto fresh pool entries; order kept."""
    language: Language = task.rule
    words = language.words
    # Fresh symbols only (none the task already uses), so every symbol of the variation is new.
    unused = [w for w in PSEUDOWORDS if w not in words]
    phi = {w: unused[k] for w, k in zip(words, rng.choice(len(unused), len(words), replace=False))}
    used = {c for _, c in language.primitives}
    free = [c for c in COLOURS if c not in used]
    psi = {
        c: free[k]
        for (_, c), k in zip(language.primitives, rng.choice(len(free), len(used), replace=False))
    }
    renamed = language.renamed(phi, psi)

    def rename(text: str) -> str:
        return " ".join(map(phi.__getitem__, text.split()))

    def recolour(text: str) -> str:
        return " ".join(map(psi.__getitem__, text.split()))

    # S̃ = (φ(x), ψ(f(x))) as the systematicity paper, arXiv:2609.13948, §3.4 defines it; the queries' answers are the renamed
    # language's own (tests check they equal ψ of the original answers).
    support = tuple((rename(x), recolour(y)) for x, y in task.support)
    query = tuple(rename(x) for x in task.query)
    return Task(renamed, support, query, tuple(renamed.translate(x) for x in query), task.context)


def recompose(task: Task, rng: np.random.Generator) -> Task:
    """A bijection on primitive words applied to every query input; answers recomputed."""
    language: Language = task.rule
    prims = [w for w, _ in language.primitives]
    shown = {x for x, _ in task.support}
    for _ in range(_RECOMPOSE_TRIES):
        rho = dict(zip(prims, (prims[k] for k in rng.permutation(len(prims)))))
        query = tuple(" ".join([rho.get(t, t) for t in x.split()]) for x in task.query)
        if query != task.query and shown.isdisjoint(query):
            return replace(task, query=query, answers=tuple(language.translate(x) for x in query))
    return task
