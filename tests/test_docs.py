"""The documentation site builds cleanly, its code runs, and its reference misses nothing.

- every ``python`` and ``ini`` block of every page runs, and every page's ``pytest`` and
  ``competence`` commands run in page order in one scratch folder, with the page's
  ``<!-- file: NAME -->`` blocks written there first (``tests/doc_blocks.py``);
- the site builds with ``sphinx -W --keep-going -n`` (the ``docs`` extra): a warning or a broken
  cross-reference fails it;
- every pytest option and ini option ``pytest --help`` lists, model-scheme parameter, reference
  policy, ``competence`` command and public module appears in the built reference, and every
  option is named on a page written by hand too;
- the built home page and a reference page load in headless Chromium with no console message,
  and their screenshots are real pictures (written to ``$COMPETENCE_TEST_ARTIFACTS`` when set).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.browser import console_messages, find_chromium, picture_spread, screenshot
from tests.doc_blocks import (
    ROOT,
    blocks,
    commands,
    has_hf_extra,
    needs_hf,
    run_command,
    run_ini,
    run_python,
)

DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.relative_to(DOCS).parts)
BLOCKS = [b for page in PAGES for b in blocks(page)]
#: Languages that are run (``bash``: its pytest and competence commands) or are sample output.
RUN = {"python", "ini", "bash"}
OUTPUT = {"", "text"}


def _params(lang: str) -> list:
    return [
        pytest.param(b.body, id=b.id)
        for b in BLOCKS
        if b.lang == lang and not b.skip and not b.file
    ]


def test_the_pages_have_code_to_run():
    assert len(PAGES) > 30
    assert _params("python") and _params("ini")
    assert sum(1 for page in PAGES if _page_commands(page)) >= 10


def test_every_block_is_run_or_says_why():
    unexplained = [b.id for b in BLOCKS if b.lang not in RUN | OUTPUT and not b.skip and not b.file]
    assert not unexplained, f"blocks neither run nor marked <!-- not run: why -->: {unexplained}"


@pytest.mark.parametrize("body", _params("python"))
def test_python_blocks_run(pytester: pytest.Pytester, body: str):
    if needs_hf(body) and not has_hf_extra():
        pytest.skip("a transformers model: needs the [hf] extra (.ci/run installs it)")
    run_python(pytester, body)


@pytest.mark.parametrize("body", _params("ini"))
def test_ini_blocks_configure_a_session(pytester: pytest.Pytester, body: str):
    run_ini(pytester, body)


def _page_commands(page: Path) -> list[str]:
    return [c for b in blocks(page) if b.lang == "bash" and not b.skip for c in commands(b)]


@pytest.mark.slow
@pytest.mark.parametrize(
    "page", [p for p in PAGES if _page_commands(p)], ids=lambda p: str(p.relative_to(DOCS))
)
def test_page_commands_run_in_order(page: Path, tmp_path: Path):
    """A page's files are written and its commands run in page order, in one scratch folder,
    each exiting with the status the page says (0 unless ``<!-- exit N -->``)."""
    for block in blocks(page):
        if block.skip:
            continue
        if block.file:
            path = tmp_path / block.file
            path.parent.mkdir(parents=True, exist_ok=True)  # my_package/__init__.py
            path.write_text(block.body + "\n", "utf-8")
        elif block.lang == "bash":
            for command in commands(block):
                if needs_hf(command) and not has_hf_extra():
                    continue  # a transformers model: needs the [hf] extra (.ci/run installs it)
                run_command(command, tmp_path, block.exit)


def test_install_commands_work_in_a_clean_shell():
    """pytest-competence is installed from a clone (it is on no package index), with the
    environment's own interpreter: a bare ``pip`` is the system's (PEP 668 refuses it) or none."""
    bare = re.compile(r"(?<!-m )(?<![\w/.-])pip3? install")
    by_name = re.compile(r"pip3? install [^\n`]*?(?<![\w.-])pytest-competence\b(?! @)")
    found = [
        f"{page.relative_to(ROOT)}:{n}: {line.strip()}"
        for page in [*PAGES, ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
        for n, line in enumerate(page.read_text("utf-8").splitlines(), 1)
        if bare.search(line) or by_name.search(line)
    ]
    assert not found, "\n".join(found)


def _pytest_knows(folder: Path) -> tuple[list[str], list[str]]:
    """The plugin's flags and ini options as ``pytest --help`` lists them: what pytest itself
    registered, not what the reference's generator records of ``pytest_addoption``."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=folder,  # outside the project: its conftest and ini add nothing
    )
    assert done.returncode == 0, done.stderr
    flags = re.findall(r"^  (--competence-[\w-]+)", done.stdout, re.M)
    ini = re.findall(r"^  (competence_\w+) \(", done.stdout, re.M)
    assert len(flags) > 10 and len(ini) > 10, done.stdout
    return flags, ini


def test_every_option_is_explained_on_a_page(tmp_path: Path):
    """Each flag and ini option ``pytest --help`` lists is named on a page written by hand, in
    the context that says when to use it, not only in the reference generated from the code."""
    generated = DOCS / "reference" / "options.md"
    text = "\n".join(p.read_text("utf-8") for p in [*PAGES, ROOT / "README.md"] if p != generated)
    flags, ini = _pytest_knows(tmp_path)
    unexplained = [o for o in flags + ini if not re.search(rf"{o}(?![\w-])", text)]
    assert not unexplained, f"named on no page but the generated reference: {unexplained}"


def test_the_py_contract_snippet_is_a_model_the_suite_catches(pytester: pytest.Pytester):
    """The `py:` how-to's model module runs as ``py:my_model.py:answer`` on the tutorial's first
    suite, which catches it; and the prompt the page shows is the one it gets first."""
    page = DOCS / "how-to" / "python-model.md"
    model = next(b.body for b in blocks(page) if b.body.startswith("# my_model.py"))
    suite = next(b.body for b in blocks(DOCS / "tutorial.md") if "def test_front_behind" in b.body)
    shown = page.read_text("utf-8").split("as `answer` receives it", 1)[1].split("```\n", 2)[1]
    pytester.makepyfile(
        my_model=model
        + "\n\nSEEN = []\n\ndef recording(prompts):\n    SEEN.extend(prompts)\n"
        + "    return answer(prompts)\n",
        test_suite=suite.replace("pairs=40", "pairs=8"),
        conftest="import pytest, my_model\n\n@pytest.fixture(autouse=True, scope='session')\n"
        "def _first():\n    yield\n    if my_model.SEEN:\n"
        "        open('first.txt', 'w').write(my_model.SEEN[0])\n",
    )
    pytester.syspathinsert()
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--competence-model=py:my_model.py:answer"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Competence condition failed for model 'py:my_model.py:answer'*"])
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--competence-model=py:my_model:recording"
    )
    result.assert_outcomes(failed=1)
    assert (pytester.path / "first.txt").read_text() == shown.strip()


# -- the built site --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built as CONTRIBUTING.md says, every warning an error."""
    missing = [m for m in ("sphinx", "myst_parser", "furo") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(
            f"the docs extra is not installed ({', '.join(missing)}): pip install -e '.[docs]'"
        )
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html"]
        + ["-d", str(out / ".doctrees"), str(DOCS), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    assert not done.stderr.strip(), done.stderr[-5000:]
    return out


def _ids(page: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', page.read_text("utf-8")))


def _anchor(name: str) -> str:
    """The HTML id Sphinx gives an object of that name."""
    return re.sub(r"[^\w]+", "-", name).strip("-")


@pytest.mark.slow
def test_site_builds_without_a_warning(site: Path):
    for page in ("index", "tutorial", "reference/options", "families/ordering", "papers"):
        assert (site / f"{page}.html").stat().st_size > 5_000


@pytest.mark.slow
def test_the_reference_lists_every_option_parameter_and_command(site: Path, tmp_path: Path):
    """Read from the plugin's, the backends' and the CLI's own registrations, and looked up in
    the built pages: a new one that the pages do not show fails here."""
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        import competence_api as api
        import competence_docs as docs
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    from pytest_competence.models import SCHEMES

    # What pytest lists, read from pytest itself: an option the generator's recording of
    # pytest_addoption missed (one a plugin registers some other way) fails here too.
    flags, ini = _pytest_knows(tmp_path)
    options = _ids(site / "reference/options.html")
    for flag in flags:
        assert _anchor(f"cmdoption-pytest{flag}") in options, flag
    for name in ini:
        assert f"confval-{name}" in options, name

    models = _ids(site / "reference/models.html")
    for scheme in SCHEMES:
        assert scheme in models, f"no section for the {scheme}: scheme"
        if scheme in docs.SCHEME_MODULES:
            for name, *_ in docs.scheme_parameters(scheme):
                assert _anchor(f"scheme-param-{scheme}:{name}") in models, (scheme, name)
    for policy, params in docs.policy_parameters().items():
        assert _anchor(f"policy-ref:{policy}") in models, policy
        for key in params:
            assert _anchor(f"scheme-param-ref:{policy}?{key}") in models, (policy, key)

    cli = _ids(site / "reference/cli.html")
    shared = "competence generate"  # the flags every family's generate takes, listed once
    for prog, parser in docs.command_parsers().items():
        for action in docs._actions(parser):
            name = (
                action.option_strings[-1]
                if action.option_strings
                else "arg-" + str(action.metavar or action.dest).upper()
            )
            own = _anchor(f"cmdoption-{prog}-{name}")
            common = _anchor(f"cmdoption-{shared}-{name}")
            assert own in cli or (prog.startswith(shared) and common in cli), (prog, name)

    marker = (site / "reference/marker.html").read_text("utf-8")
    from pytest_competence.engine.spec import DESIGN_KEYS

    for key in DESIGN_KEYS:
        assert (
            f'<code class="docutils literal notranslate"><span class="pre">{key}</span>' in marker
        ), key

    documented = set().union(*(_ids(p) for p in site.rglob("*.html")))
    for module in api.public_modules():
        assert f"module-{module}" in documented, f"{module} has no API documentation"


def _artifacts(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("COMPETENCE_TEST_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("page", ["index", "reference/options"])
def test_the_site_renders_in_chromium(site: Path, page: str, tmp_path: Path):
    binary = find_chromium()
    if binary is None:
        pytest.skip("no chromium, chromium-browser or google-chrome on PATH")
    html = site / f"{page}.html"
    assert console_messages(binary, html) == []
    out = _artifacts(tmp_path) / ("docs-" + page.replace("/", "-") + ".png")
    png = screenshot(binary, html, out).read_bytes()
    width, height, spread, colours = picture_spread(png)
    assert (width, height) == (1280, 2000)
    assert spread > 8  # not one flat colour
    assert colours > 20  # text and the theme's colours, not a blank page
