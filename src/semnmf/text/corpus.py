"""The Corpus: documents (texts and/or a count matrix), labels, vocabulary, and the
matrices built from them (weighted X, token streams, word-context M)."""

import json
import os
import warnings

import numpy as np
import scipy.io
import scipy.sparse as sp

from .._utils.io import atomic_write, json_default
from .._utils.validation import reference_labels
from .context import CONTEXTS, TokenSequences, word_context
from .language import resolve_stop_words
from .vectorize import (STEMMERS, TOKEN_PATTERN, best_stemmer, check_stop_words,
                        check_token_pattern, count_matrix, count_texts, make_analyzer,
                        prune_columns, split_sentences, weight)

# Below this many documents, ``min_df=None`` keeps words seen in one document (min_df=1):
# on a handful of documents most words occur once, and min_df=2 would leave too few terms
# (or none at all: a four-document corpus). From this size on, min_df=2 drops the words of
# a single document, which cannot link documents.
SMALL_CORPUS = 50


def duplicate_terms(vocabulary, limit=5):
    """The first ``limit`` repeated terms of a vocabulary, each with the (0-based)
    positions where it occurs; an empty list when every term is distinct."""
    positions = {}
    for index, term in enumerate(vocabulary):
        positions.setdefault(term, []).append(index)
    repeated = [(term, where) for term, where in positions.items() if len(where) > 1]
    repeated.sort(key=lambda tw: tw[1][1])
    return repeated[:limit], len(repeated)


def token_sequences(texts, analyze, index, n_terms):
    """In-vocabulary token ids of ``texts`` with document and sentence boundaries (what
    :meth:`Corpus.sequences` holds; also used shard by shard)."""
    tokens, doc_ptr, sent_ptr = [], [0], [0]
    for text in texts:
        for sentence in split_sentences(text):
            ids = [index[t] for t in analyze(sentence) if t in index]
            if ids:
                tokens.extend(ids)
                sent_ptr.append(len(tokens))
        doc_ptr.append(len(tokens))
    return TokenSequences(tokens=np.asarray(tokens, dtype=np.int32),
                          doc_ptr=np.asarray(doc_ptr, dtype=np.int64),
                          sent_ptr=np.asarray(sent_ptr, dtype=np.int64), n_terms=n_terms)


class LabelsMixin:
    """What a corpus says of its labels (``labels``: array of labels or None, a missing
    label as None; ``n_documents``): shared by :class:`Corpus` and the sharded corpus."""

    @property
    def n_classes(self):
        """Number of distinct labels (unlabelled documents are no class), or None without
        labels."""
        if self.labels is None:
            return None
        return len({y for y in self.labels.tolist() if y is not None})

    @property
    def labelled(self):
        """Boolean mask of the documents with a label (all False without labels)."""
        if self.labels is None:
            return np.zeros(self.n_documents, dtype=bool)
        return np.asarray([y is not None for y in self.labels], dtype=bool)

    @property
    def n_unlabelled(self):
        """Number of documents without a label (all of them when the corpus has none)."""
        return int(self.n_documents - self.labelled.sum())


def _warn_repeated_ids(ids):
    """Results name documents by id (assignments.csv): a repeated id is warned."""
    unique, first, counts = np.unique(ids.astype(str), return_index=True, return_counts=True)
    repeated = np.flatnonzero(counts > 1)
    if repeated.size:
        order = repeated[np.argsort(first[repeated])]
        shown = ", ".join(repr(str(unique[r])) for r in order[:3])
        warnings.warn(f"{repeated.size} document id(s) are used more than once ({shown}"
                      f"{', ...' if repeated.size > 3 else ''}); the results name documents by "
                      "id, so give each document its own.", UserWarning, stacklevel=3)


class Corpus(LabelsMixin):
    """A collection of documents ready for clustering.

    A corpus is built from raw texts (vectorized with the options below), from a count
    matrix with its vocabulary (a dataset folder's ``counts.mtx``), or both: then the
    count matrix is the document-term matrix and the texts are used only for what needs
    word order (sentence and window contexts).

    Parameters
    ----------
    texts : list of str, optional
    labels : sequence, optional
        One label per document (any hashable values), used for evaluation only.
    ids : sequence of str, optional
        Document identifiers (default: "0", "1", ...).
    counts : sparse matrix (n_documents, n_terms), optional
        Term counts; when given, the texts are not re-vectorized.
    vocabulary : sequence of str, optional
        Terms of the columns of ``counts``.
    name : str, optional
    lowercase : bool, default=True
    stop_words : "auto", "english", a language code, "none", None or list of str, \
default="english"
        Words left out of the vocabulary: "auto" detects the texts' language and takes its
        list (:func:`semnmf.text.language.resolve_stop_words`), "english" scikit-learn's
        list, an ISO 639-1 code ("fr", "de", ...) that language's ``stopwordsiso`` list,
        none ("none" or None), or a list of your own. ``language`` records what was used.
    token_pattern : str
        Regular expression of a token (as scikit-learn's CountVectorizer). The default,
        :data:`semnmf.text.vectorize.TOKEN_PATTERN`, takes words of two or more Unicode
        letters, Chinese, Japanese and Korean runs cut into character bigrams
        (:func:`semnmf.text.vectorize.make_analyzer`).
    stem : {None, "porter", "english", "auto"}, default=None
        Stemming (PyStemmer). "auto" is for texts attached to a fixed vocabulary: the
        stemmer that covers most of the vocabulary is picked.
    min_df, max_df, max_features : as CountVectorizer
        Applied to the vocabulary in both modes. ``min_df=None`` (default): for texts, 2
        (a word in one document cannot link documents) from :data:`SMALL_CORPUS` = 50
        documents on, and 1 below; 1 for a given count matrix. ``min_df_automatic`` says
        whether the value used was chosen so.

    Notes
    -----
    Labels that are None, empty strings or NaN mark *unlabelled* documents: they are no
    class (``n_classes`` does not count them) and are left out of the scores; a corpus
    whose labels are all missing has ``labels = None``.

    A count matrix with non-integer values (already weighted?) is accepted, but
    :meth:`vectorize` warns when it weights it again (TF-IDF, ncut): pass
    ``weighting="counts"`` to use such a matrix as it is.
    """

    def __init__(self, texts=None, labels=None, ids=None, *, counts=None, vocabulary=None,
                 name=None, lowercase=True, stop_words="english", token_pattern=TOKEN_PATTERN,
                 stem=None, min_df=None, max_df=1.0, max_features=None):
        if texts is None and counts is None:
            raise ValueError("a Corpus needs texts or a count matrix.")
        if texts is not None:
            if isinstance(texts, str):
                raise ValueError("texts must be a list of strings, not a single string.")
            texts = list(texts)
            bad = [i for i, t in enumerate(texts) if not isinstance(t, str)]
            if bad:
                raise ValueError(
                    f"texts must all be strings; document {bad[0]} is {type(texts[bad[0]]).__name__}"
                    f" ({len(bad)} non-string document(s) in all).")
            if not texts:
                raise ValueError("the corpus is empty: no documents were given.")
        if stem not in STEMMERS + ("auto",):
            raise ValueError(f"stem must be one of {STEMMERS + ('auto',)}, got {stem!r}.")
        n_labels = None
        if labels is not None:  # checked before the vocabulary is built
            labels = list(labels)
            n_labels, labels = len(labels), reference_labels(labels)
        self.texts = texts
        self.name = name or "corpus"
        stop_words = check_stop_words(stop_words)
        if texts is None and (stop_words == "auto" or isinstance(stop_words, dict)):
            stop_words = None  # counts only: no text to detect a language in, none to read
        #: what the stop words are (:class:`semnmf.text.language.LanguageChoice`)
        stop_words, self.language = resolve_stop_words(stop_words, texts)
        self._options = dict(lowercase=lowercase, stop_words=stop_words,
                             token_pattern=check_token_pattern(token_pattern))
        self.stem = stem
        self.min_df_automatic = min_df is None
        if min_df is None:
            n_rows = counts.shape[0] if counts is not None else len(texts)
            min_df = 1 if counts is not None or n_rows < SMALL_CORPUS else 2
        self.min_df, self.max_df, self.max_features = min_df, max_df, max_features
        self._idf = None
        self._sequences = None
        self.from_counts = counts is not None  # vocabulary given with counts, not built

        if counts is not None:
            counts = sp.csr_matrix(counts, dtype=np.float64)
            if texts is not None and len(texts) != counts.shape[0]:
                raise ValueError(
                    f"{len(texts)} texts but the count matrix has {counts.shape[0]} rows.")
            if counts.nnz and counts.data.min() < 0:
                raise ValueError("the count matrix has negative entries; counts must be >= 0.")
            if vocabulary is None:
                vocabulary = [f"t{j}" for j in range(counts.shape[1])]
            vocabulary = np.asarray(list(vocabulary), dtype=object)
            if len(vocabulary) != counts.shape[1]:
                raise ValueError(
                    f"the vocabulary has {len(vocabulary)} terms but the count matrix has "
                    f"{counts.shape[1]} columns.")
            repeated, n_repeated = duplicate_terms(vocabulary.tolist())
            if repeated:
                shown = "; ".join(f"{term!r} at positions {', '.join(map(str, where))}"
                                  for term, where in repeated)
                raise ValueError(
                    f"the vocabulary repeats {n_repeated} term(s) ({shown}): each column "
                    "needs its own term, or the topics would show wrong words.")
            keep = prune_columns(counts, min_df=min_df, max_df=max_df, max_features=max_features)
            self._counts, self.vocabulary = counts[:, keep].tocsr(), vocabulary[keep]
        else:
            if stem == "auto":
                stem = None
            self.stem = stem
            self._counts, self.vocabulary = count_matrix(
                texts, self._analyzer(stem), min_df=min_df, max_df=max_df,
                max_features=max_features)
        n = self._counts.shape[0]
        self.ids = np.asarray([str(i) for i in range(n)] if ids is None else [str(i) for i in ids],
                              dtype=object)
        if len(self.ids) != n:
            raise ValueError(f"{len(self.ids)} ids for {n} documents.")
        if ids is not None:
            _warn_repeated_ids(self.ids)
        if n_labels is not None and n_labels != n:
            raise ValueError(f"{n_labels} labels for {n} documents: give one label per document.")
        self.labels = labels

    # -- basic facts -------------------------------------------------------------------
    def __len__(self):
        return self._counts.shape[0]

    @property
    def n_documents(self):
        return self._counts.shape[0]

    @property
    def n_terms(self):
        return self._counts.shape[1]

    def __repr__(self):
        labelled = f", {self.n_classes} classes" if self.labels is not None else ""
        text = ", with texts" if self.texts is not None else ""
        return (f"Corpus({self.name!r}: {self.n_documents} documents x {self.n_terms} terms"
                f"{labelled}{text})")

    def _analyzer(self, stem=None):
        return make_analyzer(stem=stem, **self._options)

    # -- matrices ----------------------------------------------------------------------
    def counts(self):
        """Raw term counts, CSR of shape (n_documents, n_terms)."""
        return self._counts.copy()

    def vectorize(self, weighting="tfidf", dtype=np.float64):
        """Weighted document-term matrix: "tfidf" (L2 rows, default), "counts" or "ncut".

        Warns when the count matrix holds non-integer values and ``weighting`` is not
        "counts": an already weighted matrix would be weighted twice."""
        if weighting != "counts" and self._counts.nnz:
            fractional = np.mod(self._counts.data, 1) != 0
            if fractional.any():
                example = float(self._counts.data[fractional.argmax()])
                warnings.warn(
                    f"the count matrix of {self.name!r} holds non-integer values (e.g. "
                    f"{example:.4g}), so it is not raw counts; it is weighted with "
                    f"{weighting} as if it were. If it is already weighted, pass "
                    "weighting='counts' (CLI: --weighting counts) to use it as it is.",
                    UserWarning, stacklevel=2)
        X, idf = weight(self._counts, weighting)
        if idf is not None:
            self._idf = idf
        return X.astype(dtype)

    def tfidf(self, dtype=np.float64):
        """TF-IDF matrix with unit-L2 rows, CSR (n_documents, n_terms): the papers' input."""
        return self.vectorize("tfidf", dtype=dtype)

    def transform(self, texts, weighting="tfidf"):
        """Vectorize new texts on this corpus's vocabulary (and idf) for ``model.transform``."""
        if isinstance(texts, str):
            texts = [texts]
        texts = list(texts)
        index = {t: j for j, t in enumerate(self.vocabulary)}
        counts = count_texts(texts, self._analyzer(self._resolved_stem(texts)), index)
        if weighting != "counts" and self._idf is None:  # tfidf and ncut use the corpus idf
            self.vectorize("tfidf")
        X, _ = weight(counts, weighting, idf=self._idf if weighting != "counts" else None)
        return X

    # -- word order ------------------------------------------------------------------
    def _resolved_stem(self, texts=None):
        if self.stem != "auto":
            return self.stem
        # Pick the stemmer whose output covers most of the fixed vocabulary, judged on the
        # corpus texts; a corpus with only counts judges on the texts being transformed
        # (without remembering the choice, which depends on them).
        own = self.texts is not None
        best = best_stemmer(self.texts if own else list(texts or []),
                            set(self.vocabulary.tolist()), self._options)
        if own:
            self.stem = best
        return best

    def sequences(self):
        """The corpus as a flat stream of in-vocabulary token ids, with document and
        sentence boundaries (:class:`~semnmf.text.context.TokenSequences`)."""
        if self._sequences is not None:
            return self._sequences
        if self.texts is None:
            raise ValueError(
                f"corpus {self.name!r} has no raw text (only a count matrix), so sentence and "
                "window contexts are not available; use context='document' (CLI: --context "
                "document), which works from the counts.")
        index = {t: j for j, t in enumerate(self.vocabulary)}
        self._sequences = token_sequences(self.texts, self._analyzer(self._resolved_stem()),
                                          index, self.n_terms)
        return self._sequences

    def default_context(self):
        """The context a word-context matrix uses by default (``--context auto``):
        ``"window"`` when raw text exists, else ``"document"`` (counts hold no word order)."""
        return "window" if self.texts is not None else "document"

    def word_context(self, context="window", window=10, association="ppmi", shift=2,
                     min_count=1, top_k=None, threshold=None, dtype=np.float64, max_nnz=None,
                     return_info=False):
        """Word-context matrix M (n_terms x n_terms, sparse) for :class:`SemanticNMF`.

        Parameters
        ----------
        context : {"document", "sentence", "window"}
            Which words co-occur: same document (works from counts alone), same sentence,
            or at most ``window`` words apart (``window`` words on each side; the SIGIR
            paper uses L = 10).
        window : int, default=10
            Words on each side for ``context="window"``.
        association : {"ppmi", "pmi", "sppmi"}
            PPMI (Neurocomputing paper eq. 3, negatives set to 0) or shifted PPMI
            max(PMI − log shift, 0) (SIGIR paper, shift N = 2).
        shift : float, default=2
            N of the shifted PPMI (``association="sppmi"``).
        min_count, top_k, threshold : pruning (see :func:`semnmf.text.context.word_context`).
        dtype : {numpy.float64, numpy.float32}, default=numpy.float64
            dtype of M.
        max_nnz, return_info : budget of non-zeros and the record of what was pruned (see
            :func:`semnmf.text.context.word_context`).
        """
        return word_context(**self._context_source(context, window), context=context,
                            association=association, shift=shift, min_count=min_count,
                            top_k=top_k, threshold=threshold, dtype=dtype, max_nnz=max_nnz,
                            return_info=return_info)

    def _context_source(self, context, window):
        """What the co-occurrences of ``context`` are counted from: the counts (document
        context) or the token stream and its window."""
        if context not in CONTEXTS:
            raise ValueError(f"context must be one of {CONTEXTS}, got {context!r}.")
        if context == "document":
            return {"counts": self._counts}
        return {"sequences": self.sequences(), "window": window}

    # -- output ------------------------------------------------------------------------
    def to_folder(self, path):
        """Write the corpus as a dataset folder (counts.mtx, vocab.txt, labels.txt,
        docs.jsonl), each file atomically."""
        os.makedirs(path, exist_ok=True)
        counts = (self._counts.astype(np.int64) if np.all(np.mod(self._counts.data, 1) == 0)
                  else self._counts)
        atomic_write(os.path.join(path, "counts.mtx"), lambda f: scipy.io.mmwrite(f, counts),
                     binary=True)
        atomic_write(os.path.join(path, "vocab.txt"),
                     lambda f: f.writelines(f"{t}\n" for t in self.vocabulary))
        if self.labels is not None:
            atomic_write(os.path.join(path, "labels.txt"),
                         lambda f: f.writelines(f"{label}\n" for label in self.labels))
        if self.texts is not None:
            def documents(f):
                for i, text in enumerate(self.texts):
                    record = {"text": text, "id": self.ids[i]}
                    if self.labels is not None:
                        record["label"] = self.labels[i]
                    f.write(json.dumps(record, default=json_default) + "\n")

            atomic_write(os.path.join(path, "docs.jsonl"), documents)

    # -- word embeddings -----------------------------------------------------------------
    def surface_forms(self):
        """The words behind each (stemmed) vocabulary term, most frequent first: term →
        list of (form, count), by decreasing count (ties: alphabetical), for the terms that
        occur in the texts, tokenized as for the vocabulary but not stemmed. Used by
        :meth:`embedding_context` to look stems up in a word embedding ("preliminari" →
        "preliminary")."""
        if self.texts is None:
            raise ValueError(
                f"corpus {self.name!r} has no raw text (only a count matrix), so the surface "
                "forms of its terms are unknown; pass surface_forms yourself or use an "
                "unstemmed vocabulary.")
        from collections import Counter

        stem = self._resolved_stem()
        analyze = self._analyzer(None)
        forms = Counter()
        for text in self.texts:
            forms.update(analyze(text))
        if stem is None:
            stems = list(forms)
        else:
            import Stemmer

            stems = Stemmer.Stemmer(stem).stemWords(list(forms))
        vocab = set(self.vocabulary.tolist())
        result = {}
        for form, term in zip(forms, stems):
            if term in vocab:
                result.setdefault(term, []).append((form, forms[form]))
        for entries in result.values():
            entries.sort(key=lambda fc: (-fc[1], fc[0]))
        return result

    def glove_context(self, n_components=100, *, context="window", window=10, x_max=100.0,
                      alpha=0.75, learning_rate=0.15, max_iter=25, vectors="sum", n_jobs=1,
                      random_state=None, dtype=np.float64, verbose=0, return_model=False):
        """PGLOVE word-context matrix (Neurocomputing paper §5.4): GloVe on this corpus.

        :func:`semnmf.text.glove.glove_context` (the paper's settings, and the other
        parameters) of this corpus's co-occurrence counts in a ``window``-word window on each
        side, or in the same document with ``context="document"`` (corpora without raw
        text).

        Returns
        -------
        M : ndarray of shape (n_terms, n_components), non-negative
        model : GloVe, only with ``return_model=True``
        """
        from .context import cooccurrence
        from .glove import glove_context

        C = cooccurrence(**self._context_source(context, window), context=context, dtype=dtype)
        return glove_context(C, n_components, x_max=x_max, alpha=alpha,
                             learning_rate=learning_rate, max_iter=max_iter, vectors=vectors,
                             n_jobs=n_jobs, random_state=random_state, dtype=dtype,
                             verbose=verbose, return_model=return_model)

    def embedding_context(self, vectors, *, positive="clip", oov="zero", surface_forms="auto",
                          lowercase=True, dtype=np.float64):
        """Word-context matrix M (n_terms x d') from an external word embedding.

        Aligns ``vectors`` to this corpus's vocabulary with
        :func:`semnmf.text.embeddings.embedding_context`. ``surface_forms="auto"`` looks
        stems up through :meth:`surface_forms` when the vocabulary is stemmed and the raw
        texts are there; pass a dict to give them yourself, or None to look up the terms
        as they are.

        Returns
        -------
        M : ndarray of shape (n_terms, d'), non-negative
        coverage : semnmf.text.embeddings.Coverage
            Terms found, also as a fraction of the corpus tokens.
        """
        from .embeddings import embedding_context

        if isinstance(surface_forms, str):
            if surface_forms != "auto":
                raise ValueError(
                    f"surface_forms must be 'auto', None or a dict, got {surface_forms!r}.")
            stemmed = self.texts is not None and self._resolved_stem() is not None
            surface_forms = self.surface_forms() if stemmed else None
        term_counts = np.asarray(self._counts.sum(axis=0)).ravel()
        return embedding_context(self.vocabulary, vectors, positive=positive, oov=oov,
                                 surface_forms=surface_forms, lowercase=lowercase,
                                 term_counts=term_counts, dtype=dtype)
