"""``semnmf report``: write RUN_DIR/report.html, one self-contained page that works
offline (:func:`semnmf.report.html.write_report`)."""

from dataclasses import dataclass

from ._common import command_parser

EPILOG = """\
examples:
  semnmf report semnmf_results/bbc_snmf-robust_k5  write .../report.html and print its path
  semnmf report results/ --docs 5 --out page.html

RUN_DIR is a folder written by "semnmf cluster" or "semnmf tree". The texts shown come
from the run's source (run.json), read again with the run's input options; when it cannot
be read the page says "texts not available" and shows the rest.
"""


@dataclass(frozen=True, kw_only=True)
class ReportOptions:
    """Every option of one ``semnmf report``, defaults filled in."""

    command: str = "report"
    run_dir: str
    out: str | None = None
    docs: int = 3
    words: int = 10
    max_points: int = 5000
    no_texts: bool = False
    quiet: bool = False


D = ReportOptions(run_dir="")


def add_parser(commands):
    r = command_parser(commands, "report", "write an HTML report (report.html) of a run folder",
                       "Write RUN_DIR/report.html: clusters, top words, representative "
                       "documents, a map, the tree, label scores, coherence, parameters.",
                       EPILOG)
    r.add_argument("run_dir", metavar="RUN_DIR", help="result folder of semnmf cluster / tree")
    r.add_argument("--out", metavar="FILE",
                   help="where to write the page (default RUN_DIR/report.html)")
    r.add_argument("--docs", type=int,
                   help=f"representative documents per cluster (default {D.docs})")
    r.add_argument("--words", type=int,
                   help=f"top words per cluster, also used for NPMI (default {D.words})")
    r.add_argument("--max-points", type=int,
                   help=f"documents drawn on the map at most (default {D.max_points})")
    r.add_argument("--no-texts", action="store_true",
                   help="do not re-read the corpus (no texts, map or coherence)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    return r


def run(args):
    import os

    from .._utils.io import check_writable
    from ..report.html import write_report
    from ._common import check_out

    options = ReportOptions(**vars(args))
    if not os.path.isdir(options.run_dir):
        raise ValueError(f"{options.run_dir} is not a folder: give the --out folder of a "
                         "semnmf cluster or semnmf tree run.")
    for name, value, least in (("--docs", options.docs, 0), ("--words", options.words, 2),
                               ("--max-points", options.max_points, 2)):
        if value < least:
            raise ValueError(f"{name} must be at least {least}, got {value}.")
    if check_out(options.out) is not None:
        _check_report_path(options.out)
    # before the corpus is read again: a read-only or full folder is said now, by name
    check_writable(os.path.dirname(os.path.abspath(options.out)) if options.out
                   else options.run_dir, "the report")
    path = write_report(options.run_dir, out=options.out, n_documents=options.docs,
                        n_words=options.words, max_points=options.max_points,
                        load_texts=not options.no_texts, verbose=not options.quiet)
    print(path)
    return 0


def _check_report_path(out):
    """Refuse an --out that would destroy a file that is not a report, or that cannot be
    written (its folder is missing): one line, before any work."""
    import os

    if os.path.isdir(out):
        raise ValueError(f"--out {out} is a folder; --out names the HTML file to write "
                         "(default RUN_DIR/report.html).")
    if os.path.exists(out):
        with open(out, "rb") as f:
            head = f.read(1024).lower()
        if b'<meta name="generator" content="semnmf">' not in head:
            raise ValueError(f"--out {out} exists and is not a semnmf report; choose another "
                             "file name (an earlier report is replaced).")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise ValueError(f"--out {out}: the folder {folder} does not exist; create it first.")
