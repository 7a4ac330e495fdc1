"""``pytest --competence-audit``: audit every competence suite instead of running a model.

Registered by the main plugin only when the option is given. At collection, each competence
test's items (one per model) are replaced by one :class:`AuditItem` per test, which runs the
test's declared design against the reference-policy zoo (:func:`~._suite.audit_spec`; no model
is called; other tests that take ``competence_model`` are deselected too, since they would call
one). A surviving shortcut is a :class:`CompetenceAuditWarning` naming the policy and a
witness cell; the audit travels on the test report (to the xdist controller too) and the
terminal summary prints one ``competence audit`` section. ``--competence-json`` and
``--competence-html`` receive the audit document and page (:mod:`._render`).
"""

from __future__ import annotations

import warnings
from collections.abc import Generator
from typing import Any

import pytest

from pytest_competence.audit import CompetenceAuditWarning

__all__ = ["AuditItem", "AuditPlugin"]


class AuditItem(pytest.Item):
    """The audit of one competence test (all its models share one design)."""

    def __init__(
        self, *, marker: pytest.Mark, overrides: dict[str, Any], test: str, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.marker = marker
        self.overrides = overrides
        self.test = test
        self.audit: dict[str, Any] | None = None

    def runtest(self) -> None:
        from pytest_competence.audit._suite import audit_spec
        from pytest_competence.engine.spec import spec_from_marker
        from pytest_competence.protocol import InvalidArgument

        try:
            spec = spec_from_marker(self.marker.args, self.marker.kwargs, self.overrides)
        except InvalidArgument as exc:
            message = f"{self.test}: @pytest.mark.competence: {exc}"
        else:
            plugin = self.config.pluginmanager.get_plugin("competence-audit")
            cache = plugin.designs if plugin is not None else {}
            if spec.key not in cache:  # e.g. a release gate over the base grid's design
                try:
                    cache[spec.key] = audit_spec(spec)
                except InvalidArgument as exc:  # a family's audit components it cannot use
                    pytest.fail(f"{self.test}: competence audit: {exc}", pytrace=False)
            self.audit = cache[spec.key]
            for s in self.audit.get("survivors", []):
                where = (
                    f"; a cell that catches it: {s['witness']} (add {', '.join(s['needs'])})"
                    if s["witness"]
                    else "; no candidate cell separates it from ref:ideal"
                )
                warnings.warn(
                    CompetenceAuditWarning(
                        f"{self.test}: the non-competent policy {s['policy']} passes this suite "
                        f"while it claims competence{where}"
                    ),
                    stacklevel=1,
                )
            return
        pytest.fail(message, pytrace=False)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"competence audit of {self.test}"


class AuditPlugin:
    """Swaps competence items for audit items and prints the audits at the end."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.audits: dict[str, dict[str, Any]] = {}
        self.written: list[tuple[str, str]] = []
        self.designs: dict[tuple, dict[str, Any]] = {}  # spec.key → audit, in this process

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        from pytest_competence.engine.spec import overridable

        out: list[pytest.Item] = []
        seen: set[str] = set()
        dropped: list[pytest.Item] = []
        for item in items:
            marker = item.get_closest_marker("competence")
            callspec = getattr(item, "callspec", None)
            if callspec is None or "competence_model" not in callspec.params:
                out.append(item)
                continue
            dropped.append(item)  # it would call a model: the audit calls none
            if marker is None:  # e.g. a Hypothesis test taking competence_model: nothing to audit
                continue
            # The model's test id; "no-model" when none was named (the audit needs none).
            model = callspec.params["competence_model"] or "no-model"
            name = item.name.replace(model, "audit", 1)
            if name in seen:
                continue
            seen.add(name)
            names = overridable(marker.args, marker.kwargs)
            overrides = {k: v for k, v in callspec.params.items() if k in names}
            test = item.nodeid.replace(model, "*", 1)
            assert item.parent is not None  # a test function always has its module or class
            out.append(
                AuditItem.from_parent(
                    item.parent, name=name, marker=marker, overrides=overrides, test=test
                )
            )
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = out

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo
    ) -> Generator[None, Any, Any]:
        report = yield
        if call.when == "call" and isinstance(item, AuditItem) and item.audit is not None:
            report.competence_audit = {"test": item.test, **item.audit}
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "competence_audit", None)
        if report.when == "call" and isinstance(data, dict):
            self.audits[data["test"]] = data

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.audits:
            return
        from pytest_competence.audit._suite import summary_lines

        terminalreporter.section("competence audit")
        survivors = 0
        for test in sorted(self.audits):
            survivors += len(self.audits[test].get("survivors", []))
            for line in summary_lines(test, self.audits[test]):
                terminalreporter.write_line(line)
        terminalreporter.write_line(
            f"{len(self.audits)} suites audited against the reference policies (no model "
            f"called); {survivors} surviving shortcut(s)"
        )
        for what, path in self.written:
            terminalreporter.write_line(f"competence {what}: {path}")

    def pytest_sessionfinish(self) -> None:
        if getattr(self.config, "workerinput", None) is not None or not self.audits:
            return
        from pytest_competence.audit._render import audit_document, write_audit

        self.written = write_audit(
            audit_document(self.audits),
            json_path=self.config.getoption("competence_json"),
            html_path=self.config.getoption("competence_html"),
        )
