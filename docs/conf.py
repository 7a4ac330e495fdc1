"""Sphinx configuration of the pytest-competence documentation.

Build it with ``python -m sphinx -W --keep-going -n -b html docs docs/_build/html`` after
``pip install -e '.[docs]'``. Pages are MyST Markdown; the reference pages are written from the
code by the directives in ``_ext/competence_docs.py`` and ``_ext/competence_api.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

from pytest_competence._version import __version__  # noqa: E402

project = "pytest-competence"
author = "pytest-competence developers"
copyright = "pytest-competence developers"  # noqa: A001
version = release = __version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "competence_docs",
    "competence_api",
]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_ext", "README.md"]
root_doc = "index"

myst_enable_extensions = ["deflist", "colon_fence"]
myst_heading_anchors = 3

html_theme = "furo"
html_title = f"pytest-competence {version}"
html_static_path: list[str] = []
html_show_sourcelink = False
smartquotes = False  # flags, quotes and dashes exactly as typed

# The API reference: signatures with their types; members in source order.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# No ``autodoc_default_options["members"]``: under Sphinx 9 it overrides a directive's own
# ``:members:`` list, which ``competence-api`` uses to document each name once.

# Broken cross-references on these pages fail the build (-n -W). In the docstrings autodoc
# writes, a reference that cannot be placed stays code (``competence_docs``: docstrings name
# internals too). Names outside this project (the standard library, numpy, pytest, …) cannot be
# resolved without fetching other projects' inventories, which the build does not do (it runs
# offline), so only those are let through on the pages.
nitpicky = True
nitpick_ignore_regex = [
    (
        r"py:.*",
        r"(abc|collections|collections\.abc|typing|typing_extensions|types|os|pathlib|argparse|re)\..*",
    ),
    (
        r"py:.*",
        r"(numpy|np|scipy|pytest|_pytest|hypothesis|httpx|pluggy|torch|transformers)(\..*)?",
    ),
    (r"py:.*", r"(datasets|trl|vllm|threadpoolctl)(\..*)?"),
    (r"py:class", r"(str|int|float|bool|bytes|dict|list|tuple|set|frozenset|object|type|None)"),
    (r"py:class", r"(Path|Any|Callable|Iterable|Iterator|Mapping|Sequence|TextIO|BinaryIO)"),
    (r"py:class", r"(NDArray|ArrayLike|SearchStrategy|Config|Parser|Pytester)"),
    (r"py:class", r"(ValueError|TypeError|Exception|BaseException|KeyError|RuntimeError)"),
]
