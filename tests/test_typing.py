"""The package type-checks cleanly with mypy, configured in pyproject.toml's ``[tool.mypy]``.

mypy cannot follow setuptools' ``package-dir`` mapping (python/mypy#10564): run on the
configured files it would name the top-level ``strategies/`` folder as a package ``strategies``,
and every ``import pytest_competence.strategies…`` would go unresolved. Run as a script
(``python tests/test_typing.py [mypy options]``) this module runs mypy with the project
configuration, the files under ``strategies/`` named ``pytest_competence.strategies.*`` as they
are imported; the slow test below runs that script.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAPPED = {"strategies": "pytest_competence.strategies"}  # [tool.setuptools.package-dir]


def main(args: list[str]) -> int:
    """Type-check the package as mypy's command line would; return its exit status."""
    # mypy's stable API (mypy.api) takes only command-line arguments, which cannot rename
    # modules: build from the sources the configuration selects, renamed.
    from mypy import build
    from mypy.errors import CompileError
    from mypy.fscache import FileSystemCache
    from mypy.main import process_options

    started = time.perf_counter()
    fscache = FileSystemCache()
    sources, options = process_options(args, fscache=fscache)
    mapped = 0
    for source in sources:
        top, _, rest = source.module.partition(".")
        if top in MAPPED:
            source.module = MAPPED[top] + ("." + rest if rest else "")
            mapped += 1
    if not mapped:  # the check would pass while skipping the task families
        print(f"error: no module of {', '.join(MAPPED)} among the files to check", file=sys.stderr)
        return 2
    messages: list[str] = []

    def flush(filename: str | None, new: list[str], serious: bool) -> None:
        messages.extend(new)
        if new:
            print("\n".join(new), file=sys.stderr if serious else sys.stdout, flush=True)

    try:
        result = build.build(sources, options, flush_errors=flush, fscache=fscache)
    except CompileError as error:  # a blocking error: syntax, or a module found twice
        if not messages:
            print("\n".join(error.messages), file=sys.stderr)
        return 2
    result.manager.metastore.close()  # the cache database
    errors = [m for m in messages if ": error: " in m]
    files = {m.split(":", 1)[0] for m in errors}
    summary = (f"Found {len(errors)} errors in {len(files)} files" if errors
               else "Success: no issues found")
    print(f"{summary} (checked {len(sources)} source files, {mapped} of them under "
          f"{', '.join(MAPPED.values())}; {time.perf_counter() - started:.1f}s)")
    return 1 if errors else 0


@pytest.mark.slow
def test_mypy_passes() -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    result = subprocess.run([sys.executable, __file__], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"mypy failed:\n{result.stdout}{result.stderr}"


if __name__ == "__main__":
    status = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # as mypy's own command line does: tearing down its object graph takes seconds
