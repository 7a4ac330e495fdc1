"""Per-run plugin state and the evaluation behind each competence test.

:class:`CompetenceSession` lives in ``config.stash`` and is registered as a plugin object, so its
report hooks see this run's results. Results travel from xdist workers to the controller on the
test report (``report.competence``, a JSON-able dict); prompt-level records, which can be tens of
megabytes, go to part files that survive a worker crash and are merged when the session ends.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_competence.evaluate import Evaluation
    from pytest_competence.models import Model
    from pytest_competence.profile import LevelProfile
    from pytest_competence.spec import CompetenceSpec

__all__ = ["NOT_APPLICABLE", "RESULT", "RUN", "STATE", "CompetenceRun", "CompetenceSession"]


class CompetenceSession:
    """Model specs, loaded models, shared designs, and the results gathered for the reports."""

    def __init__(self, config: pytest.Config, specs: list[str], aliases: dict[str, str]) -> None:
        self.config = config
        self.specs = specs
        self.aliases = aliases
        self.models: dict[str, Model] = {}
        self.designs: dict[tuple, list] = {}
        self.results: list[dict[str, Any]] = []
        self.not_applicable: list[dict[str, Any]] = []  # test × model pairs skipped as n/a
        self.written: list[tuple[str, str]] = []
        self.document: dict[str, Any] | None = None
        self.bootstrap = int(config.getini("competence_bootstrap"))
        self.json_path = config.getoption("competence_json")
        self.html_path = config.getoption("competence_html")
        self.markdown_path = config.getoption("competence_markdown")
        self.report_only = bool(config.getoption("competence_report_only"))
        self.gates = [g for g in config.getini("competence_require") if g.strip()]
        self.baseline = config.getoption("competence_baseline")
        self.alpha = float(config.getini("competence_alpha"))
        self.margin = float(config.getini("competence_regression_margin"))
        self.evaluations: dict[tuple, Evaluation] = {}
        worker = getattr(config, "workerinput", None)
        self.is_worker = worker is not None
        self.parts: Path | None = None
        self._own_parts = False
        if worker is not None:
            parts = worker.get("competence_parts")
            self.parts = Path(parts) if parts else None
        elif self.json_path:
            self.parts = Path(tempfile.mkdtemp(prefix="competence-parts-"))
            self._own_parts = True

    # -- models and designs ------------------------------------------------------------------

    def resolve(self, spec: str) -> Model:
        from pytest_competence.models import resolve_model
        from pytest_competence.wiring import backend_settings, wire

        model = resolve_model(spec, self.aliases, settings=backend_settings(self.config))
        return wire(self.config, model)  # the response cache and the progress line

    def model(self, spec: str) -> Model:
        if spec not in self.models:
            from pytest_competence.models import ModelSpecError

            try:
                self.models[spec] = self.resolve(spec)
            except (ModelSpecError, ImportError) as exc:  # ImportError: a backend's extra
                message = f"--competence-model: {exc}"
            else:
                return self.models[spec]
            # From a fixture a UsageError is an ordinary setup error with the plugin's frames;
            # fail with the message alone (outside the except: no chained repeat).
            pytest.fail(message, pytrace=False)
        return self.models[spec]

    def evaluate(self, spec: CompetenceSpec, model: Model) -> Evaluation:
        """``model`` on ``spec``'s design, once per process (a baseline serves every candidate)."""
        from pytest_competence.evaluate import evaluate

        key = (spec.key, spec.attempts, model.name)
        if key not in self.evaluations:
            self.evaluations[key] = evaluate(spec.family, self.design(spec), model, spec.attempts)
        return self.evaluations[key]

    def design(self, spec: CompetenceSpec) -> list:
        # Several models (and several tests) share one design: generate it once per process.
        if spec.key not in self.designs:
            self.designs[spec.key] = spec.design()
        return self.designs[spec.key]

    # -- results -----------------------------------------------------------------------------

    def write_records(self, nodeid: str, rows: list[dict[str, Any]]) -> str | None:
        """Write one test's prompt-level records to a part file; ``None`` if none is wanted."""
        if self.parts is None:
            return None
        name = hashlib.sha256(nodeid.encode()).hexdigest()[:24] + ".json"
        (self.parts / name).write_text(json.dumps(rows), encoding="utf-8")
        return name

    def configure_node(self, node: Any) -> None:
        """Called through the plugin's xdist hook: workers write their records here too."""
        if self.parts is not None:
            node.workerinput["competence_parts"] = str(self.parts)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        skipped = getattr(report, "competence_not_applicable", None)
        if skipped is not None and not self.is_worker:
            self.not_applicable.append(skipped)
            return
        result = getattr(report, "competence", None)
        if report.when != "call" or result is None or self.is_worker:
            return
        result = dict(result, nodeid=report.nodeid, outcome=report.outcome)
        self.results.append(result)
        self.config.hook.pytest_competence_profile(config=self.config, result=result)

    def pytest_sessionfinish(self) -> None:
        if self.is_worker:
            return
        try:
            if self.results:
                self._write_reports()
        finally:
            if self._own_parts and self.parts is not None:
                shutil.rmtree(self.parts, ignore_errors=True)

    def _write_reports(self) -> None:
        from pytest_competence.report import build_document, write_outputs

        document = build_document(self.results, models=self.specs, records_dir=self.parts,
                                  bootstrap=self.bootstrap, not_applicable=self.not_applicable)
        self.document = document
        self.written = write_outputs(
            document, json_path=self.json_path, html_path=self.html_path,
            markdown_path=self.markdown_path,
        )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.document is None:
            return
        from pytest_competence.report.terminal import summary_lines

        terminalreporter.section("competence profiles")
        for line in summary_lines(self.document, verbosity=terminalreporter.verbosity):
            terminalreporter.write_line(line)
        for what, path in self.written:
            terminalreporter.write_line(f"competence {what}: {path}")


STATE = pytest.StashKey[CompetenceSession]()
RUN = pytest.StashKey["CompetenceRun"]()
RESULT = pytest.StashKey[dict]()
NOT_APPLICABLE = pytest.StashKey[dict]()  # a test × model pair whose model cannot read the family


class CompetenceRun:
    """The evaluation behind one competence test and one model; computed on first use.

    The test body may read :attr:`evaluation` and :attr:`profiles` and add its own assertions;
    the plugin asserts the declared condition after the body returns (or when :meth:`check` is
    called explicitly).
    """

    def __init__(self, spec: CompetenceSpec, model: Model, session: CompetenceSession,
                 test: str = "") -> None:
        self.spec = spec
        self.model = model
        self.test = test
        self._session = session
        self.condition = spec.condition.with_gates(session.gates)
        self._evaluation: Evaluation | None = None
        self._profiles: list[LevelProfile] | None = None
        self._gate: dict[str, Any] | None | bool = False
        self.checked = False
        self.condition_met: bool | None = None

    @property
    def evaluation(self) -> Evaluation:
        if self._evaluation is None:
            self._evaluation = self._session.evaluate(self.spec, self.model)
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

    @property
    def gate(self) -> dict[str, Any] | None:
        """The regression gate against ``--competence-baseline``; ``None`` without one."""
        if self._gate is False:
            self._gate = self._compare_with_baseline()
        return self._gate  # type: ignore[return-value]

    def _compare_with_baseline(self) -> dict[str, Any] | None:
        baseline = self._session.baseline
        if not baseline:
            return None
        from pytest_competence.analysis import instance_table
        from pytest_competence.gate import baseline_from_document, compare_with_baseline

        table = instance_table(self.evaluation)
        presentations = list(self.evaluation.presentations)
        if baseline.endswith(".json"):
            ids = [item.id for item in self.evaluation.items]
            name, correct = baseline_from_document(baseline, self.test, ids)
        else:
            model = self._session.model(baseline)
            if model.name == self.model.name:
                return None  # the baseline itself
            base = instance_table(self._session.evaluate(self.spec, model))
            name = model.name
            correct = {p: base["correct"][:, k] for k, p in enumerate(presentations)}
        return compare_with_baseline(
            table["correct"], table["level"], presentations, correct, name=name,
            alpha=self._session.alpha, margin=self.spec.regression_margin
            if self.spec.regression_margin is not None else self._session.margin,
            bootstrap=self._session.bootstrap, seed=self.spec.seed,
        )

    def check(self) -> None:
        """Assert the declared condition and the regression gate; raise ``CompetenceFailure``.

        With ``--competence-report-only`` the verdict is recorded for the reports instead.
        """
        __tracebackhide__ = True
        from pytest_competence.conditions import CompetenceFailure, failure_message
        from pytest_competence.gate import regression_message

        self.checked = True
        messages = []
        if self.condition.violations(self.profiles):
            messages.append(failure_message(self.condition, self.evaluation, self.profiles))
        gate = self.gate
        if gate and gate["regressions"]:
            messages.append(regression_message(gate))
        self.condition_met = not messages
        if messages and not self._session.report_only:
            raise CompetenceFailure("\n\n".join(messages))

    def result(self, nodeid: str, test: str) -> dict[str, Any]:
        """Every figure of this run, JSON-able, for the reports (see :mod:`.analysis`)."""
        from pytest_competence.analysis import analyze
        from pytest_competence.conditions import failing_case
        from pytest_competence.records import records

        result = analyze(self.evaluation, bootstrap=self._session.bootstrap, seed=self.spec.seed)
        result.update(
            test=test,
            condition=str(self.condition),
            condition_met=self.condition_met,
            report_only=self._session.report_only,
            gate=self.gate if self.checked else None,
            design={"levels": list(self.spec.levels), "pairs": self.spec.pairs,
                    "seed": self.spec.seed, "require": self.spec.require,
                    "gates": self._session.gates, "attempts": self.spec.attempts},
            failing_case=failing_case(self.condition, self.evaluation, self.profiles),
            records_file=self._session.write_records(nodeid, records(self.evaluation)),
        )
        # Plain JSON types only: the result crosses to the xdist controller through execnet,
        # which refuses numpy scalars, and must equal what an archive reloads.
        return json.loads(json.dumps(result))
