"""Corpora held in shards, vectorized shard by shard with bounded memory.

A dataset folder may hold its documents in shards, ``docs-00000.jsonl``, ... or
``docs-00000.parquet``, ... (docs/guide/large-corpora.md). :class:`ShardedCorpus` reads one
shard at a time and builds exactly the matrices of :class:`~semnmf.text.corpus.Corpus`:

- pass 1: per shard, the document frequency and count of every word
  (:class:`DocumentFrequencies`, mergeable); merged, they give the vocabulary and the idf;
- pass 2 (:meth:`ShardedCorpus.blocks`): per shard, its rows of X, one CSR block each;
- word-context counts (:meth:`ShardedCorpus.word_context`): per shard (contexts never cross
  a document), summed by :class:`CooccurrenceAccumulator`, then association and pruning.

Never the whole corpus is held. With a Dask client (``client=``) each pass maps over the
shard files on the workers, where the blocks of X stay.
"""

import itertools
import json
import os
import re
import sys
import warnings
from collections import Counter
from functools import partial

import numpy as np
import scipy.sparse as sp

from .._utils.blocks import BlockedMatrix, DaskExecutor, SerialExecutor, dask_client
from .._utils.validation import check_positive_int, reference_labels
from .association import association as association_of, association_inplace
from .cooccurrence import CONTEXTS, cooccurrence, sum_counts
from .pruning import budget_record, estimate_nnz, prune_to_budget, warn_if_emptied
from .corpus import LabelsMixin, token_sequences
from .language import resolve_stop_words
from .vectorize import (STEMMERS, TOKEN_PATTERN, check_stop_words, check_token_pattern,
                        make_analyzer, ncut_weight, weight)

__all__ = ["ShardedCorpus", "DocumentFrequencies", "CooccurrenceAccumulator", "shard_paths",
           "is_sharded_folder", "read_shard", "write_shards", "blocked_word_context"]

SHARD_NAME = re.compile(r"^docs-(\d+)\.(jsonl|parquet)$")
# same rule as Corpus (text.corpus.SMALL_CORPUS): min_df=None is 1 below 50 documents
SMALL_CORPUS = 50


def shard_paths(folder):
    """The shard files of a folder (``docs-NNNNN.jsonl`` / ``.parquet``), in name order."""
    names = sorted(f for f in os.listdir(folder) if SHARD_NAME.match(f))
    return [os.path.join(folder, f) for f in names]


def warn_missing_shards(paths):
    """Warn when the shards' numbers skip one (docs-00000, docs-00002: docs-00001 is
    missing, as after an interrupted copy); the shards present are read."""
    numbers = {int(SHARD_NAME.match(os.path.basename(p)).group(1)) for p in paths}
    last = max(numbers, default=-1)
    n_missing = last + 1 - len(numbers)
    if n_missing:
        first = list(itertools.islice((n for n in range(last) if n not in numbers), 5))
        shown = ", ".join(f"{n:05d}" for n in first) + (", ..." if n_missing > 5 else "")
        warnings.warn(f"{os.path.dirname(paths[0]) or '.'}: {n_missing} shard number(s) "
                      f"missing between docs-00000 and docs-{last:05d} ({shown}); "
                      f"reading the {len(paths)} present.", UserWarning, stacklevel=3)


def is_sharded_folder(path):
    return os.path.isdir(path) and bool(shard_paths(path))


def read_shard(path, text_column="text", label_column=None, encoding="utf-8"):
    """``(texts, labels, ids)`` of one shard; labels/ids entries are None when absent."""
    text_column = text_column or "text"
    if path.endswith(".parquet"):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ImportError(f"reading {path} needs pyarrow: pip install pyarrow (or the "
                              '"semnmf[dask]" extra)') from None
        table = pq.read_table(path)
        columns = table.column_names
        if text_column not in columns:
            raise ValueError(f"{path} has no column {text_column!r}; its columns are "
                             f"{columns}.")
        texts = [t if t is not None else "" for t in table.column(text_column).to_pylist()]
        label = label_column or "label"
        labels = (table.column(label).to_pylist() if label in columns else [None] * len(texts))
        ids = table.column("id").to_pylist() if "id" in columns else [None] * len(texts)
        return texts, labels, ids
    texts, labels, ids = [], [], []
    with open(path, encoding=encoding) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}, line {number}: not valid JSON ({exc.msg}).") from None
            if not isinstance(record, dict) or text_column not in record:
                raise ValueError(f"{path}, line {number}: expected an object with a field "
                                 f"{text_column!r}.")
            texts.append(record[text_column] if record[text_column] is not None else "")
            labels.append(record.get(label_column or "label"))
            ids.append(record.get("id"))
    return texts, labels, ids


def write_shards(folder, texts, labels=None, ids=None, shard_size=10_000, format="jsonl"):
    """Write documents as shards ``docs-00000.jsonl`` ... (or ``.parquet``) of
    ``shard_size`` documents each, atomically; returns the paths."""
    from .._utils.io import atomic_write, json_default

    os.makedirs(folder, exist_ok=True)
    paths = []
    for number, start in enumerate(range(0, len(texts), shard_size)):
        stop = min(start + shard_size, len(texts))
        path = os.path.join(folder, f"docs-{number:05d}.{format}")
        if format == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            columns = {"text": list(texts[start:stop])}
            if labels is not None:
                columns["label"] = [None if y is None else str(y) for y in labels[start:stop]]
            if ids is not None:
                columns["id"] = [str(i) for i in ids[start:stop]]
            table = pa.table(columns)
            atomic_write(path, lambda f, table=table: pq.write_table(table, f), binary=True)
        else:
            def write(f, start=start, stop=stop):
                for i in range(start, stop):
                    record = {"text": texts[i]}
                    if labels is not None:
                        record["label"] = labels[i]
                    if ids is not None:
                        record["id"] = ids[i]
                    f.write(json.dumps(record, default=json_default) + "\n")

            atomic_write(path, write)
        paths.append(path)
    return paths


# -- mergeable accumulators -------------------------------------------------------------
class DocumentFrequencies:
    """Document frequency and total count of every word, over the documents added so far.

    Mergeable: ``a.merge(b)`` adds ``b``'s counts to ``a`` (shards counted apart, on
    different workers, give the corpus's counts once merged)."""

    def __init__(self):
        self.df = Counter()
        self.totals = Counter()
        self.n_documents = 0

    def add(self, texts, analyzer):
        """Count the words of ``texts`` (tokenized by ``analyzer``)."""
        from sklearn.feature_extraction.text import CountVectorizer

        self.n_documents += len(texts)
        if not texts:
            return self
        try:
            counts = CountVectorizer(analyzer=analyzer, dtype=np.int64).fit(texts)
        except ValueError:  # empty vocabulary: no word in this shard
            return self
        A = counts.transform(texts).tocsc()
        names = counts.get_feature_names_out()
        df = np.diff(A.indptr)
        totals = np.asarray(A.sum(axis=0)).ravel()
        self.df.update(dict(zip(names.tolist(), df.tolist())))
        self.totals.update(dict(zip(names.tolist(), totals.tolist())))
        return self

    def merge(self, other):
        self.df.update(other.df)
        self.totals.update(other.totals)
        self.n_documents += other.n_documents
        return self

    def vocabulary(self, min_df=1, max_df=1.0, max_features=None):
        """The kept terms, in alphabetical order (CountVectorizer's rule: min_df <= df <=
        max_df, then the ``max_features`` most frequent by total count)."""
        n = self.n_documents
        low = min_df if isinstance(min_df, (int, np.integer)) else min_df * n
        high = max_df if isinstance(max_df, (int, np.integer)) else max_df * n
        terms = sorted(t for t, df in self.df.items() if low <= df <= high)
        if max_features is not None and len(terms) > max_features:
            totals = np.array([self.totals[t] for t in terms])
            keep = np.sort(np.argsort(-totals, kind="stable")[:max_features])
            terms = [terms[i] for i in keep]
        if not terms:
            raise ValueError(f"no term is left after pruning with min_df={min_df}, "
                             f"max_df={max_df}: lower min_df (e.g. min_df=1; CLI: --min-df 1) "
                             "or raise max_df (--max-df).")
        return np.asarray(terms, dtype=object)


class CooccurrenceAccumulator:
    """Word-word co-occurrence counts C (d x d, sparse) summed over batches of documents.

    ``add_counts(A)`` adds the document-context counts of a block of the document-term
    matrix (``binary=True`` counts documents, as Semantic-NMF's default document context);
    ``add_sequences(seqs, context, window)`` the sentence / window counts of a token stream
    (:func:`semnmf.text.context.cooccurrence`). Mergeable: ``a.merge(b)``. ``result()``
    applies ``min_count`` to the sum, :meth:`word_context` the association and pruning
    exactly as :func:`semnmf.text.context.word_context` does on the whole corpus.
    """

    def __init__(self, n_terms, dtype=np.float64):
        self.n_terms = int(n_terms)
        self.dtype = np.dtype(dtype)
        self.C = sp.csr_matrix((self.n_terms, self.n_terms), dtype=self.dtype)
        self.n_documents = 0
        self.partners = None  # estimate_nnz's per-word bound, summed (add_bound)

    def add_counts(self, A, binary=False):
        A = sp.csr_matrix(A, dtype=self.dtype, copy=binary)
        if binary:
            A.data[:] = 1
        self.n_documents += A.shape[0]
        if A.nnz:
            self._add(cooccurrence(counts=A, context="document", dtype=self.dtype))
        return self

    def add_sequences(self, sequences, context="window", window=10):
        self.n_documents += sequences.n_docs
        if sequences.tokens.size:
            self._add(cooccurrence(sequences=sequences, context=context, window=window,
                                   dtype=self.dtype))
        return self

    def add_bound(self, row_upper):
        """Add a batch's per-word bound on nnz (:func:`semnmf.text.context.estimate_nnz`'s
        ``row_upper``): the bound of the whole corpus is the sum, capped at n_terms - 1."""
        row_upper = np.asarray(row_upper, dtype=np.int64)
        self.partners = row_upper.copy() if self.partners is None else self.partners + row_upper
        return self

    def _add(self, C):
        """Add counts made for this accumulator (kept as they are when it is empty)."""
        self.C = sp.csr_matrix(C, dtype=self.dtype) if self.C.nnz == 0 else sum_counts(self.C, C)

    def merge(self, other):
        self.C = sum_counts(self.C, other.C)  # in this accumulator's dtype
        self.n_documents += other.n_documents
        if other.partners is not None:
            self.add_bound(other.partners)
        return self

    def __add__(self, other):  # a new accumulator: ex.reduce sums them (ex.fold merges)
        total = CooccurrenceAccumulator(self.n_terms, self.dtype)
        return total.merge(self).merge(other)

    def copy(self):
        return CooccurrenceAccumulator(self.n_terms, self.dtype).merge(self)

    def result(self, min_count=1):
        C = sp.csr_matrix(self.C)
        C.sort_indices()
        if min_count > 1:
            C = sp.csr_matrix(C.multiply(C >= min_count))
            C.eliminate_zeros()
        return C

    def word_context(self, association="ppmi", shift=2, min_count=1, top_k=None,
                     threshold=None, dtype=None, max_nnz=None, return_info=False,
                     context=None, consume=False, warn=True):
        """M from the summed counts; ``max_nnz`` / ``return_info`` as
        :func:`semnmf.text.context.word_context` (``context="document"`` with a bound added
        by :meth:`add_bound` reproduces its budget on the streamed document context).
        ``consume=True`` turns the counts into M in place (no second d x d matrix unless
        ``dtype`` differs from the counts'); the accumulator holds no counts afterwards."""
        dtype = self.dtype if dtype is None else dtype
        max_nnz, info = budget_record(max_nnz, top_k, threshold, min_count)
        row_upper = None
        if max_nnz is not None:
            if self.partners is not None:
                row_upper = np.minimum(self.partners, max(self.n_terms - 1, 0))
                info["estimated_nnz_upper"] = int(row_upper.sum())
        C = self.result(min_count)
        if consume:  # kind and shift checked before the counts are touched
            M = association_inplace(sp.csr_matrix(C, dtype=dtype), association, shift)
            self.C = sp.csr_matrix((self.n_terms, self.n_terms), dtype=self.dtype)
        else:
            M = association_of(C, kind=association, shift=shift, dtype=dtype)
        del C
        return prune_to_budget(M, top_k=top_k, threshold=threshold, max_nnz=max_nnz,
                               row_upper=row_upper if context == "document" else None,
                               info=info, return_info=return_info, warn=warn)


def _word_context_of(total, options):
    """The last step of a fold of co-occurrence counts, where the sum lies (a worker):
    ``(M, record of its pruning)`` from the counts, which are consumed. The record's
    warning is raised by the caller (:func:`_context_result`), not on the worker."""
    return total.word_context(consume=True, return_info=True, warn=False, **options)


def _context_result(outcome, return_info):
    M, info = outcome
    warn_if_emptied(info, stacklevel=3)
    return (M, info) if return_info else M


# -- shard tasks (module level: they run on the workers) ---------------------------------
def _scan_shard(path, reading, analyzing):
    texts, labels, ids = read_shard(path, **reading)
    return DocumentFrequencies().add(texts, make_analyzer(**analyzing)), labels, ids


def _shard_counts(path, reading, analyzing, vocabulary):
    from sklearn.feature_extraction.text import CountVectorizer

    texts, _, _ = read_shard(path, **reading)
    vectorizer = CountVectorizer(analyzer=make_analyzer(**analyzing), vocabulary=vocabulary,
                                 dtype=np.float64)
    return vectorizer.transform(texts).tocsr(), texts


def _shard_block(path, reading, analyzing, vocabulary, weighting, idf, dtype):
    counts, _ = _shard_counts(path, reading, analyzing, vocabulary)
    X, _ = weight(counts, weighting, idf=idf)
    return X.astype(dtype)


def _column_sums(X):
    return np.asarray(X.sum(axis=0), dtype=np.float64).ravel()


def _ncut_rows(X, column_sums, dtype):
    """A block's rows of :func:`~semnmf.text.vectorize.ncut_weight` given the column sums
    of the whole matrix."""
    return ncut_weight(X, column_sums).astype(dtype)


def _shard_context(path, reading, analyzing, vocabulary, context, window, dtype,
                   bound=False):
    counts, texts = _shard_counts(path, reading, analyzing, vocabulary)
    accumulator = CooccurrenceAccumulator(len(vocabulary), dtype)
    if context == "document":
        if bound:
            accumulator.add_bound(estimate_nnz(counts=counts, context=context).row_upper)
        return accumulator.add_counts(counts)
    index = dict(vocabulary)
    sequences = token_sequences(texts, make_analyzer(**analyzing), index, len(index))
    if bound:
        accumulator.add_bound(estimate_nnz(sequences=sequences, context=context,
                                           window=window).row_upper)
    return accumulator.add_sequences(sequences, context=context, window=window)


def _block_context(Xb, n_terms, dtype):
    return CooccurrenceAccumulator(n_terms, dtype).add_counts(Xb, binary=True)


def blocked_word_context(X, association="ppmi", dtype=None):
    """Semantic-NMF's default word-context matrix (document contexts, co-occurrence =
    number of documents holding both words, then PPMI;
    :func:`semnmf.models.semantic.document_context`) of a
    :class:`~semnmf._utils.blocks.BlockedMatrix`: per-block co-occurrence counts, reduced."""
    dtype = X.dtype if dtype is None else dtype
    outcome = X.executor.fold(
        _block_context, X.blocks, X.n_cols, dtype,
        then=partial(_word_context_of, options={"association": association, "dtype": dtype}))
    return _context_result(outcome, return_info=False)


class ShardedCorpus(LabelsMixin):
    """A corpus whose documents are read from shard files one at a time.

    The API mirrors :class:`~semnmf.text.corpus.Corpus` (``vocabulary``, ``labels``,
    ``ids``, ``n_documents``, ``vectorize``, ``tfidf``, ``counts``, ``word_context``) and
    gives the same matrices, exactly; :meth:`blocks` gives X as row blocks, one per shard,
    without ever holding the whole matrix.

    Parameters
    ----------
    source : str or list of str
        A folder holding ``docs-NNNNN.jsonl`` / ``docs-NNNNN.parquet`` shards, or the
        list of shard files (in row order).
    text_column, label_column, encoding : as :func:`semnmf.load_dataset`
    name : str, optional
    lowercase, stop_words, token_pattern, stem, min_df, max_df, max_features
        As :class:`~semnmf.text.corpus.Corpus` (``stem="auto"`` means no stemming for texts,
        as there).
    client : distributed.Client, optional
        Map the passes over the shards on its workers (the blocks of :meth:`blocks` then
        stay there). Without one, the shards are read here, one after the other.
    """

    texts = None          # never held: see to_corpus()
    from_counts = False

    def __init__(self, source, *, text_column=None, label_column=None, encoding="utf-8",
                 name=None, lowercase=True, stop_words="english", token_pattern=TOKEN_PATTERN,
                 stem=None, min_df=None, max_df=1.0, max_features=None, client=None):
        if isinstance(source, (str, os.PathLike)):
            folder = os.fspath(source)
            self.paths = shard_paths(folder)
            if not self.paths:
                raise ValueError(f"{folder} holds no shard (docs-00000.jsonl or "
                                 "docs-00000.parquet, ...).")
            warn_missing_shards(self.paths)
            # abspath: "." is named by the folder it stands for (as datasets.source_name)
            self.name = name or os.path.basename(os.path.abspath(folder)) or "corpus"
        else:
            self.paths = [os.fspath(p) for p in source]
            if not self.paths:
                raise ValueError("a ShardedCorpus needs at least one shard file.")
            self.name = name or "corpus"
        if stem not in STEMMERS + ("auto",):
            raise ValueError(f"stem must be one of {STEMMERS + ('auto',)}, got {stem!r}.")
        self.stem = None if stem == "auto" else stem
        self._reading = {"text_column": text_column, "label_column": label_column,
                         "encoding": encoding}
        stop_words = check_stop_words(stop_words)
        # the language of the first shard (a sample of the corpus, read once more)
        stop_words, self.language = resolve_stop_words(
            stop_words, read_shard(self.paths[0], **self._reading)[0]
            if stop_words == "auto" or isinstance(stop_words, dict) else None)
        self._analyzing = {"lowercase": lowercase, "stop_words": stop_words,
                           "token_pattern": check_token_pattern(token_pattern),
                           "stem": self.stem}
        self.client = dask_client(client) if client is not None else None
        self.executor = SerialExecutor() if self.client is None else DaskExecutor(self.client)
        # pass 1: document frequencies, labels and ids, shard by shard
        frequencies = DocumentFrequencies()
        labels, ids, self.sizes = [], [], []
        scans = self.executor.map(_scan_shard, self.paths, self._reading, self._analyzing)
        for scan in scans:  # merged here in shard order (one counter of words at a time)
            df, shard_labels, shard_ids = scan.result() if hasattr(scan, "result") else scan
            frequencies.merge(df)
            # a few distinct label strings, each stored once (not once per document)
            labels.extend(sys.intern(y) if isinstance(y, str) else y for y in shard_labels)
            ids.extend(shard_ids)
            self.sizes.append(len(shard_labels))
        n = frequencies.n_documents
        if n == 0:
            raise ValueError("the corpus is empty: no documents in the shards.")
        self.min_df_automatic = min_df is None
        if min_df is None:
            min_df = 1 if n < SMALL_CORPUS else 2
        self.min_df, self.max_df, self.max_features = min_df, max_df, max_features
        self.vocabulary = frequencies.vocabulary(min_df, max_df, max_features)
        self._index = {t: j for j, t in enumerate(self.vocabulary.tolist())}
        self.document_frequencies = np.array([frequencies.df[t] for t in self.vocabulary],
                                             dtype=np.int64)
        # scikit-learn's smoothed idf from the global document frequencies
        self._idf = np.log((1.0 + n) / (1.0 + self.document_frequencies)) + 1.0
        if all(v is None for v in ids):  # row numbers: fixed-width strings, no objects
            self.ids = np.arange(n).astype(f"<U{len(str(max(n - 1, 0)))}")
        else:
            self.ids = np.asarray([str(i) if v is None else str(v) for i, v in enumerate(ids)],
                                  dtype=object)
        del ids
        self.labels = reference_labels(labels)

    # -- facts, as Corpus ------------------------------------------------------------------
    def __len__(self):
        return self.n_documents

    @property
    def n_documents(self):
        return int(sum(self.sizes))

    @property
    def n_terms(self):
        return len(self.vocabulary)

    @property
    def n_shards(self):
        return len(self.paths)

    def __repr__(self):
        labelled = f", {self.n_classes} classes" if self.labels is not None else ""
        return (f"ShardedCorpus({self.name!r}: {self.n_documents} documents x {self.n_terms} "
                f"terms in {self.n_shards} shards{labelled})")

    def default_context(self):
        return "window"

    # -- matrices ----------------------------------------------------------------------------
    def blocks(self, weighting="tfidf", dtype=np.float64):
        """X as a :class:`~semnmf._utils.blocks.BlockedMatrix`, one CSR block per shard
        (pass 2): "tfidf" (global idf, unit L2 rows), "counts", or "ncut" (the tf-idf
        rows scaled by D^{-1/2}, D = X (Xᵀ1) with the column sums Xᵀ1 of the whole corpus,
        one reduction over the blocks, as :func:`~semnmf.text.vectorize.ncut_weight`). On
        a Dask client the blocks stay on the workers."""
        vocabulary = self.executor.share(self._index)
        idf = None if weighting == "counts" else self._idf
        base = "tfidf" if weighting == "ncut" else weighting
        parts = self.executor.map(_shard_block, self.paths, self._reading, self._analyzing,
                                  vocabulary, base, idf,
                                  np.dtype(np.float64 if weighting == "ncut" else dtype))
        if weighting == "ncut":                 # in float64, as Corpus.vectorize, then cast
            tfidf = parts
            column_sums = self.executor.reduce(self.executor.map(_column_sums, tfidf))
            parts = self.executor.map(_ncut_rows, tfidf, self.executor.share(column_sums),
                                      np.dtype(dtype))
            self.executor.release(tfidf)
        return BlockedMatrix(parts, self.sizes, self.n_terms, self.executor, dtype)

    def vectorize(self, weighting="tfidf", dtype=np.float64):
        """The whole weighted matrix, as :meth:`Corpus.vectorize` (gathered here)."""
        return self.blocks(weighting, dtype).gather()

    def tfidf(self, dtype=np.float64):
        return self.vectorize("tfidf", dtype)

    def counts(self):
        return self.vectorize("counts")

    def word_context(self, context="window", window=10, association="ppmi", shift=2,
                     min_count=1, top_k=None, threshold=None, dtype=np.float64, max_nnz=None,
                     return_info=False):
        """Word-context matrix M, as :meth:`Corpus.word_context`: co-occurrence counts per
        shard, summed (:class:`CooccurrenceAccumulator`), then association and pruning.

        ``max_nnz`` and ``return_info`` as for :func:`semnmf.text.context.word_context`
        (the same M as the in-memory corpus). One running sum and one shard's counts are
        held per thread, and M is made from the sum in place where it is; only M comes
        back.
        """
        if context not in CONTEXTS:
            raise ValueError(f"context must be one of {CONTEXTS}, got {context!r}.")
        if max_nnz is not None:
            max_nnz = check_positive_int(max_nnz, "max_nnz")
        vocabulary = self.executor.share(self._index)
        options = {"association": association, "shift": shift, "min_count": min_count,
                   "top_k": top_k, "threshold": threshold, "dtype": dtype,
                   "max_nnz": max_nnz, "context": context}
        # one running sum of counts per worker thread, and M made where the sum lies
        outcome = self.executor.fold(_shard_context, self.paths, self._reading,
                                     self._analyzing, vocabulary, context, window,
                                     np.dtype(dtype), max_nnz is not None,
                                     then=partial(_word_context_of, options=options))
        return _context_result(outcome, return_info)

    def to_corpus(self, **options):
        """The whole corpus in memory, as a :class:`~semnmf.text.corpus.Corpus` (texts
        re-vectorized with the same options: the same vocabulary and matrices)."""
        from .corpus import Corpus

        texts = []
        for path in self.paths:
            texts.extend(read_shard(path, **self._reading)[0])
        settings = dict(self._analyzing, min_df=self.min_df, max_df=self.max_df,
                        max_features=self.max_features, name=self.name)
        settings.update(options)
        labels = None if self.labels is None else list(self.labels)
        return Corpus(texts, labels, list(self.ids), **settings)
