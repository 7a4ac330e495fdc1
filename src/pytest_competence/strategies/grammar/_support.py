"""The instructive support set and the queries of a grammar task (systematicity paper, arXiv:2609.13948, §4.1).

The support set is built so that every rule of the language can be identified from it:

* **lexical anchors** — each primitive alone (``dax -> RED``), showing the primitive rules;
* **template resolvers** — each function applied to distinct primitives (``dax zup lug ->
  BLUE RED``), showing its arity and its template;
* **precedence proofs** — for every pair of functions whose relative precedence can matter (all
  pairs but two 1-argument functions, whose order a string never leaves open), one input that
  the pair's two precedence orders translate differently; a language with a pair that no such
  minimal input tells apart (e.g. two deleting functions) is redrawn;
* **extra examples** (``extra_support``) and the **queries**: nested compositions with at
  least two function applications, no input repeated anywhere in support or query.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ._lang import Language, expression

__all__ = ["MAX_OUTPUT", "build_examples", "precedence_proof"]

#: The longest output a drawn extra example or query may have, so nested duplication stays
#: legible (a 1-argument "thrice" nested three times would already be 27 tokens).
MAX_OUTPUT = 24
_APPLICATIONS = (2, 3)  # function applications per extra example and query
_TRIES_PER_EXAMPLE = 40


def precedence_proof(
    rng: np.random.Generator, language: Language, i: int, j: int
) -> list[str] | Literal[False] | None:
    """An input whose translation differs when functions ``i`` (looser) and ``j`` swap.

    ``None`` when the pair needs no proof (two 1-argument functions: ``a g h`` has one reading
    under either order); ``False`` when no minimal input tells the two orders apart.
    """
    fi, fj = language.functions[i], language.functions[j]
    if fi.arity == 1 and fj.arity == 1:
        return None
    a, b, c = (
        language.primitives[k][0] for k in rng.choice(len(language.primitives), 3, replace=False)
    )
    if fi.arity == 2 and fj.arity == 2:
        forms = [[a, fi.word, b, fj.word, c], [a, fj.word, b, fi.word, c]]
        if rng.random() < 0.5:
            forms.reverse()
    elif fi.arity == 2:
        forms = [[a, fi.word, b, fj.word]]
    else:
        forms = [[a, fj.word, b, fi.word]]
    other = language.swapped(i, j)
    for tokens in forms:
        text = " ".join(tokens)
        # Distinct primitives make the comparison symbolic: outputs equal here are equal for
        # every filling, so a form that fails here tells the orders apart for none.
        if language.translate(text) != other.translate(text):
            return tokens
    return False


def build_examples(
    rng: np.random.Generator, language: Language, *, extra: int, queries: int
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]] | None:
    """``(support, query inputs)`` for ``language``, or ``None`` when it cannot have them.

    ``None`` means the language is not identifiable from minimal precedence proofs, or has
    too few distinct compositions for ``extra + queries`` fresh inputs; the caller redraws.
    """
    inputs: list[str] = []
    seen: set[str] = set()

    def add(tokens: list[str]) -> None:
        text = " ".join(tokens)
        if text not in seen:
            seen.add(text)
            inputs.append(text)

    prims = [w for w, _ in language.primitives]
    for w in prims:
        add([w])
    for f in language.functions:
        a, b = rng.choice(len(prims), 2, replace=False)
        add([prims[a], f.word] if f.arity == 1 else [prims[a], f.word, prims[b]])
    m = len(language.functions)
    for i in range(m):
        for j in range(i + 1, m):
            proof = precedence_proof(rng, language, i, j)
            if proof is False:
                return None
            if proof:
                add(proof)
    composed: list[str] = []
    for _ in range(_TRIES_PER_EXAMPLE * (extra + queries)):
        if len(composed) == extra + queries:
            break
        tokens = expression(rng, language, int(rng.choice(_APPLICATIONS)))
        text = " ".join(tokens)
        if text in seen or len(language.translate(text).split()) > MAX_OUTPUT:
            continue
        seen.add(text)
        composed.append(text)
    else:
        if len(composed) < extra + queries:
            return None
    inputs.extend(composed[:extra])
    support = tuple((x, language.translate(x)) for x in inputs)
    return support, tuple(composed[extra:])
