"""Per-run plugin state and the evaluation behind each competence test.

:class:`CompetenceSession` lives in ``config.stash`` and is registered as a plugin object, so its
report hooks see this run's results. Results travel from xdist workers to the controller on the
test report (``report.competence``, a JSON-able dict); prompt-level records, which can be
gigabytes, are appended chunk by chunk, as the model answers, to part files that survive a
worker crash — JSON Lines, one record a line, redacted as it is written — and are copied line by
line into the records file when the session ends (:mod:`~pytest_competence.report.records_file`).
An evaluation itself is kept as compact arrays (:mod:`~pytest_competence.compact`), never as
prompts.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pytest_competence.evaluation import Evaluation
    from pytest_competence.models import Model
    from pytest_competence.profile import LevelProfile
    from pytest_competence.spec import CompetenceSpec

__all__ = ["NOT_APPLICABLE", "RESULT", "RUN", "STATE", "CompetenceRun", "CompetenceSession",
           "CompetenceTrainingOverlap"]


class CompetenceSession:
    """Model specs, loaded models, shared evaluations, and the results gathered for the reports."""

    def __init__(self, config: pytest.Config, specs: list[str], aliases: dict[str, str]) -> None:
        from pytest_competence.settings import read_settings

        self.settings = read_settings(config)  # a bad ini value or output path: UsageError now
        self.config = config
        self.specs = specs
        self.aliases = aliases
        self.models: dict[str, Model] = {}
        self.records_files: dict[tuple, str] = {}  # evaluation key → its records part file
        self.fingerprints: dict[tuple, dict[str, Any]] = {}
        self.results: list[dict[str, Any]] = []
        self.not_applicable: list[dict[str, Any]] = []  # test × model pairs skipped as n/a
        self.written: list[tuple[str, str]] = []
        self.document: dict[str, Any] | None = None
        self.bootstrap = self.settings.bootstrap
        self.json_path = config.getoption("competence_json")
        self.records_path = config.getoption("competence_records")
        self.html_path = config.getoption("competence_html")
        self.markdown_path = config.getoption("competence_markdown")
        self.report_only = bool(config.getoption("competence_report_only"))
        self.gates = list(self.settings.gates)
        self.trained_on_lines = [t for t in config.getini("competence_trained_on") if t.strip()]
        self.trained_on: list[Any] = []  # the declared training splits, parsed at configure
        self.diagnose = bool(config.getoption("competence_diagnose"))
        self.baseline = config.getoption("competence_baseline")
        self.baseline_document: dict[str, Any] | None = None  # an archive, loaded at configure
        self.alpha = self.settings.alpha
        self.margin = self.settings.margin
        self.max_error_rate = self.settings.max_error_rate
        self.evaluations: dict[tuple, Evaluation] = {}
        self.skipped_no_model = 0  # competence tests skipped because no model was named
        self.awaiting = 0  # competence tests whose requests went to a batch file
        self.errored: list[str] = []  # one line per test × model that ended in an error
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

    def evaluate(self, spec: CompetenceSpec, model: Model, test: str = "") -> Evaluation:
        """``model`` on ``spec``'s design, once per process (a baseline serves every candidate).

        The design is generated and asked chunk by chunk (:meth:`CompetenceSpec.chunks`); each
        chunk's records go to a part file as it is answered (when a JSON report will hold them:
        :meth:`records_file`), and its prompts to the fingerprint's hash.
        """
        key = (spec.key, spec.attempts, model.name)
        if key not in self.evaluations:
            # The process id too: two xdist workers may both evaluate one test's baseline model.
            label = f"{test}\0{model.name}\0{os.getpid()}"
            self.evaluations[key] = self._stream(spec, model, label, key)
        return self.evaluations[key]

    def _stream(self, spec: CompetenceSpec, model: Model, label: str, key: tuple) -> Evaluation:
        from pytest_competence.evaluate import evaluate_chunks
        from pytest_competence.gate import DesignDigest
        from pytest_competence.progress import expecting
        from pytest_competence.records import RecordsPart

        part = None if self.parts is None else RecordsPart(self.parts, label, self.secrets())
        digest = DesignDigest() if spec.key not in self.fingerprints else None

        def each(items: Any, rows: Any) -> None:
            if digest is not None:
                digest.update(items)
            if part is not None:
                part.append(rows)

        try:
            with expecting(model, spec.prompt_count):
                evaluation = evaluate_chunks(spec.family, spec.chunks, model, spec.attempts,
                                             each=each, bounded=True)
        except BaseException:
            if part is not None:
                part.discard()
            raise
        if digest is not None:
            self.fingerprints[spec.key] = digest.fingerprint(spec)
        if part is not None:
            self.records_files[key] = part.close()
        return evaluation

    def records_file(self, spec: CompetenceSpec, model: Model) -> str | None:
        """The part file holding the records of ``model`` on ``spec``; ``None`` if none."""
        return self.records_files.get((spec.key, spec.attempts, model.name))

    def first_item(self, spec: CompetenceSpec) -> Any:
        """The design's first instance (generated alone where the family allows it)."""
        return next((chunk[0] for chunk in spec.chunks(prompts=1) if chunk), None)

    def fingerprint(self, spec: CompetenceSpec) -> dict[str, Any]:
        """The design's fingerprint (:func:`~pytest_competence.gate.design_fingerprint`), hashed
        once per process: while the design is first asked, or in a pass of its own when it is
        needed before (to check an archived baseline)."""
        if spec.key not in self.fingerprints:
            from pytest_competence.gate import design_fingerprint

            self.fingerprints[spec.key] = design_fingerprint(
                spec, (item for chunk in spec.chunks() for item in chunk))
        return self.fingerprints[spec.key]

    def secrets(self) -> list[str]:
        """The API keys this run knows: the values of ``competence_api_key_env`` and of each
        loaded model's ``key_env`` (see :mod:`~pytest_competence.redaction`)."""
        from pytest_competence.wiring import api_keys

        return api_keys(self.config, *self.models.values())

    def redact(self, text: str) -> str:
        """``text`` without any of :meth:`secrets` (for failure messages: terminal, JUnit)."""
        from pytest_competence.redaction import redact

        return redact(text, self.secrets())

    def training_overlaps(self, spec: CompetenceSpec) -> list[str]:
        """The declared training splits ``spec``'s design shares instances with, described."""
        if not self.trained_on:
            return []
        from pytest_competence.splits import overlap

        first = self.first_item(spec)
        params = dict(first.params) if first is not None else {}
        return [" ".join([f"{s}: seed {spec.seed}", *(f"{k}={params[k]}" for k in s.options
                                                       if k in params)])
                for s in self.trained_on if overlap(s, spec.family.name, params, spec.seed)]

    # -- results -----------------------------------------------------------------------------

    def configure_node(self, node: Any) -> None:
        """Called through the plugin's xdist hook: workers write their records here too."""
        if self.parts is not None:
            node.workerinput["competence_parts"] = str(self.parts)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self.is_worker:
            return
        skipped = getattr(report, "competence_not_applicable", None)
        if skipped is not None:
            self.not_applicable.append(skipped)
            return
        if report.when == "setup" and _skipped_for(report, NO_MODEL):
            self.skipped_no_model += 1
        if report.when == "setup" and _skipped_for(report, AWAITING):
            self.awaiting += 1
        result = getattr(report, "competence", None)
        if result is None or report.when not in ("setup", "call"):
            return
        # A result on a setup report is an evaluation that ended in infrastructure errors.
        outcome = "error" if report.when == "setup" else report.outcome
        result = dict(result, nodeid=report.nodeid, outcome=outcome)
        if outcome == "error":
            self.errored.append(self.redact(f"{report.nodeid}: {result['errors']['message']}"))
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
        from pytest_competence.redaction import redact_all
        from pytest_competence.report import build_document, write_outputs

        parts = {r["nodeid"]: r.get("records_file") for r in self.results}
        document = build_document(self.results, models=self.specs, bootstrap=self.bootstrap,
                                  not_applicable=self.not_applicable)
        # Every key the run knows leaves the document before any report is rendered from it;
        # the records were redacted line by line when their part files were written.
        document = redact_all(document, self.secrets())
        self.document = document
        self.written = write_outputs(
            document, json_path=self.json_path, html_path=self.html_path,
            markdown_path=self.markdown_path, records=self._records(document, parts),
            records_path=self.records_path,
        )

    def _records(self, document: dict[str, Any], parts: dict[str, str | None]
                 ) -> Iterator[tuple[str, str, Iterator[bytes]]]:
        """Each result's records, in document order, read line by line from its part file."""
        from pytest_competence.report.records_file import part_lines

        for result in document["results"]:
            name = parts.get(result["nodeid"])
            if name and self.parts is not None and (self.parts / name).exists():
                yield result["nodeid"], result["model"], part_lines(self.parts / name)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.skipped_no_model:
            terminalreporter.write_line(
                f"competence: {self.skipped_no_model} competence test(s) skipped: no model was "
                f"named; pass --competence-model=SPEC or set competence_default_model",
                yellow=True)
        if self.awaiting:
            export = self.config.getoption("competence_batch_export")
            terminalreporter.write_line(
                f"competence: {self.awaiting} competence test(s) awaiting batch results: run "
                f"{export} (e.g. vllm run-batch -i {export} -o results.jsonl --model MODEL), then "
                f"'competence batch import results.jsonl' and run again without "
                f"--competence-batch-export", yellow=True)
        if self.errored:
            terminalreporter.section("competence errors (infrastructure, not the model's answers)")
            for line in self.errored:
                terminalreporter.write_line(line, red=True)
        if self.document is None:
            return
        from pytest_competence.report.terminal import summary_lines

        terminalreporter.section("competence profiles")
        for line in summary_lines(self.document, verbosity=terminalreporter.verbosity):
            terminalreporter.write_line(line)
        for what, path in self.written:
            terminalreporter.write_line(f"competence {what}: {path}")


NO_MODEL = "no competence model: pass --competence-model=SPEC (or set competence_default_model)"
AWAITING = "awaiting batch results"


def _skipped_for(report: pytest.TestReport, reason: str) -> bool:
    longrepr = report.longrepr
    return report.skipped and isinstance(longrepr, tuple) and reason in str(longrepr[-1])


STATE = pytest.StashKey[CompetenceSession]()
RUN = pytest.StashKey["CompetenceRun"]()
RESULT = pytest.StashKey[dict]()
NOT_APPLICABLE = pytest.StashKey[dict]()  # a test × model pair whose model cannot read the family


class CompetenceTrainingOverlap(UserWarning):
    """A competence test evaluates a design that a declared training split covers."""


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
        from pytest_competence.conditions import parse_condition

        # competence_require is the condition of every test that declares no require= of its own
        self.condition = (spec.condition if spec.require_declared or not session.gates
                          else parse_condition(session.gates))
        self._evaluation: Evaluation | None = None
        self._profiles: list[LevelProfile] | None = None
        self._gate: dict[str, Any] | None | bool = False
        self.checked = False
        self.condition_met: bool | None = None
        self.replay_error: str | None = None

    @property
    def evaluation(self) -> Evaluation:
        if self._evaluation is None:
            self._evaluation = self._session.evaluate(self.spec, self.model, self.test)
        return self._evaluation

    @property
    def evaluated(self) -> bool:
        """Whether the model has answered (the evaluation exists)."""
        return self._evaluation is not None

    def prepare(self) -> None:
        """Check the baseline's design, then ask the model (and a baseline model) now.

        Called by the ``competence`` fixture, so that an outage is a *setup error* of the test —
        pytest's ERROR, never FAILED. Raises :class:`~pytest_competence.gate.BaselineError` for
        an archived baseline of another design (before any model call) and
        :class:`~pytest_competence.evaluate.InfrastructureError` when more than
        ``competence_max_error_rate`` of the prompts ended in infrastructure errors.
        """
        session = self._session
        for where in session.training_overlaps(self.spec):
            warnings.warn(CompetenceTrainingOverlap(
                f"{self.test}: the design overlaps a training split declared in "
                f"competence_trained_on ({where}): it measures held-in performance, not "
                f"transfer"), stacklevel=1)
        if session.baseline_document is not None:
            from pytest_competence.gate import check_design

            check_design(session.baseline, session.baseline_document, self.test,
                         self.fingerprint())
        evaluations = [self.evaluation]
        baseline = session.baseline
        if baseline and session.baseline_document is None:
            model = session.model(baseline)
            if model.name != self.model.name:
                evaluations.append(session.evaluate(self.spec, model, self.test))
        for evaluation in evaluations:
            failed = evaluation.infrastructure_error()
            if failed is not None and failed.count > session.max_error_rate * failed.total:
                raise failed

    def fingerprint(self) -> dict[str, Any]:
        """What makes this test's design: compared with an archived baseline's before gating."""
        return self._session.fingerprint(self.spec)

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
        document = self._session.baseline_document
        if document is not None:
            ids = list(self.evaluation.ids)
            found = baseline_from_document(baseline, document, self.test, ids)
            if found is None:  # a test the archive does not know, e.g. added since
                return {"baseline": baseline, "status": "no baseline", "comparisons": [],
                        "regressions": []}
            name, correct = found
        else:
            model = self._session.model(baseline)
            if model.name == self.model.name:
                return None  # the baseline itself
            base = instance_table(self._session.evaluate(self.spec, model, self.test))
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
            raise CompetenceFailure(self._session.redact("\n\n".join(messages)))

    def result(self, nodeid: str, test: str) -> dict[str, Any]:
        """Every figure of this run, JSON-able, for the reports (see :mod:`.analysis`)."""
        from pytest_competence.analysis import analyze
        from pytest_competence.conditions import failing_case

        result = analyze(self.evaluation, bootstrap=self._session.bootstrap, seed=self.spec.seed,
                         profiles=self.profiles)
        result.update(
            test=test,
            condition=str(self.condition),
            condition_met=self.condition_met,
            report_only=self._session.report_only,
            gate=self.gate if self.checked else None,
            design={"levels": list(self.spec.levels), "pairs": self.spec.pairs,
                    "seed": self.spec.seed, "require": self.condition.declared,
                    "gates": [], "attempts": self.spec.attempts,
                    "fingerprint": self.fingerprint()},
            failing_case=failing_case(self.condition, self.evaluation, self.profiles),
            # Prompt-level records (written while the model answered) only when a JSON report
            # will hold them.
            records_file=self._session.records_file(self.spec, self.model),
        )
        failed = self.evaluation.infrastructure_error()
        if failed is not None:
            result["errors"] = {"count": failed.count, "prompts": failed.total,
                                "message": str(failed),
                                "reasons": [[r, c] for r, c in failed.reasons.most_common(5)]}
        elif self._session.diagnose:
            from pytest_competence.audit.diagnose import diagnose

            result["diagnosis"] = diagnose(self.evaluation, seed=self.spec.seed)
        # Plain JSON types only: the result crosses to the xdist controller through execnet,
        # which refuses numpy scalars, and must equal what an archive reloads.
        # No API key in it: it becomes JUnit properties and travels to the controller.
        from pytest_competence.redaction import redact_all

        # The per-instance part (ids, bits) is plain already: a million ids are not copied.
        order = list(result)
        instances = result.pop("instances")
        plain = json.loads(json.dumps(result))
        plain["instances"] = instances
        return redact_all({k: plain[k] for k in order}, self._session.secrets())
