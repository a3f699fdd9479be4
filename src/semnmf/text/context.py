"""Word-context co-occurrence counts and their PMI-family association matrices.

Semantic-NMF factorizes, next to the document-word matrix X, a word-context matrix M that
tells which words tend to occur in the same contexts. This module builds it in three steps,
each available on its own:

1. :func:`cooccurrence` counts how often two words occur in the same context: a document, a
   sentence, or an L-word window (``C``, NSF section 3, "the number of times the word-context
   pair (w_j, w_j') occurred in the same context").
2. :func:`association` turns the counts into pointwise mutual information (NSF eq. (2)-(3)),
   its positive part PPMI, or the shifted PPMI of the SIGIR paper
   (``m_jj' = max(PMI(w_j, w_j') - log N, 0)``).
3. :func:`prune` keeps the strongest associations per word, so that M stays sparse.

:func:`estimate_nnz` bounds the number of non-zeros of M before it is built (from the
document frequencies, or the token stream), and ``word_context(max_nnz=...)`` prunes M to a
budget: the document context is then built block by block, each block pruned at once, so
that the full unpruned matrix never exists.

:func:`word_context` chains the three and is what users usually call.

All functions work on scipy.sparse matrices and never densify a d x d matrix.

References
----------
.. [NSF] M. Febrissy, A. Salah, M. Ailem, M. Nadif, "Improving NMF clustering by leveraging
   contextual relationships among words", Neurocomputing 495 (2022) 105-117
   (``papers/semantic-nmf-neurocomputing-2022.txt``), eq. (2)-(3).
.. [SIGIR] M. Ailem, A. Salah, M. Nadif, "Non-negative Matrix Factorization Meets Word
   Embedding", SIGIR 2017 (``papers/senmf-sigir-2017.txt``), definition of the SPPMI matrix M.
"""

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._utils.validation import check_matrix, check_positive_int

__all__ = ["TokenSequences", "cooccurrence", "association", "prune", "word_context",
           "estimate_nnz", "budget_top_k", "NnzEstimate", "prune_to_budget"]

CONTEXTS = ("document", "sentence", "window")
ASSOCIATIONS = ("pmi", "ppmi", "sppmi")



@dataclass
class TokenSequences:
    """Corpus as a flat stream of in-vocabulary token ids.

    Parameters
    ----------
    tokens : ndarray of shape (n_tokens,), int32 or int64
        Token ids in ``[0, n_terms)``, the documents concatenated in order.
    doc_ptr : ndarray of shape (n_docs + 1,), int64
        Document boundaries: document ``i`` is ``tokens[doc_ptr[i]:doc_ptr[i + 1]]``. Starts at
        0 and ends at ``n_tokens``.
    sent_ptr : ndarray of shape (n_sentences + 1,), int64
        Sentence boundaries, offsets into ``tokens`` from 0 to ``n_tokens``. Every document
        boundary is also a sentence boundary (a sentence never spans two documents).
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
            n_terms=int(n_terms),
        )


def _kernels():
    """The compiled kernels (:mod:`._context_kernels`), imported when first needed: a Dask
    worker that only reads shards and builds X imports this module without loading numba
    (one that counts co-occurrences or sums them for M does load it)."""
    from . import _context_kernels

    return _context_kernels


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
    A, B = sp.csr_matrix(A), sp.csr_matrix(B, dtype=A.dtype)
    A.sort_indices()
    B.sort_indices()
    return _kernels().add_sorted(A, B)


# --------------------------------------------------------------------------- validation


def _check_pointer(ptr, n_tokens, name):
    ptr = np.asarray(ptr)
    if ptr.ndim != 1 or ptr.size < 1 or not np.issubdtype(ptr.dtype, np.integer):
        raise ValueError(f"{name} must be a 1-D integer array of boundaries, got {ptr!r:.80}.")
    ptr = ptr.astype(np.int64, copy=False)
    if ptr[0] != 0 or ptr[-1] != n_tokens:
        raise ValueError(
            f"{name} must start at 0 and end at len(tokens) = {n_tokens}; "
            f"got {ptr[0]} ... {ptr[-1]}."
        )
    if np.any(np.diff(ptr) < 0):
        raise ValueError(f"{name} must be non-decreasing.")
    return ptr


def _check_sequences(sequences):
    """Validate a TokenSequences; return (tokens, doc_ptr, sent_ptr, n_terms)."""
    if not isinstance(sequences, TokenSequences):
        raise ValueError(
            f"sequences must be a TokenSequences, got {type(sequences).__name__}. "
            "Build one with TokenSequences.from_documents(documents, n_terms)."
        )
    n_terms = sequences.n_terms
    if isinstance(n_terms, bool) or not isinstance(n_terms, numbers.Integral) or n_terms < 1:
        raise ValueError(f"sequences.n_terms must be a positive integer, got {n_terms!r}.")
    n_terms = int(n_terms)
    tokens = np.asarray(sequences.tokens)
    if tokens.ndim != 1 or not (np.issubdtype(tokens.dtype, np.integer) or tokens.size == 0):
        raise ValueError(
            f"sequences.tokens must be a 1-D array of integer token ids, got dtype "
            f"{tokens.dtype} with {tokens.ndim} dimension(s)."
        )
    if tokens.size and (tokens.min() < 0 or tokens.max() >= n_terms):
        bad = tokens[(tokens < 0) | (tokens >= n_terms)]
        raise ValueError(
            f"sequences.tokens holds {bad.size} token id(s) out of range [0, n_terms={n_terms}), "
            f"e.g. {bad[0]}; map tokens to vocabulary ids and drop out-of-vocabulary ones."
        )
    index_dtype = np.int32 if n_terms <= np.iinfo(np.int32).max else np.int64
    tokens = tokens.astype(index_dtype, copy=False)
    doc_ptr = _check_pointer(sequences.doc_ptr, tokens.size, "sequences.doc_ptr")
    sent_ptr = _check_pointer(sequences.sent_ptr, tokens.size, "sequences.sent_ptr")
    if not np.all(np.isin(doc_ptr, sent_ptr)):
        raise ValueError(
            "Every document boundary in sequences.doc_ptr must also be a sentence boundary "
            "in sequences.sent_ptr (a sentence cannot span two documents)."
        )
    return tokens, doc_ptr, sent_ptr, n_terms


def _check_option(value, name, options):
    if value not in options:
        choices = ", ".join(map(repr, options))
        raise ValueError(f"Unknown {name} {value!r}; choose one of {choices}.")
    return value


def _keep_entries(X, mask):
    """CSR matrix with only the stored entries of X where mask is True (rows stay sorted)."""
    kept = np.flatnonzero(mask)
    indptr = np.searchsorted(kept, X.indptr)  # number of kept entries before each row
    return sp.csr_matrix((X.data[kept], X.indices[kept], indptr), shape=X.shape)


# ------------------------------------------------------------------------ co-occurrence


def _sequences_to_counts(tokens, doc_ptr, n_terms, dtype):
    """Document-term count matrix (n_docs x n_terms) from a token stream."""
    n_docs = len(doc_ptr) - 1
    rows = np.repeat(np.arange(n_docs), np.diff(doc_ptr))
    counts = sp.csr_matrix(
        (np.ones(tokens.size, dtype=dtype), (rows, tokens)), shape=(n_docs, n_terms)
    )
    counts.sum_duplicates()
    return counts


def _gram_cooccurrence(counts, min_count, block_size):
    """Off-diagonal AᵀA computed ``block_size`` rows (words) at a time."""
    n_terms = counts.shape[1]
    counts_t = _transposed(counts)
    blocks = []
    for start in range(0, n_terms, block_size):
        blocks.append(_document_block(counts, counts_t, start, start + block_size, min_count))
    return sp.csr_matrix(sp.vstack(blocks, format="csr"))


def _transposed(counts):
    """Aᵀ in CSR with sorted indices (each word's documents in increasing order)."""
    counts_t = sp.csr_matrix(counts.T)
    counts_t.sort_indices()
    return counts_t


def _document_block(counts, counts_t, start, stop, min_count=1):
    """Rows start:stop of AᵀA without the diagonal (self pairs), sorted CSR: the compiled
    row-by-row product (:func:`._context_kernels.document_cooccurrence_rows`), bitwise
    scipy's ``Aᵀ A[:, start:stop]``; counts below ``min_count`` left out."""
    block = _kernels().document_cooccurrence_rows(counts, counts_t, start, stop)
    if min_count > 1:
        block = _keep_entries(block, block.data >= min_count)
    return block


def cooccurrence(*, counts=None, sequences=None, context="document", window=10, min_count=1,
                 dtype=np.float64, block_size=2048):
    """Word-word co-occurrence counts C (NSF section 3, the input of eq. (3)).

    ``C[j, j']`` is the number of times words ``j`` and ``j'`` occurred in the same context:
    the number of ordered pairs of token positions (p, q), p != q, in one context with word
    ``j`` at p and word ``j'`` at q. Self pairs (``j == j'``) are excluded, so the diagonal
    is zero: a word repeated in a context says nothing about its association with others, and
    a large diagonal would dominate the PMI marginals.

    Parameters
    ----------
    counts : sparse matrix or array-like of shape (n_docs, n_terms), default=None
        Document-term counts A; only for ``context="document"``. Then ``C = AᵀA`` without
        its diagonal (weights other than counts, e.g. tf-idf, are accepted and give a
        weighted co-occurrence).
    sequences : TokenSequences, default=None
        Token stream; required for the "sentence" and "window" contexts, and an alternative
        to ``counts`` for "document".
    context : {"document", "sentence", "window"}, default="document"
        Which positions co-occur: any two in the same document, any two in the same sentence,
        or any two of the same document at distance at most ``window``.
    window : int, default=10
        Number of words on EACH side of a token that count as its context (as ``window`` in
        word2vec and GloVe). The SIGIR paper uses "a 10-word window" without saying whether
        it spans one side or both; ``window=5`` gives a 10-word span centred on the word.
        Only used with ``context="window"``.
    min_count : int, default=1
        Co-occurrence counts below ``min_count`` are dropped.
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the result.
    block_size : int, default=2048
        For ``context="document"``: number of rows (words) of AᵀA computed at a time, which
        bounds the peak memory; it does not change the result.

    Returns
    -------
    C : scipy.sparse.csr_matrix of shape (n_terms, n_terms)
        Symmetric, zero diagonal, non-negative.

    Notes
    -----
    The "window" and "sentence" contexts take one vectorized pass over the token stream per
    offset o (pairs of positions o apart in the same document, resp. sentence), so their cost
    is the number of pairs counted: about ``2 * window * n_tokens`` for a window, and the sum
    of squared sentence lengths for sentences (avoid it when "sentences" are whole long
    documents: use ``context="document"`` instead, which gives the same counts from AᵀA).

    Examples
    --------
    >>> seqs = TokenSequences.from_documents([[[0, 1, 2]], [[1, 2]]], n_terms=3)
    >>> cooccurrence(sequences=seqs, context="window", window=1).toarray()
    array([[0., 1., 0.],
           [1., 0., 2.],
           [0., 2., 0.]])
    """
    _check_option(context, "context", CONTEXTS)
    min_count = check_positive_int(min_count, "min_count")
    block_size = check_positive_int(block_size, "block_size")
    if counts is not None and sequences is not None:
        raise ValueError("Pass either counts or sequences, not both.")
    if context != "document" and sequences is None:
        raise ValueError(
            f'context="{context}" needs the token order: pass sequences=TokenSequences(...) '
            '(counts only support context="document").'
        )
    if counts is None and sequences is None:
        raise ValueError(
            'Pass counts (a document-term matrix, for context="document") or sequences '
            "(a TokenSequences)."
        )

    if context == "document":
        if counts is None:
            tokens, doc_ptr, _, n_terms = _check_sequences(sequences)
            counts = _sequences_to_counts(tokens, doc_ptr, n_terms, dtype)
        else:
            counts = check_matrix(counts, "counts", dtype=dtype)
            if not sp.issparse(counts):
                counts = sp.csr_matrix(counts)
        return _gram_cooccurrence(counts, min_count, block_size)

    tokens, doc_ptr, sent_ptr, n_terms = _check_sequences(sequences)
    if context == "window":
        window = check_positive_int(window, "window")
        C = _kernels().window_cooccurrence(tokens, doc_ptr, window, n_terms, dtype)
    else:  # sentence: every pair, up to the longest sentence
        longest = int(np.diff(sent_ptr).max()) if sent_ptr.size > 1 else 0
        C = _kernels().window_cooccurrence(tokens, sent_ptr, max(longest - 1, 0), n_terms, dtype)
    if min_count > 1:
        C = _keep_entries(C, C.data >= min_count)
    return C


# -------------------------------------------------------------------------- association


def association(C, kind="ppmi", shift=2, dtype=None):
    """PMI, positive PMI or shifted positive PMI of a co-occurrence matrix.

    With the marginals of C itself, ``c_j. = sum_j' c_jj'``, ``c_.j' = sum_j c_jj'`` and
    ``c.. = sum_jj' c_jj'``, the empirical PMI is (NSF eq. (2)-(3))::

        PMI(j, j') = log(c_jj' * c.. / (c_j. * c_.j'))

    - ``"pmi"``: PMI itself. The PMI of a zero count is -inf, so only the entries with a
      non-zero count are stored; a missing entry means "never co-occurred", not PMI = 0.
    - ``"ppmi"``: ``max(PMI, 0)`` (NSF section 3), the matrix M of Semantic-NMF.
    - ``"sppmi"``: ``max(PMI - log(shift), 0)``, the shifted PPMI matrix M of the SIGIR
      paper, with N = ``shift`` (the number of negative samples of the skip-gram model it
      mirrors).

    Entries equal to zero are not stored in the result (for ``"pmi"`` this also drops the
    pairs whose PMI is exactly 0).

    Parameters
    ----------
    C : sparse matrix or array-like of shape (n_terms, n_contexts)
        Non-negative co-occurrence counts, e.g. from :func:`cooccurrence`; rectangular
        word-context matrices are accepted.
    kind : {"pmi", "ppmi", "sppmi"}, default="ppmi"
        Association measure.
    shift : float, default=2
        N in the shifted PPMI (only used with ``kind="sppmi"``); ``shift=1`` gives the PPMI.
    dtype : {np.float64, np.float32} or None, default=None
        Dtype of the result; None keeps the float dtype of C (float64 for integer C).

    Returns
    -------
    M : scipy.sparse.csr_matrix of shape (n_terms, n_contexts)

    Examples
    --------
    >>> import numpy as np
    >>> association(np.array([[0, 2], [2, 0]])).toarray().round(3)
    array([[0.   , 0.693],
           [0.693, 0.   ]])
    """
    _check_association(kind, shift)
    C = check_matrix(C, "C", nonnegative=True)
    if dtype is None:
        dtype = C.dtype if np.issubdtype(C.dtype, np.floating) else np.float64
    C = sp.csr_matrix(C)
    M = sp.csr_matrix((C.data.astype(dtype, copy=True), C.indices.copy(), C.indptr.copy()),
                      shape=C.shape)
    return _association_inplace(M, kind, shift)


def _check_association(kind, shift):
    """Refuse an unknown association measure, or a shift N that is not positive for the
    shifted PPMI (log N would be NaN in every entry)."""
    _check_option(kind, "association", ASSOCIATIONS)
    if kind == "sppmi" and (isinstance(shift, bool) or not isinstance(shift, numbers.Real)
                            or not shift > 0):
        raise ValueError(f"shift must be a positive number (N in log N), got {shift!r}.")


def _association_inplace(C, kind, shift):
    """:func:`association` of a CSR matrix of counts we own: its data become the
    association values in place, and its zeros are dropped in place (no second matrix)."""
    row_sums = np.asarray(C.sum(axis=1, dtype=np.float64)).ravel()
    col_sums = np.asarray(C.sum(axis=0, dtype=np.float64)).ravel()
    # log c_jj' + log c.. - log c_j. - log c_.j' on the stored entries, in place
    with np.errstate(divide="ignore"):  # empty rows/columns have no stored entries
        log_rows, log_cols = np.log(row_sums), np.log(col_sums)
        log_total = np.log(row_sums.sum())  # -inf only when C is empty: no entry to shift
    offset = log_total - (np.log(shift) if kind == "sppmi" else 0.0)
    _kernels().pmi_inplace(C.indptr, C.indices, C.data, log_rows, log_cols, offset, kind != "pmi")
    C.eliminate_zeros()
    return C


# -------------------------------------------------------------------------------- prune


def prune(M, *, top_k=None, threshold=None, symmetric=True):
    """Keep the strongest entries of a word-context matrix.

    An entry is kept when it is among the ``top_k`` largest of its row AND (when given) at
    least ``threshold``. With ``symmetric=True`` the kept pattern is then symmetrized by
    union: ``(j, j')`` is kept if it was kept in row ``j`` or in row ``j'``; values always come
    from M.

    Parameters
    ----------
    M : sparse matrix or array-like of shape (n_terms, n_contexts)
        E.g. the output of :func:`association`.
    top_k : int or None, default=None
        Number of largest entries kept per row (before symmetrization); None keeps all.
    threshold : float or None, default=None
        Entries below ``threshold`` are dropped; None keeps all.
    symmetric : bool, default=True
        Symmetrize the kept pattern (M must be square).

    Returns
    -------
    M_pruned : scipy.sparse.csr_matrix of the shape of M

    Examples
    --------
    >>> import numpy as np
    >>> M = np.array([[0., 3., 1.], [3., 0., 2.], [1., 2., 0.]])
    >>> prune(M, top_k=1).toarray()
    array([[0., 3., 0.],
           [3., 0., 2.],
           [0., 2., 0.]])
    """
    if top_k is not None:
        top_k = check_positive_int(top_k, "top_k")
    if threshold is not None and (isinstance(threshold, bool)
                                  or not isinstance(threshold, numbers.Real)
                                  or not np.isfinite(threshold)):
        raise ValueError(f"threshold must be a finite number or None, got {threshold!r}.")
    M = check_matrix(M, "M", nonnegative=False)
    if not sp.issparse(M):
        M = sp.csr_matrix(M)
    if symmetric and M.shape[0] != M.shape[1]:
        raise ValueError(
            f"symmetric=True needs a square matrix, got shape {M.shape}; pass symmetric=False."
        )
    M = sp.csr_matrix(M)  # no copy of a CSR input: M is only read below
    if not M.has_sorted_indices:
        M = M.sorted_indices()
    keep = np.ones(M.nnz, dtype=bool)
    if threshold is not None:
        keep &= M.data >= threshold
    if top_k is not None:
        # the top_k of the row that pass the threshold are the top_k of those passing it
        keep &= _kernels().top_k_mask(M, top_k)
    kept = _keep_entries(M, keep)
    if not symmetric:
        return kept
    kept.data = np.ones_like(kept.data)
    pattern = sp.csr_matrix(kept + kept.T)  # union of the kept pattern and its transpose
    pattern.sort_indices()
    # M's values on the pattern (a transposed position that M does not store stays empty)
    result = _keep_entries(M, _kernels().pattern_mask(M, pattern))
    result.eliminate_zeros()
    return result


# ------------------------------------------------------------------------ nnz budget


@dataclass
class NnzEstimate:
    """Non-zeros of a word-context matrix, known before it is built.

    Attributes
    ----------
    upper : int
        An upper bound on nnz(C), hence on nnz(M) (an association never adds entries).
    row_upper : ndarray of shape (n_terms,)
        The bound of each row (word): ``min(n_terms - 1, partners)``.
    estimate : int or None
        A cheaper-to-trust estimate: the exact row counts of a random sample of words,
        scaled (document context only; None otherwise).
    """

    upper: int
    row_upper: np.ndarray
    estimate: object = None

    def bytes(self, dtype=np.float64):
        """Bytes of a CSR matrix holding ``upper`` entries (values and int32 indices)."""
        return int(self.upper * (np.dtype(dtype).itemsize + 4))


def estimate_nnz(*, counts=None, sequences=None, context="document", window=10,
                 n_sample_rows=256, random_state=0):
    """Bound (and estimate) nnz of the co-occurrence matrix C before building it.

    - document context: word j co-occurs with at most ``sum over the documents d holding j
      of (u_d - 1)`` other words, u_d the number of distinct words of d;
    - window context: at most ``min(2 window, length - 1)`` partners per occurrence;
    - sentence context: at most ``length - 1`` per occurrence (length of its sentence);

    each row capped at ``n_terms - 1``. The bound holds for any ``min_count`` and any
    association (they only remove entries).

    Parameters
    ----------
    counts, sequences, context, window : as for :func:`cooccurrence`.
    n_sample_rows : int, default=256
        Words whose exact row count the document-context estimate uses.
    random_state : int, default=0

    Returns
    -------
    NnzEstimate
    """
    _check_option(context, "context", CONTEXTS)
    estimate = None
    if context == "document" and counts is None:
        if sequences is None:
            raise ValueError("Pass counts or sequences.")
        tokens, doc_ptr, _, n_terms = _check_sequences(sequences)
        counts = _sequences_to_counts(tokens, doc_ptr, n_terms, np.float64)
    if context == "document":
        B = check_matrix(counts, "counts")
        B = sp.csr_matrix(B, dtype=np.float64, copy=True)
        B.data = (B.data != 0).astype(np.float64)
        B.eliminate_zeros()
        n_terms = B.shape[1]
        distinct = np.asarray(B.sum(axis=1)).ravel()
        partners = np.asarray(B.T @ np.maximum(distinct - 1, 0)).ravel()
        if n_terms:
            rng = np.random.default_rng(random_state)
            rows = rng.choice(n_terms, min(n_terms, int(n_sample_rows)), replace=False)
            Bc = sp.csc_matrix(B)
            block = sp.csr_matrix(Bc[:, rows].T @ B)
            exact = np.diff(block.indptr) - (np.asarray(Bc[:, rows].sum(axis=0)).ravel() > 0)
            estimate = int(round(exact.sum() * n_terms / rows.size))
    else:
        tokens, doc_ptr, sent_ptr, n_terms = _check_sequences(sequences)
        if context == "window":
            window = check_positive_int(window, "window")
            ptr = doc_ptr
        else:
            ptr = sent_ptr
        lengths = np.diff(ptr)
        start = np.repeat(ptr[:-1], lengths)
        end = np.repeat(ptr[1:], lengths)
        position = np.arange(tokens.size)
        if context == "window":
            neighbours = (np.minimum(position - start, window)
                          + np.minimum(end - 1 - position, window))
        else:
            neighbours = end - start - 1
        partners = np.bincount(tokens, weights=neighbours, minlength=n_terms)
    row_upper = np.minimum(partners, max(n_terms - 1, 0)).astype(np.int64)
    if estimate is not None:
        estimate = min(estimate, int(row_upper.sum()))
    return NnzEstimate(upper=int(row_upper.sum()), row_upper=row_upper, estimate=estimate)


def budget_top_k(row_nnz, max_nnz):
    """The largest ``top_k`` whose symmetric pruning surely fits ``max_nnz`` entries.

    Keeping the top_k of every row keeps ``sum_j min(row_nnz_j, top_k)`` entries; the
    symmetric union at most doubles them. So the largest k with
    ``2 * sum_j min(row_nnz_j, k) <= max_nnz`` (at least 1). ``row_nnz`` may be upper
    bounds (:func:`estimate_nnz`)."""
    row_nnz = np.sort(np.asarray(row_nnz, dtype=np.int64))
    if row_nnz.size == 0:
        return 1
    total = lambda k: 2 * int(np.minimum(row_nnz, k).sum())  # noqa: E731
    lo, hi = 1, max(int(row_nnz[-1]), 1)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if total(mid) <= max_nnz:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _trim_to_budget(M, max_nnz):
    """Keep only entries strictly above the value of the ``max_nnz``-th largest |entry|
    (a symmetric M stays symmetric), when M has more than ``max_nnz`` of them."""
    if M.nnz <= max_nnz:
        return M
    values = np.abs(M.data)
    cut = np.partition(values, M.nnz - max_nnz)[M.nnz - max_nnz] if max_nnz > 0 else np.inf
    return _keep_entries(M, values > cut)


def _symmetric_union(K):
    """K + Kᵀ with the entries stored on both sides counted once (values of a symmetric M)."""
    Kt = sp.csr_matrix(K.T)
    pattern = Kt.copy()
    pattern.data = np.ones_like(pattern.data)
    both = K.multiply(pattern)
    result = sp.csr_matrix(K + Kt - both)
    result.eliminate_zeros()
    result.sort_indices()
    return result


def _stream_document_context(counts, *, kind, shift, min_count, top_k, threshold, dtype,
                             block_size):
    """Document-context association matrix, pruned block by block: never the whole C.

    Returns (M, nnz_before): nnz_before is the number of non-zeros M would have unpruned.
    """
    counts = check_matrix(counts, "counts", dtype=dtype)
    counts = sp.csr_matrix(counts)
    n_terms = counts.shape[1]
    counts_t = _transposed(counts)

    def block_counts(start):
        return _document_block(counts, counts_t, start, start + block_size, min_count)

    if min_count > 1:  # marginals of the kept counts: one more pass
        row_sums = np.concatenate([
            np.asarray(block_counts(start).sum(axis=1, dtype=np.float64)).ravel()
            for start in range(0, n_terms, block_size)])
    else:  # AᵀA 1 minus the diagonal, in closed form
        doc_sums = np.asarray(counts.sum(axis=1, dtype=np.float64)).ravel()
        row_sums = (np.asarray(counts_t @ doc_sums, dtype=np.float64).ravel()
                    - np.asarray(counts.multiply(counts).sum(axis=0, dtype=np.float64)).ravel())
        row_sums = np.maximum(row_sums, 0.0)
    with np.errstate(divide="ignore"):
        log_rows = np.log(row_sums)
        log_total = np.log(row_sums.sum())
    offset = log_total - (np.log(shift) if kind == "sppmi" else 0.0)
    kept, nnz_before = [], 0
    for start in range(0, n_terms, block_size):
        # PMI (eq. 3) of the block's counts, clipped at 0 but for "pmi", its zeros left
        # out, then the threshold and each row's top_k: one compiled pass per row
        block, nonzero = _kernels().association_rows(
            block_counts(start), start, log_rows, offset, kind != "pmi", threshold, top_k,
            dtype)
        nnz_before += nonzero
        kept.append(block)
    K = sp.csr_matrix(sp.vstack(kept, format="csr")) if kept else sp.csr_matrix(
        (0, n_terms), dtype=dtype)
    return _symmetric_union(K), nnz_before


# ------------------------------------------------------------------------- word_context


def word_context(*, counts=None, sequences=None, context="document", window=10,
                 association="ppmi", shift=2, min_count=1, top_k=None, threshold=None,
                 dtype=np.float64, max_nnz=None, return_info=False):
    """Word-context matrix M for Semantic-NMF: co-occurrence -> association -> pruning.

    Chains :func:`cooccurrence`, :func:`association` (NSF eq. (2)-(3); SIGIR shifted PPMI)
    and, when ``top_k`` or ``threshold`` is given, :func:`prune` (symmetric).

    Parameters
    ----------
    counts : sparse matrix or array-like of shape (n_docs, n_terms), default=None
        Document-term counts (only for ``context="document"``).
    sequences : TokenSequences, default=None
        Token stream (needed for "sentence" and "window").
    context : {"document", "sentence", "window"}, default="document"
        See :func:`cooccurrence`.
    window : int, default=10
        Words on each side of a token, for ``context="window"``.
    association : {"pmi", "ppmi", "sppmi"}, default="ppmi"
        See :func:`association`.
    shift : float, default=2
        N of the shifted PPMI (``association="sppmi"``).
    min_count : int, default=1
        Co-occurrence counts below it are dropped before the association is computed (the
        marginals are then those of the kept counts).
    top_k : int or None, default=None
        Keep the ``top_k`` strongest associations per word (pattern symmetrized by union).
    threshold : float or None, default=None
        Drop associations below it.
    dtype : {np.float64, np.float32}, default=np.float64
        Dtype of the result.
    max_nnz : int or None, default=None
        Budget of non-zeros of M. When :func:`estimate_nnz`'s upper bound exceeds it, M is
        pruned to the ``top_k`` strongest contexts per word with the largest ``top_k``
        that surely fits (:func:`budget_top_k`; a smaller ``top_k`` given is kept), the
        pattern symmetrized; the document context is then built and pruned block by
        block (the unpruned M is never held). If it still does not fit (``top_k=1`` is too
        many), only the largest entries are kept. None: no budget.
    return_info : bool, default=False
        Also return a dict saying what was pruned: ``nnz_before`` (unpruned), ``nnz``,
        ``estimated_nnz_upper``, ``top_k`` used, ``rule``, ``pruned``.

    Returns
    -------
    M : scipy.sparse.csr_matrix of shape (n_terms, n_terms)
        Symmetric when no pruning is asked, or with pruning (pattern union).
    info : dict
        Only with ``return_info=True``.

    Examples
    --------
    >>> seqs = TokenSequences.from_documents([[[0, 1, 2]], [[1, 2, 3]]], n_terms=4)
    >>> M = word_context(sequences=seqs, context="window", window=1)
    >>> M.shape, M.nnz
    ((4, 4), 6)
    """
    _check_association(association, shift)  # before any counting
    max_nnz, info = budget_record(max_nnz, top_k, threshold, min_count)
    budget_k = None
    if max_nnz is not None:
        if context != "document" or counts is not None or sequences is not None:
            _check_option(context, "context", CONTEXTS)
        bound = estimate_nnz(counts=counts, sequences=sequences, context=context,
                             window=window)
        info["estimated_nnz_upper"] = bound.upper
        if bound.upper > max_nnz and context == "document":
            budget_k = budget_top_k(bound.row_upper, max_nnz)
            use_k = budget_k if top_k is None else min(check_positive_int(top_k, "top_k"),
                                                       budget_k)
            if counts is None:
                tokens, doc_ptr, _, n_terms = _check_sequences(sequences)
                counts = _sequences_to_counts(tokens, doc_ptr, n_terms, dtype)
            M, nnz_before = _stream_document_context(
                counts, kind=association, shift=shift,
                min_count=check_positive_int(min_count, "min_count"), top_k=use_k,
                threshold=threshold, dtype=dtype, block_size=2048)
            return _finish(M, nnz_before, max_nnz, use_k, budget_k, info, return_info)
    C = cooccurrence(counts=counts, sequences=sequences, context=context, window=window,
                     min_count=min_count, dtype=dtype)
    M = _association_inplace(C, association, shift)  # C is ours: no copy
    del C
    return prune_to_budget(M, top_k=top_k, threshold=threshold, max_nnz=max_nnz,
                           info=info, return_info=return_info)


def budget_record(max_nnz, top_k, threshold, min_count):
    """``max_nnz`` checked (a positive int, or None) and the pruning record of
    :func:`word_context` started with the options given."""
    if max_nnz is not None:
        max_nnz = check_positive_int(max_nnz, "max_nnz")
    return max_nnz, {"max_nnz": max_nnz, "estimated_nnz_upper": None, "top_k": top_k,
                     "threshold": threshold, "min_count": min_count}


def prune_to_budget(M, *, top_k=None, threshold=None, max_nnz=None, row_upper=None,
                    info=None, return_info=False, warn=True):
    """Pruning and nnz budget of :func:`word_context`, applied to an unpruned association
    matrix M already built (also used by the sharded corpus, whose co-occurrence counts are
    summed over the shards).

    ``max_nnz`` (already checked, or None), ``top_k``, ``threshold``, ``return_info``: as for
    :func:`word_context`. ``row_upper``: the per-word bound of :func:`estimate_nnz` for a
    document context (None otherwise): when its sum exceeds ``max_nnz`` the budget's
    ``top_k`` is computed from it, as :func:`word_context` does before streaming the document
    context; otherwise from the exact row counts of M when M exceeds the budget.
    ``warn=False``: no warning when the budget empties M (:func:`warn_if_emptied` raises
    it from the record).
    """
    if info is None:
        max_nnz, info = budget_record(max_nnz, top_k, threshold, None)
    nnz_before = M.nnz
    use_k, budget_k = top_k, None
    rows = None
    if max_nnz is not None:
        if row_upper is not None and int(np.sum(row_upper)) > max_nnz:
            rows = row_upper  # as word_context's streamed document context
        elif nnz_before > max_nnz:
            rows = np.diff(M.indptr)  # exact row counts
    if rows is not None:
        budget_k = budget_top_k(rows, max_nnz)
        use_k = budget_k if top_k is None else min(check_positive_int(top_k, "top_k"),
                                                   budget_k)
    if use_k is not None or threshold is not None:
        M = prune(M, top_k=use_k, threshold=threshold, symmetric=True)
    return _finish(M, nnz_before, max_nnz, use_k, budget_k, info, return_info, warn)


def _finish(M, nnz_before, max_nnz, use_k, budget_k, info, return_info, warn=True):
    """Last resort of the budget (largest entries only), and the record of the pruning."""
    rule = []
    if budget_k is not None:
        rule.append(f"top {use_k} contexts per word (pattern symmetrized): the largest top_k "
                    f"whose bound fits max_nnz={max_nnz:,}")
    elif info["top_k"] is not None:
        rule.append(f"top {use_k} contexts per word (pattern symmetrized)")
    if info["threshold"] is not None:
        rule.append(f"associations below {info['threshold']:g} dropped")
    if max_nnz is not None and M.nnz > max_nnz:
        M = _trim_to_budget(M, max_nnz)
        rule.append(f"then only the {M.nnz:,} largest entries (top_k=1 did not fit)")
    info.update({"top_k": use_k, "nnz_before": int(nnz_before), "nnz": int(M.nnz),
                 "pruned": bool(M.nnz < nnz_before),
                 "budget_applied": budget_k is not None,
                 "rule": "; ".join(rule) if rule else "none"})
    if warn:
        warn_if_emptied(info, stacklevel=4)
    return (M, info) if return_info else M


def warn_if_emptied(info, stacklevel=2):
    """The warning of a pruning record without any word context: none to begin with, or
    none left by the budget (raised where the record is read: on the caller, when M was
    made on a Dask worker)."""
    if info["nnz_before"] == 0:
        warnings.warn("the word-context matrix M is empty: no two vocabulary words occur "
                      "together in the texts (are the texts' words those of the vocabulary? "
                      "a counts folder needs its vocab.txt), so the word-context term has no "
                      "effect; give texts that match the vocabulary, lower min_count "
                      "(--min-count) or use document contexts (--context document).",
                      UserWarning, stacklevel=stacklevel)
    elif info["nnz"] == 0:
        if info["max_nnz"] is None:  # the threshold alone
            cause, fix = "the pruning", "lower the threshold"
        else:
            cause = f"the budget max_nnz={info['max_nnz']:,}"
            fix = "raise max_nnz (--max-nnz) or set it to 0 (no budget)"
        warnings.warn(f"{cause} left no word context (M had {info['nnz_before']:,} "
                      f"non-zeros): the word-context term has no effect; {fix}.",
                      UserWarning, stacklevel=stacklevel)


_association = association  # word_context's `association` argument shadows the function
