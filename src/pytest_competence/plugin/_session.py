"""Per-run plugin state: the models, the shared evaluations, and the results for the reports.

:class:`CompetenceSession` lives in ``config.stash`` and is registered as a plugin object, so its
report hooks see this run's results (the evaluation behind one test is a
:class:`~pytest_competence.engine.run.CompetenceRun`). Results travel from xdist workers
to the controller on the test report (``report.competence``, a JSON-able dict); prompt-level
records, which can be gigabytes, are appended chunk by chunk, as the model answers, to part
files that survive a worker crash — JSON Lines, redacted as they are written — and are copied
into the records file when the session ends (:mod:`~pytest_competence.report._records_file`).
An evaluation itself is kept as compact arrays (:mod:`~pytest_competence.engine.evaluation`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:
    from pytest_competence.engine.evaluation import Evaluation
    from pytest_competence.engine.export_files import Target
    from pytest_competence.engine.result import Result
    from pytest_competence.engine.spec import CompetenceSpec
    from pytest_competence.models import Model
    from pytest_competence.plugin._lookahead import Lookahead
    from pytest_competence.training.splits import Split

__all__ = [
    "NOT_APPLICABLE",
    "NO_MODEL",
    "RESULT",
    "STATE",
    "CompetenceSession",
]


class CompetenceSession:
    """Model specs, loaded models, shared evaluations, and the results gathered for the reports."""

    def __init__(self, config: pytest.Config, specs: list[str], aliases: dict[str, str]) -> None:
        from pytest_competence.plugin._options import read_settings

        #: Every run-wide setting, checked once: a bad ini value or output path is a
        #: UsageError now, before any model is loaded.
        self.settings = read_settings(config)
        self.config = config
        self.specs = specs
        self.aliases = aliases
        self.models: dict[str, Model] = {}
        #: Where the models came from: --competence-model, or competence_default_model.
        self.models_option = "--competence-model"
        self.records_files: dict[tuple, str] = {}  # evaluation key → its records part file
        self.fingerprints: dict[tuple, dict[str, Any]] = {}
        self.results: list[Result] = []
        self.not_applicable: list[dict[str, Any]] = []  # test × model pairs skipped as n/a
        self.written: list[tuple[str, str]] = []
        self.document: dict[str, Any] | None = None
        self.trained_on: list[Split] = []  # settings.trained_on, parsed at configure
        self.baseline_document: dict[str, Any] | None = None  # an archive, loaded at configure
        self.evaluations: dict[tuple, Evaluation] = {}
        self.skipped_no_model = 0  # competence tests skipped because no model was named
        self.awaiting = 0  # competence tests whose requests went to a batch file
        self.batch_targets: dict[str, Target] = {}  # the batch file set of each exporting spec
        self.lookahead: Lookahead | None = None  # asks designs ahead (set by start_session)
        self.problems: list[str] = []  # what the run could not do at its end, one line each
        self.interrupted = False  # Ctrl-C, or a pytest.exit: the reports hold what finished
        self.stopped_in: str | None = None  # the competence test a Ctrl-C stopped, if one did
        worker = getattr(config, "workerinput", None)
        self.is_worker = worker is not None
        self.parts: Path | None = None
        self._own_parts = False
        #: This run's id, one for the controller and its xdist workers: the example
        #: database tells a case saved by this run from one an earlier run saved.
        self.run_id: str = (worker or {}).get("competence_run") or uuid.uuid4().hex
        if worker is not None:
            parts = worker.get("competence_parts")
            self.parts = Path(parts) if parts else None
        elif self.settings.json_path:
            self.parts = Path(tempfile.mkdtemp(prefix="competence-parts-"))
            self._own_parts = True

    def check_settings(self) -> None:
        """The settings that would otherwise fail per test, after the models ran, checked now:
        the conditions of ``competence_require`` and the splits of ``competence_trained_on``
        (the models and the baseline: :mod:`._start`). ``pytest.UsageError`` on the first bad
        one."""
        settings = self.settings
        if settings.gates:
            from pytest_competence.engine.conditions import parse_condition
            from pytest_competence.protocol import InvalidArgument

            try:
                parse_condition(list(settings.gates))
            except InvalidArgument as exc:
                raise pytest.UsageError(f"competence_require: {exc}") from None
        if settings.trained_on:
            from pytest_competence.protocol import InvalidArgument
            from pytest_competence.training.splits import split

            try:
                self.trained_on = [split(line.strip()) for line in settings.trained_on]
            except InvalidArgument as exc:
                raise pytest.UsageError(f"competence_trained_on: {exc}") from None

    # -- models and designs ------------------------------------------------------------------

    def resolve(self, spec: str) -> Model:
        from pytest_competence.models import resolve_model
        from pytest_competence.plugin._wiring import backend_settings, wire

        model = resolve_model(spec, self.aliases, settings=backend_settings(self.config))
        return wire(self.config, model)  # the response cache and the progress line

    def model(self, spec: str, option: str | None = None) -> Model:
        """The model of ``spec``, resolved on first use (a ``py:`` module is imported now: its
        spec was checked at configure). A module that fails to import is a model that cannot
        answer (:class:`~.models.Unloadable`): each test that needs it is an infrastructure error with
        that message, naming ``option``, archived like any other; it is imported once."""
        if spec not in self.models:
            from pytest_competence.models import ModelSpecError, Unloadable

            try:
                self.models[spec] = self.resolve(spec)
            except (ModelSpecError, ImportError) as exc:  # ImportError: a backend's extra
                named = option or self.models_option
                self.models[spec] = Unloadable(spec, self.redact(f"{named}: {exc}"))
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
        from pytest_competence.engine.evaluate import evaluate_chunks
        from pytest_competence.engine.gate import DesignDigest
        from pytest_competence.engine.progress import expecting
        from pytest_competence.engine.records import RecordsPart
        from pytest_competence.plugin._terminal import per_batch

        part = None if self.parts is None else RecordsPart(self.parts, label, self.secrets())
        digest = DesignDigest() if spec.key not in self.fingerprints else None

        def each(items: Any, rows: Any) -> None:
            if digest is not None:
                digest.update(items)
            if part is not None:
                part.append(rows)
            advance(sum(len(row) for row in rows) * spec.attempts)

        lookahead = self.lookahead
        try:
            with (
                expecting(model, spec.prompt_count),
                per_batch(self.config, model, spec.prompt_count) as advance,
            ):
                # Asked ahead where the model's answers come from a server (._lookahead).
                asked = lookahead.pipeline(spec, model, key) if lookahead is not None else None
                evaluation = evaluate_chunks(
                    spec.family,
                    spec.chunks,
                    model,
                    spec.attempts,
                    each=each,
                    bounded=True,
                    asked=asked,
                    record_broken=True,  # a broken model is an error of every report
                )
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
        """The design's fingerprint (:func:`~pytest_competence.engine.gate.design_fingerprint`), hashed
        once per process: while the design is first asked, or in a pass of its own when it is
        needed before (to check an archived baseline)."""
        if spec.key not in self.fingerprints:
            from pytest_competence.engine.gate import design_fingerprint

            self.fingerprints[spec.key] = design_fingerprint(
                spec, (item for chunk in spec.chunks() for item in chunk)
            )
        return self.fingerprints[spec.key]

    def secrets(self) -> list[str]:
        """The API keys this run knows: the values of ``competence_api_key_env`` and of each
        loaded model's ``key_env`` (see :mod:`~pytest_competence.engine.redaction`)."""
        from pytest_competence.plugin._wiring import api_keys

        return api_keys(self.config, *self.models.values())

    def redact(self, text: str) -> str:
        """``text`` without any of :meth:`secrets` (for failure messages: terminal, JUnit)."""
        from pytest_competence.engine.redaction import redact

        return redact(text, self.secrets())

    def training_overlaps(self, spec: CompetenceSpec) -> list[str]:
        """The declared training splits ``spec``'s design shares instances with, described."""
        if not self.trained_on:
            return []
        from pytest_competence.training.splits import overlap

        first = self.first_item(spec)
        params = dict(first.params) if first is not None else {}
        return [
            " ".join(
                [f"{s}: seed {spec.seed}", *(f"{k}={params[k]}" for k in s.options if k in params)]
            )
            for s in self.trained_on
            if overlap(s, spec.family.name, params, spec.seed)
        ]

    # -- results -----------------------------------------------------------------------------

    def configure_node(self, node: Any) -> None:
        """Called through the plugin's xdist hook: workers share the run's id, and write their
        records here too."""
        node.workerinput["competence_run"] = self.run_id
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
        from pytest_competence.engine.batch import AWAITING

        if report.when == "setup" and _skipped_for(report, AWAITING):
            self.awaiting += 1
        result = getattr(report, "competence", None)
        if result is None or report.when not in ("setup", "call"):
            return
        # A result on a setup report is an evaluation that ended in infrastructure errors.
        outcome = "error" if report.when == "setup" else report.outcome
        result = cast("Result", dict(result, nodeid=report.nodeid, outcome=outcome))
        self.results.append(result)
        self.config.hook.pytest_competence_profile(config=self.config, result=result)

    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Write the reports; a run that could not write one, or whose baseline archive
        compared nothing, gets one line per problem after the summary and an exit status that
        says so (:data:`UNWRITTEN`, :data:`NOTHING_GATED`)."""
        if self.is_worker:
            return
        if self.batch_targets:
            from pytest_competence.engine.export_files import remove_empty

            remove_empty(self.batch_targets.values())
        failed: list[tuple[str, str, str]] = []
        try:
            if self.results or self.not_applicable:  # every pair the run saw is reported
                self._write_reports(failed)
        finally:
            if self._own_parts and self.parts is not None:
                shutil.rmtree(self.parts, ignore_errors=True)
        problems = [
            (UNWRITTEN, f"competence: {_FILES.get(what, what)} not written: {path}: {why}")
            for what, path, why in failed
        ]
        nothing = self._nothing_gated()
        if nothing:
            problems.append((NOTHING_GATED, nothing))
        if self.not_applicable and not self.results and not self.awaiting:
            problems.append((NOTHING_GATED, self._nothing_evaluated()))
        self.problems = [line for _, line in problems]
        if problems and session.exitstatus in _OVERRIDABLE:
            session.exitstatus = max(code for code, _ in problems)

    def _nothing_evaluated(self) -> str:
        """Why a run whose every competence test × model was n/a is not green: the models named
        read none of its suites' prompts (a shortcut policy of another family, say)."""
        models = list(dict.fromkeys(r["model"] for r in self.not_applicable))
        families = list(dict.fromkeys(r["family"] for r in self.not_applicable))
        return (
            f"competence: nothing was evaluated: every competence test × model was n/a "
            f"({_listed(models)} read no {_listed(families)} prompts). Name a model that reads "
            f"these suites, e.g. --competence-model=ref:ideal"
        )

    def _nothing_gated(self) -> str | None:
        """Why ``--competence-baseline`` gated no test of this run, or ``None``: an archive
        that shares no test with it (almost always the wrong file), or a model that is the only
        one under test (not gated against itself)."""
        document = self.baseline_document
        gated = [(r, gate) for r in self.results if (gate := r.get("gate"))]
        if not gated or any(g.get("status") not in _NOT_GATED for _, g in gated):
            return None
        if document is None:
            return (
                f"--competence-baseline {self.settings.baseline}: it is the only model under "
                f"test, so nothing was gated (a model is not gated against itself). Name the "
                f"candidate with --competence-model and the baseline with --competence-baseline"
            )
        tests = list(dict.fromkeys(r["test"] for r in document["results"]))
        models = list(dict.fromkeys(r["model"] for r in document["results"]))
        ours = list(dict.fromkeys(r["test"] for r, _ in gated))
        return (
            f"--competence-baseline {self.settings.baseline}: the archive shares no test "
            f"with this run, so nothing was gated. It holds {len(document['results'])} "
            f"result(s) of {_listed(tests)} for {_listed(models)}; this run's competence "
            f"tests are {_listed(ours)}. Pass the --competence-json archive of this suite, "
            f"or drop --competence-baseline"
        )

    def _write_reports(self, failed: list[tuple[str, str, str]]) -> None:
        from pytest_competence.engine.redaction import redact_all
        from pytest_competence.report import build_document, write_outputs

        parts = {r["nodeid"]: r.get("records_file") for r in self.results}
        document = build_document(
            self.results,
            models=self.specs,
            bootstrap=self.settings.bootstrap,
            not_applicable=self.not_applicable,
        )
        # Every key the run knows leaves the document before any report is rendered from it;
        # the records were redacted line by line when their part files were written.
        document = redact_all(document, self.secrets())
        self.document = document
        self.written = write_outputs(
            document,
            json_path=self.settings.json_path,
            html_path=self.settings.html_path,
            markdown_path=self.settings.markdown_path,
            records=self._records(document, parts),
            records_path=self.settings.records_path,
            failed=failed,
        )

    def _records(
        self, document: dict[str, Any], parts: dict[str, str | None]
    ) -> Iterator[tuple[str, str, Iterator[bytes]]]:
        """Each result's records, in document order, read line by line from its part file."""
        from pytest_competence.report._records_file import part_lines

        for result in document["results"]:
            name = parts.get(result["nodeid"])
            if name and self.parts is not None and (self.parts / name).exists():
                yield result["nodeid"], result["model"], part_lines(self.parts / name)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.skipped_no_model:
            terminalreporter.write_line(
                f"competence: {self.skipped_no_model} competence test(s) skipped: no model was "
                f"named; pass --competence-model=SPEC or set competence_default_model",
                yellow=True,
            )
        if self.awaiting:
            from pytest_competence.engine.export_files import summary_lines as batch_lines

            for line in batch_lines(self.batch_targets.values(), self.awaiting):
                terminalreporter.write_line(line, yellow=True)
        if self.interrupted and (self.results or self.not_applicable or self.stopped_in):
            terminalreporter.write_line(
                f"competence: the run was interrupted; the reports hold the "
                f"{len(self.results)} test × model result(s) that finished",
                yellow=True,
            )
        from pytest_competence.report._terminal import counts_line, summary_lines

        if self.document is not None:
            terminalreporter.section("competence profiles")
            verbosity = terminalreporter.verbosity
            for line in summary_lines(self.document, verbosity=verbosity, errors_shown=True):
                terminalreporter.write_line(line)
            for what, path in self.written:
                terminalreporter.write_line(f"competence {what}: {path}")
        if self.results or self.not_applicable:  # beside pytest's counts, in competence terms
            pairs = {"results": self.results, "not_applicable": self.not_applicable}
            terminalreporter.write_line(counts_line(pairs), bold=True)
        for line in self.problems:
            terminalreporter.write_line(line, red=True, bold=True)


#: The exit status of a run that could not write a report it was asked for: pytest's own
#: when its ``--junitxml`` file cannot be written (INTERNAL_ERROR).
UNWRITTEN = pytest.ExitCode.INTERNAL_ERROR
#: The exit status of a run whose archived baseline shares no test with it: the wrong file
#: was named on the command line (USAGE_ERROR).
NOTHING_GATED = pytest.ExitCode.USAGE_ERROR
#: The gate statuses of a test × model that was not gated.
_NOT_GATED = ("no baseline", "baseline itself")
#: The statuses those replace; an interrupted run, or one that already failed to start, stays.
_OVERRIDABLE = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


_FILES = {
    "JSON": "JSON report (--competence-json)",
    "records": "records file (--competence-records)",
    "Markdown": "Markdown summary (--competence-markdown)",
    "HTML": "HTML report (--competence-html)",
    "GITHUB_STEP_SUMMARY": "step summary ($GITHUB_STEP_SUMMARY)",
}


def _listed(names: list[str], shown: int = 3) -> str:
    """``'a', 'b', 'c' and 2 more``."""
    head = ", ".join(repr(n) for n in names[:shown])
    return head + (f" and {len(names) - shown} more" if len(names) > shown else "")


NO_MODEL = "no competence model: pass --competence-model=SPEC (or set competence_default_model)"


def _skipped_for(report: pytest.TestReport, reason: str) -> bool:
    longrepr = report.longrepr
    return report.skipped and isinstance(longrepr, tuple) and reason in str(longrepr[-1])


STATE = pytest.StashKey[CompetenceSession]()
RESULT = pytest.StashKey["Result"]()
NOT_APPLICABLE = pytest.StashKey[dict]()  # a test × model pair whose model cannot read the family
