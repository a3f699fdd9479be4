"""Tokenizing and weighting, built on scikit-learn's CountVectorizer / TfidfTransformer.

Weightings of the document-term matrix:

- ``"tfidf"``: TF-IDF with rows normalized to unit L2 norm (the papers' default:
  Neurocomputing paper §5.1, SIGIR paper §4);
- ``"counts"``: raw term counts;
- ``"ncut"``: normalized-cut weighting of Xu, Liu & Gong (SIGIR 2003), used by the rank-2
  paper (§6.1): X̃ = D^{-1/2} X with D = diag(X Xᵀ 1), applied to the TF-IDF rows. It is
  computed as X (Xᵀ 1), never forming X Xᵀ.
"""

import re
import unicodedata
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

from ._marks import MARKS

# Alphabetic tokens of at least two letters: digits, "_" and punctuation dropped (the
# preprocessing of the shared benchmark matrices, see datasets/*/SOURCE.md). Letters are
# Unicode letters ([^\W\d_]), so "café", "réforme" and "économique" are words, not
# dropped (an ASCII-only [a-zA-Z] class rejected every word with an accented letter).
TOKEN_PATTERN = r"(?u)\b[^\W\d_][^\W\d_]+\b"
# What the default pattern means in full: its letters may carry combining marks (the vowel
# signs of Devanagari, Thai, ...: "नमस्ते", not "नमस"), which are not \w in Python's re.
# The short form is the one recorded and documented; this slower one reads only the texts
# that hold a mark (benchmarks/results/design_notes.md).
_DEFAULT_WORDS = (f"(?u)(?<![\\w{MARKS}])[^\\W\\d_](?:[^\\W\\d_]|[{MARKS}])+"
                  f"(?![\\w{MARKS}])")
_MARK = re.compile(f"[{MARKS}]")
WEIGHTINGS = ("tfidf", "counts", "ncut")
STEMMERS = (None, "porter", "english")

# Scripts written without spaces between words: Han (Chinese, Japanese kanji), Hiragana,
# Katakana, and Hangul (whose words carry their particles). With the default token pattern
# a run of them is cut into overlapping character bigrams (:func:`cjk_bigrams`).
_CJK = ("\u1100-\u11ff\u3005-\u3007\u3040-\u309f\u30a0-\u30ff\u3130-\u318f"
        "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af"
        "\ud7b0-\ud7ff\uf900-\ufaff\uff65-\uff9f\uffa0-\uffdc"
        "\U00020000-\U0002fa1f\U00030000-\U000323af")
_CJK_CHAR = re.compile(f"[{_CJK}]")
_CJK_RUNS = re.compile(f"[{_CJK}]+|[^{_CJK}]+")

# Sentence boundaries: end punctuation followed by white space, or a blank line.
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n\s*\n")


def split_sentences(text):
    """Split a text into sentences (end punctuation + space, or blank lines)."""
    return [s for s in _SENTENCE_SPLIT.split(text) if s and not s.isspace()]


def check_token_pattern(token_pattern, name="token_pattern"):
    """A token regular expression as CountVectorizer needs it: it compiles and has at most
    one capturing group; a clear ValueError naming ``name`` otherwise."""
    if not isinstance(token_pattern, str) or not token_pattern:
        raise ValueError(f"{name} must be a non-empty regular expression, got {token_pattern!r}.")
    try:
        compiled = re.compile(token_pattern)
    except re.error as exc:
        raise ValueError(f"{name} {token_pattern!r} is not a valid regular expression: "
                         f"{exc}.") from None
    if compiled.groups > 1:
        raise ValueError(f"{name} {token_pattern!r} has {compiled.groups} capturing groups; "
                         "at most one is allowed (use (?:...) for the others).")
    return token_pattern


def check_stop_words(stop_words, name="stop_words"):
    """``stop_words`` checked: "auto", "english", an ISO 639-1 code with a stop-word list
    (:func:`semnmf.text.language.stop_word_languages`), None ("none" means None), or a list
    of words, or ``{"language": ..., "extra": words}`` (the language's list and your words).
    "auto" and the codes are resolved against the texts by
    :func:`semnmf.text.language.resolve_stop_words`."""
    if isinstance(stop_words, dict):  # a language's list and words of your own
        extra = check_stop_words(list(stop_words.get("extra", ())), name)
        return {"language": check_stop_words(stop_words.get("language"), name),
                "extra": extra}
    if stop_words is None or (isinstance(stop_words, str) and stop_words.lower() == "none"):
        return None
    if isinstance(stop_words, str):
        if stop_words.lower() in ("auto", "english"):
            return stop_words.lower()
        from .language import language_code

        try:
            return language_code(stop_words)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    words = list(stop_words)
    if not all(isinstance(w, str) for w in words):
        raise ValueError(f"{name} must be a list of strings.")
    return words


def cjk_bigrams(tokens):
    """Tokens with every run of Chinese, Japanese or Korean characters cut into its
    overlapping character bigrams ("北京天安门" → 北京, 京天, 天安, 安门), as Lucene's CJK
    analyzer does: these scripts do not separate words by spaces, so the default token
    pattern would take a whole clause for one word, and no two documents would share it.
    Other characters of a token stay together ("iphone手机" → iphone, 手机); a run of one
    character, like any one-letter word, is dropped."""
    out = []
    for token in tokens:
        if not _CJK_CHAR.search(token):
            out.append(token)
            continue
        for run in _CJK_RUNS.findall(token):
            if len(run) < 2:
                continue
            if _CJK_CHAR.match(run):
                out.extend(run[i:i + 2] for i in range(len(run) - 1))
            else:
                out.append(run)
    return out


def make_analyzer(*, lowercase=True, stop_words="english", token_pattern=TOKEN_PATTERN,
                  stem=None):
    """Return ``analyze(text) -> list of terms``: scikit-learn's word analyzer + stemming.

    With the default ``token_pattern``, texts are first put in Unicode's composed form
    (NFC), a word's letters may carry combining marks ("नमस्ते" is one word), and runs of
    Chinese, Japanese or Korean characters are cut into overlapping character bigrams
    (:func:`cjk_bigrams`), so that these languages cluster without a word segmenter.
    Another pattern (e.g. ``r"(?u)\\b\\w+\\b"``) keeps a segmentation of your own.

    Parameters
    ----------
    stem : {None, "porter", "english"}
        None: no stemming; "porter": the original Porter stemmer (as in CLASSIC4's
        vocabulary); "english": Snowball's Porter2. Uses PyStemmer.
    """
    if stem not in STEMMERS:
        raise ValueError(f"stem must be one of {STEMMERS}, got {stem!r}.")
    marked_words = None
    with warnings.catch_warnings():
        # a listed word the tokenizer cuts ("quelqu'un") only never matches a token
        warnings.filterwarnings("ignore", message="Your stop_words may be inconsistent")
        words = CountVectorizer(lowercase=lowercase, stop_words=stop_words,
                                token_pattern=token_pattern).build_analyzer()
        if token_pattern == TOKEN_PATTERN:
            marked_words = CountVectorizer(lowercase=lowercase, stop_words=stop_words,
                                           token_pattern=_DEFAULT_WORDS).build_analyzer()
    if marked_words is not None:

        def base(text):
            if text.isascii():  # one fast check: most texts in English end here
                return words(text)
            # one spelling per word: "café" typed as é or as e + U+0301 is one term
            text = unicodedata.normalize("NFC", text)
            tokens = marked_words(text) if _MARK.search(text) else words(text)
            return cjk_bigrams(tokens) if _CJK_CHAR.search(text) else tokens
    else:
        base = words
    if stem is None:
        return base
    import Stemmer

    stemmer = Stemmer.Stemmer(stem)

    def analyze(text):
        return stemmer.stemWords(base(text))

    return analyze


def best_stemmer(texts, vocabulary, options):
    """The stemmer of :data:`STEMMERS` whose terms of the first 300 ``texts`` (tokenized
    with the analyzer ``options``) cover most of the set ``vocabulary``."""
    sample, coverage = list(texts)[:300], {}
    for stem in STEMMERS:
        analyze = make_analyzer(stem=stem, **options)
        seen = set()
        for text in sample:
            seen.update(analyze(text))
        coverage[stem] = len(seen & vocabulary)
    return max(STEMMERS, key=lambda s: coverage[s])


def count_matrix(texts, analyzer, *, min_df=2, max_df=1.0, max_features=None):
    """Vectorize ``texts`` into (counts CSR, vocabulary array) with CountVectorizer.

    Raises a clear ValueError when nothing is left (empty corpus, only stop words, or a
    pruning that removes every term).
    """
    vectorizer = CountVectorizer(analyzer=analyzer, min_df=min_df, max_df=max_df,
                                 max_features=max_features, dtype=np.float64)
    try:
        counts = vectorizer.fit_transform(texts)
    except ValueError as exc:
        message = str(exc)
        if "empty vocabulary" in message:
            raise ValueError(
                "empty vocabulary: the documents contain only stop words, numbers or "
                "punctuation, or are empty. Check the text column / files.") from None
        if "no terms remain" in message or "max_df corresponds" in message:
            raise ValueError(
                f"no term is left after pruning with min_df={min_df}, max_df={max_df}: "
                "lower min_df (e.g. min_df=1; CLI: --min-df 1) or raise max_df "
                "(--max-df).") from None
        raise
    # canonical CSR (sorted column indices in every row): CountVectorizer's fit leaves the
    # rows in its first-seen order, and the row norms of TF-IDF would then depend on it
    # (1-ulp differences from the same counts built shard by shard, text.shards)
    counts = counts.tocsr()
    counts.sort_indices()
    return counts, vectorizer.get_feature_names_out()


def count_texts(texts, analyze, index):
    """Term counts of ``texts`` over a fixed vocabulary (CSR, n_texts x len(index)):
    ``analyze`` turns a text into terms, ``index`` maps a term to its column; terms
    outside the vocabulary are dropped."""
    rows, cols = [], []
    for i, text in enumerate(texts):
        ids = [index[t] for t in analyze(text) if t in index]
        rows.extend([i] * len(ids))
        cols.extend(ids)
    counts = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(texts), len(index)))
    counts.sum_duplicates()
    return counts


def prune_columns(counts, *, min_df=1, max_df=1.0, max_features=None):
    """Column mask keeping terms by document frequency and total count (as CountVectorizer)."""
    n = counts.shape[0]
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    low = min_df if isinstance(min_df, (int, np.integer)) else int(np.ceil(min_df * n))
    high = max_df if isinstance(max_df, (int, np.integer)) else int(np.floor(max_df * n))
    keep = (df >= low) & (df <= high)
    if max_features is not None and keep.sum() > max_features:
        totals = np.asarray(counts.sum(axis=0)).ravel()
        totals[~keep] = -1
        order = np.argsort(-totals, kind="stable")[:max_features]
        keep = np.zeros_like(keep)
        keep[order] = True
    if not keep.any():
        raise ValueError(
            f"no term is left after pruning with min_df={min_df}, max_df={max_df}: lower "
            "min_df or raise max_df.")
    return keep


def weight(counts, weighting="tfidf", idf=None):
    """Apply a weighting to a count matrix; returns (X, idf) where idf may be reused.

    TF-IDF uses scikit-learn's smoothed idf, log((1 + n) / (1 + df)) + 1, and L2 rows.
    """
    if weighting not in WEIGHTINGS:
        raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}.")
    counts = sp.csr_matrix(counts, dtype=np.float64)
    if weighting == "counts":
        return counts, None
    transformer = TfidfTransformer(norm="l2", smooth_idf=True)
    if idf is None:
        transformer.fit(counts)
        idf = transformer.idf_
    else:
        transformer.idf_ = idf
    X = transformer.transform(counts).tocsr()
    if weighting == "ncut":
        X = ncut_weight(X)
    return X, idf


def ncut_weight(X, column_sums=None):
    """Normalized-cut weighting D^{-1/2} X with D = diag(X Xᵀ 1) (Xu et al. 2003).

    X Xᵀ 1 = X (Xᵀ 1) costs two sparse matrix-vector products; rows with d_i = 0 (empty
    documents) stay zero. ``column_sums``: Xᵀ1 of the whole matrix when X is a block of
    its rows (the degree is a row's similarity to every document, not to its block's).
    """
    X = sp.csr_matrix(X)
    if column_sums is None:
        column_sums = np.asarray(X.sum(axis=0)).ravel()
    degree = X @ column_sums
    scale = np.zeros_like(degree)
    positive = degree > 0
    scale[positive] = 1.0 / np.sqrt(degree[positive])
    return sp.diags(scale) @ X
