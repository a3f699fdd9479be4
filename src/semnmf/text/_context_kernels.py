"""Compiled kernels of the word-context matrix: window/sentence co-occurrence counts built
row by row, and the per-row top-k selection of the pruning.

Co-occurrence (:func:`window_cooccurrence`) follows Gustavson's row-by-row sparse product:
the positions of each word are read from an inverted index (positions sorted by word), the
partners within the window of each position are counted in a dense accumulator of length
``n_terms``, and the row is written out with its columns sorted. A first pass counts each
row's distinct partners, so the CSR arrays are allocated once at their exact size: memory
is the result plus the token stream and its index, never a list of pairs. Words are cut
into blocks, one per task of the shared thread pool (the kernels release the GIL).
"""

import numba
import numpy as np
import scipy.sparse as sp

from .._utils.parallel import map_blocks, n_threads, row_blocks


def _over_row_blocks(work, indptr):
    """``work(start, stop)`` on a few blocks of rows per thread of the shared pool, the
    blocks of about equal non-zeros (``indptr`` counts them)."""
    workers = n_threads()
    blocks = row_blocks(np.asarray(indptr, dtype=np.int64), 4 * workers)
    map_blocks(lambda index: work(*blocks[index]), len(blocks), workers)


@numba.njit(cache=True, nogil=True)
def _rows_pass(words_lo, words_hi, tokens, seg_start, seg_end, order, word_ptr, window,
               n_terms, indptr, indices, data, numeric):
    """One pass over the rows ``words_lo:words_hi``: with ``numeric=False`` store each
    row's number of distinct partners in ``indptr[j + 1]``; with ``numeric=True`` write the
    row's sorted columns and counts at ``indptr[j]``."""
    acc = np.zeros(n_terms, dtype=np.float64)
    seen = np.zeros(n_terms, dtype=np.bool_)
    touched = np.empty(n_terms, dtype=np.int64)
    for j in range(words_lo, words_hi):
        n_touched = 0
        for r in range(word_ptr[j], word_ptr[j + 1]):
            p = order[r]
            lo = max(seg_start[p], p - window)
            hi = min(seg_end[p], p + window + 1)
            for q in range(lo, hi):
                t = tokens[q]
                if t == j:  # self pairs (and the position itself) are not counted
                    continue
                if not seen[t]:
                    seen[t] = True
                    touched[n_touched] = t
                    n_touched += 1
                acc[t] += 1.0
        if numeric:
            cols = np.sort(touched[:n_touched])
            base = indptr[j]
            for i in range(n_touched):
                t = cols[i]
                indices[base + i] = t
                data[base + i] = acc[t]
        else:
            indptr[j + 1] = n_touched
        for i in range(n_touched):
            t = touched[i]
            acc[t] = 0.0
            seen[t] = False


def window_cooccurrence(tokens, ptr, window, n_terms, dtype):
    """Symmetric co-occurrence counts: ``C[j, j']`` = number of ordered pairs of positions
    (p, q), 0 < |p - q| <= ``window``, inside one segment of ``ptr`` (documents or
    sentences), word j at p and word j' != j at q. Zero diagonal; CSR with sorted indices."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int64)
    ptr = np.asarray(ptr, dtype=np.int64)
    lengths = np.diff(ptr)
    seg_start = np.repeat(ptr[:-1], lengths)
    seg_end = np.repeat(ptr[1:], lengths)
    order = np.argsort(tokens, kind="stable")
    word_ptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum(np.bincount(tokens, minlength=n_terms), out=word_ptr[1:])
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    empty_i, empty_f = np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float64)

    def run(arrays, numeric):
        indices, data = arrays
        # blocks of words with about equal numbers of positions, a few per thread
        _over_row_blocks(lambda a, b: _rows_pass(
            a, b, tokens, seg_start, seg_end, order, word_ptr, int(window), n_terms, indptr,
            indices, data, numeric), word_ptr)

    run((empty_i, empty_f), False)
    np.cumsum(indptr, out=indptr)
    nnz = int(indptr[-1])
    index_dtype = np.int32 if max(nnz, n_terms) < np.iinfo(np.int32).max else np.int64
    indices = np.empty(nnz, dtype=index_dtype)
    data = np.empty(nnz, dtype=np.float64)
    run((indices, data), True)
    data = data.astype(dtype, copy=False)
    C = sp.csr_matrix((data, indices, indptr.astype(index_dtype, copy=False)),
                      shape=(n_terms, n_terms))
    C.has_sorted_indices = True
    return C


@numba.njit(cache=True, nogil=True)
def _top_k_rows(rows_lo, rows_hi, indptr, data, top_k, keep):
    for i in range(rows_lo, rows_hi):
        lo, hi = indptr[i], indptr[i + 1]
        if hi - lo <= top_k:
            keep[lo:hi] = True
            continue
        # stable sort by decreasing value: ties keep the lower column (indices are sorted)
        ranked = np.argsort(-data[lo:hi], kind="mergesort")
        for r in range(top_k):
            keep[lo + ranked[r]] = True


def top_k_mask(M, top_k):
    """Boolean mask over ``M.data`` (CSR, sorted indices): True for the ``top_k`` largest
    entries of each row, ties to the lower column index."""
    keep = np.zeros(M.nnz, dtype=np.bool_)
    indptr, data = M.indptr.astype(np.int64, copy=False), M.data
    _over_row_blocks(lambda a, b: _top_k_rows(a, b, indptr, data, int(top_k), keep), indptr)
    return keep


@numba.njit(cache=True, nogil=True)
def _pattern_rows(rows_lo, rows_hi, indptr, indices, p_indptr, p_indices, keep):
    for i in range(rows_lo, rows_hi):
        r, r_end = p_indptr[i], p_indptr[i + 1]
        for e in range(indptr[i], indptr[i + 1]):
            col = indices[e]
            while r < r_end and p_indices[r] < col:
                r += 1
            if r == r_end:
                break
            keep[e] = p_indices[r] == col


def pattern_mask(M, pattern):
    """Boolean mask over ``M.data``: True where ``pattern`` (same shape) stores an entry.
    Both CSR with sorted indices; a merge of the two column lists of each row."""
    keep = np.zeros(M.nnz, dtype=np.bool_)
    indptr = M.indptr.astype(np.int64, copy=False)
    p_indptr = pattern.indptr.astype(np.int64, copy=False)
    indices, p_indices = M.indices, pattern.indices
    _over_row_blocks(lambda a, b: _pattern_rows(a, b, indptr, indices, p_indptr, p_indices,
                                                keep), indptr)
    return keep


@numba.njit(cache=True, nogil=True)
def _pmi_rows(indptr, indices, data, log_rows, log_cols, offset, positive):
    for i in range(indptr.size - 1):
        for e in range(indptr[i], indptr[i + 1]):
            value = np.log(np.float64(data[e])) + offset - log_rows[i] - log_cols[indices[e]]
            if positive and value < 0.0:
                value = 0.0
            data[e] = value


def pmi_inplace(indptr, indices, data, log_rows, log_cols, offset, positive):
    """``data[e] = log(data[e]) + offset - log_rows[row] - log_cols[col]`` (NSF eq. (2)-(3))
    over a CSR matrix, in place; clipped at 0 when ``positive``."""
    _pmi_rows(indptr, indices, data, log_rows, log_cols, float(offset), bool(positive))


@numba.njit(cache=True, nogil=True)
def _union_rows(a_ptr, a_idx, a_val, b_ptr, b_idx, b_val, out_ptr, out_idx, out_val,
                numeric):
    """Row by row merge of two sorted column lists: with ``numeric=False`` the size of each
    row of A + B in ``out_ptr[i + 1]``; with ``numeric=True`` its columns and sums."""
    for i in range(a_ptr.size - 1):
        p, p_end = a_ptr[i], a_ptr[i + 1]
        q, q_end = b_ptr[i], b_ptr[i + 1]
        o = out_ptr[i] if numeric else 0
        while p < p_end or q < q_end:
            if q == q_end or (p < p_end and a_idx[p] < b_idx[q]):
                col, value = a_idx[p], a_val[p]
                p += 1
            elif p == p_end or b_idx[q] < a_idx[p]:
                col, value = b_idx[q], b_val[q]
                q += 1
            else:
                col, value = a_idx[p], a_val[p] + b_val[q]
                p += 1
                q += 1
            if numeric:
                out_idx[o] = col
                out_val[o] = value
            o += 1
        if not numeric:
            out_ptr[i + 1] = o


def add_sorted(A, B):
    """A + B for two CSR matrices of one shape and dtype with sorted indices, allocated at
    the exact size of the result (a first pass counts each row's union of columns):
    scipy's sum allocates nnz(A) + nnz(B) entries and keeps or copies them, twice the
    result of two count matrices of mostly the same pairs. Same values as ``A + B``;
    explicit zeros are kept (sums of counts are positive)."""
    n = A.shape[0]
    a_ptr, b_ptr = A.indptr.astype(np.int64, copy=False), B.indptr.astype(np.int64, copy=False)
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    empty_i, empty_f = np.empty(0, dtype=A.indices.dtype), np.empty(0, dtype=A.data.dtype)
    _union_rows(a_ptr, A.indices, A.data, b_ptr, B.indices, B.data, out_ptr, empty_i, empty_f,
                False)
    np.cumsum(out_ptr, out=out_ptr)
    nnz = int(out_ptr[-1])
    index_dtype = np.int32 if max(nnz, A.shape[1]) < np.iinfo(np.int32).max else np.int64
    indices = np.empty(nnz, dtype=index_dtype)
    data = np.empty(nnz, dtype=A.data.dtype)
    _union_rows(a_ptr, A.indices.astype(index_dtype, copy=False), A.data, b_ptr,
                B.indices.astype(index_dtype, copy=False), B.data, out_ptr, indices, data, True)
    C = sp.csr_matrix((data, indices, out_ptr.astype(index_dtype, copy=False)), shape=A.shape)
    C.has_sorted_indices = True
    return C
