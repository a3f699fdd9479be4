"""The ``semnmf`` parser and entry point: one sub-command per module of this package.
Building the parser imports no numpy; each command imports the library when it runs.
"""

import argparse
import sys
import warnings

from .._utils.version import __version__
from . import assign, bench, cluster, datasets, edit, report, tree
from ._common import one_line_warnings
from .flags import cli_message

COMMANDS = {"cluster": cluster, "tree": tree, "assign": assign, "edit": edit,
            "report": report, "bench": bench, "datasets": datasets}

EPILOG = """\
examples:
  semnmf cluster bbc -k 5                       Semantic-NMF on the built-in BBC News corpus
  semnmf cluster docs.csv -k 10 --out results/  cluster the "text" column of a CSV
  semnmf tree bbc --leaves 8                    a topic tree of 8 leaves (rank-2 NMF splits)
  semnmf assign RUN_DIR new.csv                 new documents to the clusters of a saved run
  semnmf edit RUN_DIR --merge 3,7 --out NEW     merge two clusters (also split, drop, rename)
  semnmf bench cstr classic4 --runs 50         the papers' Table 2 on two shared corpora
  semnmf datasets                               corpora that can be opened by name
  semnmf report semnmf_results/bbc_snmf-robust_k5  an HTML report of a run folder

Run "semnmf cluster --help" for all options of a command.
"""


def build_parser():
    """The ``semnmf`` argument parser (no numpy, scikit-learn or numba is imported)."""
    parser = argparse.ArgumentParser(
        prog="semnmf", description="Cluster text documents with (Semantic-)NMF.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"semnmf {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    for module in COMMANDS.values():
        module.add_parser(commands)
    parser.commands = commands.choices   # each command's own parser, for its errors
    return parser


def main(argv=None):
    """Entry point; returns the exit status (0 success, 2 bad input, 130 interrupted)."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # said by the command's parser, with its usage (not semnmf's)
        parser.commands[args.command].error(
            f"unrecognized arguments: {' '.join(unknown)}")
    try:
        with warnings.catch_warnings():
            # a warning from anywhere in the library (loading, M, plots) as one line
            warnings.showwarning = one_line_warnings
            # the library's warnings are notices of the run, whatever filter the caller
            # set (an application's "error" included): shown once each, as one line
            warnings.filterwarnings("default", module="semnmf")
            return COMMANDS[args.command].run(args)
    except (ValueError, OSError, MemoryError, ImportError) as exc:  # DatasetError is a ValueError
        message = " ".join(str(exc).split()) or type(exc).__name__  # one line, never empty
        if isinstance(exc, ValueError):
            message = cli_message(message)  # a library parameter named by its flag
        print(f"semnmf: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("semnmf: interrupted", file=sys.stderr)
        return 130
    except RuntimeError as exc:
        if not interrupted(exc):
            raise
        print("semnmf: interrupted", file=sys.stderr)
        return 130


def interrupted(exc):
    """Whether ``exc`` is what a Ctrl-C left behind: a KeyboardInterrupt in its chain, or
    numba's "no compiled object yet" (a compilation the interrupt stopped)."""
    seen = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt) or "no compiled object yet" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
