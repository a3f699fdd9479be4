"""What several commands share: argument groups, reading SOURCE, the word-context matrix.

Imports only the standard library at module level (the parser must load no numpy);
the library is imported inside the functions that run a command.
"""

import contextlib
import time
import warnings

CONTEXT_CHOICES = ("auto", "document", "sentence", "window")


def add_context_arguments(group):
    group.add_argument("--context", choices=CONTEXT_CHOICES,
                       default="auto", help="which words co-occur: same document, same "
                       "sentence, or within --window words; auto = window when raw text "
                       "exists, else document")
    group.add_argument("--window", type=int, default=10, metavar="L",
                       help="words on each side for --context window (default 10)")
    group.add_argument("--association", choices=("ppmi", "sppmi"), default=None,
                       help="PPMI or shifted PPMI, shift log 2 (default: sppmi for senmf, "
                            "ppmi otherwise)")
    group.add_argument("--min-count", type=int, default=1,
                       help="drop word pairs seen fewer times (prunes M)")
    group.add_argument("--top-k", type=int, default=None,
                       help="keep the K strongest contexts per word (prunes M)")


def add_input_arguments(parser):
    text = parser.add_argument_group("input")
    text.add_argument("--text-column", default=None, help="text column of a CSV/TSV/JSONL (default 'text')")
    text.add_argument("--label-column", default=None, help="label column (default 'label' if present)")
    text.add_argument("--encoding", default="utf-8", help="encoding of text files (default utf-8)")
    text.add_argument("--min-df", type=int, default=None,
                      help="drop terms in fewer documents (default 2 for texts)")
    text.add_argument("--max-df", type=float, default=1.0,
                      help="drop terms in more than this fraction of documents")
    text.add_argument("--stem", choices=("none", "porter", "english"), default=None,
                      help="stemming of raw texts (default none)")
    text.add_argument("--weighting", choices=("tfidf", "ncut", "counts"), default="tfidf",
                      help="document-term weighting (default TF-IDF with L2 rows)")


def add_output_arguments(parser, default):
    out = parser.add_argument_group("output")
    out.add_argument("--out", default=None, metavar="DIR", help=f"output folder (default {default})")
    out.add_argument("--top", type=int, default=10, help="top words shown per cluster")
    out.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


@contextlib.contextmanager
def logged_warnings():
    """Record the warnings raised inside (a fit) and print each as a one-line notice."""
    from .._utils.progress import log

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        log(f"[yellow]warning:[/] {w.message}", True)


def load_corpus(args, verbose, timings, t0):
    """Read SOURCE with the input options and vectorize it: (corpus, X)."""
    from .._utils.progress import log
    from ..datasets import load_dataset

    options = {}
    if args.min_df is not None:
        options["min_df"] = args.min_df
    if args.max_df != 1.0:
        options["max_df"] = args.max_df
    if args.stem is not None:
        options["stem"] = None if args.stem == "none" else args.stem
    log(f"loading {args.source} ...", verbose)
    corpus = load_dataset(args.source, text_column=args.text_column,
                          label_column=args.label_column, encoding=args.encoding, **options)
    timings["load"] = time.perf_counter() - t0
    log(f"{corpus}", verbose)
    t = time.perf_counter()
    X = corpus.vectorize(args.weighting)
    timings["vectorize"] = time.perf_counter() - t
    return corpus, X


def word_context(args, corpus, verbose, timings, association="ppmi"):
    """The word-context matrix M of the context options: (M, context used).
    ``association`` is the default when ``--association`` is not given (the option is
    then set to it, so that the run record shows what was used)."""
    from .._utils.progress import log

    if args.association is None:
        args.association = association
    context = corpus.default_context() if args.context == "auto" else args.context
    t = time.perf_counter()
    log(f"building the word-context matrix ({context} context, {args.association}) ...", verbose)
    M = corpus.word_context(context=context, window=args.window, association=args.association,
                            min_count=args.min_count, top_k=args.top_k)
    timings["context"] = time.perf_counter() - t
    log(f"M: {M.shape[0]} x {M.shape[1]}, {M.nnz:,} non-zeros", verbose)
    return M, context


def context_record(args, M, context):
    """The ``context`` entry of run.json for the context options."""
    from ..report.results import context_record as record

    return record(M, context, window=args.window, association=args.association,
                  min_count=args.min_count, top_k=args.top_k)
