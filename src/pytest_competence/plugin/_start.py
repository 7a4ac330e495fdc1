"""The start of a run: every model spec, alias, baseline and output file checked at configure.

:func:`start_session` builds the run's :class:`~pytest_competence.plugin._session.CompetenceSession`
and checks, before any test is collected, what would otherwise fail per test after the models
ran. Each problem is one ``pytest.UsageError`` line (pytest's exit status 4) that names the
option it came from — ``--competence-model``, ``competence_default_model``, an alias in
``competence_models``, ``--competence-baseline`` — and the fix:

- every model named is resolved. A ``py:`` model's module is found and its source read
  (:func:`~pytest_competence.models.python.check_python_spec`); those named on
  ``--competence-model`` or ``--competence-baseline`` are then imported, last, in the processes
  that run tests — a user who names a model wants it loaded — but not in an xdist controller,
  which runs none (a worker that cannot import one goes down with the usage error, and the
  controller ends the run with that line: :func:`worker_usage_error`); a
  ``competence_default_model`` module, which every session names, is imported when first
  needed;
- ``--competence-baseline`` is told apart as a model (a spec or an alias, checked as the models
  are) or an archived results document (loaded now; a records file, a missing file or a bare
  name that is neither are refused, naming what was given).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_competence.plugin._session import CompetenceSession

__all__ = ["baseline_is_archive", "start_session", "worker_usage_error"]

#: What a model spec starts with: a scheme, then ``:``.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-_]*:")


def _check_model(state: CompetenceSession, spec: str, option: str, load: bool = False) -> None:
    """Resolve ``spec`` now — a ``py:`` one checked without importing its module, unless
    ``load`` — and keep its model for the run; a bad one is a ``UsageError`` naming ``option``
    (and the alias it went through)."""
    from pytest_competence.models import ModelSpecError

    target = state.aliases.get(spec, spec)
    via = f"alias {spec!r} in competence_models: " if target != spec else ""
    try:
        if target.startswith("py:") and not load:
            from pytest_competence.models.python import check_python_spec
            from pytest_competence.plugin._wiring import dirs_of_test_paths

            config = state.config
            check_python_spec(
                target[len("py:") :], target, config.rootpath, dirs_of_test_paths(config)
            )
        elif spec not in state.models:
            state.models[spec] = state.resolve(spec)
    except (ModelSpecError, ImportError) as exc:  # ImportError: a backend's extra
        raise pytest.UsageError(f"{option}: {via}{exc}") from None


def _runs_tests(config: pytest.Config) -> bool:
    """Whether this process runs the session's tests: not an xdist controller (under ``-n``
    it hands them to its workers; its ``dist`` option is final by configure, while the
    ``dsession`` plugin is registered only after this plugin's configure) and not
    ``--collect-only``."""
    if hasattr(config, "workerinput"):
        return True
    distributed = config.getoption("dist", "no") != "no" and config.getoption("tx", None)
    return not distributed and not config.getoption("collectonly", False)


def _load_named(state: CompetenceSession, option: str) -> None:
    """Import the ``py:`` models named on the command line now, where the tests run: a user
    who names a model wants it loaded, and a module that cannot be imported is then one line
    at start-up (the ``competence_default_model`` ones load on first use: that ini option
    applies to every session, those that run no competence test included)."""
    if not _runs_tests(state.config):
        return
    named = [(spec, option) for spec in state.specs if option == "--competence-model"]
    baseline = state.settings.baseline
    if baseline is not None and state.baseline_document is None:
        named.append((baseline, "--competence-baseline"))
    for spec, given in named:
        if state.aliases.get(spec, spec).startswith("py:"):
            _check_model(state, spec, given, load=True)


def worker_usage_error(error: object) -> str | None:
    """The message of the ``pytest.UsageError`` an xdist worker went down with (its
    traceback's last line), if that is why it went down."""
    lines = [line for line in str(error or "").splitlines() if line.strip()]
    for line in reversed(lines):
        name, sep, message = line.partition(": ")
        if sep and name in ("pytest.UsageError", "_pytest.config.exceptions.UsageError"):
            return message
    return None


def _unknown(spec: str, aliases: dict[str, str], option: str, archive: bool = False) -> str:
    from pytest_competence.models._suggest import bare_name
    from pytest_competence.models.reference import POLICIES

    known = ", ".join(sorted(aliases)) or "none are configured"
    kinds = [f"an alias (aliases: {known})", "a spec such as 'ref:ideal' or 'py:my_models:answer'"]
    if archive:
        kinds.append("an archived results document (no such file)")
    return (
        f"{option}: unknown model {spec!r}{bare_name(spec, aliases, POLICIES)}; it is not "
        f"{', '.join(kinds[:-1])} or {kinds[-1]}. "
        f"Add '{spec} = SPEC' to the competence_models ini option"
    )


def baseline_is_archive(baseline: str, aliases: dict[str, str]) -> bool:
    """Whether ``--competence-baseline`` names an archived results document rather than a
    model: an existing file, or a path-like value that is neither an alias nor ``SCHEME:…``."""
    if baseline in aliases:
        return False
    if Path(baseline).is_file():
        return True
    return not _SCHEME.match(baseline) and (
        "/" in baseline or "\\" in baseline or "." in Path(baseline).name
    )


def _check_baseline(state: CompetenceSession) -> None:
    baseline = state.settings.baseline
    if baseline is None:
        return
    option = "--competence-baseline"
    if not baseline.strip():
        raise pytest.UsageError(
            f"{option}: got an empty value; pass a model spec, an alias or an archived "
            f"--competence-json file"
        )
    if not baseline_is_archive(baseline, state.aliases):
        if baseline not in state.aliases and ":" not in baseline:
            raise pytest.UsageError(_unknown(baseline, state.aliases, option, archive=True))
        _check_model(state, baseline, option)
        return
    records = re.match(r"(.*?)(\.records)?\.jsonl(\.gz)?$", baseline)
    if records:
        document = records.group(1) + ".json"
        raise pytest.UsageError(
            f"{option}: {baseline!r} is a records file (one JSON line per prompt), not a "
            f"results document; pass the --competence-json file it belongs to, e.g. {document}"
        )
    from pytest_competence.engine.gate import BaselineError, load_baseline

    try:
        state.baseline_document = load_baseline(Path(baseline))
    except BaselineError as exc:
        raise pytest.UsageError(str(exc)) from None


def start_session(config: pytest.Config) -> CompetenceSession:
    """The run's session: the models named on the command line (or the default one) and the
    aliases checked, the settings read, every model and the baseline checked — a bad spec,
    alias or value is a ``pytest.UsageError`` now, before any test runs."""
    from pytest_competence.models import split_specs
    from pytest_competence.plugin._session import CompetenceSession

    given = config.getoption("competence_models")
    for chunk in given:
        if not split_specs(chunk):
            raise pytest.UsageError(
                f"--competence-model: got {chunk!r}, which names no model (an unset variable in "
                f"a CI workflow?); pass a spec such as 'openai:MODEL@http://HOST:PORT/v1' or an "
                f"alias from competence_models"
            )
    option = "--competence-model" if given else "competence_default_model"
    raw = given or [str(config.getini("competence_default_model"))]
    specs = [s for chunk in raw for s in split_specs(chunk)]
    if not specs and config.getini("competence_require_model"):
        raise pytest.UsageError(
            "competence_require_model is set, but no model was named: pass --competence-model=SPEC "
            "(or set competence_default_model)"
        )
    aliases: dict[str, str] = {}
    lines = config.getini("competence_models")
    if lines:
        from pytest_competence.models import ModelSpecError, parse_aliases

        try:
            aliases = parse_aliases(lines)
        except ModelSpecError as exc:
            raise pytest.UsageError(str(exc)) from None
    for spec in specs:
        if spec not in aliases and ":" not in spec:
            raise pytest.UsageError(_unknown(spec, aliases, option))
    state = CompetenceSession(config, list(dict.fromkeys(specs)), aliases)
    state.models_option = option
    for spec in state.specs:
        _check_model(state, spec, option)
    state.check_settings()
    _check_baseline(state)
    from pytest_competence.plugin._exports import start as start_exports
    from pytest_competence.plugin._lookahead import Lookahead

    # Every process plans the same file sets; the controller empties them (a fresh set a run).
    state.batch_targets = start_exports(config, state.models, worker=state.is_worker)
    state.lookahead = Lookahead.install(config, state)
    _load_named(state, option)  # last: every cheap check first
    return state
