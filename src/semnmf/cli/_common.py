"""What several commands share: argument groups, reading SOURCE, the word-context matrix.

Imports only the standard library at module level (the parser must load no numpy);
the library is imported inside the functions that run a command.
"""

import codecs
import os
from dataclasses import dataclass, fields

import argparse

from .._utils.words import check_number  # noqa: F401 (the commands' checks)
from ..workflows.checks import MAX_SEED, check_vectorizing
from ..workflows.flags import recorded_name
from .flags import CLI_WORDS, flag

CONTEXT_CHOICES = ("auto", "document", "sentence", "window")
# The context options (CONTEXT_NAMES; None: not given, so that an option given where it
# does not apply can be refused); their defaults (CONTEXT_DEFAULTS, the library's) are
# filled by the library's context_defaults (semnmf.workflows.inputs).


def command_parser(commands, name, help, description, epilog):
    """A command's parser: its epilog as written, and the options not given left out of
    its namespace (the command's options dataclass fills their defaults)."""
    return commands.add_parser(name, help=help, description=description, epilog=epilog,
                               formatter_class=argparse.RawDescriptionHelpFormatter,
                               argument_default=argparse.SUPPRESS)


def language_argument(text):
    """``--language``: auto, none, english or an ISO 639-1 code with a stop-word list."""
    from ..text.language import language_code

    value = text.strip().lower()
    if value in ("auto", "english", "none"):
        return value
    try:
        return language_code(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@dataclass(frozen=True, kw_only=True)
class ReadOptions:
    """How SOURCE is read (every command that reads one)."""

    source: str
    text_column: str | None = None
    label_column: str | None = None
    id_column: str | None = None
    encoding: str = "utf-8"
    delimiter: str | None = None
    on_bad_lines: str = "error"


@dataclass(frozen=True, kw_only=True)
class VectorizeOptions:
    """How the texts become the document-term matrix (None: the library's default), under
    the library's names (``--language`` sets ``stop_words``, ``--vocab`` ``vocabulary``)."""

    stop_words: str | None = None
    token_pattern: str | None = None
    vocabulary: str | None = None
    min_df: int | None = None
    max_df: float = 1.0
    stem: str | None = None
    weighting: str = "tfidf"
    stop_words_file: str | None = None


@dataclass(frozen=True, kw_only=True)
class OutputOptions:
    """Where the results go and what is printed."""

    out: str | None = None
    overwrite: bool = False
    n_top: int = 10
    quiet: bool = False

    @property
    def verbose(self):
        return not self.quiet


@dataclass(frozen=True, kw_only=True)
class ContextOptions:
    """The word-context matrix M: None where not given (see :func:`context_defaults`);
    ``window_given`` says whether ``--window`` was (a window on a corpus without raw text
    is warned about)."""

    context: str | None = None
    window: int | None = None
    window_given: bool = False
    association: str | None = None
    min_count: int | None = None
    top_k: int | None = None
    max_nnz: int | None = None


def options_record(options, drop=("window_given",)):
    """The options as run.json's ``cli_arguments`` records them (under their flags' words)."""
    record = {recorded_name(f.name): getattr(options, f.name) for f in fields(options)
              if f.name not in drop}
    return {key: list(value) if isinstance(value, tuple) else value
            for key, value in record.items()}


def add_context_arguments(group):
    group.add_argument("--context", choices=CONTEXT_CHOICES,
                       help="which words co-occur: same document, same sentence, or within "
                            "--window words; auto = window when raw text exists, else "
                            "document (default auto)")
    group.add_argument("--window", type=int, metavar="L",
                       help="words on each side for --context window (default 10)")
    group.add_argument("--association", choices=("ppmi", "sppmi"),
                       help="PPMI or shifted PPMI, shift log 2 (default: sppmi for senmf, "
                            "ppmi otherwise)")
    group.add_argument("--min-count", type=int,
                       help="drop word pairs seen fewer times (prunes M; default 1)")
    group.add_argument("--top-k", type=int,
                       help="keep the K strongest contexts per word (prunes M; default: all)")
    group.add_argument("--max-nnz", type=int, metavar="N",
                       help="budget of non-zeros of M: when its bound is larger, keep the "
                            "strongest contexts per word so that it fits (0: no budget; "
                            "default 5,000,000, about 60 MB)")


def add_source_arguments(parser):
    """The options that say how to read SOURCE (its columns, its encoding), in the "input"
    group they start; returned so that more options can join it."""
    text = parser.add_argument_group("input")
    text.add_argument("--text-column", help="text column of a CSV/TSV/JSONL (default 'text')")
    text.add_argument("--label-column",
                      help="label column (default 'label' if present); empty labels mark "
                           "unlabelled documents, left out of the scores")
    text.add_argument("--id-column",
                      help="column of the documents' ids, written to assignments.csv "
                           "(default 'id' if present, else row numbers)")
    text.add_argument("--encoding",
                      help="encoding of text files, e.g. latin-1 or utf-16 (default utf-8)")
    text.add_argument("--delimiter", metavar="CHAR",
                      help="delimiter of a CSV/TSV file: one character, or comma, semicolon, "
                           "tab, bar (default: read from the header line)")
    text.add_argument("--on-bad-lines", choices=("error", "skip"),
                      help="a CSV row with more or fewer fields than the header, or a JSONL "
                           "line that is not JSON: refused naming its line (error, the "
                           "default) or skipped, counted and named (skip)")
    return text


def add_input_arguments(parser):
    """The source options and those that turn the texts into the document-term matrix."""
    text = add_source_arguments(parser)
    text.add_argument("--language", type=language_argument, metavar="LANG",
                      dest="stop_words",
                      help="the stop words left out of the vocabulary: auto (detect the "
                           "texts' language and take its list), english (scikit-learn's "
                           "list), an ISO 639-1 code (fr, de, es, ru, ar, tr, zh, ...: the "
                           "stopwordsiso list) or none (default auto)")
    text.add_argument("--stop-words", metavar="FILE", dest="stop_words_file",
                      help="more stop words, one per line, added to the --language list "
                           "(auto: the detected language's; with --language none, the "
                           "file's words alone; default: none)")
    text.add_argument("--token-pattern", metavar="REGEX",
                      help="regular expression of a word (default: two or more Unicode "
                           r"letters, (?u)\b[^\W\d_][^\W\d_]+\b, with Chinese, Japanese "
                           "and Korean cut into character bigrams; another pattern keeps "
                           "words as it finds them)")
    text.add_argument("--vocab", metavar="FILE", dest="vocabulary",
                      help="terms of the columns of a dataset folder's counts.mtx, one per "
                           "line (default: its vocab.txt; without one terms are t0, t1, ...)")
    text.add_argument("--min-df", type=int,
                      help="drop terms in fewer documents (default: 2 for texts of 50 "
                           "documents or more, 1 below and for a count matrix)")
    text.add_argument("--max-df", type=float,
                      help="drop terms in more than this fraction of documents (default 1.0)")
    text.add_argument("--stem", choices=("none", "porter", "english"),
                      help="stemming of raw texts (default none)")
    text.add_argument("--weighting", choices=("tfidf", "ncut", "counts"),
                      help="document-term weighting (default TF-IDF with L2 rows)")


def add_output_arguments(parser, default):
    out = parser.add_argument_group("output")
    out.add_argument("--out", metavar="DIR", help=f"output folder (default {default})")
    out.add_argument("--overwrite", action="store_true",
                     help="replace the results of an earlier run in --out (its result files "
                          "are removed first); without it such a folder is refused")
    out.add_argument("--top", type=int, dest="n_top", metavar="TOP",
                     help="top words shown per cluster (default 10)")
    out.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def require(condition, message):
    """Raise the one-line ValueError ``message`` unless ``condition``."""
    if not condition:
        raise ValueError(message)


def check_input_files(options):
    """The encoding and the files the input options name (the rest is the library's
    :func:`~semnmf.workflows.checks.check_settings`)."""
    check_encoding(options.encoding)
    if options.vocabulary is not None:
        require(os.path.isfile(options.vocabulary),
                f"--vocab {options.vocabulary}: no such file.")
    if options.stop_words_file is not None:
        require(os.path.isfile(options.stop_words_file),
                f"--stop-words {options.stop_words_file}: no such file.")


def check_input_arguments(options):
    """Check the input and output options before any data is read (one line each): the
    files, how the texts become counts, ``--top``, and the options SOURCE cannot use."""
    check_input_files(options)
    check_vectorizing(options.min_df, options.max_df, options.token_pattern, CLI_WORDS)
    check_number(options.n_top, "--top", low=1, integer=True)
    check_source(options)


def check_source(options):
    """Refuse the input options that do nothing on SOURCE, from the names of its files
    (:func:`semnmf.datasets.check_source_options`, ``check_table_options``)."""
    from ..datasets import check_source_options, check_table_options

    check_source_options(options.source, text_column=options.text_column,
                         label_column=options.label_column,
                         encoding=None if options.encoding == "utf-8" else options.encoding,
                         vocabulary=getattr(options, "vocabulary", None), words=CLI_WORDS)
    check_table_options(options.source, options.delimiter, options.on_bad_lines,
                        words=CLI_WORDS)


def check_encoding(encoding):
    """Refuse an unknown ``--encoding`` (one line), before any file is read."""
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise ValueError(f"--encoding: unknown encoding {encoding!r}; use a Python codec "
                         "name such as utf-8, utf-16 or latin-1.") from None


def check_seed(seed):
    check_number(seed, flag("random_state"), low=0, high=MAX_SEED, integer=True)


def output_folder(options, default_name):
    """The output folder (``--out``, else the first free ``semnmf_results/<default_name>``,
    ``-2``, ``-3``, ...), checked before any work: not a file, and no earlier run's results
    unless ``--overwrite``."""
    from ..datasets import RESULTS_FOLDER
    from ..report.output import check_output_folder, earlier_results

    out = check_out(options.out)
    if out is None:
        base = out = os.path.join(RESULTS_FOLDER, default_name)
        number = 1
        while not options.overwrite and os.path.isdir(out) and earlier_results(out):
            number += 1
            out = f"{base}-{number}"
    check_output_folder(out, overwrite=options.overwrite)
    return out


def check_out(out):
    """``--out`` as given (None: the command's default); an empty one is refused."""
    if out is not None and not str(out).strip():
        raise ValueError("--out is empty: name a folder for the results, or leave --out out "
                         "for the default.")
    return out


def one_line_warnings(message, category, filename, lineno, file=None, line=None):
    """``warnings.showwarning`` of the command line: one ``warning: ...`` line, not
    Python's "file:line: Category: message" and the source line after it."""
    from rich.markup import escape

    from .._utils.progress import log
    from .flags import cli_message

    log(f"[yellow]warning:[/] {escape(cli_message(' '.join(str(message).split())))}", True,
        markup=True)


def library_view(options, verbose=None):
    """The input and context options of a command as the library's run settings hold them
    (for :mod:`semnmf.workflows.inputs`)."""
    from types import SimpleNamespace

    view = {f.name: getattr(options, f.name, None)
            for kind in (ReadOptions, VectorizeOptions, ContextOptions) for f in fields(kind)}
    view["labels"] = None
    view["verbose"] = options.verbose if verbose is None else verbose
    return SimpleNamespace(**view)


def load_corpus(options, verbose, timings, t0):
    """Read SOURCE with the input options and vectorize it: (corpus, X)."""
    from ..workflows.inputs import read_corpus

    return read_corpus(library_view(options, verbose), timings, t0)


def word_context(options, corpus, verbose, timings, association="ppmi", counts_context=None):
    """The word-context matrix of the (filled) context options
    (:func:`semnmf.workflows.inputs.build_word_context`)."""
    from ..workflows.inputs import build_word_context

    return build_word_context(library_view(options, verbose), corpus, timings,
                              association=association, counts_context=counts_context)

