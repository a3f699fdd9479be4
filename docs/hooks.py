"""MkDocs hooks of the semnmf documentation (mkdocs.yml: ``hooks: [docs/hooks.py]``).

Two things happen at build time:

* **The CLI reference is rendered from the parser.** In a page, the line
  ``<!-- semnmf-cli-help -->`` becomes the ``--help`` of ``semnmf`` and of every
  sub-command, in the order of ``semnmf.cli.main.COMMANDS``, formatted by argparse itself
  at a fixed width (:data:`HELP_WIDTH` columns), so the page says what the installed
  parser says.
* **Links to repository files outside docs/ are checked and resolved.** The pages link to
  files such as ``../benchmarks/results/kl.md`` by their path in the repository, so the
  links also work when the Markdown is read on a repository browser. At build time a link
  whose target does not exist is a warning (``mkdocs build --strict`` fails on it); an
  existing target becomes ``{repo_url}/blob/{branch}/{path}`` when mkdocs.yml sets
  ``repo_url``, else a copy made in the built site under ``repository/`` (Markdown files
  rendered to HTML as they are, other files copied).

And the docstrings' Sphinx roles (``:class:`~semnmf.Corpus```), which mkdocstrings leaves
as they are, are shown as their code name alone (``Corpus``).
"""

import html
import logging
import os
import posixpath
import re
import sys
from contextlib import contextmanager
from pathlib import Path

from mkdocs.structure.files import File

log = logging.getLogger("mkdocs.hooks.semnmf")

HELP_WIDTH = 100
CLI_MARKER = "<!-- semnmf-cli-help -->"
REPOSITORY_FOLDER = "repository"     # where linked repository files go in the site
BRANCH = "main"
REPOSITORY = Path(__file__).resolve().parents[1]   # this file is docs/hooks.py

# [text](target) with a relative target; images too (the "!" is outside the match)
LINK = re.compile(r"\]\((?P<target>[^)\s#]+)(?P<fragment>#[^)\s]*)?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
# a Sphinx role as mkdocstrings renders it: :class:<code>~semnmf.Corpus</code>
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|obj|exc|const):"
                  r"<code>(?P<short>~?)(?P<name>[^<]*)</code>")

@contextmanager
def _columns(width):
    """argparse reads the help width from $COLUMNS (shutil.get_terminal_size)."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(width)
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


def cli_reference(heading_level=2):
    """Markdown of ``semnmf --help`` and ``semnmf COMMAND --help`` for every command."""
    source = str(REPOSITORY / "src")
    if source not in sys.path:   # a checkout that is not installed still documents itself
        sys.path.insert(0, source)
    from semnmf.cli.main import COMMANDS, build_parser

    hashes = "#" * heading_level
    with _columns(HELP_WIDTH):
        parser = build_parser()
        sections = [f"{hashes} semnmf\n\n```text\n{parser.format_help().rstrip()}\n```\n"]
        for name in COMMANDS:
            text = parser.commands[name].format_help().rstrip()
            sections.append(f"{hashes} semnmf {name}\n\n```text\n{text}\n```\n")
    return "\n".join(sections)


def _outside_targets(markdown, source, config):
    """``(line number, match, path)`` for every relative link of ``markdown`` (the text
    of the page file ``source``) whose target lies outside docs/; links inside code blocks
    are left alone. ``path`` is the resolved target, which may not exist."""
    docs = Path(config.docs_dir).resolve()
    folder = Path(source).resolve().parent
    fenced = False
    for number, line in enumerate(markdown.split("\n")):
        if FENCE.match(line):
            fenced = not fenced
        if fenced:
            continue
        for match in LINK.finditer(line):
            target = match.group("target")
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("/"):
                continue
            path = (folder / target).resolve()
            if not path.is_relative_to(docs):
                yield number, match, path


def _site_copy(path):
    """Where the site keeps its copy of the repository file ``path``."""
    relative = posixpath.join(REPOSITORY_FOLDER, path.relative_to(REPOSITORY).as_posix())
    return relative[:-3] + ".html" if path.suffix == ".md" else relative


def _render(path):
    """A repository Markdown file as a plain HTML page."""
    import markdown as md

    body = md.markdown(path.read_text(encoding="utf-8"), extensions=["tables", "fenced_code"])
    name = html.escape(path.relative_to(REPOSITORY).as_posix())
    return (f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{name}</title>'
            '<style>body{font-family:sans-serif;max-width:60rem;margin:2rem auto;'
            'padding:0 1rem}table{border-collapse:collapse}td,th{border:1px solid #ccc;'
            'padding:.2rem .5rem}pre{overflow-x:auto}</style></head><body>\n'
            f'<p><em>{name}, from the repository as it was when this site was '
            f'built.</em></p>\n{body}\n</body></html>\n')


def _usable(path):
    """Whether ``path`` is a file of the repository (which a page may link to)."""
    return path.is_relative_to(REPOSITORY) and path.is_file()


def on_files(files, config):
    """Add the site's copies of the repository files the pages link to (when mkdocs.yml
    sets no repo_url), so that the links resolve and mkdocs checks them as its own."""
    if config.repo_url:
        return files
    added = set()
    for page in list(files.documentation_pages()):
        text = Path(page.abs_src_path).read_text(encoding="utf-8")
        for _, _, path in _outside_targets(text, page.abs_src_path, config):
            if path in added or not _usable(path):
                continue   # a missing target is reported with its page (on_page_markdown)
            added.add(path)
            uri = _site_copy(path)
            if path.suffix == ".md":
                files.append(File.generated(config, uri, content=_render(path)))
            else:
                files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


def on_page_markdown(markdown, page, config, files):
    """The CLI reference in place of its marker; links outside docs/ resolved."""
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    repo_url = (config.repo_url or "").rstrip("/")
    lines = markdown.split("\n")
    for number, match, path in reversed(list(
            _outside_targets(markdown, page.file.abs_src_path, config))):
        fragment = match.group("fragment") or ""
        if not _usable(path):
            log.warning("Doc file '%s' contains a link '%s', which is not a file of the "
                        "repository", page.file.src_uri, match.group("target"))
            continue
        if repo_url:
            target = f"{repo_url}/blob/{BRANCH}/{path.relative_to(REPOSITORY).as_posix()}"
        else:   # relative to this page's source, as mkdocs resolves (and checks) links
            target = posixpath.relpath(_site_copy(path),
                                       posixpath.dirname(page.file.src_uri) or ".")
        line = lines[number]
        lines[number] = line[:match.start()] + f"]({target}{fragment})" + line[match.end():]
    return "\n".join(lines)


def on_page_content(html_text, page, config, files):
    """Sphinx roles of the rendered docstrings shown as their code name."""
    def name(match):
        text = match.group("name")
        return f"<code>{text.rpartition('.')[2] if match.group('short') else text}</code>"
    return ROLE.sub(name, html_text)
