"""The probes in a pytest run: ``--competence-probe`` and ``@pytest.mark.competence_probe``.

Registered with the plugin (:func:`pytest_competence.plugin.pytest_addhooks`, before the
command line is parsed) and importing only pytest, like it. The option probes every competence
test; the marker probes its test, with its settings
(:func:`pytest_competence.probe.probe_settings`, checked at collection: a bad one is the test's
collection error, before any model runs). A probed test reads, after its verdict,
the answer-position layers of its ``hf:`` model on exactly the design it evaluated
(:meth:`~pytest_competence.engine.run.CompetenceRun.probe_block`); its result gets a ``probes`` block
in every report, "n/a" with the reason for a model without internals. CBE paper,
arXiv:2610.22894, App. E.3 and App. I.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pytest_competence.probe import ProbeSettings

__all__ = [
    "PROBE_MARKER_HELP",
    "probe_settings_of",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
]

#: The ``competence_probe`` marker's line in ``pytest --markers``.
PROBE_MARKER_HELP = (
    "competence_probe(*, layers=None, precision='float32', patch='equivalent', "
    "patch_layers=None, max_mib=2048, folds=5, l2=1.0, permutations=100, threshold=0.9, "
    "confidence=0.95, seed=0): after the verdict, read the answer-position layers of hf: "
    "models on the test's design (δ/s, gold probes by layer, logit lens, patching); other "
    "models are n/a"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--competence-probe``, in the plugin's group."""
    parser.getgroup("competence").addoption(
        "--competence-probe",
        action="store_true",
        help="Probe every competence test's hf: model on its design after the verdict: "
        "δ/s, gold probes by layer, logit lens, patching (other models: n/a)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker."""
    config.addinivalue_line("markers", PROBE_MARKER_HELP)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Check a ``competence_probe`` marker at collection."""
    if metafunc.definition.get_closest_marker("competence_probe") is not None:
        probe_settings_of(metafunc.definition)


def probe_settings_of(item: pytest.Item) -> ProbeSettings | None:
    """The probe settings of ``item``: its marker's, else the defaults under
    ``--competence-probe``; ``None`` when it is not probed. A bad marker fails the item."""
    marker = item.get_closest_marker("competence_probe")
    if marker is None:
        if not item.config.getoption("competence_probe", False):
            return None
        from pytest_competence.probe import probe_settings

        return probe_settings()
    if item.get_closest_marker("competence") is None:
        message = (
            f"{item.nodeid}: @pytest.mark.competence_probe probes a competence test's model "
            f"on its design; add @pytest.mark.competence(...) to the test"
        )
    else:
        from pytest_competence.probe import probe_settings
        from pytest_competence.protocol import InvalidArgument

        try:
            return probe_settings(marker.args, marker.kwargs)
        except InvalidArgument as exc:
            message = f"{item.nodeid}: @pytest.mark.competence_probe: {exc}"
    pytest.fail(message, pytrace=False)
