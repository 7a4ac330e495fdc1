"""The pytest plugin: options, the ``competence`` marker, fixtures and hooks.

Loaded in every pytest session once installed, so it imports only pytest at module level; the
engine (numpy, the families, the models) is imported when a competence test first needs it.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_competence.evaluate import Evaluation
    from pytest_competence.models import Model
    from pytest_competence.profile import LevelProfile
    from pytest_competence.spec import CompetenceSpec

MARKER_HELP = (
    "competence(family='ordering', *, levels, pairs=200, seed=1, "
    "presentations=('original', 'equivalent'), require='strict', **family_options): "
    "evaluate the test's models on a competence design and assert the condition"
)
REPORT_KEY = "competence"


class _State:
    """Per-run plugin state, kept in ``config.stash``: model specs, loaded models, designs.

    Registered as a plugin object too, so its report hooks see this run's results (on the xdist
    controller as well: the summaries travel in each report's ``user_properties``).
    """

    def __init__(self, specs: list[str], aliases: dict[str, str]) -> None:
        self.specs = specs
        self.aliases = aliases
        self.models: dict[str, Model] = {}
        self.designs: dict[tuple, list] = {}
        self.results: list[dict[str, Any]] = []

    def resolve(self, spec: str) -> Model:
        from pytest_competence.models import resolve_model

        return resolve_model(spec, self.aliases)

    def model(self, spec: str) -> Model:
        if spec not in self.models:
            from pytest_competence.models import ModelSpecError

            try:
                self.models[spec] = self.resolve(spec)
            except ModelSpecError as exc:
                message = f"--competence-model: {exc}"
            else:
                return self.models[spec]
            # Raised from a fixture, a UsageError is an ordinary setup error with the plugin's
            # frames; fail with the message alone instead (outside the except: no chained repeat).
            pytest.fail(message, pytrace=False)
        return self.models[spec]

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "call":
            return
        for key, value in report.user_properties:
            if key == REPORT_KEY:
                data = json.loads(value)
                data["nodeid"] = report.nodeid
                data["outcome"] = report.outcome
                self.results.append(data)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.results:
            return
        from pytest_competence.report_terminal import summary_lines

        terminalreporter.section("competence profiles")
        for line in summary_lines(sorted(self.results, key=lambda r: r["nodeid"])):
            terminalreporter.write_line(line)

    def design(self, spec: CompetenceSpec) -> list:
        # Several models (and several tests) share one design: generate it once per process.
        if spec.key not in self.designs:
            self.designs[spec.key] = spec.design()
        return self.designs[spec.key]


STATE = pytest.StashKey[_State]()
RUN = pytest.StashKey["CompetenceRun"]()


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
    parser.addini(
        "competence_models",
        type="linelist",
        default=[],
        help="Model aliases, one 'name = spec' per line (e.g. 'qwen = py:my_models:qwen')",
    )
    parser.addini(
        "competence_default_model",
        default="ref:ideal",
        help="Model used when no --competence-model is given (default: ref:ideal)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)
    raw = config.getoption("competence_models") or [config.getini("competence_default_model")]
    specs = [s.strip() for chunk in raw for s in chunk.split(",") if s.strip()]
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
    state = _State(list(dict.fromkeys(specs)), aliases)
    for spec in state.specs:
        # Reference policies and unknown schemes cost nothing to resolve: reject a bad one now,
        # as a usage error. py: models stay lazy, since importing a user's model may be slow.
        if not aliases.get(spec, spec).startswith("py:"):
            from pytest_competence.models import ModelSpecError

            try:
                state.models[spec] = state.resolve(spec)
            except ModelSpecError as exc:
                raise pytest.UsageError(f"--competence-model: {exc}") from None
    config.stash[STATE] = state
    config.pluginmanager.register(state, "competence-state")


def _spec(item: pytest.Item | pytest.Function, marker: pytest.Mark,
          overrides: dict[str, Any] | None = None) -> CompetenceSpec:
    from pytest_competence.spec import spec_from_marker
    from pytest_competence.strategies import InvalidArgument

    try:
        return spec_from_marker(marker.args, marker.kwargs, overrides)
    except InvalidArgument as exc:
        message = f"{item.nodeid}: @pytest.mark.competence: {exc}"
    # Fail outside the except block: a chained InvalidArgument would repeat the message under
    # "During handling of the above exception, another exception occurred".
    pytest.fail(message, pytrace=False)


def _overridable(marker: pytest.Mark) -> tuple[str, ...]:
    """Test parameters that override the marker: design keys and the family's options."""
    from pytest_competence.spec import DESIGN_KEYS, family_options

    family_name = marker.kwargs.get("family", marker.args[0] if marker.args else "ordering")
    options = family_options(family_name) if isinstance(family_name, str) else ()
    return DESIGN_KEYS + options


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("competence")
    if marker is None:
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
    specs = metafunc.config.stash[STATE].specs
    metafunc.parametrize("competence_model", specs, ids=specs, indirect=True)


@pytest.fixture
def competence_model(request: pytest.FixtureRequest) -> Model:
    """The model under test, one per ``--competence-model`` (loaded once per process)."""
    spec = getattr(request, "param", None)
    if spec is None:
        pytest.fail("competence_model is only available to tests marked @pytest.mark.competence",
                    pytrace=False)
    return request.config.stash[STATE].model(spec)


class CompetenceRun:
    """The evaluation behind one competence test and one model; computed on first use.

    The test body may read :attr:`evaluation` and :attr:`profiles` and add its own assertions;
    the plugin asserts the declared condition after the body returns (or when :meth:`check` is
    called explicitly).
    """

    def __init__(self, spec: CompetenceSpec, model: Model, state: _State) -> None:
        self.spec = spec
        self.model = model
        self._state = state
        self._evaluation: Evaluation | None = None
        self._profiles: list[LevelProfile] | None = None
        self.checked = False

    @property
    def evaluation(self) -> Evaluation:
        if self._evaluation is None:
            from pytest_competence.evaluate import evaluate

            items = self._state.design(self.spec)
            self._evaluation = evaluate(self.spec.family, items, self.model)
        return self._evaluation

    @property
    def evaluated(self) -> bool:
        """Whether the model has answered (the evaluation exists)."""
        return self._evaluation is not None

    @property
    def profiles(self) -> list[LevelProfile]:
        if self._profiles is None:
            from pytest_competence.profile import profile

            self._profiles = profile(self.evaluation)
        return self._profiles

    def check(self) -> None:
        """Assert the declared condition; raises ``CompetenceFailure`` with a failing case."""
        __tracebackhide__ = True
        self.checked = True
        self.spec.condition.check(self.evaluation, self.profiles)

    def summary(self) -> dict[str, Any]:
        """A JSON-able digest that rides on the test report to the xdist controller."""
        return {
            "model": self.model.name,
            "family": repr(self.spec.family),
            "condition": str(self.spec.condition),
            "presentations": list(self.spec.presentations),
            "levels": [p.as_dict() for p in self.profiles],
        }


@pytest.fixture
def competence(request: pytest.FixtureRequest, competence_model: Model) -> CompetenceRun:
    """The competence evaluation of this test's design under this test's model."""
    marker = request.node.get_closest_marker("competence")
    if marker is None:
        pytest.fail("the 'competence' fixture needs @pytest.mark.competence(...) on the test",
                    pytrace=False)
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    names = _overridable(marker)
    overrides = {k: v for k, v in params.items() if k in names}
    run = CompetenceRun(_spec(request.node, marker, overrides), competence_model,
                        request.config.stash[STATE])
    request.node.stash[RUN] = run
    return run


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
    from pytest_competence.evaluate import ModelProtocolError

    message = None
    if isinstance(from_body, ModelProtocolError):
        message, from_body = str(from_body), None
    elif from_body is None and not run.checked:
        try:
            run.check()
        except (CompetenceFailure, ModelProtocolError) as exc:
            message = str(exc)
    if run.evaluated:
        pyfuncitem.user_properties.append((REPORT_KEY, json.dumps(run.summary())))
    if from_body is not None:
        raise from_body
    if message is not None:
        # The message is the whole story; the engine's frames would only hide it.
        pytest.fail(message, pytrace=False)
    return result
