"""The verdict of a competence test, after its body: the condition, minimisation, the replay.

Registered by :func:`pytest_competence.plugin.pytest_configure` as a plugin of its own. The
``pytest_pyfunc_call`` wrapper checks the declared condition and the regression gate
(:meth:`~pytest_competence.engine.run.CompetenceRun.check`); a failure is minimised
(:func:`~pytest_competence.minimise.minimise_failure`), a pass replays the cases saved by
earlier runs (:func:`~pytest_competence.minimise.replay_saved`). The result, with the minimal
case and a probed test's probes (read now, after the verdict, so a failing test gets them too),
goes on the item for the reports and as JUnit properties, and travels on the test report to
the xdist controller.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING

import pytest

from pytest_competence.plugin._keys import RUN
from pytest_competence.plugin._session import NOT_APPLICABLE, RESULT

if TYPE_CHECKING:
    from pytest_competence.engine.result import Result

__all__ = [
    "NA_CATEGORY",
    "junit_properties",
    "pytest_pyfunc_call",
    "pytest_report_teststatus",
    "pytest_runtest_makereport",
]

#: The terminal's category of the test × model pairs skipped as not applicable: pytest's final
#: line counts them as ``748 n/a`` rather than among the skipped tests.
NA_CATEGORY = "n/a"


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Generator[None, object, object]:
    """Run the body, then give the competence verdict (see the module docstring)."""
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
    from pytest_competence.engine.conditions import CompetenceFailure
    from pytest_competence.engine.gate import BaselineError
    from pytest_competence.models import ModelProtocolError

    message = None
    if isinstance(from_body, (ModelProtocolError, BaselineError)):
        message, from_body = str(from_body), None
    elif from_body is None and not run.checked:
        try:
            run.check()
        except (CompetenceFailure, ModelProtocolError, BaselineError) as exc:
            message = str(exc)
            if isinstance(exc, CompetenceFailure):
                from pytest_competence.plugin._falsify import minimise_failure

                message = minimise_failure(pyfuncitem, run, message)
        if message is None and not run.session.settings.report_only:
            from pytest_competence.engine.evaluation import InfrastructureError, NotInCacheError
            from pytest_competence.plugin._falsify import replay_saved

            try:
                message = replay_saved(pyfuncitem, run)
            except NotInCacheError as exc:  # offline, as asked: said, not an error
                import warnings

                from pytest_competence.engine.run import CompetenceNotReplayed

                why = exc.chosen_as_it_goes(
                    "the saved cases", "run with --competence-cache=rw to replay them"
                )
                warnings.warn(
                    CompetenceNotReplayed(f"saved cases not replayed: {why}"), stacklevel=1
                )
            except InfrastructureError as exc:
                run.replay_error = str(exc)  # the fixture's teardown reports it as an error
    if run.evaluated:
        data = run.result(pyfuncitem.nodeid, run.test, probes=True)
        probed = data.get("probes") or {}
        if probed.get("status") == "error" and message is None:
            message = f"@pytest.mark.competence_probe: {probed['reason']}"
        if message is not None:
            from pytest_competence.plugin._falsify import attach_minimal

            attach_minimal(pyfuncitem, data)
        elif data["failing_case"] is not None and run.session.settings.report_only:
            data["failing_case"]["minimal"] = dict(NOT_MINIMISED)
        pyfuncitem.stash[RESULT] = data
        for key, value in junit_properties(data):
            pyfuncitem.user_properties.append((key, value))
    if from_body is not None:
        raise from_body
    if message is not None:
        # The message is the whole story; the engine's frames would only hide it.
        pytest.fail(run.session.redact(message), pytrace=False)
    return result


#: The ``minimal`` of a failing case that ``--competence-report-only`` did not minimise.
NOT_MINIMISED = {
    "status": "not_minimised",
    "verdict": "Not minimised: --competence-report-only asks the model nothing beyond the "
    "design, so this is the design's first failing instance, not a minimal case; run without "
    "--competence-report-only to minimise it.",
}


def junit_properties(result: Result) -> list[tuple[str, object]]:
    """Key figures as JUnit XML properties (``record_property`` style)."""
    summary = result["summary"]
    props: list[tuple[str, object]] = [
        ("competence_model", result["model"]),
        ("competence_all_correct", summary["all_correct"]),
        ("competence_kappa_bar", summary.get("kappa_bar")),
    ]
    for name, value in summary["accuracy_by_presentation"].items():
        props.append((f"competence_accuracy[{name}]", value))
    # The strict condition's (all-correct below 1), and the condition in force's.
    failing = [lv["n"] for lv in result["levels"] if lv["all_correct"] < 1]
    props.append(("competence_first_failing_n", failing[0] if failing else None))
    case = result.get("failing_case") or {}
    props.append(("competence_condition_first_failing_n", case.get("level")))
    gate = result.get("gate")
    if gate:
        from pytest_competence.report._gate import gate_properties

        props.extend(gate_properties(gate))
    bounds = result.get("bounds") or {}
    strict = bounds.get("strict")
    if strict and strict["failures"] == 0:
        props.append(("competence_failure_rate_bound", strict["upper"]))
    if result.get("errors"):
        props.append(("competence_errors", result["errors"]["message"]))
    return props


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Put the result (and an n/a pair) on the test report: JSON-able attributes travel with
    it to the xdist controller."""
    report = yield
    if call.when == "call" or (call.when == "setup" and report.failed):
        data = item.stash.get(RESULT, None)
        if data is not None:
            report.competence = data  # type: ignore[attr-defined]
    if call.when == "setup":
        skipped = item.stash.get(NOT_APPLICABLE, None)
        if skipped is not None:
            report.competence_not_applicable = skipped  # type: ignore[attr-defined]
    return report


@pytest.hookimpl(tryfirst=True)
def pytest_report_teststatus(report: pytest.TestReport) -> tuple[str, str, str] | None:
    """A pair skipped as not applicable (the model does not read the family's prompts) writes
    no letter on the progress line — a run of many shortcut policies would fill it with ``s``
    — and counts as ``n/a`` in pytest's final line; ``-v`` names it ``N/A``. Still a skip for
    JUnit, ``--lf`` and the exit status; on the xdist controller too (the attribute travels on
    the report)."""
    if getattr(report, "competence_not_applicable", None) is not None:
        return NA_CATEGORY, "", "N/A"
    return None
