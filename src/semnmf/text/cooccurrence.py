"""Word-word co-occurrence counts: how often two words occur in the same context.

The first step of the word-context matrix M of Semantic-NMF (:mod:`semnmf.text.context`):
:func:`cooccurrence` builds C from :class:`TokenSequences`; :class:`DocumentCooccurrence`
gives the document context by blocks of rows. The compiled kernels
(:mod:`._context_kernels`) are imported when first needed (Dask workers need no numba).

References
----------
.. [NSF] M. Febrissy, A. Salah, M. Ailem, M. Nadif, "Improving NMF clustering by leveraging
   contextual relationships among words", Neurocomputing 495 (2022) 105-117
   (``papers/semantic-nmf-neurocomputing-2022.txt``), section 3.
"""

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._utils.validation import check_matrix, check_positive_int

__all__ = ["CONTEXTS", "TokenSequences", "cooccurrence", "DocumentCooccurrence", "sum_counts",
           "check_context", "check_sequences", "document_term_counts", "keep_entries"]

CONTEXTS = ("document", "sentence", "window")


@dataclass
class TokenSequences:
    """Corpus as a flat stream of in-vocabulary token ids.

    Parameters
    ----------
    tokens : ndarray of shape (n_tokens,), int32 or int64
        Token ids in ``[0, n_terms)``, the documents concatenated in order.
    doc_ptr : ndarray of shape (n_docs + 1,), int64
        Document boundaries: document ``i`` is ``tokens[doc_ptr[i]:doc_ptr[i + 1]]``.
    sent_ptr : ndarray of shape (n_sentences + 1,), int64
        Sentence boundaries, offsets into ``tokens``; every document boundary is one too.
    n_terms : int
        Vocabulary size d.

    Examples
    --------
    >>> seqs = TokenSequences.from_documents([[[0, 1], [2]], [[1, 2, 2]]], n_terms=3)
    >>> seqs.tokens
    array([0, 1, 2, 1, 2, 2])
    >>> seqs.doc_ptr, seqs.sent_ptr
    (array([0, 3, 6]), array([0, 2, 3, 6]))
    """

    tokens: np.ndarray
    doc_ptr: np.ndarray
    sent_ptr: np.ndarray
    n_terms: int

    @property
    def n_docs(self):
        """Number of documents."""
        return len(self.doc_ptr) - 1

    @classmethod
    def from_documents(cls, documents, n_terms):
        """Build from nested lists: documents -> sentences -> token ids.

        Parameters
        ----------
        documents : iterable of iterables of sequences of int
            ``documents[i][s]`` is the list of token ids of sentence ``s`` of document ``i``.
        n_terms : int
            Vocabulary size.

        Returns
        -------
        TokenSequences
        """
        tokens, doc_ptr, sent_ptr = [], [0], [0]
        for document in documents:
            for sentence in document:
                tokens.extend(sentence)
                sent_ptr.append(len(tokens))
            doc_ptr.append(len(tokens))
        return cls(
            tokens=np.asarray(tokens, dtype=np.int64),
            doc_ptr=np.asarray(doc_ptr, dtype=np.int64),
            sent_ptr=np.asarray(sent_ptr, dtype=np.int64),
            n_terms=int(n_terms))


# --------------------------------------------------------------------------- validation


def check_context(context):
    """Refuse a context other than "document", "sentence" or "window"."""
    if context not in CONTEXTS:
        choices = ", ".join(map(repr, CONTEXTS))
        raise ValueError(f"Unknown context {context!r}; choose one of {choices}.")
    return context


def _check_pointer(ptr, n_tokens, name):
    ptr = np.asarray(ptr)
    if ptr.ndim != 1 or ptr.size < 1 or not np.issubdtype(ptr.dtype, np.integer):
        raise ValueError(f"{name} must be a 1-D integer array of boundaries, got {ptr!r:.80}.")
    ptr = ptr.astype(np.int64, copy=False)
    if ptr[0] != 0 or ptr[-1] != n_tokens:
        raise ValueError(
            f"{name} must start at 0 and end at len(tokens) = {n_tokens}; "
            f"got {ptr[0]} ... {ptr[-1]}.")
    if np.any(np.diff(ptr) < 0):
        raise ValueError(f"{name} must be non-decreasing.")
    return ptr


def check_sequences(sequences):
    """Validate a :class:`TokenSequences`; return ``(tokens, doc_ptr, sent_ptr, n_terms)``
    (tokens as int32 when the vocabulary allows it, the boundaries as int64)."""
    if not isinstance(sequences, TokenSequences):
        raise ValueError(
            f"sequences must be a TokenSequences, got {type(sequences).__name__}. "
            "Build one with TokenSequences.from_documents(documents, n_terms).")
    n_terms = sequences.n_terms
    if isinstance(n_terms, bool) or not isinstance(n_terms, numbers.Integral) or n_terms < 1:
        raise ValueError(f"sequences.n_terms must be a positive integer, got {n_terms!r}.")
    n_terms = int(n_terms)
    tokens = np.asarray(sequences.tokens)
    if tokens.ndim != 1 or not (np.issubdtype(tokens.dtype, np.integer) or tokens.size == 0):
        raise ValueError(
            f"sequences.tokens must be a 1-D array of integer token ids, got dtype "
            f"{tokens.dtype} with {tokens.ndim} dimension(s).")
    if tokens.size and (tokens.min() < 0 or tokens.max() >= n_terms):
        bad = tokens[(tokens < 0) | (tokens >= n_terms)]
        raise ValueError(
            f"sequences.tokens holds {bad.size} token id(s) out of range [0, n_terms={n_terms}), "
            f"e.g. {bad[0]}; map tokens to vocabulary ids and drop out-of-vocabulary ones.")
    index_dtype = np.int32 if n_terms <= np.iinfo(np.int32).max else np.int64
    tokens = tokens.astype(index_dtype, copy=False)
    doc_ptr = _check_pointer(sequences.doc_ptr, tokens.size, "sequences.doc_ptr")
    sent_ptr = _check_pointer(sequences.sent_ptr, tokens.size, "sequences.sent_ptr")
    if not np.all(np.isin(doc_ptr, sent_ptr)):
        raise ValueError(
            "Every document boundary in sequences.doc_ptr must also be a sentence boundary "
            "in sequences.sent_ptr (a sentence cannot span two documents).")
    return tokens, doc_ptr, sent_ptr, n_terms


def keep_entries(X, mask):
    """CSR matrix with only the stored entries of X (CSR) where ``mask`` (one flag per
    stored entry) is True; rows stay sorted."""
    kept = np.flatnonzero(mask)
    indptr = np.searchsorted(kept, X.indptr)  # number of kept entries before each row
    return sp.csr_matrix((X.data[kept], X.indices[kept], indptr), shape=X.shape)


# ------------------------------------------------------------------------ co-occurrence


def document_term_counts(sequences, dtype=np.float64):
    """Document-term count matrix A (n_docs x n_terms, CSR) of a :class:`TokenSequences`
    (validated)."""
    tokens, doc_ptr, _, n_terms = check_sequences(sequences)
    n_docs = len(doc_ptr) - 1
    rows = np.repeat(np.arange(n_docs), np.diff(doc_ptr))
    counts = sp.csr_matrix(
        (np.ones(tokens.size, dtype=dtype), (rows, tokens)), shape=(n_docs, n_terms))
    counts.sum_duplicates()
    return counts


class DocumentCooccurrence:
    """The document-context co-occurrence ``C = AᵀA`` without its diagonal (self pairs),
    by blocks of rows (words): the whole d x d matrix is never needed at once.

    Parameters
    ----------
    counts : scipy.sparse.csr_matrix of shape (n_docs, n_terms)
        Document-term counts A, validated, with sorted indices.
    min_count : int, default=1
        Counts below it are left out of every block (and of :meth:`row_sums`).
    """

    def __init__(self, counts, min_count=1):
        self.counts = counts
        self.min_count = min_count
        # Aᵀ in CSR with sorted indices (each word's documents in increasing order)
        self.counts_t = sp.csr_matrix(counts.T)
        self.counts_t.sort_indices()

    @property
    def n_terms(self):
        return self.counts.shape[1]

    def rows(self, start, stop):
        """Rows start:stop of C, sorted CSR: the compiled row-by-row product
        (:func:`._context_kernels.document_cooccurrence_rows`), bitwise scipy's
        ``Aᵀ A[:, start:stop]``; counts below ``min_count`` left out."""
        from ._context_kernels import document_cooccurrence_rows

        block = document_cooccurrence_rows(self.counts, self.counts_t, start, stop)
        if self.min_count > 1:
            block = keep_entries(block, block.data >= self.min_count)
        return block

    def blocks(self, block_size):
        """``(start, rows(start, start + block_size))`` for every block of rows, in order."""
        for start in range(0, self.n_terms, block_size):
            yield start, self.rows(start, start + block_size)

    def row_sums(self, block_size):
        """The marginals ``c_j. = Σ_j' c_jj'`` (float64): in closed form, ``Aᵀ(A1)`` minus
        the diagonal, when ``min_count`` is 1; else one pass over the blocks."""
        if self.min_count > 1:  # marginals of the kept counts
            return np.concatenate([np.asarray(block.sum(axis=1, dtype=np.float64)).ravel()
                                   for _, block in self.blocks(block_size)])
        counts = self.counts
        doc_sums = np.asarray(counts.sum(axis=1, dtype=np.float64)).ravel()
        row_sums = (np.asarray(self.counts_t @ doc_sums, dtype=np.float64).ravel()
                    - np.asarray(counts.multiply(counts).sum(axis=0, dtype=np.float64)).ravel())
        return np.maximum(row_sums, 0.0)


def cooccurrence(*, counts=None, sequences=None, context="document", window=10, min_count=1,
                 dtype=np.float64, block_size=2048):
    """Word-word co-occurrence counts C (NSF section 3, the input of eq. (3)).

    ``C[j, j']`` is the number of ordered pairs of token positions (p, q), p != q, in one
    context with word ``j`` at p and word ``j'`` at q; the diagonal is zero (it would
    dominate the PMI marginals).

    Parameters
    ----------
    counts : sparse matrix or array-like of shape (n_docs, n_terms), default=None
        Document-term counts A; only for ``context="document"``: ``C = AᵀA`` without its
        diagonal (other weights give a weighted co-occurrence).
    sequences : TokenSequences, default=None
        Token stream; required for the "sentence" and "window" contexts, and an alternative
        to ``counts`` for "document".
    context : {"document", "sentence", "window"}, default="document"
        Which positions co-occur: any two in the same document, any two in the same sentence,
        or any two of the same document at distance at most ``window``.
    window : int, default=10
        Number of words on EACH side of a token that count as its context (as in word2vec
        and GloVe), with ``context="window"``.
    min_count : int, default=1
        Co-occurrence counts below ``min_count`` are dropped.
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the result.
    block_size : int, default=2048
        For ``context="document"``: rows of AᵀA computed at a time (bounds the memory).

    Returns
    -------
    C : scipy.sparse.csr_matrix of shape (n_terms, n_terms)
        Symmetric, zero diagonal, non-negative.

    Notes
    -----
    The "window" and "sentence" contexts cost the number of pairs counted: about
    ``2 * window * n_tokens``, or the sum of squared sentence lengths.

    Examples
    --------
    >>> seqs = TokenSequences.from_documents([[[0, 1, 2]], [[1, 2]]], n_terms=3)
    >>> cooccurrence(sequences=seqs, context="window", window=1).toarray()
    array([[0., 1., 0.],
           [1., 0., 2.],
           [0., 2., 0.]])
    """
    check_context(context)
    min_count = check_positive_int(min_count, "min_count")
    block_size = check_positive_int(block_size, "block_size")
    if counts is not None and sequences is not None:
        raise ValueError("Pass either counts or sequences, not both.")
    if context != "document" and sequences is None:
        raise ValueError(
            f'context="{context}" needs the token order: pass sequences=TokenSequences(...) '
            '(counts only support context="document").')
    if counts is None and sequences is None:
        raise ValueError(
            'Pass counts (a document-term matrix, for context="document") or sequences '
            "(a TokenSequences).")

    if context == "document":
        if counts is None:
            counts = document_term_counts(sequences, dtype)
        else:
            counts = check_matrix(counts, "counts", dtype=dtype)
            if not sp.issparse(counts):
                counts = sp.csr_matrix(counts)
        blocks = DocumentCooccurrence(counts, min_count).blocks(block_size)
        return sp.csr_matrix(sp.vstack([block for _, block in blocks], format="csr"))

    from ._context_kernels import window_cooccurrence

    tokens, doc_ptr, sent_ptr, n_terms = check_sequences(sequences)
    if context == "window":
        window = check_positive_int(window, "window")
        C = window_cooccurrence(tokens, doc_ptr, window, n_terms, dtype)
    else:  # sentence: every pair, up to the longest sentence
        longest = int(np.diff(sent_ptr).max()) if sent_ptr.size > 1 else 0
        C = window_cooccurrence(tokens, sent_ptr, max(longest - 1, 0), n_terms, dtype)
    if min_count > 1:
        C = keep_entries(C, C.data >= min_count)
    return C


def sum_counts(A, B):
    """A + B of two co-occurrence count matrices (CSR, one shape), in A's dtype, allocated
    at the size of the result (:func:`._context_kernels.add_sorted`): the mergeable
    accumulators of the shards add large counts of mostly the same pairs, where scipy's
    sum would hold twice the result. The indices of A and B are sorted in place."""
    if A.shape != B.shape:
        raise ValueError(f"counts of shapes {A.shape} and {B.shape} cannot be added.")
    if B.nnz == 0:
        return sp.csr_matrix(A, copy=True)
    if A.nnz == 0:
        return sp.csr_matrix(B, dtype=A.dtype, copy=True)
    from ._context_kernels import add_sorted

    A, B = sp.csr_matrix(A), sp.csr_matrix(B, dtype=A.dtype)
    A.sort_indices()
    B.sort_indices()
    return add_sorted(A, B)
