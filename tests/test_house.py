"""The rules of the house's shape, measured from the code (``tests/house.py`` prints every
figure): no module over 450 lines, pytest imported only in the plugin package, a short top level."""

from __future__ import annotations

from pathlib import Path

from house import MAX_LINES, MAX_TOP, PLUGIN, module_lines, pytest_homes
from test_family_layout import CORE


def test_no_module_passes_the_line_limit() -> None:
    over = {name: n for name, n in module_lines().items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split a coherent part out): {over}"


def test_pytest_is_imported_only_in_the_plugin() -> None:
    homes = pytest_homes()
    elsewhere = {home: mods for home, mods in homes.items() if home != PLUGIN}
    assert not elsewhere, (
        f"pytest imported outside {PLUGIN} (the engine knows no pytest): {elsewhere}"
    )
    assert PLUGIN in homes  # the scan sees the imports it must forbid


def test_the_top_level_stays_short() -> None:
    top = sorted(p.name for p in Path(CORE).glob("*.py"))
    assert len(top) <= MAX_TOP, f"{len(top)} modules directly in the package: {top}"


def test_the_scan_counts_lines_and_sees_pytest(tmp_path: Path) -> None:
    from house import imports_pytest

    inside = tmp_path / "inside.py"
    inside.write_text("def f():\n    import pytest\n")
    typing_only = tmp_path / "typing_only.py"
    typing_only.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pytest\n"
    )
    assert imports_pytest(inside) and not imports_pytest(typing_only)
