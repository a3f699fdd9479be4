"""A numba kernel of the cosine kNN search (:func:`semnmf.graphs.knn._cosine_kneighbors`):
each row's most similar columns of a chunk of similarities, in one pass.

:func:`top_similar` reads each row once and keeps its ``k`` largest values in a small
sorted list (an entry below the list's smallest is rejected by one comparison), in place
of numpy's ``argpartition`` and stable ``argsort`` (``benchmarks/results/knn.md``). Ties
keep the lower column first, also at the k-th place, where ``argpartition`` picks any of
the tied columns, so it serves dense rows (embeddings) only: on sparse rows it would change
the document graphs of GNMF, GTNMF and SymNMF for no gain. The kernel releases the GIL.
``SEMNMF_KERNELS=0`` takes the numpy path; tests compare the two.
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def top_similar(S, k, offset, dist, ind):
    """For each row r of the similarities ``S`` (rows ``offset ..`` of the search, columns
    all points): the ``k`` largest ``S[r, j]`` with ``j != r + offset`` (a point is not its
    own neighbour), most similar first and the lower j first among equal values, written as
    ``dist[offset + r] = 1 − S[r, j]`` (float64) and ``ind[offset + r] = j``. Needs
    ``k <= S.shape[1] − 1``."""
    m, n = S.shape
    vals = np.empty(k, dtype=np.float64)
    cols = np.empty(k, dtype=np.int64)
    for r in range(m):
        own = r + offset
        filled = 0
        for j in range(n):
            if j == own:
                continue
            v = np.float64(S[r, j])
            if filled < k:
                p = filled
                filled += 1
            elif v > vals[k - 1]:
                p = k - 1
            else:
                continue
            while p > 0 and vals[p - 1] < v:  # shift the smaller ones down; equal ones stay
                vals[p] = vals[p - 1]
                cols[p] = cols[p - 1]
                p -= 1
            vals[p] = v
            cols[p] = j
        for q in range(k):
            dist[own, q] = 1.0 - vals[q]
            ind[own, q] = cols[q]
