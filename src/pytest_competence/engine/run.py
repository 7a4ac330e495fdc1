"""The evaluation behind one competence test and one model: asked, checked, and reported.

The ``competence`` fixture returns a :class:`CompetenceRun`; its :attr:`~CompetenceRun.evaluation`
and :attr:`~CompetenceRun.profiles` are the test body's to read. The plugin asks the model at
setup (:meth:`CompetenceRun.prepare`), checks the condition and the regression gate after the body
(:meth:`CompetenceRun.check`) and sends :meth:`CompetenceRun.result` to the reports — with the
probes of a probed test (:attr:`CompetenceRun.probes`), read after the verdict, failing or not.
"""

from __future__ import annotations

import json
import warnings
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from pytest_competence.engine.evaluation import Evaluation, InfrastructureError
    from pytest_competence.engine.profile import LevelProfile
    from pytest_competence.engine.result import Result
    from pytest_competence.engine.spec import CompetenceSpec
    from pytest_competence.models import Model
    from pytest_competence.plugin._session import CompetenceSession
    from pytest_competence.probe import ProbeReport, ProbeSettings

__all__ = [
    "CompetenceNotReplayed",
    "CompetenceRun",
    "CompetenceTrainingOverlap",
    "CompetenceUnderpoweredGate",
    "errors_block",
]


class CompetenceTrainingOverlap(UserWarning):
    """A competence test evaluates a design that a declared training split covers."""


class CompetenceNotReplayed(UserWarning):
    """A passing test's saved cases were not replayed: ``--competence-cache=read`` asks the
    response cache only, and it holds no answers for them."""


class CompetenceUnderpoweredGate(UserWarning):
    """A test's release gate cannot detect a drop as small as its declared margin."""


class CompetenceRun:
    """The evaluation behind one competence test and one model; computed on first use.

    The test body may read :attr:`evaluation` and :attr:`profiles` and add its own assertions;
    the plugin asserts the declared condition after the body returns (or when :meth:`check` is
    called explicitly).
    """

    def __init__(
        self,
        spec: CompetenceSpec,
        model: Model,
        session: CompetenceSession,
        test: str = "",
        probe: ProbeSettings | None = None,
    ) -> None:
        self.spec = spec
        self.model = model
        self.test = test
        #: The run's :class:`~pytest_competence.plugin._session.CompetenceSession`: its settings,
        #: models and shared evaluations.
        self.session = session
        from pytest_competence.engine.conditions import parse_condition

        # competence_require is the condition of every test that declares no require= of its own
        self.condition = (
            spec.condition
            if spec.require_declared or not session.settings.gates
            else parse_condition(session.settings.gates)
        )
        self._evaluation: Evaluation | None = None
        self._profiles: list[LevelProfile] | None = None
        self._gate: dict[str, Any] | None | bool = False
        self.checked = False
        self.condition_met: bool | None = None
        self.replay_error: str | None = None
        #: How this test's model is probed after the verdict (``None``: it is not).
        self.probe = probe
        self._probes: ProbeReport | None = None

    @property
    def evaluation(self) -> Evaluation:
        if self._evaluation is None:
            self._evaluation = self.session.evaluate(self.spec, self.model, self.test)
        return self._evaluation

    @property
    def evaluated(self) -> bool:
        """Whether the model has answered (the evaluation exists)."""
        return self._evaluation is not None

    def prepare(self) -> None:
        """Check the baseline's design, then ask the model (and a baseline model) now.

        Called by the ``competence`` fixture, so that an outage is a *setup error* of the test —
        pytest's ERROR, never FAILED. Raises :class:`~pytest_competence.engine.gate.BaselineError` for
        an archived baseline of another design (before any model call) and
        :class:`~pytest_competence.engine.evaluate.InfrastructureError` when more than
        ``competence_max_error_rate`` of the prompts ended in infrastructure errors.
        """
        session = self.session
        for where in session.training_overlaps(self.spec):
            warnings.warn(
                CompetenceTrainingOverlap(
                    f"{self.test}: the design overlaps a training split declared in "
                    f"competence_trained_on ({where}): it measures held-in performance, not "
                    f"transfer"
                ),
                stacklevel=1,
            )
        if session.baseline_document is not None:
            from pytest_competence.engine.gate import check_design

            check_design(
                str(session.settings.baseline),
                session.baseline_document,
                self.test,
                self.fingerprint(),
            )
        evaluations = [self.evaluation]
        baseline = session.settings.baseline
        if baseline and session.baseline_document is None:
            model = session.model(baseline, "--competence-baseline")
            if model.name != self.model.name:
                evaluations.append(session.evaluate(self.spec, model, self.test))
        for evaluation in evaluations:
            failed = evaluation.infrastructure_error()
            if failed is not None and failed.count > session.settings.max_error_rate * failed.total:
                raise failed
        self._check_power()

    def _check_power(self) -> None:
        """Compute the gate now; an underpowered one warns, or with ``competence_underpowered
        = error`` (outside ``--competence-report-only``) is the test's error."""
        gate = self.gate
        power = (gate or {}).get("power")
        if not gate or not power or not power["underpowered"]:
            return
        from pytest_competence.engine.gate import UnderpoweredGate, underpowered_message

        settings = self.session.settings
        text = f"{self.test}: {underpowered_message(gate)}"
        if settings.underpowered == "error" and not settings.report_only:
            raise UnderpoweredGate(
                f"{text}. Declare more pairs= or a larger regression_margin=, or set "
                f"competence_underpowered = note to gate anyway"
            )
        warnings.warn(CompetenceUnderpoweredGate(text), stacklevel=1)

    def fingerprint(self) -> dict[str, Any]:
        """What makes this test's design: compared with an archived baseline's before gating."""
        return self.session.fingerprint(self.spec)

    @property
    def profiles(self) -> list[LevelProfile]:
        if self._profiles is None:
            from pytest_competence.engine.profile import profile

            self._profiles = profile(self.evaluation)
        return self._profiles

    @property
    def gate(self) -> dict[str, Any] | None:
        """The release gate against ``--competence-baseline``; ``None`` without one."""
        if self._gate is False:
            self._gate = self._compare_with_baseline()
        return self._gate  # type: ignore[return-value]

    def _compare_with_baseline(self) -> dict[str, Any] | None:
        baseline = self.session.settings.baseline
        if not baseline:
            return None
        from pytest_competence.engine.analysis import instance_table
        from pytest_competence.engine.gate import (
            baseline_from_document,
            compare_with_baseline,
        )

        table = instance_table(self.evaluation)
        presentations = list(self.evaluation.presentations)
        document = self.session.baseline_document
        if document is not None:
            ids = list(self.evaluation.ids)
            found = baseline_from_document(baseline, document, self.test, ids)
            if found is None:  # a test the archive does not know, e.g. added since
                return {
                    "baseline": baseline,
                    "status": "no baseline",
                    "comparisons": [],
                    "regressions": [],
                }
            name, correct = found
        else:
            model = self.session.model(baseline, "--competence-baseline")
            if model.name == self.model.name:  # said, not silently skipped
                return {
                    "baseline": model.name,
                    "status": "baseline itself",
                    "comparisons": [],
                    "regressions": [],
                }
            base = instance_table(self.session.evaluate(self.spec, model, self.test))
            name = model.name
            correct = {p: base["correct"][:, k] for k, p in enumerate(presentations)}
        settings = self.session.settings
        test, margin = self.spec.release_gate(settings.gate, settings.margin)
        return compare_with_baseline(
            table["correct"],
            table["level"],
            presentations,
            correct,
            name=name,
            alpha=settings.alpha,
            margin=margin,
            bootstrap=settings.bootstrap,
            seed=self.spec.seed,
            test=test,
        )

    def check(self) -> None:
        """Assert the declared condition and the release gate; raise ``CompetenceFailure``.

        With ``--competence-report-only`` the verdict is recorded for the reports instead.
        """
        __tracebackhide__ = True
        from pytest_competence.engine.conditions import CompetenceFailure
        from pytest_competence.engine.failure import failure_message
        from pytest_competence.engine.gate import gate_message, gate_passed

        self.checked = True
        messages = []
        if self.condition.violations(self.profiles):
            messages.append(failure_message(self.condition, self.evaluation, self.profiles))
        gate = self.gate
        if gate and not gate_passed(gate):
            messages.append(gate_message(gate))
        self.condition_met = not messages
        if messages and not self.session.settings.report_only:
            raise CompetenceFailure(self.session.redact("\n\n".join(messages)))

    @property
    def probes(self) -> ProbeReport:
        """The answer-position readings of this model on exactly the design it evaluated
        (:func:`pytest_competence.probe.probe_evaluation`), computed on first use with the
        test's probe settings (the defaults when it has none). Raises
        :class:`~pytest_competence.probe.ProbeUnavailable` for a model without in-process
        internals, and ``ValueError`` for settings the model or design cannot take."""
        if self._probes is None:
            from pytest_competence.probe import probe_evaluation, probe_settings

            settings = self.probe or probe_settings()
            patch = settings.patch
            if not settings.patch_declared and patch not in self.spec.presentations:
                patch = None  # the default presentation is not in this design: no patching
            self._probes = probe_evaluation(
                self.evaluation,
                self.model,
                patch=patch,
                B=self.session.settings.bootstrap,
                **settings.options(),
            )
        return self._probes

    def probe_block(self) -> dict[str, Any]:
        """The ``probes`` entry of the result: the readings (``status`` ``"ok"``), ``"n/a"``
        with the reason for a model without internals, or ``"error"`` with the setting the
        model or the design cannot take (the verdict then fails the test with it)."""
        from pytest_competence.probe import ProbeUnavailable, probe_settings

        settings = (self.probe or probe_settings()).to_dict()
        try:
            report = self.probes
        except ProbeUnavailable as exc:
            return {"status": "n/a", "reason": str(exc), "settings": settings}
        except ValueError as exc:
            return {"status": "error", "reason": str(exc), "settings": settings}
        block: dict[str, Any] = {"status": "ok", "settings": settings, **report.to_dict()}
        if report.patch is None and report.patching is None:
            block["patch_reason"] = (
                "patching is off (patch=None)"
                if self.probe is not None and self.probe.patch_declared
                else f"the design has no {settings['patch']!r} presentation to patch into"
            )
        return block

    def result(self, nodeid: str, test: str, *, probes: bool = False) -> Result:
        """Every figure of this run, JSON-able, for the reports (see :mod:`.analysis`); with
        ``probes``, a probed test's ``probes`` block too (:meth:`probe_block`)."""
        from pytest_competence.engine.analysis import analyze
        from pytest_competence.engine.failure import failing_case
        from pytest_competence.models.identity import model_identity

        settings = self.session.settings
        result: Result = {
            **analyze(
                self.evaluation,
                bootstrap=settings.bootstrap,
                seed=self.spec.seed,
                profiles=self.profiles,
            ),
            "test": test,
            "condition": str(self.condition),
            "condition_met": self.condition_met,
            "report_only": settings.report_only,
            "gate": self.gate if self.checked else None,
            "design": {
                "levels": list(self.spec.levels),
                "pairs": self.spec.pairs,
                "seed": self.spec.seed,
                "require": self.condition.declared,
                "gates": [],
                "attempts": self.spec.attempts,
                "fingerprint": self.fingerprint(),
            },
            "failing_case": failing_case(self.condition, self.evaluation, self.profiles),
            # Which model answered, beyond its name: competence merge refuses archives that
            # bind one name to two models.
            "model_identity": model_identity(self.model),
            "sampling": {  # what the greedy-server warning reads (report._warnings)
                "temperature": _temperature(self.model),
                "attempts": self.spec.attempts,
                "compared": self.evaluation.attempts_compared,
                "varied": self.evaluation.attempts_varied,
            },
            "bounds": self.condition.bounds(self.profiles),
            # Prompt-level records (written while the model answered) only when a JSON report
            # will hold them.
            "records_file": self.session.records_file(self.spec, self.model),
        }
        if probes and self.probe is not None:
            result["probes"] = self.probe_block()
        failed = self.evaluation.infrastructure_error()
        if failed is not None:
            result["errors"] = errors_block(failed)
        elif settings.diagnose:
            from pytest_competence.audit import diagnose

            result["diagnosis"] = diagnose(self.evaluation, seed=self.spec.seed)
        # Plain JSON types only: the result crosses to the xdist controller through execnet,
        # which refuses numpy scalars, and must equal what an archive reloads.
        # No API key in it: it becomes JUnit properties and travels to the controller.
        from pytest_competence.engine.redaction import redact_all

        # The per-instance part (ids, bits) is plain already: a million ids are not copied.
        order = list(result)
        plain = json.loads(json.dumps({k: v for k, v in result.items() if k != "instances"}))
        plain["instances"] = result["instances"]
        return cast("Result", redact_all({k: plain[k] for k in order}, self.session.secrets()))


def errors_block(failed: InfrastructureError) -> dict[str, Any]:
    """A result's ``errors``: the count, the prompts, the message and the five commonest
    reasons of ``failed``."""
    return {
        "count": failed.count,
        "prompts": failed.total,
        "message": str(failed),
        "reasons": [[r, c] for r, c in failed.reasons.most_common(5)],
    }


def _temperature(model: Model) -> float | None:
    """The sampling temperature a backend was given (``decoding``); ``None`` when it has none."""
    decoding = getattr(model, "decoding", None)
    value = decoding.get("temperature") if isinstance(decoding, dict) else None
    return float(value) if isinstance(value, (int, float)) else None
