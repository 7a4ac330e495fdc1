"""A headless Chromium for the report tests: find it, load a page, dump its DOM, screenshot it.

Tests that need a browser call :func:`find_chromium` and ``pytest.skip`` when it returns
``None``; CI installs the Debian ``chromium`` package. PNG decoding uses zlib and struct only,
enough to check that a screenshot is not one flat colour.
"""

from __future__ import annotations

import math
import os
import shutil
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

__all__ = [
    "console_messages",
    "dump_dom",
    "find_chromium",
    "picture_spread",
    "png_pixels",
    "screenshot",
]

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def find_chromium() -> str | None:
    """The path of a Chromium or Chrome binary on ``PATH``, or ``None``."""
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(binary: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    # A throwaway profile keeps runs independent of each other and of any user profile.
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        command = [
            binary,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={profile}",
            *args,
        ]
        env = dict(os.environ, HOME=profile)
        return subprocess.run(command, capture_output=True, timeout=timeout, check=True, env=env)


def dump_dom(binary: str, page: Path) -> str:
    """The serialised DOM of ``page`` after it has loaded (and run whatever it would run)."""
    return _run(binary, "--dump-dom", page.resolve().as_uri()).stdout.decode("utf-8")


def console_messages(binary: str, page: Path) -> list[str]:
    """What ``page`` wrote to the browser console while loading (script errors, failed loads,
    ``console.*`` calls), as Chromium logs them to stderr."""
    done = _run(binary, "--enable-logging=stderr", "--v=0", "--dump-dom", page.resolve().as_uri())
    lines = done.stderr.decode("utf-8", "replace").splitlines()
    return [line for line in lines if ":CONSOLE" in line]


def screenshot(
    binary: str, page: Path, out: Path, *, width: int = 1280, height: int = 2000
) -> Path:
    """A PNG screenshot of ``page`` at ``width`` × ``height`` CSS pixels, written to ``out``."""
    _run(
        binary,
        f"--screenshot={out.resolve()}",
        f"--window-size={width},{height}",
        page.resolve().as_uri(),
    )
    return out


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and raw pixel rows of an 8-bit, non-interlaced PNG (RGB or RGBA)."""
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG")
    pos, idat, header = len(PNG_SIGNATURE), [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or color not in (2, 6) or interlace:
        raise ValueError(f"unsupported PNG: depth {depth}, colour type {color}")
    bpp = 3 if color == 2 else 4
    raw, stride = zlib.decompress(b"".join(idat)), width * bpp
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):  # undo the per-row filter (PNG spec §9)
            a = line[i - bpp] if i >= bpp else 0
            b, c = previous[i], previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, rows


def picture_spread(png: bytes) -> tuple[int, int, float, int]:
    """Width, height, the standard deviation of luma and the number of distinct colours over a
    grid of sampled pixels: a blank or one-colour page has a spread near 0 and few colours."""
    width, height, rows = png_pixels(png)
    bpp = len(rows[0]) // width
    pixels = [row[x : x + 3] for row in rows[::7] for x in range(0, len(row), 5 * bpp)]
    luma = [0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2] for p in pixels]
    mean = sum(luma) / len(luma)
    spread = math.sqrt(sum((v - mean) ** 2 for v in luma) / len(luma))
    return width, height, spread, len(set(pixels))
