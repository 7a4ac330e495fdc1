"""Answer extraction for Yes / No / Cannot be determined, as the CRTBench paper, App. B describes it.

In order: an explicit final answer ("Answer: No", "final answer is Yes", a bold label, or a
conclusion phrase — "therefore", "thus", "in conclusion" — followed by a label), the last one
winning; else a "cannot be determined"-style phrase in the last three sentences; else a yes/no
cue in the ending of the response, then its first word. Anything else is UNCLEAR: an explicit
invalid answer with its reason, never a guess.
"""

from __future__ import annotations

import re

from pytest_competence.protocol import Parsed

__all__ = ["parse_answer"]

_LABEL = r"(yes|no|cannot be determined)\b"
_EXPLICIT = re.compile(
    r"(?:answer\s*[:：]\s*\**\s*|final answer(?: is)?\s*[:：]?\s*\**\s*|\*\*\s*"
    r"|(?:therefore|thus|in conclusion)\s*[,:]?\s*(?:the answer is\s*)?)" + _LABEL,
    re.IGNORECASE,
)
_UNDETERMINED = re.compile(
    r"cannot be determined|can't be determined|can not be determined|undetermined|"
    r"not enough information|cannot determine|insufficient information",
    re.IGNORECASE,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[a-z]+")


def parse_answer(text: object) -> Parsed:
    """ "yes", "no" or "cannot be determined", or invalid (UNCLEAR) with the reason."""
    if not isinstance(text, str):
        return Parsed(None, f"UNCLEAR: model returned {type(text).__name__}, not text")
    explicit = _EXPLICIT.findall(text)
    if explicit:
        return Parsed(explicit[-1].lower())
    sentences = [s for s in _SENTENCES.split(text.strip()) if s.strip()]
    if any(_UNDETERMINED.search(s) for s in sentences[-3:]):
        return Parsed("cannot be determined")
    if sentences:
        ending = set(_WORD.findall(sentences[-1].lower())) & {"yes", "no"}
        if len(ending) == 1:
            return Parsed(ending.pop())
        words = _WORD.findall(text.lower())
        if words and words[0] in ("yes", "no"):
            return Parsed(words[0])
    return Parsed(
        None,
        "UNCLEAR: no Yes, No or Cannot be determined found"
        if text.strip()
        else "UNCLEAR: empty answer",
    )
