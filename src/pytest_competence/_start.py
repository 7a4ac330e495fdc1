"""The start of a run: every model spec, alias, baseline and output file checked at configure.

:func:`start_session` builds the run's :class:`~pytest_competence._session.CompetenceSession`
and checks, before any test is collected, what would otherwise fail per test after the models
ran. Each problem is one ``pytest.UsageError`` line (pytest's exit status 4) that names the
option it came from — ``--competence-model``, ``competence_default_model``, an alias in
``competence_models``, ``--competence-baseline`` — and the fix:

- every model named is resolved, except that a ``py:`` model's module is found and its source
  read, not run (:func:`~pytest_competence.models.python.check_python_spec`): importing a
  user's model may take seconds, which a session that runs no competence test must not pay;
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
    from pytest_competence._session import CompetenceSession

__all__ = ["baseline_is_archive", "start_session"]

#: What a model spec starts with: a scheme, then ``:``.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-_]*:")


def _check_model(state: CompetenceSession, spec: str, option: str) -> None:
    """Resolve ``spec`` now (a ``py:`` one checked without importing its module); a bad one is
    a ``UsageError`` naming ``option`` (and the alias it went through)."""
    from pytest_competence.models import ModelSpecError

    target = state.aliases.get(spec, spec)
    via = f"alias {spec!r} in competence_models: " if target != spec else ""
    try:
        if target.startswith("py:"):
            from pytest_competence.models.python import check_python_spec

            check_python_spec(target[len("py:") :], target, state.config.rootpath)
        else:
            state.models[spec] = state.resolve(spec)
    except (ModelSpecError, ImportError) as exc:  # ImportError: a backend's extra
        raise pytest.UsageError(f"{option}: {via}{exc}") from None


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
    from pytest_competence._gate import BaselineError, load_baseline

    try:
        state.baseline_document = load_baseline(Path(baseline))
    except BaselineError as exc:
        raise pytest.UsageError(str(exc)) from None


def start_session(config: pytest.Config) -> CompetenceSession:
    """The run's session: the models named on the command line (or the default one) and the
    aliases checked, the settings read, every model and the baseline checked — a bad spec,
    alias or value is a ``pytest.UsageError`` now, before any test runs."""
    from pytest_competence._session import CompetenceSession
    from pytest_competence.models import split_specs

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
    for spec in state.specs:
        _check_model(state, spec, option)
    state.check_settings()
    _check_baseline(state)
    from pytest_competence._batch_files import start as start_exports
    from pytest_competence._lookahead import Lookahead

    # Every process plans the same file sets; the controller empties them (a fresh set a run).
    state.batch_targets = start_exports(config, state.models, worker=state.is_worker)
    state.lookahead = Lookahead.install(config, state)
    return state
