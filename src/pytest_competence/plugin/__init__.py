"""The pytest plugin: its options, the configuration of a run, and the plugins it registers.

Loaded in every pytest session once installed, so it imports only pytest at module level; the
engine (numpy, the families, the models) is imported when a competence test first needs it. At
configure time the settings are read and checked once (:class:`~._session.CompetenceSession`),
cheap model specs are resolved (a bad one is a usage error before anything runs), and the plugins
that do the work are registered: the marker's tests and fixtures (:mod:`._fixtures`), the verdict
after each body (:mod:`._verdict`), minimisation (:mod:`.minimise`), the audit
(:mod:`._audit`), the lookahead (:mod:`._lookahead`), the shards (:mod:`._sharding`), xdist.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_competence.plugin._lookahead import add_ini as add_lookahead_ini
from pytest_competence.plugin._session import STATE, CompetenceSession
from pytest_competence.plugin._start import start_session, worker_usage_error

__all__ = ["MARKER_HELP", "pytest_addhooks", "pytest_addoption", "pytest_configure"]

#: The ``competence`` marker's line in ``pytest --markers`` (``{family}``: the default family).
MARKER_HELP = (
    "competence(family='{family}', *, levels, pairs=200, seed=1, "
    "presentations=<the family's default>, require='strict', attempts=<the family's default>, "
    "regression_margin=None, gate=None, **family_options): "
    "evaluate the test's models on a competence design and assert the condition"
)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Add the plugin's hook specifications (:mod:`.hookspecs`); register :mod:`._probing`."""
    from pytest_competence.plugin import _probing, hookspecs

    pluginmanager.add_hookspecs(hookspecs)
    pluginmanager.register(_probing, "competence-probe")


def pytest_addoption(parser: pytest.Parser) -> None:
    """The command-line options, in one group, and the ini options."""
    group = parser.getgroup("competence", "competence testing of language models")
    group.addoption(
        "--competence-model",
        action="append",
        default=[],
        metavar="SPEC",
        dest="competence_models",
        help="Model to evaluate: ref:NAME (a reference policy), py:MODULE:ATTR (Python code), "
        "openai:MODEL@BASE_URL (an OpenAI-compatible server), hf:PATH_OR_ID (transformers) or "
        "vllm:PATH_OR_ID (vLLM) in this process, a scheme another package registers, or an "
        "alias from competence_models; repeatable or comma-separated",
    )
    group.addoption(
        "--competence-json",
        metavar="PATH",
        help="Write every figure as versioned JSON, and every prompt-level record "
        "to a records file next to it (see --competence-records)",
    )
    group.addoption(
        "--competence-records",
        metavar="PATH",
        help="Where --competence-json writes the prompt-level records, one JSON line "
        "each; a name ending in .gz is gzip-compressed (default: the JSON's name "
        "with .records.jsonl, e.g. report.records.jsonl)",
    )
    group.addoption(
        "--competence-html",
        metavar="PATH",
        help="Write a self-contained HTML report with the profile plots",
    )
    group.addoption(
        "--competence-markdown",
        metavar="PATH",
        help="Write a Markdown summary (also appended to $GITHUB_STEP_SUMMARY)",
    )
    group.addoption(
        "--competence-baseline",
        metavar="SPEC_OR_JSON",
        help="Also fail a test on a significant regression against this model (a "
        "spec or alias) or archived results (a --competence-json file); the test's "
        "own condition still applies",
    )
    group.addoption(
        "--competence-report-only",
        action="store_true",
        help="Evaluate and report every condition and gate, but do not fail tests",
    )
    from pytest_competence.plugin import _exports, _sharding

    _exports.add_options(group)  # --competence-batch-export and its caps
    _sharding.add_option(group)  # --competence-shard
    group.addoption(
        "--competence-audit",
        action="store_true",
        help="Audit each competence suite against the reference policies instead of "
        "running models: which shortcuts it catches, which survive, and why",
    )
    group.addoption(
        "--competence-diagnose",
        action="store_true",
        help="Compare each model's answers with every reference policy of the "
        "family on the same prompts: which shortcut it answers like, and the cells "
        "that would tell the closest apart",
    )
    parser.addini(
        "competence_require",
        type="linelist",
        help="The condition of every competence test that declares no require=, one "
        "line each, replacing the strict condition (add a 'strict' line to keep it), "
        "e.g. 'robust_correct >= 0.95 for n <= 128' or 'kappa_bar >= 0.6'",
    )
    parser.addini(
        "competence_trained_on",
        type="linelist",
        help="Splits the models under test were trained on, one per line "
        "(FAMILY:NAME, e.g. ordering:paper-heldin): a test whose design overlaps one "
        "warns",
    )
    from pytest_competence.plugin._options import add_gate_options

    add_gate_options(parser)  # competence_gate, _alpha, _regression_margin, _underpowered
    parser.addini(
        "competence_bootstrap",
        default="2000",
        help="Paired-bootstrap resamples per test for the report intervals (default: 2000)",
    )
    parser.addini(
        "competence_max_prompts",
        default="2000000",
        help="Largest design a competence test may declare, in prompts (levels x "
        "pairs x presentations x attempts); larger ones are refused before any is "
        "generated (default: 2000000)",
    )
    from pytest_competence.plugin._shrink_hooks import add_ini_options

    add_ini_options(parser)
    parser.addini(
        "competence_database",
        default=".hypothesis/examples",
        help="Directory of the example database where minimal failing cases are saved "
        "and replayed first, relative to the rootdir (without an ini file: the test paths' "
        "common folder); 'none' saves nothing (default: .hypothesis/examples)",
    )
    parser.addini(
        "competence_database_shared",
        type="linelist",
        help="Read-only example databases replayed too: directories, or "
        "github:OWNER/REPO[/ARTIFACT] for a GitHub Actions artifact",
    )
    parser.addini(
        "competence_models",
        type="linelist",
        default=[],
        help="Model aliases, one 'name = spec' per line (e.g. 'qwen = py:my_models:qwen')",
    )
    parser.addini(
        "competence_default_model",
        default="",
        help="Model used when no --competence-model is given (default: none; competence tests "
        "are then skipped)",
    )
    parser.addini(
        "competence_require_model",
        type="bool",
        default=False,
        help="Make a run that names no model a usage error instead of skipping the "
        "competence tests (set it in CI; default: false)",
    )
    parser.addini(
        "competence_max_error_rate",
        default="0",
        help="Share of a test's prompts that may end in infrastructure errors (server "
        "or model failures) before the test is an ERROR; below it they count as "
        "invalid answers (default: 0)",
    )
    group.addoption(
        "--competence-cache",
        choices=("rw", "read", "write", "off"),
        default="rw",
        dest="competence_cache",
        help="Response cache for HTTP, transformers and vLLM models: read and write "
        "(default), read only (the cache alone answers: nothing is sent), write only "
        "(refresh) or off",
    )
    parser.addini(
        "competence_cache_path",
        default=".competence/cache.sqlite",
        help="Response cache file, relative to the rootdir (without an ini file: the test "
        "paths' common folder; default: .competence/cache.sqlite)",
    )
    parser.addini(
        "competence_api_key_env",
        default="OPENAI_API_KEY",
        help="Environment variable holding the API key of openai: models unless the "
        "spec names its own with key_env= (default: OPENAI_API_KEY)",
    )
    parser.addini(
        "competence_max_response_mib",
        default="",
        help="Largest response body of openai: models in MiB, on the wire and after "
        "decompression, unless the spec sets max_response_mib= (default: 16)",
    )
    add_lookahead_ini(parser)


def pytest_configure(config: pytest.Config) -> None:
    """Read and check the run's settings and models; register the plugins that run the tests."""
    from pytest_competence.plugin._shrink_hooks import SHRINK_MARKER_HELP, ShrinkHooks
    from pytest_competence.registry import DEFAULT_FAMILY

    config.addinivalue_line("markers", MARKER_HELP.format(family=DEFAULT_FAMILY))
    config.addinivalue_line("markers", SHRINK_MARKER_HELP)
    config.pluginmanager.register(ShrinkHooks(config), "competence-shrink")
    state = start_session(config)
    config.stash[STATE] = state
    config.pluginmanager.register(state, "competence-session")
    from pytest_competence.plugin import _fixtures, _sharding, _verdict

    config.pluginmanager.register(_fixtures, "competence-fixtures")
    config.pluginmanager.register(_sharding, "competence-shard")  # --competence-shard
    config.pluginmanager.register(_verdict, "competence-verdict")
    if config.getoption("competence_audit"):
        from pytest_competence.plugin._audit import AuditPlugin

        config.pluginmanager.register(AuditPlugin(config), "competence-audit")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(state), "competence-xdist")


class _XdistHooks:
    """Hands the records directory to xdist workers, and ends the run with the usage error a
    worker stopped at (registered only when xdist is active)."""

    def __init__(self, session: CompetenceSession) -> None:
        self.session = session

    def pytest_configure_node(self, node: Any) -> None:
        self.session.configure_node(node)

    @pytest.hookimpl(tryfirst=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        # A worker's configure found what the controller could not (it imports no model): one
        # line and exit status 4, as in a run without -n, not a traceback per restarted worker.
        message = worker_usage_error(error)
        if message is not None:
            raise pytest.UsageError(message)
