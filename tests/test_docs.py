"""The README and the documentation site (docs/, mkdocs.yml).

* The site builds with ``mkdocs build --strict`` (warnings are errors: a broken link, a
  missing anchor, a docstring the numpy parser cannot read, a repository file linked from
  a page that does not exist); skipped, saying what to install, without the ``docs``
  extra.
* Every ```` ```python ```` block of README.md and of docs/**/*.md runs: the blocks of one
  page in order, in one namespace, in a temporary folder. A block whose first line is a
  comment starting ``# not run`` is only compiled (blocks that need an extra, a GPU or
  Dask workers). A page whose blocks read ``../shared/datasets`` is skipped when that
  folder is absent.
* The README stays a front door: at most 280 lines, the quickstart's two command lines
  as CI runs them, links that resolve, an architecture section naming every floor (as
  docs/architecture.md does).
"""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SHARED_DATASETS

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
NOT_RUN = "# not run"
README_MAX_LINES = 280
QUICKSTART = [
    'pip install . && semnmf cluster bbc -k 5',
    'pip install ".[test]" && python -m pytest',
]

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`\s]*)")


def code_blocks(text, language="python"):
    """``(line, source)`` of every fenced block of ``language`` in the Markdown ``text``
    (``line``: the 1-based line of its first line of code)."""
    blocks, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, indent = match.group("fence"), len(match.group("indent"))
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i])
            i += 1
        i += 1
        if match.group("info").lower() == language:
            blocks.append((start + 1, "\n".join(body) + "\n"))
    return blocks


def test_code_blocks_are_found_as_markdown_fences():
    text = "a\n```python\nx = 1\n```\n\n````md\n```python\nnot = code\n```\n````\n  ```python\n  y = 2\n  ```\n"
    assert code_blocks(text) == [(3, "x = 1\n"), (12, "y = 2\n")]


# -- the site ---------------------------------------------------------------------------

def _docs_tools():
    """The packages of the docs extra that are missing."""
    return [name for name in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers")
            if importlib.util.find_spec(name) is None]


def test_docs_build_strict(tmp_path):
    missing = _docs_tools()
    if missing:
        pytest.skip(f"the docs extra is not installed (no {', '.join(missing)}): "
                    "pip install '.[docs]' to build the site")
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
         "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    # the CLI reference is the parser's --help of every command
    from semnmf.cli.main import COMMANDS

    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    for command in COMMANDS:
        assert f"usage: semnmf {command}" in cli, command
    # the API reference rendered the docstrings
    models = (site / "reference" / "api" / "models" / "index.html").read_text(encoding="utf-8")
    assert "SemanticNMF" in models and "n_components" in models


# -- the examples -------------------------------------------------------------------------

def _examples():
    for page in PAGES:
        blocks = code_blocks(page.read_text(encoding="utf-8"))
        if blocks:
            yield pytest.param(page, blocks, id=page.relative_to(ROOT).as_posix())


@pytest.mark.parametrize("page, blocks", list(_examples()))
def test_examples_run(page, blocks, tmp_path, monkeypatch):
    if any("shared/datasets" in source for _, source in blocks) and not SHARED_DATASETS.is_dir():
        pytest.skip(f"{page.name}'s examples read ../shared/datasets, which is absent")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace = {"__name__": "__docs_example__"}
    where = page.relative_to(ROOT).as_posix()
    for line, source in blocks:
        code = compile(source, f"{where}:{line}", "exec")
        if source.lstrip().startswith(NOT_RUN):
            continue
        try:
            exec(code, namespace)
        except Exception as exc:   # name the block, then let pytest show the traceback
            raise AssertionError(f"the example at {where}:{line} failed: {exc!r}") from exc


def test_not_run_blocks_say_why():
    for page in PAGES:
        for line, source in code_blocks(page.read_text(encoding="utf-8")):
            first = source.lstrip().splitlines()[0]
            if first.startswith(NOT_RUN):
                assert first.startswith(f"{NOT_RUN}: ") and len(first) > len(NOT_RUN) + 4, \
                    f"{page.name}:{line}: say why the block is not run ('{NOT_RUN}: why')"


# -- the README -------------------------------------------------------------------------

def test_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    commands = [line.split("#")[0].strip()
                for _, block in code_blocks(text, "bash") for line in block.splitlines()]
    for command in QUICKSTART:   # CI runs the second line as it is written here
        assert command in commands, command


def test_readme_links_point_to_files():
    """The README is read on a repository browser: its relative links must resolve there
    (the site checks its own pages' links when it is built)."""
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)", text)
    assert targets
    for target in targets:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            continue
        assert (ROOT / target).exists(), f"the README links to {target}, which does not exist"


def _section(text, title):
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no section '## {title}'"
    return match.group(1)


def test_architecture_sections_name_every_floor():
    spec = importlib.util.spec_from_file_location(
        "_architecture", Path(__file__).with_name("test_architecture.py"))
    architecture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(architecture)
    units = {unit for floor in architecture.FLOORS for unit in floor} - {"__main__"}
    readme = _section(README.read_text(encoding="utf-8"), "Architecture")
    docs = (DOCS / "architecture.md").read_text(encoding="utf-8")
    for unit in units:
        name = {"__init__": "semnmf/__init__.py", "metrics": "metrics.py",
                }.get(unit, f"{unit}/")
        assert name in readme, f"the README's architecture section does not name {name}"
        assert name in docs, f"docs/architecture.md does not name {name}"
    assert "docs/architecture.md" in readme
    for floor in range(len(architecture.FLOORS)):
        assert f"floor {floor} " in readme and f"floor {floor} " in docs
