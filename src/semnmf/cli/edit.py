"""``semnmf edit``: merge, split, drop or rename the clusters of a saved run, or remove stop
words from its topics, and write the edited run (:func:`semnmf.workflows.edit.edit_run`)."""

import argparse
from dataclasses import dataclass

from ._common import command_parser

EPILOG = """\
examples:
  semnmf edit RUN --merge 3,7 --out RUN_merged          clusters 3 and 7 become one
  semnmf edit RUN --split 4 --drop 5 --rename 2=sport --out NEW
  semnmf edit RUN --stop-words stop.txt --out NEW       remove words from every topic
  semnmf edit OTHER_RUN --replay NEW --out OTHER_NEW     the edits of NEW on another run
  semnmf edit AUTO_RUN --level 8 --out RUN_k8           a level of -k auto as the clusters

Cluster numbers are those of RUN (of the level, with --level). The edits are applied in this order: stop words, splits,
merges, drops, renames; the clusters are then numbered again 0..K-1. Nothing is refitted:
the new run's model assigns new documents with the edits applied (semnmf assign NEW ...),
and its run.json lists the edits.
"""


@dataclass(frozen=True, kw_only=True)
class EditOptions:
    """Every option of one ``semnmf edit``, defaults filled in."""

    command: str = "edit"
    run_dir: str
    out: str
    merge: tuple = ()
    split: tuple = ()
    drop: tuple = ()
    rename: tuple = ()
    stop_words: str | None = None
    replay: str | None = None
    level: int | None = None
    overwrite: bool = False
    seed: int = 0
    quiet: bool = False


def _clusters(text):
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected cluster numbers such as 3,7; got {text!r}")
    if not values or min(values) < 0:
        raise argparse.ArgumentTypeError(f"expected cluster numbers such as 3,7; got {text!r}")
    return values


def _cluster(text):
    values = _clusters(text)
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"expected one cluster number; got {text!r}")
    return values[0]


def _rename(text):
    number, sep, name = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected CLUSTER=NAME, e.g. 2=sport; got {text!r}")
    return _cluster(number), name.strip()


def add_parser(commands):
    e = command_parser(commands, "edit",
                       "merge, split, drop or rename clusters of a run (no refit)",
                       "Write a new run folder with the clusters of RUN edited; the edits are "
                       "recorded and can be replayed on another run of the same corpus.",
                       EPILOG)
    e.add_argument("run_dir", metavar="RUN", help="a run folder of semnmf cluster (with model/)")
    e.add_argument("--out", required=True, metavar="DIR", help="the new run folder")
    e.add_argument("--merge", type=_clusters, action="append", metavar="A,B[,...]",
                   help="merge these clusters into one (repeatable)")
    e.add_argument("--split", type=_cluster, action="append", metavar="C",
                   help="split this cluster in two by a rank-2 NMF of its documents")
    e.add_argument("--drop", type=_cluster, action="append", metavar="C",
                   help="remove this cluster: its documents go to their next best cluster")
    e.add_argument("--rename", type=_rename, action="append", metavar="C=NAME",
                   help="name a cluster")
    e.add_argument("--stop-words", metavar="FILE",
                   help="remove these words (one per line) from every topic")
    e.add_argument("--replay", metavar="RUN_OR_JSON",
                   help="apply the edits recorded in that run's run.json instead")
    e.add_argument("--level", type=int, metavar="K",
                   help="make the run's level of K clusters (semnmf cluster -k auto: "
                        "levels.csv) its clusters, before the other edits")
    e.add_argument("--overwrite", action="store_true", help="replace the results in --out")
    e.add_argument("--seed", type=int, help="random seed of the splits (default 0)")
    e.add_argument("-q", "--quiet", action="store_true", help="print only the folder")
    return e


def run(args):
    from ..workflows.edit import edit_run

    from ..pipelines.edit import top_words

    options = EditOptions(**{k: tuple(v) if isinstance(v, list) else v
                             for k, v in vars(args).items()})
    named = {}
    for c, name in options.rename:
        if named.setdefault(c, name) != name:
            raise ValueError(f"--rename names cluster {c} twice ({named[c]!r}, {name!r}): give "
                             "each cluster one name.")
    result = edit_run(options.run_dir, options.out, merge=options.merge,
                      split=options.split, drop=options.drop, rename=dict(options.rename),
                      stop_words_file=options.stop_words, replay=options.replay,
                      level=options.level, overwrite=options.overwrite, random_state=options.seed)
    if not options.quiet:
        names = result.model.names or [None] * result.model.n_clusters
        sizes = [int((result.labels == c).sum()) for c in range(result.model.n_clusters)]
        words = top_words(result.model.topics, result.model.vectorizer.vocabulary, 8)
        for c, (size, name) in enumerate(zip(sizes, names)):
            print(f"cluster {c}{f' ({name})' if name else ''}: {size} documents: "
                  f"{' '.join(words[c])}")
        if result.scores:
            print("  ".join(f"{k} {v:.3f}" for k, v in result.scores.items()))
    print(result.folder)
    return 0
