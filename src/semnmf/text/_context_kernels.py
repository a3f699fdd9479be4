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


@numba.njit(cache=True, nogil=True, inline="always")
def _row_buffers(n_terms, dtype):
    """The work arrays of a row-by-row product: a dense accumulator of one row's sums (in
    ``dtype``), the marks of the columns it touched and their list (see :func:`_emit_row`,
    which clears them after each row)."""
    return (np.zeros(n_terms, dtype=dtype), np.zeros(n_terms, dtype=np.bool_),
            np.empty(n_terms, dtype=np.int64))


@numba.njit(cache=True, nogil=True, inline="always")
def _sift_down(x, root, end):
    """Restore the max-heap order of ``x[:end]`` below ``root``."""
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and x[child] < x[child + 1]:
            child += 1
        if x[root] >= x[child]:
            return
        x[root], x[child] = x[child], x[root]
        root = child


@numba.njit(cache=True, nogil=True)
def _heapsort(x):
    """Sort ``x`` in place (heapsort): ``np.sort``'s compiled implementation takes about a
    second to build on the first run of an install (``benchmarks/results/startup.md``)."""
    n = x.size
    for root in range(n // 2 - 1, -1, -1):
        _sift_down(x, root, n)
    for end in range(n - 1, 0, -1):
        x[0], x[end] = x[end], x[0]
        _sift_down(x, 0, end)


@numba.njit(cache=True, nogil=True, inline="always")
def _emit_row(row, touched, n_touched, acc, seen, indptr, indices, data, numeric):
    """End of one row of a row-by-row product: with ``numeric`` write its sorted columns
    and sums at ``indptr[row]``, else store its size in ``indptr[row + 1]``; then clear
    the accumulator and the marks of the columns it touched."""
    if numeric:
        cols = touched[:n_touched]
        if 32 * n_touched > seen.size:  # a long row: its marks in order, O(n_terms)
            i = 0
            for t in range(seen.size):
                if seen[t]:
                    cols[i] = t
                    i += 1
        else:
            _heapsort(cols)
        base = indptr[row]
        for i in range(n_touched):
            t = cols[i]
            indices[base + i] = t
            data[base + i] = acc[t]
    else:
        indptr[row + 1] = n_touched
    for i in range(n_touched):
        t = touched[i]
        acc[t] = 0
        seen[t] = False


@numba.njit(cache=True, nogil=True)
def _rows_pass(words_lo, words_hi, tokens, seg_start, seg_end, order, word_ptr, window,
               n_terms, indptr, indices, data, numeric):
    """One pass over the rows ``words_lo:words_hi``: with ``numeric=False`` store each
    row's number of distinct partners in ``indptr[j + 1]``; with ``numeric=True`` write the
    row's sorted columns and counts at ``indptr[j]``."""
    acc, seen, touched = _row_buffers(n_terms, np.float64)
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
        _emit_row(j, touched, n_touched, acc, seen, indptr, indices, data, numeric)


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
def _document_rows_pass(words_lo, words_hi, start, t_indptr, t_indices, t_data, x_indptr,
                        x_indices, x_data, n_terms, indptr, indices, data, numeric):
    """Rows ``words_lo:words_hi`` of AᵀA (A = documents x terms, CSR; Aᵀ its CSR
    transpose), the diagonal left out, as :func:`_rows_pass`: ``numeric=False`` stores
    each row's number of distinct partners in ``indptr[j - start + 1]``; ``numeric=True``
    writes the sorted columns and sums at ``indptr[j - start]``. The sums are scipy's:
    entry (j, l) adds ``a_dj · a_dl`` over the documents d of word j in increasing order,
    in A's dtype, as ``csr_matmat`` adds ``a_ld · a_dj`` for its entry (l, j)."""
    acc, seen, touched = _row_buffers(n_terms, data.dtype)
    for j in range(words_lo, words_hi):
        n_touched = 0
        for r in range(t_indptr[j], t_indptr[j + 1]):
            d = t_indices[r]
            v = t_data[r]
            for q in range(x_indptr[d], x_indptr[d + 1]):
                t = x_indices[q]
                if t == j:  # the diagonal
                    continue
                if not seen[t]:
                    seen[t] = True
                    touched[n_touched] = t
                    n_touched += 1
                if numeric:
                    acc[t] += v * x_data[q]
        _emit_row(j - start, touched, n_touched, acc, seen, indptr, indices, data, numeric)


def document_cooccurrence_rows(counts, counts_t, start, stop):
    """Rows ``start:stop`` of the off-diagonal AᵀA, A = ``counts`` (documents x terms, CSR
    with sorted indices) and ``counts_t`` its transpose in CSR: a CSR block
    (stop − start) x n_terms with sorted indices, in A's dtype.

    The numbers are bitwise those of scipy's ``Aᵀ A[:, start:stop]`` (see
    :func:`_document_rows_pass`), with the zero sums left out as scipy leaves them out.
    Gustavson's row-by-row product, as :func:`window_cooccurrence`: one pass counts each
    row's partners, a second fills the block allocated at its size; rows are shared among
    the pool's threads by their work (``benchmarks/results/design_notes.md``).
    """
    n_terms = counts.shape[1]
    stop = min(stop, n_terms)
    x_indptr = counts.indptr.astype(np.int64, copy=False)
    t_indptr = counts_t.indptr.astype(np.int64, copy=False)
    # a row's work: the lengths of its documents (+1, so that no block is empty of work)
    first, ends = t_indptr[start], t_indptr[start:stop + 1]
    lengths = np.diff(x_indptr)[counts_t.indices[first:ends[-1]]]
    total = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    work = total[ends - first] + np.arange(stop - start + 1, dtype=np.int64)
    indptr = np.zeros(stop - start + 1, dtype=np.int64)
    dtype = counts.dtype

    def run(indices, data, numeric):
        _over_row_blocks(lambda a, b: _document_rows_pass(
            start + a, start + b, start, t_indptr, counts_t.indices, counts_t.data, x_indptr,
            counts.indices, counts.data, n_terms, indptr, indices, data, numeric), work)

    run(np.empty(0, dtype=np.int32), np.empty(0, dtype=dtype), False)
    np.cumsum(indptr, out=indptr)
    nnz = int(indptr[-1])
    index_dtype = np.int32 if max(nnz, n_terms) < np.iinfo(np.int32).max else np.int64
    indices = np.empty(nnz, dtype=index_dtype)
    data = np.empty(nnz, dtype=dtype)
    run(indices, data, True)
    block = sp.csr_matrix((data, indices, indptr.astype(index_dtype, copy=False)),
                          shape=(stop - start, n_terms))
    block.has_sorted_indices = True
    if nnz and not data.all():
        block.eliminate_zeros()
    return block


@numba.njit(cache=True, nogil=True)
def _select_top_k(values, top_k, keep):
    """``keep[:m] = True`` for the first ``top_k`` of ``values`` (m of them, m > top_k) in
    a stable sort by decreasing value (ties to the earlier entry), found by selection
    instead of a sort: v, the ``top_k``-th largest value, by ``np.partition``; then, in
    order, every entry above v and the first entries equal to v until ``top_k``. O(m),
    not O(m log m), the same masks as the sort (``benchmarks/results/design_notes.md``)."""
    v = -np.partition(-values, top_k - 1)[top_k - 1]
    ties = top_k
    for e in range(values.size):
        if values[e] > v:
            ties -= 1
    for e in range(values.size):
        x = values[e]
        if x > v:
            keep[e] = True
        elif x == v and ties > 0:
            keep[e] = True
            ties -= 1


@numba.njit(cache=True, nogil=True)
def _top_k_rows(rows_lo, rows_hi, indptr, data, top_k, keep):
    """The ``top_k`` largest entries of each row, ties to the lower column (the indices
    are sorted): :func:`_select_top_k`."""
    for i in range(rows_lo, rows_hi):
        lo, hi = indptr[i], indptr[i + 1]
        if hi - lo <= top_k:
            keep[lo:hi] = True
        else:
            _select_top_k(data[lo:hi], top_k, keep[lo:hi])


@numba.njit(cache=True, nogil=True)
def _association_rows(rows_lo, rows_hi, start, indptr, indices, logs, log_rows, offset,
                      positive, threshold, use_threshold, top_k, slots, out_indices,
                      out_data, kept, nonzero):
    """Rows ``rows_lo:rows_hi`` of a block of counts (rows ``start + i`` of the whole
    matrix), from ``logs`` = log(count) of its entries: the association
    ``((log c + offset) − log_rows[row]) − log_rows[col]`` (clipped at 0 when
    ``positive``), cast to ``out_data``'s dtype, its zeros left out (their number per row
    in ``nonzero``), then the row's ``top_k`` largest (``top_k`` > 0; ties to the lower
    column) that are ≥ ``threshold`` (when ``use_threshold``) written from ``slots[i]``,
    their number in ``kept``. The same operations in the same order as the numpy
    expressions they replace, so the same numbers."""
    for i in range(rows_lo, rows_hi):
        lo, hi = indptr[i], indptr[i + 1]
        values = np.empty(hi - lo, dtype=out_data.dtype)
        columns = np.empty(hi - lo, dtype=indices.dtype)
        m = 0
        row_term = log_rows[start + i]
        for e in range(lo, hi):
            v = logs[e] + offset
            v = v - row_term
            v = v - log_rows[indices[e]]
            if positive and v < 0.0:
                v = 0.0
            values[m] = v  # cast to the output dtype by the store
            if values[m] != 0:
                columns[m] = indices[e]
                m += 1
        nonzero[i] = m
        keep = np.zeros(m, dtype=np.bool_)
        if top_k > 0 and m > top_k:
            _select_top_k(values[:m], top_k, keep)
        else:
            keep[:] = True
        base = slots[i]
        n = 0
        for e in range(m):
            if keep[e] and (not use_threshold or values[e] >= threshold):
                out_indices[base + n] = columns[e]
                out_data[base + n] = values[e]
                n += 1
        kept[i] = n


def top_k_mask(M, top_k):
    """Boolean mask over ``M.data`` (CSR, sorted indices): True for the ``top_k`` largest
    entries of each row, ties to the lower column index."""
    keep = np.zeros(M.nnz, dtype=np.bool_)
    indptr, data = M.indptr.astype(np.int64, copy=False), M.data
    _over_row_blocks(lambda a, b: _top_k_rows(a, b, indptr, data, int(top_k), keep), indptr)
    return keep


def association_rows(block, start, log_rows, offset, positive, threshold, top_k, dtype):
    """The pruned association rows of a block of co-occurrence counts (CSR, sorted
    indices; rows ``start ...`` of the whole matrix): ``(K, nonzero)`` with K the CSR
    block of the kept entries in ``dtype`` and ``nonzero`` the number of entries that
    were not zero before pruning (:func:`_association_rows`). The logarithms of the
    counts are numpy's (``np.log``; numba's log differs from it in the last bit for
    about one count in 20,000), the rest is one compiled pass per row."""
    indptr = block.indptr.astype(np.int64, copy=False)
    lengths = np.diff(indptr)
    room = lengths if top_k is None else np.minimum(lengths, top_k)
    slots = np.zeros(block.shape[0] + 1, dtype=np.int64)
    np.cumsum(room, out=slots[1:])
    out_indices = np.empty(int(slots[-1]), dtype=block.indices.dtype)
    out_data = np.empty(int(slots[-1]), dtype=dtype)
    kept = np.zeros(block.shape[0], dtype=np.int64)
    nonzero = np.zeros(block.shape[0], dtype=np.int64)
    logs = np.log(block.data, dtype=np.float64)
    use_threshold = threshold is not None
    # compared in the output dtype, as numpy compares an array with a Python float
    limit = np.dtype(dtype).type(threshold if use_threshold else 0.0)
    _over_row_blocks(lambda a, b: _association_rows(
        a, b, int(start), indptr, block.indices, logs, log_rows, float(offset),
        bool(positive), limit, use_threshold,
        0 if top_k is None else int(top_k), slots, out_indices, out_data, kept,
        nonzero), indptr)
    ptr = np.zeros(block.shape[0] + 1, dtype=np.int64)
    np.cumsum(kept, out=ptr[1:])
    if int(ptr[-1]) < out_data.size:  # close the rows' unused room
        taken = np.repeat(slots[:-1], kept) + (np.arange(int(ptr[-1])) - np.repeat(ptr[:-1], kept))
        out_indices, out_data = out_indices[taken], out_data[taken]
    K = sp.csr_matrix((out_data, out_indices, ptr.astype(block.indices.dtype, copy=False)),
                      shape=block.shape)
    K.has_sorted_indices = True
    return K, int(nonzero.sum())


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
