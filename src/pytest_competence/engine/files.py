"""Writing report files so that a crash or a hostile answer never leaves a broken one.

Every file the plugin writes (reports, records part files, generated datasets) goes through
:func:`write_text_atomic`: the text goes to a temporary file in the same directory, which then
replaces the target with :func:`os.replace`, so a reader sees the old file or the new one, never
half of one. Any ``str`` a model returns must be storable, lone surrogates included (``'\\ud800'``
cannot be encoded as UTF-8): :func:`json_text` escapes them as JSON ``\\uXXXX`` sequences, which
``json.loads`` turns back into the exact original, and other text is written with
``backslashreplace``.
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO, TextIO

__all__ = [
    "atomic_binary",
    "atomic_writer",
    "json_text",
    "utf8_safe",
    "write_json_atomic",
    "write_text_atomic",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


def utf8_safe(text: str | None) -> str | None:
    """``text`` with what UTF-8 cannot hold written as a ``\\udXXX`` escape: for the few
    strings that travel where every string must be UTF-8 (pytest-xdist's execnet refuses a lone
    surrogate), such as a failing case's answers. Records keep the exact text (:func:`json_text`).
    """
    if text is None or not _SURROGATE.search(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON text that UTF-8 can hold: non-ASCII kept, lone surrogates escaped.

    A surrogate can only occur inside a JSON string, where ``\\udXXX`` is its exact escape.
    """
    return _escape_surrogates(json.dumps(value, indent=indent, ensure_ascii=False))


def _escape_surrogates(text: str) -> str:
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def write_json_atomic(
    path: str | os.PathLike[str], value: Any, *, indent: int | None = None
) -> None:
    """Write ``value`` as :func:`json_text` would, piece by piece, through :func:`atomic_writer`:
    never the whole document as one string. Each piece the encoder yields holds whole JSON
    strings, so a lone surrogate is escaped exactly as :func:`json_text` escapes it."""
    encoder = json.JSONEncoder(indent=indent, ensure_ascii=False)
    with atomic_writer(path) as out:
        for chunk in encoder.iterencode(value):
            out.write(_escape_surrogates(chunk))


@contextmanager
def atomic_binary(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file to write ``path`` through: a temporary file in the same directory that
    replaces ``path`` (:func:`os.replace`) when the block ends without an exception, and is
    removed otherwise."""
    target = Path(path)
    try:  # mkstemp makes the file private (0600); a report keeps the usual mode
        mode = target.stat().st_mode & 0o777
    except OSError:
        mode = 0o644
    fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


@contextmanager
def atomic_writer(path: str | os.PathLike[str]) -> Iterator[TextIO]:
    """A text file to write ``path`` through :func:`atomic_binary`. UTF-8; what UTF-8 cannot
    hold (a lone surrogate) is written as a ``\\udXXX`` escape."""
    with atomic_binary(path) as raw:
        out = io.TextIOWrapper(raw, encoding="utf-8", errors="backslashreplace", newline="")
        yield out
        out.flush()
        out.detach()


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``path`` through :func:`atomic_writer`."""
    with atomic_writer(path) as out:
        out.write(text)
