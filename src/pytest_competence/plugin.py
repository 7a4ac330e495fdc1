"""The pytest plugin: options, the ``competence`` marker, fixtures and hooks.

Loaded in every pytest session once installed, so it imports only pytest at module level; the
engine (numpy, the families, the models) is imported when a competence test first needs it.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_competence.session import (
    NOT_APPLICABLE, RESULT, RUN, STATE, CompetenceRun, CompetenceSession,
)

if TYPE_CHECKING:
    from pytest_competence.models import Model
    from pytest_competence.spec import CompetenceSpec

MARKER_HELP = (
    "competence(family='ordering', *, levels, pairs=200, seed=1, "
    "presentations=<the family's default>, require='strict', attempts=<the family's default>, "
    "regression_margin=None, **family_options): "
    "evaluate the test's models on a competence design and assert the condition"
)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_competence import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("competence", "competence testing of language models")
    group.addoption(
        "--competence-model",
        action="append",
        default=[],
        metavar="SPEC",
        dest="competence_models",
        help="Model to evaluate: ref:NAME, py:MODULE:ATTR or an alias from competence_models; "
        "repeatable or comma-separated",
    )
    group.addoption("--competence-json", metavar="PATH", default=None, dest="competence_json",
                    help="Write every figure as versioned JSON, and every prompt-level record "
                    "to a records file next to it (see --competence-records)")
    group.addoption("--competence-records", metavar="PATH", default=None,
                    dest="competence_records",
                    help="Where --competence-json writes the prompt-level records, one JSON line "
                    "each; a name ending in .gz is gzip-compressed (default: the JSON's name "
                    "with .records.jsonl, e.g. report.records.jsonl)")
    group.addoption("--competence-html", metavar="PATH", default=None, dest="competence_html",
                    help="Write a self-contained HTML report with the profile plots")
    group.addoption("--competence-markdown", metavar="PATH", default=None,
                    dest="competence_markdown",
                    help="Write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY)")
    group.addoption("--competence-baseline", metavar="SPEC_OR_JSON", default=None,
                    dest="competence_baseline",
                    help="Also fail a test on a significant regression against this model (a "
                    "spec or alias) or archived results (a --competence-json file); the test's "
                    "own condition still applies")
    group.addoption("--competence-report-only", action="store_true", default=False,
                    dest="competence_report_only",
                    help="Evaluate and report every condition and gate, but do not fail tests")
    group.addoption("--competence-batch-export", metavar="PATH", default=None,
                    dest="competence_batch_export",
                    help="Write the requests not yet in the response cache as OpenAI Batch input "
                    "lines to PATH and skip the competence tests (then run them, e.g. with vllm "
                    "run-batch, and 'competence batch import' the results)")
    group.addoption("--competence-audit", action="store_true", default=False,
                    dest="competence_audit",
                    help="Audit each competence suite against the reference policies instead of "
                    "running models: which shortcuts it catches, which survive, and why")
    group.addoption("--competence-diagnose", action="store_true", default=False,
                    dest="competence_diagnose",
                    help="Compare each model's answers with every reference policy of the "
                    "family on the same prompts: which shortcut it answers like, and the cells "
                    "that would tell the closest apart")
    parser.addini("competence_require", type="linelist", default=[],
                  help="The condition of every competence test that declares no require=, one "
                  "line each, replacing the strict condition (add a 'strict' line to keep it), "
                  "e.g. 'robust_correct >= 0.95 for n <= 128' or 'kappa_bar >= 0.6'")
    parser.addini("competence_trained_on", type="linelist", default=[],
                  help="Splits the models under test were trained on, one per line "
                  "(FAMILY:NAME, e.g. ordering:paper-heldin): a test whose design overlaps one "
                  "warns")
    parser.addini("competence_alpha", default="0.05",
                  help="Significance level of the regression gate, after Holm (default: 0.05)")
    parser.addini("competence_regression_margin", default="0",
                  help="Accuracy drop the regression gate tolerates (default: 0)")
    parser.addini(
        "competence_bootstrap",
        default="2000",
        help="Paired-bootstrap resamples per test for the report intervals (default: 2000)",
    )
    parser.addini("competence_max_prompts", default="2000000",
                  help="Largest design a competence test may declare, in prompts (levels x "
                  "pairs x presentations x attempts); larger ones are refused before any is "
                  "generated (default: 2000000)")
    parser.addini("competence_shrink_calls", default="100",
                  help="Model calls a failing competence test may spend minimising its failing "
                  "case; 0 turns minimisation off (default: 100)")
    parser.addini("competence_shrink_seconds", default="300",
                  help="Seconds a failing competence test may spend minimising (default: 300)")
    parser.addini("competence_database", default=".hypothesis/examples",
                  help="Directory of the example database where minimal failing cases are saved "
                  "and replayed first, relative to the rootdir; 'none' saves nothing "
                  "(default: .hypothesis/examples)")
    parser.addini("competence_database_shared", type="linelist", default=[],
                  help="Read-only example databases replayed too: directories, or "
                  "github:OWNER/REPO[/ARTIFACT] for a GitHub Actions artifact")
    parser.addini(
        "competence_models",
        type="linelist",
        default=[],
        help="Model aliases, one 'name = spec' per line (e.g. 'qwen = py:my_models:qwen')",
    )
    parser.addini(
        "competence_default_model",
        default="",
        help="Model used when no --competence-model is given (default: none; competence tests "
        "are then skipped)",
    )
    parser.addini("competence_require_model", type="bool", default=False,
                  help="Make a run that names no model a usage error instead of skipping the "
                  "competence tests (set it in CI; default: false)")
    parser.addini("competence_max_error_rate", default="0",
                  help="Share of a test's prompts that may end in infrastructure errors (server "
                  "or model failures) before the test is an ERROR; below it they count as "
                  "invalid answers (default: 0)")
    group.addoption("--competence-cache", choices=("rw", "read", "write", "off"), default="rw",
                    dest="competence_cache",
                    help="Response cache for HTTP, transformers and vLLM models: read and write "
                    "(default), read only, write only (refresh) or off")
    parser.addini("competence_cache_path", default=".competence/cache.sqlite",
                  help="Response cache file, relative to the rootdir "
                  "(default: .competence/cache.sqlite)")
    parser.addini("competence_api_key_env", default="OPENAI_API_KEY",
                  help="Environment variable holding the API key of openai: models unless the "
                  "spec names its own with key_env= (default: OPENAI_API_KEY)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    from pytest_competence.shrink_hooks import SHRINK_MARKER_HELP, ShrinkHooks

    config.addinivalue_line("markers", SHRINK_MARKER_HELP)
    config.pluginmanager.register(ShrinkHooks(config), "competence-shrink")
    from pytest_competence.models import split_specs

    given = config.getoption("competence_models")
    for chunk in given:
        if not split_specs(chunk):
            raise pytest.UsageError(
                f"--competence-model: got {chunk!r}, which names no model (an unset variable in "
                f"a CI workflow?); pass a spec such as 'openai:MODEL@http://HOST:PORT/v1' or an "
                f"alias from competence_models"
            )
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
            known = ", ".join(sorted(aliases)) or "none are configured"
            raise pytest.UsageError(
                f"--competence-model: unknown model {spec!r}; it is not an alias (aliases: "
                f"{known}) nor a spec such as 'ref:ideal' or 'py:my_models:answer'. Add "
                f"'{spec} = SPEC' to the competence_models ini option"
            )
    state = CompetenceSession(config, list(dict.fromkeys(specs)), aliases)
    for spec in state.specs:
        # Reference policies and unknown schemes cost nothing to resolve: reject a bad one now,
        # as a usage error. py: models stay lazy, since importing a user's model may be slow.
        if not aliases.get(spec, spec).startswith("py:"):
            from pytest_competence.models import ModelSpecError

            try:
                state.models[spec] = state.resolve(spec)
            except (ModelSpecError, ImportError) as exc:  # ImportError: a backend's extra
                raise pytest.UsageError(f"--competence-model: {exc}") from None
    _check_run_settings(config, state)
    export = config.getoption("competence_batch_export")
    if export and not state.is_worker:
        try:  # a fresh file per run: the lines of an earlier export may be answered by now
            open(export, "w").close()
        except OSError as exc:
            raise pytest.UsageError(f"--competence-batch-export: cannot write {export!r} "
                                    f"({exc.strerror}); give a path in an existing, writable "
                                    f"directory") from None
    config.stash[STATE] = state
    config.pluginmanager.register(state, "competence-session")
    if config.getoption("competence_audit"):
        from pytest_competence.audit.plugin import AuditPlugin

        config.pluginmanager.register(AuditPlugin(config), "competence-audit")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(state), "competence-xdist")


def _check_run_settings(config: pytest.Config, state: CompetenceSession) -> None:
    """Settings that would otherwise fail per test, after the models ran: usage errors now."""
    if state.gates:
        from pytest_competence.conditions import parse_condition
        from pytest_competence.protocol import InvalidArgument

        try:
            parse_condition(state.gates)
        except InvalidArgument as exc:
            raise pytest.UsageError(f"competence_require: {exc}") from None
    if state.trained_on_lines:
        from pytest_competence.splits import split
        from pytest_competence.protocol import InvalidArgument

        try:
            state.trained_on = [split(line.strip()) for line in state.trained_on_lines]
        except InvalidArgument as exc:
            raise pytest.UsageError(f"competence_trained_on: {exc}") from None
    baseline = state.baseline
    if baseline is not None and not baseline.strip():
        raise pytest.UsageError("--competence-baseline: got an empty value; pass a model spec, "
                                "an alias or an archived --competence-json file")
    if baseline and baseline.endswith(".json"):
        from pytest_competence.gate import BaselineError, load_baseline

        path = Path(baseline)
        try:
            state.baseline_document = load_baseline(path)
        except BaselineError as exc:
            raise pytest.UsageError(str(exc)) from None


def _spec(item: pytest.Item | pytest.Function, marker: pytest.Mark,
          overrides: dict[str, Any] | None = None) -> CompetenceSpec:
    from pytest_competence.spec import spec_from_marker
    from pytest_competence.protocol import InvalidArgument

    try:
        spec = spec_from_marker(marker.args, marker.kwargs, overrides)
        spec.check_size(item.config.stash[STATE].settings.max_prompts)
        return spec
    except InvalidArgument as exc:
        message = f"{item.nodeid}: @pytest.mark.competence: {exc}"
    # Fail outside the except block: a chained InvalidArgument would repeat the message under
    # "During handling of the above exception, another exception occurred".
    pytest.fail(message, pytrace=False)


def _overridable(marker: pytest.Mark) -> tuple[str, ...]:
    """Test parameters that override the marker: design keys and the family's options."""
    from pytest_competence.spec import DESIGN_KEYS, family_options

    from pytest_competence.registry import DEFAULT_FAMILY

    family_name = marker.kwargs.get("family", marker.args[0] if marker.args else DEFAULT_FAMILY)
    options = family_options(family_name) if isinstance(family_name, str) else ()
    return DESIGN_KEYS + options


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("competence")
    if marker is None:
        import inspect

        if "competence_model" in inspect.signature(metafunc.function).parameters:
            # A plain test (e.g. a Hypothesis one) that takes the model runs once per model too.
            _parametrize(metafunc)
        return
    if "competence" not in metafunc.fixturenames:
        pytest.fail(
            f"{metafunc.definition.nodeid}: a test marked @pytest.mark.competence must take the "
            f"'competence' fixture as an argument, e.g. def test_ordering(competence): ...",
            pytrace=False,
        )
    parametrized = {
        name.strip()
        for mark in metafunc.definition.iter_markers("parametrize")
        for name in (mark.args[0].split(",") if isinstance(mark.args[0], str) else mark.args[0])
    }
    if not parametrized & set(_overridable(marker)):
        # Validate at collection, so errors name the argument before any model runs; a test
        # whose parameters complete the declaration is validated per parameter set at setup.
        _spec(metafunc.definition, marker)
    _parametrize(metafunc)


def _parametrize(metafunc: pytest.Metafunc) -> None:
    """One test per model; with no model at all, one test skipped with the reason."""
    from pytest_competence.session import NO_MODEL

    specs = metafunc.config.stash[STATE].specs
    if specs:
        metafunc.parametrize("competence_model", specs, ids=specs, indirect=True)
    else:
        metafunc.parametrize("competence_model", [pytest.param(None, marks=pytest.mark.skip(
            reason=NO_MODEL))], ids=["no-model"], indirect=True)


@pytest.fixture
def competence_model(request: pytest.FixtureRequest) -> Model:
    """The model under test, one per ``--competence-model`` (loaded once per process)."""
    spec = getattr(request, "param", None)
    if spec is None:
        pytest.fail("competence_model is only available to tests marked @pytest.mark.competence",
                    pytrace=False)
    return request.config.stash[STATE].model(spec)


@pytest.fixture
def competence(request: pytest.FixtureRequest,
               competence_model: Model) -> Generator[CompetenceRun, None, None]:
    """The competence evaluation of this test's design under this test's model."""
    marker = request.node.get_closest_marker("competence")
    if marker is None:
        pytest.fail("the 'competence' fixture needs @pytest.mark.competence(...) on the test",
                    pytrace=False)
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    names = _overridable(marker)
    overrides = {k: v for k, v in params.items() if k in names}
    spec = _spec(request.node, marker, overrides)
    from pytest_competence.models import reads_family

    family = spec.family.name
    if not reads_family(competence_model, family):
        # Not a failure: the model was never meant for these prompts (a shortcut of another
        # family). The reports show the pair as n/a, never as caught.
        reason = f"{competence_model.name} does not read {family} prompts"
        request.node.stash[NOT_APPLICABLE] = {
            "nodeid": request.node.nodeid, "test": _test_id(request.node),
            "model": competence_model.name, "family": family, "reason": reason}
        pytest.skip(reason)
    run = CompetenceRun(spec, competence_model, request.config.stash[STATE],
                        _test_id(request.node))
    request.node.stash[RUN] = run
    export = request.config.getoption("competence_batch_export")
    if export:
        _export(run, export)
    _ask(request.node, run)
    yield run
    if run.replay_error is not None:  # the design passed; its saved cases could not be asked
        pytest.fail(f"saved cases not replayed: {run.replay_error}", pytrace=False)


def _ask(item: pytest.Item, run: CompetenceRun) -> None:
    """Evaluate at setup: an outage, a broken model object or a foreign baseline is the test's
    ERROR (pytest's setup error), never a FAILED verdict on the model."""
    from pytest_competence.evaluation import InfrastructureError
    from pytest_competence.models import ModelProtocolError
    from pytest_competence.gate import BaselineError

    try:
        run.prepare()
        return
    except InfrastructureError as exc:
        if run.evaluated:  # shown as an error in every report
            item.stash[RESULT] = data = run.result(item.nodeid, run.test)
            item.user_properties.extend(_junit_properties(data))
        message = f"{exc}\n  {_reasons(exc)}" if len(exc.reasons) > 1 else str(exc)
    except (ModelProtocolError, BaselineError) as exc:
        message = str(exc)
    except (KeyboardInterrupt, SystemExit) as exc:
        pytest.exit(f"model {run.model.name!r} raised {type(exc).__name__}"
                    f"{': ' + str(exc) if str(exc) else ''}; stopping the run", returncode=2)
    except Exception as exc:  # the model object raised instead of answering
        from pytest_competence.models import where_raised

        message = (f"model {run.model.name!r} raised {type(exc).__name__}: {exc} "
                   f"(at {where_raised(exc)}) instead of answering; an infrastructure error, not an "
                   f"answer")
    pytest.fail(run._session.redact(message), pytrace=False)  # a model may put the key in it


_EXPORT_CHUNK = 65536  # prompts per export step: each step reads the batch file once


def _export(run: CompetenceRun, path: str) -> None:
    """Write the test's uncached requests as OpenAI Batch lines and skip it (see .batch)."""
    from pytest_competence.batch import BatchError, export_requests
    from pytest_competence.evaluate import sent_prompts
    from pytest_competence.session import AWAITING

    try:
        count = sum(export_requests(run.model, sent_prompts(chunk, run.spec.attempts), path)
                    for chunk in run.spec.chunks(prompts=_EXPORT_CHUNK))
    except BatchError as exc:
        message = str(exc)
    else:
        pytest.skip(f"{AWAITING}: {count} new requests written to {path}")
    pytest.fail(message, pytrace=False)


def _reasons(exc: Any) -> str:
    return "reasons: " + "; ".join(f"{count} × {reason}" for reason, count
                                   in exc.reasons.most_common(3))


def _test_id(item: pytest.Item) -> str:
    """The node id with the model replaced by ``*``: what all models of a test share."""
    spec = item.callspec.getparam("competence_model")  # type: ignore[attr-defined]
    return item.nodeid.replace(spec, "*", 1)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    from_body: BaseException | None = None
    try:
        result = yield
    except BaseException as exc:  # the body failed; still report the profile if it was computed
        from_body, result = exc, None
    run = pyfuncitem.stash.get(RUN, None)
    if run is None:
        if from_body is not None:
            raise from_body
        return result
    from pytest_competence.conditions import CompetenceFailure
    from pytest_competence.models import ModelProtocolError
    from pytest_competence.gate import BaselineError

    message = None
    if isinstance(from_body, (ModelProtocolError, BaselineError)):
        message, from_body = str(from_body), None
    elif from_body is None and not run.checked:
        try:
            run.check()
        except (CompetenceFailure, ModelProtocolError, BaselineError) as exc:
            message = str(exc)
            if isinstance(exc, CompetenceFailure):
                from pytest_competence.falsify import minimise_failure

                message = minimise_failure(pyfuncitem, run, message)
        if message is None and not run._session.report_only:
            from pytest_competence.evaluation import InfrastructureError
            from pytest_competence.falsify import replay_saved

            try:
                message = replay_saved(pyfuncitem, run)
            except InfrastructureError as exc:
                run.replay_error = str(exc)  # the fixture's teardown reports it as an error
    if run.evaluated:
        data = run.result(pyfuncitem.nodeid, run.test)
        if message is not None:
            from pytest_competence.falsify import attach_minimal

            attach_minimal(pyfuncitem, data)
        pyfuncitem.stash[RESULT] = data
        for key, value in _junit_properties(data):
            pyfuncitem.user_properties.append((key, value))
    if from_body is not None:
        raise from_body
    if message is not None:
        # The message is the whole story; the engine's frames would only hide it.
        pytest.fail(run._session.redact(message), pytrace=False)
    return result


def _junit_properties(result: dict[str, Any]) -> list[tuple[str, object]]:
    """Key figures as JUnit XML properties (``record_property`` style)."""
    summary = result["summary"]
    props: list[tuple[str, object]] = [
        ("competence_model", result["model"]),
        ("competence_all_correct", summary["all_correct"]),
        ("competence_kappa_bar", summary.get("kappa_bar")),
    ]
    for name, value in summary["accuracy_by_presentation"].items():
        props.append((f"competence_accuracy[{name}]", value))
    failing = [lv["n"] for lv in result["levels"] if lv["all_correct"] < 1]
    props.append(("competence_first_failing_n", failing[0] if failing else None))
    gate = result.get("gate")
    if gate:
        props.append(("competence_gate", gate.get("status")
                      or ("regression" if gate["regressions"] else "no significant regression")))
    if result.get("errors"):
        props.append(("competence_errors", result["errors"]["message"]))
    return props


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    # JSON-able attributes travel with the report to the xdist controller.
    if call.when == "call" or (call.when == "setup" and report.failed):
        data = item.stash.get(RESULT, None)
        if data is not None:
            report.competence = data  # type: ignore[attr-defined]
    if call.when == "setup":
        skipped = item.stash.get(NOT_APPLICABLE, None)
        if skipped is not None:
            report.competence_not_applicable = skipped  # type: ignore[attr-defined]
    return report


class _XdistHooks:
    """Hands the records directory to xdist workers (registered only when xdist is active)."""

    def __init__(self, session: CompetenceSession) -> None:
        self.session = session

    def pytest_configure_node(self, node: Any) -> None:
        self.session.configure_node(node)
