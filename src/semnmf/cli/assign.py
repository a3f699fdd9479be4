"""``semnmf assign``: assign new documents to the clusters of a saved run (its ``model/``
folder, :mod:`semnmf.pipelines.saved`), print the cluster sizes, write the result folder
with :func:`semnmf.report.write_assign_results`."""

import os
import time
from dataclasses import dataclass

from ._common import (OutputOptions, ReadOptions, add_output_arguments, add_source_arguments,
                      command_parser)

EPILOG = """\
examples:
  semnmf cluster bbc -k 5 --out runs/bbc && semnmf assign runs/bbc new_docs.csv
  semnmf assign runs/bbc more_docs/ --out runs/bbc_new
  semnmf tree bbc --leaves 8 --out runs/tree && semnmf assign runs/tree bbc

RUN_DIR is the output folder of "semnmf cluster" or "semnmf tree" (or its model/ folder).
SOURCE is read as for "semnmf cluster" and tokenized as the run's corpus was; a dataset
folder of counts only (counts.mtx + vocab.txt) is mapped onto the run's vocabulary by term
(unknown terms dropped). Each document goes to the cluster the model's own rule gives
(the README's "Saved models"); documents without a known term get -1.
Results go to --out: assignments.csv (with strength), topics.csv, run.json.
"""


def add_parser(commands):
    a = command_parser(commands, "assign", "assign new documents to the clusters of a saved run",
                       "Assign the documents of SOURCE to the clusters of the model saved in "
                       "RUN_DIR.", EPILOG)
    a.add_argument("run_dir", metavar="RUN_DIR", help="a semnmf cluster / tree output folder")
    a.add_argument("source", metavar="SOURCE", help="documents to assign (as for cluster)")
    add_source_arguments(a)
    add_output_arguments(a, "RUN_DIR/assigned_<source>")
    return a


@dataclass(frozen=True, kw_only=True)
class AssignOptions(ReadOptions, OutputOptions):
    """Every option of one ``semnmf assign``, defaults filled in."""

    command: str = "assign"
    run_dir: str


def _output_folder(options):
    """The output folder, checked: never the run folder itself (nor its model/)."""
    from ..datasets import source_name
    from ..report.output import check_output_folder
    from ._common import check_out

    name = source_name(options.source)  # "." is named by its folder
    out = check_out(options.out) or os.path.join(options.run_dir, f"assigned_{name}")
    run_dir = os.path.abspath(options.run_dir)
    protected = {run_dir, os.path.join(run_dir, "model")}
    if os.path.basename(run_dir) == "model":        # RUN_DIR/model given: its run folder too
        protected.add(os.path.dirname(run_dir))
    if os.path.abspath(out) in protected:
        raise ValueError(f"--out {out} is the run folder itself: its results and saved model "
                         "would be mixed with the assignment's; choose another --out.")
    check_output_folder(out, overwrite=options.overwrite)
    return out


def run(args):
    """``semnmf assign``: the options, the saved model, the assignment written and shown."""
    from .._utils.progress import log, timed
    from ..metrics import clustering_scores
    from ..pipelines.saved import load_model
    from ..report.output import clear_output_folder
    from ..report.results import assign_record, write_assign_results
    from ._common import check_encoding, check_number, check_source

    options = AssignOptions(**vars(args))
    verbose = options.verbose
    check_source(options)
    timings = {}
    t0 = time.perf_counter()
    # every option checked, and the output folder, before anything is read
    check_number(options.n_top, "--top", low=1, integer=True)
    check_encoding(options.encoding)
    out = _output_folder(options)
    model = load_model(options.run_dir)
    log(f"{model} from {model.info.get('path')}", verbose)
    corpus = model.read_source(options.source, text_column=options.text_column,
                               label_column=options.label_column, id_column=options.id_column,
                               encoding=options.encoding, delimiter=options.delimiter,
                               on_bad_lines=options.on_bad_lines)
    timings["load"] = time.perf_counter() - t0
    log(f"{corpus}", verbose)
    with timed(timings, "assign"):
        X = model.vectorize(corpus)
        labels, memberships = model.assign_matrix(X)
    scores = clustering_scores(corpus.labels, labels) if corpus.labels is not None else None
    timings["total"] = time.perf_counter() - t0
    record = assign_record(model, labels, corpus=corpus, X=X, source=options.source,
                           scores=scores, timings=timings)
    clear_output_folder(out)  # an earlier assignment's files (--overwrite): none may stay
    files = write_assign_results(out, corpus, labels, memberships, model, record,
                                 n_top=max(options.n_top, 20))
    _print_summary(model, corpus, labels, record, scores, options, out, files)
    return 0


def _print_summary(model, corpus, labels, record, scores, options, out, files):
    from rich.table import Table

    from .._utils.progress import stdout_console
    from ..metrics import top_terms

    console = stdout_console()
    size = record["cluster_sizes"]
    topics = top_terms(model.topics, model.vectorizer.vocabulary, options.n_top)
    table = Table(title=f"{len(corpus)} documents of {corpus.name} assigned to the "
                        f"{model.n_clusters} clusters of {model.info.get('method') or 'a model'}")
    table.add_column("cluster", justify="right")
    table.add_column("size", justify="right")
    table.add_column(f"top {options.n_top} words of the model")
    for c, terms in enumerate(topics):
        words = " ".join(term for term, weight in terms if weight > 0)
        table.add_row(str(c), str(size.get(str(c), 0)), words or "(empty)")
    if "-1" in size:
        table.add_row("-1", str(size["-1"]), "(documents without any known term)")
    console.print(table)
    if record["empty_clusters"]:
        console.print(f"clusters without a document: {record['empty_clusters']}")
    if scores:
        console.print(f"NMI {scores['nmi']:.4f}   ARI {scores['ari']:.4f}   "
                      f"accuracy {scores['accuracy']:.4f}")
    console.print(f"results written to {out}/ ({', '.join(files)})")
