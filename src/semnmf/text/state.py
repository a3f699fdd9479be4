"""The fitted vectorizer of a corpus as plain data: what turns new raw texts
(:meth:`VectorizerState.transform_texts`) or new counts over another vocabulary
(:meth:`VectorizerState.transform_counts`, mapped by term) into the same columns, with the
same weighting, as the matrix X a model was fitted on; terms outside the vocabulary are
dropped, and the vocabulary's pruning is recorded, not applied again.
"""

import numpy as np
import scipy.sparse as sp

from .vectorize import (STEMMERS, WEIGHTINGS, best_stemmer, count_texts, make_analyzer,
                        ncut_weight, weight)

__all__ = ["VectorizerState"]


class VectorizerState:
    """Vocabulary, tokenizer and weighting of a fitted document-term matrix.

    Parameters
    ----------
    vocabulary : sequence of str
    weighting : {"tfidf", "counts", "ncut"}
    idf : array of shape (n_terms,), optional
        Needed for "tfidf" and "ncut".
    column_sums : array of shape (n_terms,), optional
        Column sums of the training TF-IDF matrix; needed for "ncut".
    lowercase, stop_words, token_pattern, stem : the tokenizer (``stem`` may be "auto":
        the stemmer that covers most of the vocabulary on the texts given, for a
        vocabulary that came without its texts).
    source : {"texts", "counts"}
        Whether the vocabulary was built from raw texts or given with a count matrix.
    min_df, max_df, max_features : the pruning the vocabulary was built with (recorded).
    """

    def __init__(self, vocabulary, weighting="tfidf", *, idf=None, column_sums=None,
                 lowercase=True, stop_words="english", token_pattern=None, stem=None,
                 source="texts", min_df=None, max_df=1.0, max_features=None):
        if weighting not in WEIGHTINGS:
            raise ValueError(f"weighting must be one of {WEIGHTINGS}, got {weighting!r}.")
        if stem not in STEMMERS + ("auto",):
            raise ValueError(f"stem must be one of {STEMMERS + ('auto',)}, got {stem!r}.")
        self.vocabulary = np.asarray([str(t) for t in vocabulary], dtype=object)
        self.weighting = weighting
        n = len(self.vocabulary)
        self.idf = None if idf is None else np.asarray(idf, dtype=np.float64)
        self.column_sums = None if column_sums is None else np.asarray(column_sums,
                                                                       dtype=np.float64)
        if weighting != "counts" and (self.idf is None or self.idf.shape != (n,)):
            raise ValueError(f"the {weighting} weighting needs an idf vector of {n} values.")
        if weighting == "ncut" and (self.column_sums is None or self.column_sums.shape != (n,)):
            raise ValueError(f"the ncut weighting needs the {n} column sums of the training "
                             "TF-IDF matrix.")
        self.lowercase = bool(lowercase)
        self.stop_words = stop_words
        self.token_pattern = token_pattern
        self.stem = stem
        self.source = source
        self.min_df, self.max_df, self.max_features = min_df, max_df, max_features
        self._index = None

    @classmethod
    def from_corpus(cls, corpus, weighting="tfidf"):
        """The state of ``corpus.vectorize(weighting)``."""
        counts = corpus.counts()
        idf = column_sums = None
        if weighting != "counts":
            tfidf, idf = weight(counts, "tfidf")
            if weighting == "ncut":
                column_sums = np.asarray(tfidf.sum(axis=0)).ravel()
        stem = corpus.stem
        if stem == "auto" and corpus.texts is not None:
            stem = corpus._resolved_stem()
        options = corpus._options
        return cls(corpus.vocabulary, weighting, idf=idf, column_sums=column_sums,
                   lowercase=options["lowercase"], stop_words=options["stop_words"],
                   token_pattern=options["token_pattern"], stem=stem,
                   source="counts" if getattr(corpus, "from_counts", False) else "texts",
                   min_df=corpus.min_df, max_df=corpus.max_df,
                   max_features=corpus.max_features)

    @property
    def n_terms(self):
        return len(self.vocabulary)

    @property
    def index(self):
        """term -> column."""
        if self._index is None:
            self._index = {t: j for j, t in enumerate(self.vocabulary)}
        return self._index

    def tokenizer_options(self):
        """lowercase, stop_words, token_pattern (as :class:`~semnmf.Corpus` takes them)."""
        options = {"lowercase": self.lowercase, "stop_words": self.stop_words}
        if self.token_pattern is not None:
            options["token_pattern"] = self.token_pattern
        return options

    def analyzer(self, texts=()):
        """``analyze(text) -> terms`` as the corpus tokenized (``stem="auto"`` resolved on
        ``texts``)."""
        stem = self.stem
        if stem == "auto":
            stem = best_stemmer(texts, set(self.index), self.tokenizer_options())
        return make_analyzer(stem=stem, **self.tokenizer_options())

    # -- new documents ------------------------------------------------------------------
    def counts_from_texts(self, texts):
        """Term counts of raw texts over the vocabulary (CSR, n_texts x n_terms)."""
        if isinstance(texts, str):
            texts = [texts]
        texts = list(texts)
        bad = [i for i, t in enumerate(texts) if not isinstance(t, str)]
        if bad:
            raise ValueError(f"texts must all be strings; document {bad[0]} is "
                             f"{type(texts[bad[0]]).__name__}.")
        return count_texts(texts, self.analyzer(texts), self.index)

    def counts_from_counts(self, counts, vocabulary):
        """Counts over another ``vocabulary`` mapped onto this one by term (CSR); terms
        this vocabulary lacks are dropped. Also returns the number of columns kept."""
        counts = sp.csr_matrix(counts, dtype=np.float64)
        vocabulary = [str(t) for t in vocabulary]
        if len(vocabulary) != counts.shape[1]:
            raise ValueError(f"the vocabulary has {len(vocabulary)} terms but the count "
                             f"matrix has {counts.shape[1]} columns.")
        index = self.index
        target = np.array([index.get(t, -1) for t in vocabulary], dtype=np.int64)
        known = np.flatnonzero(target >= 0)
        mapping = sp.csr_matrix((np.ones(known.size), (known, target[known])),
                                shape=(len(vocabulary), self.n_terms))
        return (counts @ mapping).tocsr(), int(known.size)

    def weight(self, counts):
        """The weighting of the training matrix applied to ``counts`` (n x n_terms), with
        the training idf (and, for "ncut", the training column sums)."""
        counts = sp.csr_matrix(counts, dtype=np.float64)
        if counts.shape[1] != self.n_terms:
            raise ValueError(f"counts have {counts.shape[1]} columns; the vocabulary has "
                             f"{self.n_terms} terms.")
        if self.weighting == "counts":
            return counts
        X, _ = weight(counts, "tfidf", idf=self.idf)
        if self.weighting == "ncut":
            X = ncut_weight(X, self.column_sums)
        return sp.csr_matrix(X)

    def transform_texts(self, texts):
        """Raw texts -> weighted X over the vocabulary."""
        return self.weight(self.counts_from_texts(texts))

    def transform_counts(self, counts, vocabulary=None):
        """Counts (over ``vocabulary``; default this vocabulary, in order) -> weighted X."""
        if vocabulary is not None:
            counts, _ = self.counts_from_counts(counts, vocabulary)
        return self.weight(counts)

    # -- plain data ---------------------------------------------------------------------
    def to_record(self):
        """``(record, arrays)``: JSON-ready options and the numeric arrays (the vocabulary
        is written apart, one term per line)."""
        stop_words = self.stop_words
        if stop_words is not None and not isinstance(stop_words, str):
            stop_words = sorted(str(w) for w in stop_words)
        record = {"weighting": self.weighting, "n_terms": self.n_terms,
                  "source": self.source, "lowercase": self.lowercase,
                  "stop_words": stop_words, "token_pattern": self.token_pattern,
                  "stem": self.stem, "min_df": self.min_df, "max_df": self.max_df,
                  "max_features": self.max_features}
        arrays = {}
        if self.idf is not None:
            arrays["idf"] = self.idf
        if self.column_sums is not None:
            arrays["ncut_column_sums"] = self.column_sums
        return record, arrays

    @classmethod
    def from_record(cls, record, arrays, vocabulary):
        """The inverse of :meth:`to_record`; unknown keys are ignored."""
        n = record.get("n_terms")
        if n is not None and n != len(vocabulary):
            raise ValueError(f"the vocabulary has {len(vocabulary)} terms; the model says {n}.")
        stop_words = record.get("stop_words", "english")
        return cls(vocabulary, record.get("weighting", "tfidf"), idf=arrays.get("idf"),
                   column_sums=arrays.get("ncut_column_sums"),
                   lowercase=record.get("lowercase", True), stop_words=stop_words,
                   token_pattern=record.get("token_pattern"), stem=record.get("stem"),
                   source=record.get("source", "texts"), min_df=record.get("min_df"),
                   max_df=record.get("max_df", 1.0), max_features=record.get("max_features"))
