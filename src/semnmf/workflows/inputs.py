"""What a run reads and builds before the fit: the corpus, X, the word-context matrix M,
and the warnings said on the way.

Standard library only at import; the library is imported inside the functions.
"""

import contextlib
import os
import time
import warnings
from dataclasses import dataclass

# The context options' defaults (None in the settings: not given).
CONTEXT_DEFAULTS = {"context": "auto", "window": 10, "min_count": 1, "max_nnz": 5_000_000}


def context_defaults(settings):
    """The word-context settings not given (None) with their :data:`CONTEXT_DEFAULTS`, and
    ``window_given``: a dict for ``dataclasses.replace``."""
    filled = {name: value for name, value in CONTEXT_DEFAULTS.items()
              if getattr(settings, name) is None}
    given = getattr(settings, "window_given", False) or settings.window is not None
    return {**filled, "window_given": given}


@dataclass(frozen=True)
class WordContext:
    """The word-context matrix of a run and what was chosen to build it: the context
    (``auto`` resolved), the association and ``top_k`` used, the pruning record."""

    M: object
    context: str
    association: str
    top_k: int | None
    pruning: dict


def _say_once(caught):
    """Warn each distinct message of ``caught`` once (scikit-learn's repeated warnings about
    a degenerate fit in our words)."""
    seen = set()
    for w in caught:
        message = " ".join(str(w.message).split())
        if message.startswith("Number of distinct clusters") and "n_components" in message:
            message = ("the documents have fewer distinct rows than the clusters asked for "
                       "(duplicate or empty documents): some clusters can only stay empty "
                       "or repeat another; choose a smaller k")
        key = (w.category, message)
        if key in seen:
            continue
        seen.add(key)
        warnings.warn_explicit(message, w.category, "semnmf", 0)


@contextlib.contextmanager
def collected_warnings():
    """Record the warnings raised inside (a fit) and warn each distinct one once after it:
    not amid a progress bar, and not four times the same."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    _say_once(caught)


def _listed_lines(path, name, layout):
    """The stripped lines of a UTF-8 word list, blank lines and ``#`` comments left out;
    a missing or non-UTF-8 file is refused naming the setting ``name`` and the
    ``layout`` expected ("one word per line")."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise ValueError(f"{name} {path}: no such file.") from None
    except UnicodeDecodeError:
        raise ValueError(f"{name} {path} is not UTF-8 text: {layout}.") from None
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def read_stop_words(path):
    """The words of a stop-word file: one per line, blank lines and ``#`` comments left
    out, lowercased."""
    words = [w.lower() for w in _listed_lines(path, "stop_words_file", "one word per line")]
    if not words:
        raise ValueError(f"stop_words_file {path} holds no word: one word per line.")
    return words


def stop_word_list(stop_words, stop_words_file):
    """``stop_words`` (None: "auto") with the words of ``stop_words_file`` added: a list, or
    ``{"language": ..., "extra": words}`` for a language resolved against the texts."""
    base = "auto" if stop_words is None else stop_words
    if stop_words_file is None:
        return base
    extra = read_stop_words(stop_words_file)
    if isinstance(base, str):
        return {"language": base, "extra": extra}
    return sorted(set(base) | set(extra))


def corpus_options(settings):
    """The vectorizing settings as Corpus / load_dataset take them (only those set)."""
    kwargs = {}
    if settings.min_df is not None:
        kwargs["min_df"] = settings.min_df
    if settings.max_df != 1.0:
        kwargs["max_df"] = settings.max_df
    if settings.stem is not None:
        kwargs["stem"] = None if settings.stem == "none" else settings.stem
    kwargs["stop_words"] = stop_word_list(settings.stop_words,
                                          getattr(settings, "stop_words_file", None))
    if settings.token_pattern is not None:
        kwargs["token_pattern"] = settings.token_pattern
    return kwargs


def language_record(corpus, extra, verbose):
    """Say which stop words the corpus's texts lost (when it has texts), and keep it in
    ``extra["language"]`` (run.json)."""
    from .._utils.progress import log

    language = getattr(corpus, "language", None)
    if language and language.get("how") != "list" and (
            corpus.texts is not None or getattr(corpus, "paths", None)):
        log(language.line, verbose)
        extra["language"] = dict(language)


def is_matrix(source):
    """Whether ``source`` is a document-term matrix (scipy sparse or a 2-D array)."""
    if hasattr(source, "tocsr") and hasattr(source, "shape"):
        return True
    return hasattr(source, "shape") and hasattr(source, "dtype") and len(source.shape) == 2


def read_corpus(settings, timings, started):
    """The corpus and X of ``settings.source`` (a name, path, list of texts, Corpus or a
    matrix) read and vectorized with the input settings: (corpus, X)."""
    from .._utils.progress import log, timed
    from ..datasets import is_frame, is_in_memory_texts, load_dataset, text_list
    from ..text.corpus import Corpus

    source, verbose = settings.source, settings.verbose
    kwargs = corpus_options(settings)
    labels = getattr(settings, "labels", None)
    texts = is_in_memory_texts(source) and not is_frame(source)
    if labels is not None and not (is_matrix(source) or texts):
        raise ValueError("labels= gives the classes of a matrix's rows or of a list of texts; "
                         "other sources (files, data frames: label_column=) carry their own "
                         "labels.")
    if isinstance(source, Corpus):
        corpus = source
    elif texts and labels is not None:
        corpus = Corpus(text_list(source), labels=labels, **kwargs)
    elif is_matrix(source):
        kwargs.pop("stop_words", None), kwargs.pop("token_pattern", None)
        kwargs.pop("stem", None)
        corpus = Corpus(counts=source, vocabulary=settings.vocabulary, labels=labels,
                        name="matrix", **kwargs)
    else:
        if settings.vocabulary is not None:
            kwargs["vocabulary"] = settings.vocabulary
        log(f"loading {source if isinstance(source, (str, os.PathLike)) else 'the texts'} ...",
            verbose)
        corpus = load_dataset(source, text_column=settings.text_column,
                              label_column=settings.label_column,
                              id_column=settings.id_column,
                              encoding=settings.encoding, delimiter=settings.delimiter,
                              on_bad_lines=settings.on_bad_lines,
                              **kwargs)
    timings["load"] = time.perf_counter() - started
    log(f"{corpus}", verbose)
    if corpus.labels is not None and corpus.n_unlabelled:
        log(f"{corpus.n_unlabelled} of {corpus.n_documents} documents have no label: they "
            "are clustered but left out of the scores", verbose)
    with timed(timings, "vectorize"), collected_warnings():
        X = corpus.vectorize(settings.weighting)
    return corpus, X


def build_word_context(settings, corpus, timings, association="ppmi", counts_context=None):
    """The :class:`WordContext` of the (filled) context settings; ``association`` is the
    default association, ``counts_context`` (``{"association", "top_k"}``) the defaults of
    a document context."""
    from .._utils.progress import log, timed

    verbose = settings.verbose
    context = corpus.default_context() if settings.context == "auto" else settings.context
    if getattr(settings, "window_given", False) and context != "window":
        warnings.warn(f"window={settings.window} has no effect: the corpus has no raw text "
                      "(counts only), so context='auto' uses document contexts.",
                      UserWarning, stacklevel=2)
    counts = (counts_context or {}) if context == "document" else {}
    chosen = settings.association or counts.get("association", association)
    top_k = settings.top_k if settings.top_k is not None else counts.get("top_k")
    log(f"building the word-context matrix ({context} context, {chosen}) ...", verbose)
    with timed(timings, "context"):
        M, info = corpus.word_context(context=context, window=settings.window,
                                      association=chosen, min_count=settings.min_count,
                                      top_k=top_k, max_nnz=settings.max_nnz or None,
                                      return_info=True)
    log(f"M: {M.shape[0]} x {M.shape[1]}, {M.nnz:,} non-zeros", verbose)
    if info["budget_applied"]:
        log(f"M pruned to the max_nnz budget: {info['nnz_before']:,} -> {info['nnz']:,} "
            f"non-zeros ({info['rule']})", verbose)
    return WordContext(M, context, chosen, top_k, info)


def as_dtype(A, dtype):
    """A (sparse or dense, or None) with its values in ``dtype`` (a copy only when needed)."""
    return None if A is None else A.astype(dtype, copy=False)


def context_record(settings, word_context):
    """The ``context`` entry of run.json (None without M)."""
    from ..report.results import context_record as record

    if word_context is None:
        return None
    wc = word_context
    entry = record(wc.M, wc.context, window=settings.window, association=wc.association,
                   min_count=settings.min_count, top_k=wc.top_k)
    if entry is not None:
        entry["max_nnz"] = wc.pruning["max_nnz"]
        entry["pruning"] = {key: wc.pruning[key] for key in (
            "budget_applied", "nnz_before", "nnz", "estimated_nnz_upper", "top_k", "rule")}
    return entry


def data_notes(record, corpus):
    """Add to run.json's ``data`` entry what the loading decided: the unlabelled documents,
    the min_df used, the bad rows skipped."""
    if record.get("data") is not None:
        record["data"].update({"n_unlabelled": corpus.n_unlabelled if corpus.labels is not None
                               else corpus.n_documents,
                               "min_df": corpus.min_df,
                               "min_df_automatic": bool(corpus.min_df_automatic)})
        skipped = getattr(corpus, "skipped_lines", None)
        if skipped:
            record["data"]["skipped_lines"] = list(skipped)
    return record


def read_seed_words(path):
    """The seed lists of a seed-word file: one topic per line, its words separated by
    spaces or commas; blank lines and ``#`` comments left out."""
    import re

    topics = [[w for w in re.split(r"[\s,]+", line) if w]
              for line in _listed_lines(path, "seed_words", "one topic per line")]
    if not topics:
        raise ValueError(f"seed_words {path} holds no topic: one topic per line, a few words "
                         "each.")
    return topics


def seed_terms(seed_words, corpus, k):
    """``(seeds, record)``: the term indices of each seed list (a word, or its stem), and
    run.json's record of them; a list none of whose words is a term is refused."""
    if isinstance(seed_words, (str, os.PathLike)):
        seed_words = read_seed_words(seed_words)
    seed_words = [[str(w) for w in topic] for topic in seed_words]
    if len(seed_words) > k:
        raise ValueError(f"seed_words gives {len(seed_words)} topics, more than the "
                         f"{k} clusters: give at most k seed lists.")
    index = {t: i for i, t in enumerate(corpus.vocabulary)}
    seeds, record = [], []
    for j, words in enumerate(seed_words):
        terms, unknown = [], []
        for word in words:
            found = [index[word]] if word in index else _analyzed(corpus, word)
            (terms.extend(found) if found else unknown.append(word))
        if not terms:
            raise ValueError(f"seed list {j + 1} ({' '.join(words)}) has no word in the "
                             "corpus's vocabulary (after lowercasing, stop words and "
                             "stemming); give words of the texts.")
        seeds.append(sorted(set(terms)))
        record.append({"words": words, "terms": [str(corpus.vocabulary[t]) for t in
                                                 sorted(set(terms))], "unknown": unknown})
    return seeds, record


def _analyzed(corpus, word):
    try:
        return corpus.transform([word], weighting="counts").indices.tolist()
    except (ValueError, TypeError, AttributeError):  # a corpus of counts only
        return []
