"""Keeping API keys out of every artifact: the one function that removes them from text.

The HTTP transport redacts each error message as it is made (before any cut: a cut through a
key would hide it). The session redacts the results document once more before any report is
rendered from it, with every secret the run knows (:func:`run_secrets`), so text that reached
a record by another way — an exception a model raised, an answer that echoes the key — is
caught too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["REDACTED", "redact", "redact_all", "run_secrets"]

REDACTED = "[redacted]"


def redact(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``[redacted]``.

    Longest first, so a header value (``Bearer KEY``) goes whole rather than around its key.
    """
    for secret in sorted(secrets, key=len, reverse=True):
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def redact_all(value: Any, secrets: Sequence[str]) -> Any:
    """A copy of a JSON-able ``value`` with :func:`redact` applied to every string in it."""
    if not secrets:
        return value
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {redact_all(k, secrets): redact_all(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_all(v, secrets) for v in value]
    return value


def run_secrets(env_names: Iterable[str]) -> list[str]:
    """The values of the environment variables named (those set and long enough to be keys:
    redacting a one-letter value would mangle every text)."""
    values = (os.environ.get(name.strip(), "") for name in env_names if name and name.strip())
    return sorted({v for v in values if len(v) >= 8})
