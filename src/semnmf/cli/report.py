"""``semnmf report``: write RUN_DIR/report.html, one self-contained page that works
offline (:func:`semnmf.report.html.write_report`)."""

import argparse

EPILOG = """\
examples:
  semnmf report semnmf_results/bbc_snmf-robust_k5  write .../report.html and print its path
  semnmf report results/ --docs 5 --out page.html

RUN_DIR is a folder written by "semnmf cluster" or "semnmf tree". The texts shown come
from the run's source (run.json), read again with the run's input options; when it cannot
be read the page says "texts not available" and shows the rest.
"""


def add_parser(commands):
    r = commands.add_parser(
        "report", help="write an HTML report (report.html) of a run folder",
        description="Write RUN_DIR/report.html: clusters, top words, representative "
                    "documents, a map, the tree, label scores, coherence, parameters.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("run_dir", metavar="RUN_DIR", help="result folder of semnmf cluster / tree")
    r.add_argument("--out", default=None, metavar="FILE",
                   help="where to write the page (default RUN_DIR/report.html)")
    r.add_argument("--docs", type=int, default=3,
                   help="representative documents per cluster (default 3)")
    r.add_argument("--words", type=int, default=10,
                   help="top words per cluster, also used for NPMI (default 10)")
    r.add_argument("--max-points", type=int, default=5000,
                   help="documents drawn on the map at most (default 5000)")
    r.add_argument("--no-texts", action="store_true",
                   help="do not re-read the corpus (no texts, map or coherence)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress messages")
    return r


def run(args):
    import os

    from ..report.html import write_report
    from ._common import check_out

    if not os.path.isdir(args.run_dir):
        raise ValueError(f"{args.run_dir} is not a folder: give the --out folder of a "
                         "semnmf cluster or semnmf tree run.")
    for name, value, least in (("--docs", args.docs, 0), ("--words", args.words, 2),
                               ("--max-points", args.max_points, 2)):
        if value < least:
            raise ValueError(f"{name} must be at least {least}, got {value}.")
    if check_out(args.out) is not None:
        _check_report_path(args.out)
    path = write_report(args.run_dir, out=args.out, n_documents=args.docs,
                        n_words=args.words, max_points=args.max_points,
                        load_texts=not args.no_texts, verbose=not args.quiet)
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
