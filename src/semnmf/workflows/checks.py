"""What a clustering run cannot do, refused before any data is read: :func:`check_settings`
is the one set of checks of :func:`semnmf.cluster` and ``semnmf cluster``, each refusal
one line in the caller's words (:class:`~semnmf._utils.words.Words`). Standard library only
at import.
"""

import numbers
import os
import re

from .._utils.devices import check_device
from .._utils.words import LIBRARY, check_number
from ..models.registry import CLI_METHODS, CONSENSUS_METHODS
from ..models._defaults import MAX_LAM, MAX_SEED

__all__ = ["check_settings", "check_vectorizing", "check_context", "semantics_source",
           "INITS", "LAM_SCALES", "DTYPES", "MAX_SEED", "DEFAULT_RUNS", "REFINEMENTS",
           "CONTEXT_NAMES"]

DEFAULT_RUNS = 10  # n_runs of a consensus
# refine: None (the method's own: the centroid step for the default method), GTNMF, the
# centroid step, or nothing
REFINEMENTS = (None, "gt", "centroid", "none")
# the settings of the word-context matrix (None: not given)
CONTEXT_NAMES = ("context", "window", "association", "min_count", "top_k", "max_nnz")
# the named choices of some settings (the command line's choices too)
INITS = ("skmeans", "random", "nndsvda")
LAM_SCALES = ("relative", "absolute")
DTYPES = ("float32", "float64")


def names(test):
    """The method names whose registry entry passes ``test``, for messages."""
    return ", ".join(name for name, m in CLI_METHODS.items() if test(m))


def check_settings(settings, words=LIBRARY):
    """Refuse (ValueError; ImportError for a missing extra) what ``settings`` (a
    :class:`~semnmf.workflows.ClusterSettings` before :func:`method_defaults`: a setting
    not given is None) cannot run, before any data is read, naming the settings in
    ``words``."""
    _check_values(settings, words)
    _check_method(settings, words)
    _check_semantics(settings, words)
    _check_variants(settings, words)
    _check_combinations(settings, words)
    _check_extras(settings, words)
    from ..datasets import check_source_exists

    check_source_exists(settings.source)  # last: the settings are said wrong first


def check_vectorizing(min_df, max_df, token_pattern, words=LIBRARY):
    """``min_df``, ``max_df`` and ``token_pattern`` as scikit-learn's CountVectorizer reads
    them."""
    if min_df is not None:
        check_number(min_df, "min_df", words)
        if _integer(min_df):
            check_number(min_df, "min_df", words, low=1, integer=True)
        elif not 0 <= min_df <= 1:
            raise ValueError(f"{words('min_df')} is a number of documents (an integer) or a "
                             f"share of them in [0, 1]; got {min_df:g}.")
    check_number(max_df, "max_df", words)
    if _integer(max_df):
        check_number(max_df, "max_df", words, low=1, integer=True)
    elif not 0 < max_df <= 1:
        raise ValueError(f"{words('max_df')} is a fraction of the documents, in (0, 1]; got "
                         f"{max_df:g}.")
    if token_pattern is not None:
        try:
            groups = re.compile(token_pattern).groups
        except (re.error, TypeError) as exc:
            raise ValueError(f"{words('token_pattern')} {token_pattern!r} is not a valid "
                             f"regular expression: {exc}.") from None
        if groups > 1:
            raise ValueError(f"{words('token_pattern')} {token_pattern!r} may have at most "
                             "one capturing group; write the others as (?:...).")


def _integer(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_seed_range(s, w, runs, runs_said):
    """The seeds ``random_state .. random_state + runs - 1`` of ``runs`` runs (said
    ``runs_said``) are all seeds (an integer seed only)."""
    if _integer(s.random_state) and s.random_state + runs - 1 > MAX_SEED:
        raise ValueError(f"{w.set('random_state', s.random_state)} with {runs_said} needs the "
                         f"seeds up to {s.random_state + runs - 1}, above the largest seed "
                         f"({MAX_SEED}); use a {w('random_state')} of at most "
                         f"{MAX_SEED - runs + 1}.")


def semantics_source(value, words=LIBRARY):
    """``semantics`` as a run compares it: "auto", "corpus" ("none" means it), "glove" and
    "minilm" in lower case, a sentence-transformers model name as given (stripped)."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{words('semantics')} needs a source: corpus, glove, minilm or a "
                         f"sentence-transformers model name; got {value!r}.")
    if value.strip().lower() in ("auto", "corpus", "none"):  # none: word counts only
        return {"none": "corpus"}.get(value.strip().lower(), value.strip().lower())
    from ..text.pretrained import _check_source

    return _check_source(value)


def _check_values(s, w):
    """Each setting's value on its own."""
    if s.k_candidates is None:
        check_number(s.k, "n_components", w, low=1, integer=True)
    if not (s.random_state is None or hasattr(s.random_state, "randint")):
        check_number(s.random_state, "random_state", w, low=0, high=MAX_SEED, integer=True)
    check_number(s.lam, "lam", w, low=0, high=MAX_LAM)
    check_number(s.graph_lam, "graph_lam", w, low=0, high=MAX_LAM)
    check_number(s.max_iter, "max_iter", w, low=1, integer=True)
    check_number(s.tol, "tol", w, low=0)
    check_number(s.n_init, "n_init", w, low=1, integer=True)
    check_number(s.n_top, "n_top", w, low=1, integer=True)
    check_number(s.min_cluster_size, "min_cluster_size", w, low=1, integer=True)
    if s.min_cluster_size is not None and s.semantics not in ("corpus", "auto"):
        raise ValueError(f"{w('min_cluster_size')} merges and splits the clusters of a "
                         "word-count model; it does not apply to the pretrained semantics' "
                         f"partition ({w('semantics')} {s.semantics}). Drop one of them.")
    check_vectorizing(s.min_df, s.max_df, s.token_pattern, w)
    if s.refine not in REFINEMENTS:
        raise ValueError(f"{w('refine')} must be None, 'gt', 'centroid' or 'none', got "
                         f"{s.refine!r}.")
    for name, value, allowed in (("consensus", s.consensus, CONSENSUS_METHODS),
                                 ("init", s.init, INITS), ("lam_scale", s.lam_scale, LAM_SCALES),
                                 ("dtype", s.dtype, DTYPES)):
        # init may also be the arrays (Z, W), dtype a numpy dtype
        wrong = value not in allowed if isinstance(value, str) else (
            value is not None and name in ("consensus", "lam_scale"))
        if wrong:
            raise ValueError(f"{w(name)} must be one of {', '.join(allowed)}, got "
                             f"{value!r}.")
    from ..datasets import check_source_options, check_table_options

    if isinstance(s.source, (str, os.PathLike)):  # file names only, nothing read
        check_source_options(s.source, text_column=s.text_column, label_column=s.label_column,
                             encoding=None if s.encoding == "utf-8" else s.encoding,
                             vocabulary=s.vocabulary, words=w)
    check_table_options(s.source, s.delimiter, s.on_bad_lines, words=w)
    if isinstance(s.seed_words, (str, os.PathLike)) and not os.path.isfile(s.seed_words):
        raise ValueError(f"{w('seed_words')} {os.fspath(s.seed_words)}: no such file.")


def _check_method(s, w):
    """The settings that apply to some methods only."""
    method, said = s.spec, w.set("method", s.method)
    if s.method == "kl-consensus" and any(v is not None for v in (
            s.n_init, s.init, s.consensus, s.n_runs, s.n_keep,
            s.refine if s.refine == "gt" else None, s.seed_words)):
        raise ValueError(f"kl-consensus runs its three members with their own starts, "
                         "three times, and combines the three runs by the MMM: "
                         f"it takes no {w('n_init')}, {w('init')}, {w('consensus')}, "
                         f"{w('n_runs')}, {w('n_keep')}, {w.set('refine', 'gt')} or "
                         f"{w('seed_words')}.")
    if s.lam is not None and not method.word_context:
        raise ValueError(f"{w('lam')} weighs the word-context term, which {said} does not "
                         f"have; use it with {names(lambda m: m.word_context)}.")
    if s.graph_lam is not None and not method.graph:
        raise ValueError(f"{w('graph_lam')} weighs the document-graph term, which {said} "
                         f"does not have; use it with {names(lambda m: m.graph)}.")
    if s.lam_scale is not None and not (method.word_context or method.graph):
        raise ValueError(f"{w('lam_scale')} sets the scale of {w('lam')} and "
                         f"{w('graph_lam')}, which {said} does not have; drop "
                         f"{w('lam_scale')}.")
    if s.init is not None and not method.takes_init:
        raise ValueError(f"{w('init')} sets the start of the NMF methods; {said} starts "
                         f"from its own (random) centres: drop {w('init')} (use "
                         f"{w('random_state')} or {w('n_init')}).")
    check_context(s, w, method.word_context, f"for {names(lambda m: m.word_context)}")
    given = [n for n in ("embed", "pooling", "cache_dir") if getattr(s, n) is not None]
    if semantics_source(s.semantics, w) == "corpus" and not s.semantics_reason and given:
        raise ValueError(f"{w(given[0])} applies to pretrained semantics: use it with "
                         f"{w('semantics')} glove, minilm or a model name.")
    if s.pooling not in (None, "mean", "first"):
        raise ValueError(f"{w('pooling')} must be 'mean' (every chunk of a document) or "
                         f"'first' (its first chunk), got {s.pooling!r}.")
    if s.pooling is not None and (s.semantics == "glove" or s.embed == "words"):
        raise ValueError(f"{w('pooling')} says how a sentence model reads the documents; "
                         f"with {w.set('semantics', 'glove') if s.semantics == 'glove' else w.set('embed', 'words')} "
                         f"none is read: drop {w('pooling')}.")


def check_context(s, w, applies, where):
    """The word-context settings of ``s`` (:data:`CONTEXT_NAMES`): given only where M is
    built (``applies``; ``where`` says where it is), and their values."""
    given = [w(name) for name in CONTEXT_NAMES if getattr(s, name) is not None]
    if given and not applies:
        raise ValueError(f"{', '.join(given)} {'shapes' if len(given) == 1 else 'shape'} "
                         f"the word-context matrix, which is built only {where}; drop "
                         f"{'them' if len(given) > 1 else 'it'}.")
    if s.window is not None and s.context in ("document", "sentence"):
        raise ValueError(f"{w('window')} applies to {w.set('context', 'window')} (or auto), "
                         f"not {w.set('context', s.context)}; drop {w('window')}.")
    for name, low in (("window", 1), ("min_count", 1), ("top_k", 1), ("max_nnz", 0)):
        check_number(getattr(s, name), name, w, low=low, integer=True)


def _check_semantics(s, w):
    """Pretrained semantics: Semantic-NMF with the Frobenius updates, its own start and
    dtype, a partition only of embedded documents, one run when the documents are
    embedded, the extra installed."""
    source = semantics_source(s.semantics, w)
    if source == "auto":  # decided on the corpus (semnmf.workflows.semantics)
        return
    documents = False
    if s.partition is not None or source != "corpus":
        from ..pipelines.pretrained import check_partition

        documents = check_partition(s.partition or "auto", source, s.embed,
                                    w.set("refine", "gt") if s.refine == "gt" else None, w)
    if source == "corpus":
        return
    from ..pipelines.pretrained import check_available

    if s.method != "snmf" or s.loss not in (None, "frobenius") or s.orthogonal:
        raise ValueError(f"{w('semantics')} adds pretrained knowledge to Semantic-NMF: use "
                         f"it with the default {w.set('method', 'snmf')} (Frobenius loss, not "
                         "orthogonal).")
    if s.refine == "centroid":
        raise ValueError(f"{w.set('refine', 'centroid')} moves documents by the cosine of "
                         "their TF-IDF rows, measured without pretrained semantics; drop "
                         f"{w.set('refine', 'centroid')} or {w('semantics')}.")
    if s.init not in (None, "skmeans"):
        raise ValueError(f"{w('semantics')} chooses its own start (spherical k-means, or "
                         f"k-means of the document vectors); drop {w('init')}.")
    if s.dtype is not None:
        raise ValueError(f"{w('semantics')} builds X and M with pretrained vectors in the "
                         f"pipeline's own dtype; drop {w('dtype')}.")
    if documents and (s.consensus or (s.n_init or 1) > 1):
        raise ValueError("with embedded documents every run starts from the same k-means of "
                         f"the document vectors, so {w('consensus')} and {w('n_init')} would "
                         f"repeat one run; use {w.set('embed', 'words')}, or drop them.")
    check_available(source)


def _check_variants(s, w):
    """``loss`` and ``orthogonal``: the methods with variants."""
    method = s.spec
    if (s.loss is not None or s.orthogonal) and not method.variants:
        with_variants = sorted(n for n, m in CLI_METHODS.items() if m.variants)
        kl = method.params.get("loss") == "kl"
        raise ValueError(f"{w('loss')} and {w('orthogonal')} apply to "
                         f"{_methods(w, with_variants)} only"
                         + (f" ({w.set('method', s.method)} already uses the KL loss)"
                            if s.loss == "kl" and kl else "") + ".")
    if s.loss == "kl" and s.orthogonal:
        raise ValueError(f"{w('orthogonal')} is derived for the Frobenius loss; drop "
                         f"{w.set('loss', 'kl')} or {w('orthogonal')}.")


def _methods(w, names):
    """``method='nmf' or 'snmf'`` (library), ``--method nmf or snmf`` (command line)."""
    first = w.set("method", names[0])
    rest = [repr(n) if first.startswith("method=") else n for n in names[1:]]
    return " or ".join([first, *rest])


def _check_combinations(s, w):
    """Refinement and consensus: what they need, and n_runs / n_keep."""
    gt = w.set("refine", "gt")
    if s.consensus and s.refine == "gt":
        raise ValueError(f"{gt} needs the soft memberships of one run; a consensus "
                         f"partition has none. Use {w('consensus')} or {w('refine')}, not "
                         "both.")
    if s.refine == "gt" and s.k == 1:
        raise ValueError(f"{gt} needs at least 2 clusters: with one there is nothing to "
                         "refine.")
    if s.refine == "gt" and s.method == "skmeans":
        raise ValueError(f"{gt} needs soft memberships (NMF or Semantic-NMF); spherical "
                         f"k-means gives hard labels. Use {_methods(w, ['nmf', 'snmf'])}.")
    if not s.consensus:
        if s.n_runs is not None or s.n_keep is not None:
            raise ValueError(f"{w('n_runs') if s.n_runs is not None else w('n_keep')} "
                             f"applies to many runs combined by {w('consensus')}; add "
                             f"{w.set('consensus', 'mmm')} or drop it.")
        return
    check_number(s.n_runs, "n_runs", w, integer=True)
    check_number(s.n_keep, "n_keep", w, integer=True)
    runs = DEFAULT_RUNS if s.n_runs is None else s.n_runs
    if runs < 2:
        raise ValueError(f"{w('n_runs')} must be at least 2 for a consensus, got {runs}.")
    keep = runs if s.n_keep is None else s.n_keep
    if not 2 <= keep <= runs:
        raise ValueError(f"{w('n_keep')} must be between 2 and {w('n_runs')} ({runs}), got "
                         f"{keep}.")
    _check_seed_range(s, w, runs, w.set("n_runs", runs))


def _check_extras(s, w):
    """The device, the time column, the default consensus' own starts, seed words."""
    check_device(s.device, w)  # a GPU asked for and missing: said first (cpu, auto pass)
    if s.time_column is not None:
        from .timeline import PERIODS

        from ..datasets import TABLE_SUFFIXES, is_frame

        if not (is_frame(s.source) or isinstance(s.source, (str, os.PathLike)) and str(
                s.source).lower().endswith(TABLE_SUFFIXES)):
            raise ValueError(f"{w('time_column')} names a column of a CSV, TSV or JSONL "
                             "source or of a data frame; this source is not one.")
        if s.time_period not in PERIODS:
            raise ValueError(f"{w('time_period')} must be one of {', '.join(PERIODS)}, got "
                             f"{s.time_period!r}.")
    if s.date_format is not None:
        if s.time_column is None:
            raise ValueError(f"{w('date_format')} says how {w('time_column')} writes its "
                             f"dates; give {w('time_column')} too.")
        if not isinstance(s.date_format, str) or "%Y" not in s.date_format and \
                "%y" not in s.date_format:
            raise ValueError(f"{w('date_format')} {s.date_format!r} has no year (%Y or %y): "
                             "give a strptime format such as %d/%m/%Y.")
    if s.method == "kl-consensus":
        from ..ensemble.portfolio import N_RUNS

        _check_seed_range(s, w, N_RUNS, f"kl-consensus's {N_RUNS} runs")
    if s.seed_words is not None:
        if not s.spec.takes_init or s.consensus or s.semantics not in ("corpus", "auto"):
            raise ValueError(f"{w('seed_words')} start and hold the word factors of one "
                             "NMF-family run: use an NMF method (not skmeans), without "
                             f"{w('consensus')} or pretrained semantics.")
