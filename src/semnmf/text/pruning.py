"""Pruning of a word-context matrix, and its budget of non-zeros.

The third step of the word-context matrix M of Semantic-NMF (:mod:`semnmf.text.context`):
:func:`prune` keeps the strongest associations of each word, so that M stays sparse.

The budget: :func:`estimate_nnz` bounds the non-zeros of M before it is built,
:func:`budget_top_k` gives the largest ``top_k`` that surely fits ``max_nnz``,
:func:`prune_to_budget` prunes to it and records what it pruned (:func:`budget_record`),
and :func:`budgeted_document_context` builds the document context's M pruned block by
block. Nothing here densifies a d x d matrix.
"""

import numbers
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._utils.validation import check_matrix, check_positive_int
from .association import check_association, pmi_offset
from .cooccurrence import (DocumentCooccurrence, check_context, check_sequences,
                           document_term_counts, keep_entries)

__all__ = ["prune", "NnzEstimate", "estimate_nnz", "budget_top_k", "budget_record",
           "prune_to_budget", "budgeted_document_context", "warn_if_emptied"]


def prune(M, *, top_k=None, threshold=None, symmetric=True):
    """Keep the strongest entries of a word-context matrix.

    An entry is kept when it is among the ``top_k`` largest of its row AND (when given) at
    least ``threshold``; with ``symmetric=True`` the kept pattern is symmetrized by union
    (values always come from M).

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
            f"symmetric=True needs a square matrix, got shape {M.shape}; pass symmetric=False.")
    M = sp.csr_matrix(M)  # no copy of a CSR input: M is only read below
    if not M.has_sorted_indices:
        M = M.sorted_indices()
    keep = np.ones(M.nnz, dtype=bool)
    if threshold is not None:
        keep &= M.data >= threshold
    if top_k is not None:
        from ._context_kernels import top_k_mask

        # the top_k of the row that pass the threshold are the top_k of those passing it
        keep &= top_k_mask(M, top_k)
    kept = keep_entries(M, keep)
    if not symmetric:
        return kept
    kept.data = np.ones_like(kept.data)
    pattern = sp.csr_matrix(kept + kept.T)  # union of the kept pattern and its transpose
    pattern.sort_indices()
    # M's values on the pattern (a transposed position that M does not store stays empty)
    from ._context_kernels import pattern_mask

    result = keep_entries(M, pattern_mask(M, pattern))
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
        The exact row counts of a random sample of words, scaled (document context only).
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
    check_context(context)
    estimate = None
    if context == "document" and counts is None:
        if sequences is None:
            raise ValueError("Pass counts or sequences.")
        counts = document_term_counts(sequences, np.float64)
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
        tokens, doc_ptr, sent_ptr, n_terms = check_sequences(sequences)
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


def _budget_k(row_nnz, max_nnz, top_k):
    """``(top_k used, the budget's top_k)``: :func:`budget_top_k`, or the ``top_k`` asked
    when smaller."""
    budget_k = budget_top_k(row_nnz, max_nnz)
    return (budget_k if top_k is None else min(check_positive_int(top_k, "top_k"), budget_k),
            budget_k)


def _trim_to_budget(M, max_nnz):
    """Keep only entries strictly above the value of the ``max_nnz``-th largest |entry|
    (a symmetric M stays symmetric), when M has more than ``max_nnz`` of them."""
    if M.nnz <= max_nnz:
        return M
    values = np.abs(M.data)
    cut = np.partition(values, M.nnz - max_nnz)[M.nnz - max_nnz] if max_nnz > 0 else np.inf
    return keep_entries(M, values > cut)


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


def budgeted_document_context(counts, *, association="ppmi", shift=2, min_count=1,
                              top_k=None, threshold=None, dtype=np.float64, max_nnz,
                              row_upper, info, block_size=2048):
    """Document-context word-context matrix M pruned to the budget ``max_nnz``, built
    block by block of words: each block's co-occurrence counts
    (:class:`~semnmf.text.cooccurrence.DocumentCooccurrence`) become PMI (eq. 3) and are
    pruned at once, so the whole C, or the unpruned M, never exists.

    ``counts``: the document-term counts. ``row_upper``: :func:`estimate_nnz`'s per-word
    bound, whose sum exceeds ``max_nnz``; the rows keep the largest ``top_k`` that surely
    fits (:func:`budget_top_k`; a smaller ``top_k`` given is kept), the pattern
    symmetrized. ``info``: the record of
    :func:`budget_record`. Other parameters as :func:`~semnmf.text.context.word_context`.

    Returns
    -------
    M : scipy.sparse.csr_matrix of shape (n_terms, n_terms)
    info : dict
        The record, completed (:func:`warn_if_emptied` warns from it; this does not).
    """
    check_association(association, shift)
    use_k, budget_k = _budget_k(row_upper, max_nnz, top_k)
    counts = sp.csr_matrix(check_matrix(counts, "counts", dtype=dtype))
    C = DocumentCooccurrence(counts, check_positive_int(min_count, "min_count"))
    row_sums = C.row_sums(block_size)
    with np.errstate(divide="ignore"):
        log_rows = np.log(row_sums)
        log_total = np.log(row_sums.sum())
    offset = pmi_offset(log_total, association, shift)
    from ._context_kernels import association_rows

    kept, nnz_before = [], 0
    for start, block in C.blocks(block_size):
        # PMI (eq. 3) of the block's counts, clipped at 0 but for "pmi", its zeros left
        # out, then the threshold and each row's top_k: one compiled pass per row
        block, nonzero = association_rows(block, start, log_rows, offset,
                                          association != "pmi", threshold, use_k, dtype)
        nnz_before += nonzero
        kept.append(block)
    K = sp.csr_matrix(sp.vstack(kept, format="csr")) if kept else sp.csr_matrix(
        (0, C.n_terms), dtype=dtype)
    return _finish(_symmetric_union(K), nnz_before, max_nnz, use_k, budget_k, info)


def budget_record(max_nnz, top_k, threshold, min_count):
    """``max_nnz`` checked (a positive int, or None) and the pruning record of
    :func:`~semnmf.text.context.word_context` started with the options given."""
    if max_nnz is not None:
        max_nnz = check_positive_int(max_nnz, "max_nnz")
    return max_nnz, {"max_nnz": max_nnz, "estimated_nnz_upper": None, "top_k": top_k,
                     "threshold": threshold, "min_count": min_count}


def prune_to_budget(M, *, top_k=None, threshold=None, max_nnz=None, row_upper=None,
                    info=None, return_info=False, warn=True):
    """Pruning and nnz budget of :func:`~semnmf.text.context.word_context` (whose
    parameters ``max_nnz``, already checked, ``top_k``, ``threshold`` and ``return_info``
    are), applied to an unpruned association matrix M already built. ``row_upper``:
    :func:`estimate_nnz`'s per-word bound for a document context, from which the budget's
    ``top_k`` is computed when its sum exceeds ``max_nnz`` (else from M's exact row
    counts). ``warn=False``: no warning when the budget empties M.
    """
    if info is None:
        max_nnz, info = budget_record(max_nnz, top_k, threshold, None)
    nnz_before = M.nnz
    use_k, budget_k = top_k, None
    rows = None
    if max_nnz is not None:
        if row_upper is not None and int(np.sum(row_upper)) > max_nnz:
            rows = row_upper  # as budgeted_document_context
        elif nnz_before > max_nnz:
            rows = np.diff(M.indptr)  # exact row counts
    if rows is not None:
        use_k, budget_k = _budget_k(rows, max_nnz, top_k)
    if use_k is not None or threshold is not None:
        M = prune(M, top_k=use_k, threshold=threshold, symmetric=True)
    M, info = _finish(M, nnz_before, max_nnz, use_k, budget_k, info)
    if warn:
        warn_if_emptied(info, stacklevel=3)
    return (M, info) if return_info else M


def _finish(M, nnz_before, max_nnz, use_k, budget_k, info):
    """Last resort of the budget (largest entries only), and the record of the pruning:
    ``(M, info)``."""
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
    return M, info


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


