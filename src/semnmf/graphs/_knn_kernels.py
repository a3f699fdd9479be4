"""Numba kernels of the cosine kNN search (:func:`semnmf.graphs.knn._cosine_kneighbors`):
each point's most similar other points, from the upper half of the similarities only.

The similarity of two points is computed once, in the chunk of the lower one:
:func:`top_similar_upper` reads a chunk of rows ``a..b`` against the columns ``a..n`` and
keeps, for each row, its ``k`` most similar columns, and for each column beyond the chunk,
its ``k`` most similar rows of the chunks read so far (a running list per worker thread).
:func:`merge_lists` then merges each point's lists. A list is kept sorted (most similar
first, the lower index first among equal values) and an entry below its last is rejected
by one comparison, in place of numpy's ``argpartition`` and stable ``argsort``
(``benchmarks/results/knn.md``). Ties keep the lower index, also at the k-th place, where
``argpartition`` picks any of the tied columns, so the kernels serve dense rows
(embeddings) only: on sparse rows they would change the document graphs of GNMF, GTNMF and
SymNMF for no gain. The kernels release the GIL. ``SEMNMF_KERNELS=0`` takes the numpy path;
tests compare the two.
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _insert(vals, cols, fill, i, k, v, c):
    """Put ``(v, c)`` into point i's list ``vals[i, :fill[i]]``, ``cols[i, :fill[i]]``
    (value descending, index ascending among equal values) if it belongs to the ``k``
    first; returns whether the list is now full."""
    f = fill[i]
    if f < k:
        p = f
        fill[i] = f + 1
    elif v > vals[i, k - 1] or (v == vals[i, k - 1] and c < cols[i, k - 1]):
        p = k - 1
    else:
        return True
    while p > 0 and (vals[i, p - 1] < v or (vals[i, p - 1] == v and cols[i, p - 1] > c)):
        vals[i, p] = vals[i, p - 1]
        cols[i, p] = cols[i, p - 1]
        p -= 1
    vals[i, p] = v
    cols[i, p] = c
    return fill[i] == k


@numba.njit(cache=True, nogil=True)
def top_similar_upper(S, k, offset, vals, cols, fill, tvals, tcols, tfill, tmin):
    """One chunk of the search: ``S[r, j]`` is the similarity of points ``offset + r`` and
    ``offset + j`` (rows: the chunk's m points; columns: every point from ``offset`` on).

    Row r's ``k`` most similar columns (itself excluded) go to ``vals[offset + r]``,
    ``cols[offset + r]`` (``fill``: their number, fewer than k when the chunk has fewer
    columns). Each column ``c >= offset + m`` (beyond the chunk) offers the row to its
    running list ``tvals[c]``, ``tcols[c]``, ``tfill[c]``; ``tmin[c]`` is that list's last
    value once full (else −inf), read first to reject most offers in one comparison.
    Values are stored as float64, exactly."""
    m, w = S.shape
    for r in range(m):
        own = offset + r
        for j in range(w):
            c = offset + j
            if c == own:
                continue
            v = np.float64(S[r, j])
            f = fill[own]
            if f < k or v > vals[own, k - 1]:   # the columns come in increasing order
                _insert(vals, cols, fill, own, k, v, c)
            if j >= m and v >= tmin[c]:
                if _insert(tvals, tcols, tfill, c, k, v, own):
                    tmin[c] = tvals[c, k - 1]


@numba.njit(cache=True, nogil=True)
def merge_lists(vals, cols, fill, tvals, tcols, tfill, k, dist, ind):
    """Each point i's ``k`` most similar others from its own list and every worker's
    running list (``tvals[w, i]``...), written as ``dist[i] = 1 − value`` and
    ``ind[i]``."""
    n = vals.shape[0]
    out_v = np.empty((1, k), dtype=np.float64)
    out_c = np.empty((1, k), dtype=np.int64)
    out_f = np.zeros(1, dtype=np.int64)
    for i in range(n):
        out_f[0] = 0
        for q in range(fill[i]):
            _insert(out_v, out_c, out_f, 0, k, vals[i, q], cols[i, q])
        for wk in range(tvals.shape[0]):
            for q in range(tfill[wk, i]):
                _insert(out_v, out_c, out_f, 0, k, tvals[wk, i, q], tcols[wk, i, q])
        for q in range(k):
            dist[i, q] = 1.0 - out_v[0, q]
            ind[i, q] = out_c[0, q]
