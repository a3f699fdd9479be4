"""Numba kernels of spherical k-means' Lloyd iteration (:mod:`semnmf.models.skmeans`).

A Lloyd iteration (Dhillon & Modha 2001, section 4) has two steps, each one pass over the
non-zeros of the normalized documents X (CSR):

- **assign**: :func:`assign_rows` forms the k similarities ``x_iᵀ c_j`` of a row and keeps
  only the argmax and its value (no n x k matrix), on row blocks of about equal non-zeros
  on the shared thread pool (the kernel releases the GIL);
- **update**: :func:`cluster_sums` adds every row of X into the dense row of its cluster,
  O(nnz(X)) without a membership matrix.

Both add in exactly the order of the scipy kernels they replace (``csr_matvecs`` per row
in stored order; ``csr_matmat`` in increasing document order, on one thread), without
fast-math or fused multiply-adds, so labels, centroids and objectives are bitwise those of
``X @ C.T`` + ``argmax`` and of ``membership @ X`` on x86-64, whatever the number of
threads (``tests/models/_solvers/test_skmeans_kernels.py``). Sums are kept in the dtype
scipy would use (the wider of X's and the centroids').
"""

import numba
import numpy as np

from ..._utils.parallel import map_blocks, row_blocks, threads_for
from .fro_kernels import _vector_width, packed_csr
from .simd import row_product_exact

# At most one thread per this many non-zeros of X (the assignment and the sums;
# benchmarks/results/design_notes.md). The labels do not depend on the number of threads.
_MIN_NNZ_FOR_THREADS = 1_000_000


@numba.njit(cache=True, nogil=True)
def assign_rows(indptr, indices, data, centers_t, labels, sims, start, stop, shape):
    """Rows ``start:stop``: ``labels[i] = argmax_j (X C.T)_ij`` and ``sims[i]`` its value.

    ``centers_t`` is C.T, C-contiguous of shape (n_features, k). Ties go to the lowest
    j, as ``np.argmax`` (for finite values: a NaN similarity after the first column is
    passed over). ``shape``: ``()`` or a tuple of k zeros for a compile-time k ≤ 64, whose
    sums are kept in vector registers (:func:`~semnmf.models._solvers.simd.row_product_exact`);
    either way each column's sum adds the row's non-zeros in stored order, each product
    rounded before it is added. Indices are read as unsigned.
    """
    k = len(shape) if len(shape) > 0 else centers_t.shape[1]
    acc = np.empty(k, dtype=sims.dtype)
    zero = acc.dtype.type(0)
    one = np.uint64(1)
    for i in range(start, stop):
        begin = np.uint64(indptr[i])
        end = np.uint64(indptr[i + 1])
        if len(shape) == 0:
            for q in range(k):
                acc[q] = zero
            p = begin
            while p < end:
                v = data[p]
                j = np.uint64(indices[p])
                for q in range(k):
                    acc[q] += v * centers_t[j, q]
                p += one
        else:
            row_product_exact(indptr, indices, data, centers_t, i, acc, shape)
        best = 0
        value = acc[0]
        for q in range(1, k):
            if acc[q] > value:
                best = q
                value = acc[q]
        labels[i] = best
        sims[i] = value


@numba.njit(cache=True, nogil=True)
def cluster_sums(indptr, indices, data, labels, owner, group, sums):
    """``sums[j] += x_i`` for every row i of X (CSR) whose cluster ``j = labels[i] ≥ 0``
    has ``owner[j] == group``.

    ``sums`` (k, n_features) must start at zero. Rows are added in increasing order, so
    a cluster's sums do not depend on how the clusters are shared out among threads.
    """
    for i in range(labels.shape[0]):
        j = labels[i]
        if j < 0 or owner[j] != group:
            continue
        p = np.uint64(indptr[i])
        end = np.uint64(indptr[i + 1])
        while p < end:
            sums[j, np.uint64(indices[p])] += data[p]
            p += np.uint64(1)


def assign(X, centers):
    """Labels (argmax of ``X @ centers.T``) and each row's largest similarity.

    X: CSR (n, n_features); centers: (k, n_features). The similarities are computed in
    ``np.result_type(X.dtype, centers.dtype)``, as scipy's product (float32 documents
    against a float64 fit's centroids: in float64). Rows are cut into blocks of about
    equal non-zeros, one thread per ``_MIN_NNZ_FOR_THREADS`` non-zeros at most.
    All-zero rows get label 0 and similarity 0 here; the caller marks them.
    """
    X = packed_csr(X)
    k = centers.shape[0]
    dtype = np.result_type(X.dtype, centers.dtype)  # scipy's result dtype
    centers_t = np.ascontiguousarray(centers.T, dtype=dtype)
    data = X.data if X.data.dtype == dtype else X.data.astype(dtype)
    n = X.shape[0]
    labels = np.empty(n, dtype=np.intp)
    sims = np.empty(n, dtype=dtype)
    workers = threads_for(X.nnz, _MIN_NNZ_FOR_THREADS)
    blocks = row_blocks(X.indptr, workers) if workers > 1 else [(0, n)]
    shape = _vector_width(k)

    def work(index):
        a, b = blocks[index]
        assign_rows(X.indptr, X.indices, data, centers_t, labels, sims, a, b, shape)

    map_blocks(work, len(blocks), workers)
    return labels, sims


def sums(X, labels, k):
    """(k, n_features) sums of the rows of X (CSR) in each cluster, in X's dtype;
    rows labelled -1 are left out.

    With several threads each adds the rows of its own clusters (clusters shared out so
    that every thread has about as many non-zeros); every thread reads all the labels.
    """
    X = packed_csr(X)
    out = np.zeros((k, X.shape[1]), dtype=X.dtype)
    workers = min(threads_for(X.nnz, _MIN_NNZ_FOR_THREADS), k)
    owner = np.zeros(k, dtype=np.intp)
    if workers > 1:
        valid = labels >= 0
        load = np.bincount(labels[valid], weights=np.diff(X.indptr)[valid], minlength=k)
        # largest cluster first, each to the thread with the least work so far
        work = np.zeros(workers)
        for j in np.argsort(-load, kind="stable"):
            owner[j] = np.argmin(work)
            work[owner[j]] += load[j]

    def run(group):
        cluster_sums(X.indptr, X.indices, X.data, labels, owner, group, out)

    map_blocks(run, workers, workers)
    return out


__all__ = ["assign", "assign_rows", "cluster_sums", "sums"]
