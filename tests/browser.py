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
    "Tab",
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


class Tab:
    """One page of a headless Chromium driven over the DevTools protocol, on a pipe (stdlib
    only: ``--remote-debugging-pipe`` reads commands on fd 3 and answers on fd 4, each message
    JSON ended by a NUL byte). It clicks as a person does — a mouse press and release at an
    element's middle — and reads where that led. The page's own CSP still forbids its script;
    what :meth:`evaluate` runs is the test's, from outside the page."""

    def __init__(self, binary: str, *, width: int = 1280, height: int = 900) -> None:
        import fcntl

        self._profile = tempfile.TemporaryDirectory(prefix="chromium-profile-")
        commands_r, self._commands = os.pipe()
        self._answers, answers_w = os.pipe()
        # Above fd 4 first, so that the child's dup2 onto 3 and 4 never copies a fd onto itself
        # (which would leave it close-on-exec).
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (commands_r, answers_w)]
        os.close(commands_r)
        os.close(answers_w)
        commands_r, answers_w = ends

        def fds() -> None:  # in the child: its fd 3 reads our commands, its fd 4 answers
            os.dup2(commands_r, 3)
            os.dup2(answers_w, 4)

        self._process = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
                f"--window-size={width},{height}",
                f"--user-data-dir={self._profile.name}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=fds,
            close_fds=False,  # every other fd of ours is close-on-exec
            env=dict(os.environ, HOME=self._profile.name),
        )
        os.close(commands_r)
        os.close(answers_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict] = []
        target = self._call("Target.createTarget", url="about:blank")["targetId"]
        self._session = self._call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        self.call("Page.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _message(self, timeout: float) -> dict:
        import json
        import select

        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._answers], [], [], timeout)
            if not ready:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._answers, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed its pipe")
            self._buffer += chunk
        text, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(text)

    def _call(self, method: str, session: str | None = None, **params: object) -> dict:
        import json

        self._next += 1
        message: dict = {"id": self._next, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._commands, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._message(60)
            if answer.get("id") == self._next:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self.events.append(answer)

    def call(self, method: str, **params: object) -> dict:
        """A DevTools command on the page; its result."""
        return self._call(method, self._session, **params)

    def wait_for(self, event: str, timeout: float = 60) -> dict:
        """The first ``event`` not yet consumed (``Page.loadEventFired``, say)."""
        while True:
            for k, seen in enumerate(self.events):
                if seen.get("method") == event:
                    return self.events.pop(k)
            self.events.append(self._message(timeout))

    def open(self, page: Path) -> None:
        """Load ``page`` and wait until it has loaded."""
        self.events.clear()
        self.call("Page.navigate", url=page.resolve().as_uri())
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> object:
        """The value of a JavaScript expression in the page (the test's probe, not the page's)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def click(self, selector: str) -> None:
        """Scroll the first element matching ``selector`` into view and click its middle; wait
        for the page it leads to when it leads to another page."""
        import json

        box = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); "
            "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
            "return [r.x + r.width / 2, r.y + r.height / 2, location.pathname]; })()"
        )
        assert isinstance(box, list), f"nothing matches {selector}"
        x, y, before = box
        self.events.clear()
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        for _ in range(50):  # the same page: the fragment moves at once; another: it loads
            if self.evaluate("location.pathname") != before:
                self.wait_for("Page.loadEventFired")
                break
            if any(e.get("method") == "Page.navigatedWithinDocument" for e in self.events):
                break
            import time

            time.sleep(0.1)

    def screenshot(self) -> bytes:
        """A PNG of what the window shows now."""
        import base64

        return base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])

    def close(self) -> None:
        """End the browser and remove its profile."""
        try:
            self._call("Browser.close")
        except (OSError, EOFError, TimeoutError, RuntimeError):
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._commands)
        os.close(self._answers)
        self._profile.cleanup()

    def __enter__(self) -> Tab:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
