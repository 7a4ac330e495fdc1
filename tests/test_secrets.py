"""With an API key set, no artifact of a run contains it.

A real pytest run against the fake server, with the key in the environment, a server that echoes
request headers (Authorization included) in its 400 errors, debug logging, every report and the
cache: the key is sent (the server saw it) and then appears in no file and no output.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from server_fixtures import fake_server_process, server  # noqa: F401

KEY = "sk-test-NEVER-SHOWN-9f8e7d6c5b4a39281706"

SUITE = """
    import logging
    import pytest

    @pytest.mark.competence(levels=[4, 8], pairs=8)
    def test_suite(competence):
        logging.getLogger("test").debug("model %r", competence.model)
"""


def every_file(root: Path):
    for path in sorted(root.rglob("*")):
        if path.is_file():
            yield path


@pytest.mark.slow
def test_the_api_key_reaches_the_server_and_no_artifact(pytester, server, monkeypatch):
    monkeypatch.setenv("COMPETENCE_TEST_KEY", KEY)
    pytester.makepyfile(test_suite=SUITE)
    pytester.makeini("[pytest]\ncompetence_api_key_env = COMPETENCE_TEST_KEY\n")
    server.control(faults=[{"kind": "400", "share": 0.3, "times": 10**6}])
    spec = f"openai:ideal@{server.url}"
    args = ["-p", "no:cacheprovider", "-v", "-rA", "--log-level=DEBUG", "--log-cli-level=DEBUG",
            "--competence-model", spec, "--competence-json", "out.json",
            "--competence-html", "out.html", "--competence-markdown", "out.md",
            "--junitxml", "junit.xml"]
    result = subprocess.run([sys.executable, "-m", "pytest", *args], cwd=pytester.path,
                            capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output  # the 400s make invalid answers: the condition fails
    assert "[redacted]" in output  # the echoed header was in an error, and was scrubbed

    sent = hashlib.sha256(f"Bearer {KEY}".encode()).hexdigest()
    assert {e["auth_sha256"] for e in server.log()} == {sent}

    files = list(every_file(pytester.path))
    names = {p.name for p in files}
    assert {"out.json", "out.html", "out.md", "junit.xml", "cache.sqlite"} <= names
    assert KEY not in output
    for path in files:
        assert KEY.encode() not in path.read_bytes(), path
