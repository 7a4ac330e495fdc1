"""The ``competence`` marker made tests: one per model, the two fixtures, the model asked at setup.

Registered by :func:`pytest_competence.plugin.pytest_configure` as a plugin of its own.
``pytest_generate_tests`` validates each declaration at collection (errors name the argument
before any model runs) and parametrizes the test by ``--competence-model``; the ``competence``
fixture builds the test's :class:`~pytest_competence.engine.run.CompetenceRun` and asks the model at
setup, so an outage is the test's ERROR, never a FAILED verdict on the model. Under
``--competence-batch-export`` it writes the requests instead and skips. A plain Hypothesis test
that takes ``competence_model`` runs once per model too, with settings for model-backed
examples.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from pytest_competence.plugin._keys import RUN
from pytest_competence.plugin._session import NO_MODEL, NOT_APPLICABLE, RESULT, STATE

if TYPE_CHECKING:
    from pytest_competence.engine.export_files import Target
    from pytest_competence.engine.run import CompetenceRun
    from pytest_competence.engine.spec import CompetenceSpec
    from pytest_competence.models import Model
    from pytest_competence.protocol import Prompt

__all__ = [
    "MODEL_FIXTURES",
    "competence",
    "competence_model",
    "model_free_id",
    "pytest_generate_tests",
    "pytest_runtest_call",
]


def _spec(
    item: pytest.Item | pytest.Function,
    marker: pytest.Mark,
    overrides: dict[str, Any] | None = None,
) -> CompetenceSpec:
    from pytest_competence.engine.spec import spec_from_marker
    from pytest_competence.protocol import InvalidArgument

    try:
        spec = spec_from_marker(marker.args, marker.kwargs, overrides)
        settings = item.config.stash[STATE].settings
        spec.check_size(settings.max_prompts)
        spec.release_gate(settings.gate, settings.margin)
        return spec
    except InvalidArgument as exc:
        message = f"{item.nodeid}: @pytest.mark.competence: {exc}"
    # Fail outside the except block: a chained InvalidArgument would repeat the message under
    # "During handling of the above exception, another exception occurred".
    pytest.fail(message, pytrace=False)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Validate a competence declaration and parametrize the test by model."""
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
    from pytest_competence.engine.spec import overridable

    parametrized = {
        name.strip()
        for mark in metafunc.definition.iter_markers("parametrize")
        for name in (mark.args[0].split(",") if isinstance(mark.args[0], str) else mark.args[0])
    }
    if not parametrized & set(overridable(marker.args, marker.kwargs)):
        # Validate at collection, so errors name the argument before any model runs; a test
        # whose parameters complete the declaration is validated per parameter set at setup.
        _spec(metafunc.definition, marker)
    _parametrize(metafunc)


def _parametrize(metafunc: pytest.Metafunc) -> None:
    """One test per model; with no model at all, one test skipped with the reason."""
    specs = metafunc.config.stash[STATE].specs
    if specs:
        metafunc.parametrize("competence_model", specs, ids=specs, indirect=True)
    else:
        metafunc.parametrize(
            "competence_model",
            [pytest.param(None, marks=pytest.mark.skip(reason=NO_MODEL))],
            ids=["no-model"],
            indirect=True,
        )


@pytest.fixture
def competence_model(request: pytest.FixtureRequest) -> Model:
    """The model under test, one per ``--competence-model`` (loaded once per process)."""
    spec = getattr(request, "param", None)
    if spec is None:
        pytest.fail(
            "competence_model is only available to tests marked @pytest.mark.competence",
            pytrace=False,
        )
    return request.config.stash[STATE].model(spec)


@pytest.fixture
def competence(
    request: pytest.FixtureRequest, competence_model: Model
) -> Generator[CompetenceRun, None, None]:
    """The competence evaluation of this test's design under this test's model."""
    from pytest_competence.engine.run import CompetenceRun
    from pytest_competence.engine.spec import overridable

    marker = request.node.get_closest_marker("competence")
    if marker is None:
        pytest.fail(
            "the 'competence' fixture needs @pytest.mark.competence(...) on the test", pytrace=False
        )
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    names = overridable(marker.args, marker.kwargs)
    overrides = {k: v for k, v in params.items() if k in names}
    spec = _spec(request.node, marker, overrides)
    session = request.config.stash[STATE]
    reason = _not_read(competence_model, spec, session)
    if reason is not None:
        # Not a failure: the model was never meant for these prompts (a shortcut of another
        # family, a reference policy that cannot parse this configuration's). The reports
        # show the pair as n/a, never as caught.
        request.node.stash[NOT_APPLICABLE] = {
            "nodeid": request.node.nodeid,
            "test": model_free_id(request.node),
            "model": competence_model.name,
            "family": spec.family.name,
            "reason": reason,
        }
        pytest.skip(reason)
    from pytest_competence.plugin._probing import probe_settings_of

    probe = probe_settings_of(request.node)
    run = CompetenceRun(spec, competence_model, session, model_free_id(request.node), probe)
    request.node.stash[RUN] = run
    export = session.settings.batch_export
    if export:
        spec_name = request.node.callspec.getparam("competence_model")
        _export(run, session.batch_targets.get(spec_name) or export)
    _ask(request.node, run)
    yield run
    if run.replay_error is not None:  # the design passed; its saved cases could not be asked
        pytest.fail(f"saved cases not replayed: {run.replay_error}", pytrace=False)


def _not_read(model: Model, spec: CompetenceSpec, session: Any) -> str | None:
    """Why ``model`` does not read ``spec``'s prompts, else ``None``: they are another
    family's, or (asked of a model that can tell, a reference policy) the design's first
    instance is one it cannot parse, as a configuration of the family may write them."""
    from pytest_competence.models import reads_family, reads_prompts

    family = spec.family.name
    if not reads_family(model, family):
        return f"{model.name} does not read {family} prompts"

    def first() -> Iterator[Prompt]:  # drawn only for a model that can tell
        item = session.first_item(spec)
        yield from item.prompts if item is not None else ()

    if not reads_prompts(model, first()):
        return (
            f"{model.name} does not read the {family} prompts of {spec.family!r} (it cannot "
            f"parse the design's first instance)"
        )
    return None


def _ask(item: pytest.Item, run: CompetenceRun) -> None:
    """Evaluate at setup: an outage, a broken model object or a foreign baseline is the test's
    ERROR (pytest's setup error), never a FAILED verdict on the model."""
    from pytest_competence.engine.evaluation import InfrastructureError
    from pytest_competence.engine.gate import BaselineError
    from pytest_competence.models import ModelProtocolError, ModelRaised, where_raised
    from pytest_competence.plugin._verdict import junit_properties

    try:
        run.prepare()
        return
    except InfrastructureError as exc:
        if run.evaluated:  # shown as an error in every report
            from pytest_competence.engine.run import errors_block

            item.stash[RESULT] = data = run.result(item.nodeid, run.test)
            data.setdefault("errors", errors_block(exc))  # the baseline's, if not its own
            item.user_properties.extend(junit_properties(data))
        message = f"{exc}\n  {_reasons(exc)}" if len(exc.reasons) > 1 else str(exc)
    except (ModelProtocolError, BaselineError) as exc:
        message = str(exc)
    except KeyboardInterrupt:
        # Ctrl-C lands wherever the main thread is, often in the model's call: the user's.
        run.session.stopped_in = item.nodeid
        pytest.exit(
            f"interrupted by the user while {run.model.name!r} answered {item.nodeid}; "
            f"the tests that finished are in the reports",
            returncode=pytest.ExitCode.INTERRUPTED,
        )
    except SystemExit as exc:
        pytest.exit(
            f"model {run.model.name!r} raised SystemExit"
            f"{': ' + str(exc) if str(exc) else ''}; stopping the run",
            returncode=pytest.ExitCode.INTERRUPTED,
        )
    except ModelRaised as exc:  # the model object raised instead of answering
        message = f"{exc}; an infrastructure error, not an answer"
    except Exception as exc:  # raised elsewhere on the model's behalf
        message = (
            f"model {run.model.name!r} raised {type(exc).__name__}: {exc} "
            f"(at {where_raised(exc)}) instead of answering; an infrastructure error, not an "
            f"answer"
        )
    pytest.fail(run.session.redact(message), pytrace=False)  # a model may put the key in it


def _export(run: CompetenceRun, path: str | Target) -> None:
    """Write the test's uncached requests as OpenAI Batch lines and skip it (see .batch)."""
    from pytest_competence.engine.batch import BatchError, export_design

    try:
        message = export_design(run.model, run.spec, path)
    except BatchError as exc:
        failure = str(exc)
    else:
        pytest.skip(message)
    pytest.fail(failure, pytrace=False)


#: Fixtures whose value lives for the whole session whatever their scope says: a Hypothesis
#: test may use them across examples.
MODEL_FIXTURES = frozenset({"competence_model"})


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """A Hypothesis test that takes the ``competence_model`` fixture gets settings that make
    sense when each example costs a model call — no per-example deadline, no ``too_slow`` health
    check, and no ``function_scoped_fixture`` check for the model fixture — but only where the
    test's settings still hold Hypothesis's own defaults: explicit ``@settings`` and profiles
    are left as they are (:func:`~pytest_competence.given.model_backed_settings`)."""
    # First in line: Hypothesis's own hook checks fixtures and health checks after this one.
    fn: Any = getattr(item, "obj", None)
    names = getattr(item, "fixturenames", ())
    if getattr(fn, "is_hypothesis_test", False) and MODEL_FIXTURES & set(names):
        from pytest_competence.given import model_backed_settings

        fn = getattr(fn, "__func__", fn)
        current = fn._hypothesis_internal_use_settings
        others = _function_scoped_arguments(item) - MODEL_FIXTURES
        fn._hypothesis_internal_use_settings = model_backed_settings(
            current, model_fixture_only=not others
        )
    return (yield)


def _function_scoped_arguments(item: pytest.Item) -> set[str]:
    """Function-scoped fixtures the test function names in its signature.

    Looked up the way Hypothesis's pytest plugin does for its ``function_scoped_fixture`` check,
    so the two agree on which fixtures count (parametrized arguments are not fixtures).
    """
    import inspect

    request = getattr(item, "_request", None)
    if request is None:
        return set()
    function = item.function  # type: ignore[attr-defined]
    info = request._fixturemanager.getfixtureinfo(node=item, func=function, cls=None)
    argnames = set(inspect.signature(function).parameters)
    return {
        name
        for name, defs in info.name2fixturedefs.items()
        if name in argnames and defs and defs[-1].scope == "function"
    }


def _reasons(exc: Any) -> str:
    return "reasons: " + "; ".join(
        f"{count} × {reason}" for reason, count in exc.reasons.most_common(3)
    )


def model_free_id(item: pytest.Item) -> str:
    """The node id with the model replaced by ``*``: what all models of a test share."""
    spec = item.callspec.getparam("competence_model")  # type: ignore[attr-defined]
    return item.nodeid.replace(spec, "*", 1)
