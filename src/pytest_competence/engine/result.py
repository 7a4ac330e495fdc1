"""The result of one test × model, typed: what the reports, the JUnit properties and the
``pytest_competence_profile`` hook receive, and what the ``results`` entries of the JSON report
hold (``docs/results-schema.md`` documents every field).

A result is a plain JSON-able ``dict`` at run time — it crosses from xdist workers to the
controller and is written and reloaded as JSON — so its type is a :class:`~typing.TypedDict`,
checked by mypy wherever a result is built or read by key. The per-level rows and the summary
keep their documented shape as ``dict[str, Any]``: families add entries of their own to them.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["Analysis", "Instances", "Result"]


class Instances(TypedDict):
    """Per-instance correctness, in design order: one character ``0``/``1`` per instance."""

    ids: list[str]
    level: list[int]
    correct: dict[str, str]  # presentation → bits
    valid: dict[str, str]


class Analysis(TypedDict):
    """Every figure of one evaluation (:func:`pytest_competence.engine.analysis.analyze`)."""

    model: str
    family: str  # the family's repr: its configuration
    family_name: str
    level_name: str  # what the level n counts: "n", "depth", "distractors", "steps", …
    presentations: list[str]
    levels: list[dict[str, Any]]
    summary: dict[str, Any]
    instances: Instances


class _Verdict(Analysis):
    test: str  # the node id with the model replaced by ``*``
    condition: str
    condition_met: bool | None  # None: not checked (an error before the verdict)
    report_only: bool
    gate: dict[str, Any] | None
    design: dict[str, Any]
    failing_case: dict[str, Any] | None
    records_file: str | None  # the part file of its records, on the way to the records file


class Result(_Verdict, total=False):
    """One test × model: the figures, the condition and its verdict, the gate and the design.

    ``errors`` is there when infrastructure errors ended the test, ``diagnosis`` with
    ``--competence-diagnose``, ``probes`` for a probed test (``--competence-probe``,
    ``@pytest.mark.competence_probe``); ``model_identity`` (a hash naming the model behind its
    name, :func:`~pytest_competence.models.identity.model_identity`; ``competence merge`` refuses
    one name bound to two), ``sampling`` (the model's temperature, the attempts,
    the prompts sent more than once and those whose answers varied) and ``bounds`` (the
    bounds behind the verdict, :meth:`~pytest_competence.engine.conditions.Condition.bounds`) in
    results of this version; ``nodeid`` and ``outcome`` are set when the report reaches the
    controller, ``records`` when the results document is written.
    """

    errors: dict[str, Any]
    diagnosis: dict[str, Any]
    model_identity: str | None
    sampling: dict[str, Any]
    probes: dict[str, Any]
    bounds: dict[str, Any]
    nodeid: str
    outcome: str
    records: dict[str, Any]
