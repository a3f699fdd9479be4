"""Numba kernels of the Frobenius multiplicative updates (:mod:`semnmf.models._solvers.frobenius`).

Every Frobenius update of the NMF family has the form (Neurocomputing paper, eq. 7a-7c)::

    F ← F ⊙ (A R + c B S) / (F G + ε)          A, B sparse (m x ·), F (m x k), G (k x k)

with ``B S`` absent except in Semantic-NMF's W update (A = Xᵀ, R = Z, B = M, S = Q,
c = λ). Row i of the new F depends on row i of A (and B) only, so :func:`mu_rows` does
the whole update in one pass over the rows, without writing (A R) to memory (the k x k
products for chunks of 32 rows at a time). The same pass accumulates, in float64, the
pieces of the objective that involve the new F (eq. 5 by the trace identity of
:func:`semnmf.models._solvers.mu.trace_residual`): ``Σ F_new ⊙ (A R)`` and the Gram matrix
``F_newᵀ F_new``. So one sweep reads X, Xᵀ, M and Mᵀ once each, and the objective at the
new iterate costs O(k²) more. :func:`spmm_rows` is the plain product ``A R`` for the
updates of other forms.

Rows are split into blocks of about equal non-zeros, one call per block on the shared
pool (:func:`semnmf._utils.parallel.thread_pool`; the kernels release the GIL); each row
belongs to one block, and the per-block sums are added afterwards. Scalars are passed in
the factors' dtype so that no arithmetic is upcast.
"""

import math

import numba
import numpy as np
import scipy.sparse as sp

from ..._utils.parallel import map_blocks, row_blocks, threads_for
from .simd import row_combination, row_combination_add, row_product, update_row

# Reassociation lets LLVM vectorize the k-term loops; no flag that assumes finite
# values ("nnan", "ninf") is set.
_FASTMATH = {"reassoc", "contract", "nsz"}

# A pass uses at most one thread per this much work, non-zeros x columns (one thread
# below it: a thread hand-off costs more than the work). Two threads made a pass slower
# below about this much work and faster above it (benchmarks/results/design_notes.md).
_WORK_PER_THREAD = 1_000_000

# Blocks per thread: more blocks than threads lets a thread that is slowed down on a
# shared machine hand its remaining rows to the others.
_BLOCKS_PER_THREAD = 4
# ... but only for passes long enough that the extra hand-offs do not show.
_MIN_NNZ_FOR_MORE_BLOCKS = 1_000_000


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _row_product(indptr, indices, data, R, i, acc, shape):
    """``acc[:k] = (A R)_i``, row i of A (CSR) times R (p, k).

    For a compile-time k (``shape`` a tuple of k zeros, :func:`_vector_width`) in vector
    registers, :func:`semnmf.models._solvers.simd.row_product` (R C-contiguous). For a
    run-time k (``shape == ()``, k above ``_MAX_VECTOR_K``) the loop over the k
    columns, taking four non-zeros per update of the sums, with indices read as unsigned
    (``benchmarks/results/design_notes.md``).
    """
    if len(shape) > 0:
        row_product(indptr, indices, data, R, i, acc, shape)
        return
    start = np.uint64(indptr[i])
    end = np.uint64(indptr[i + 1])
    one = np.uint64(1)
    two = np.uint64(2)
    three = np.uint64(3)
    zero = acc.dtype.type(0)
    k = R.shape[1]
    for q in range(k):
        acc[q] = zero
    p = start
    while p + three < end:
        j0 = np.uint64(indices[p])
        j1 = np.uint64(indices[p + one])
        j2 = np.uint64(indices[p + two])
        j3 = np.uint64(indices[p + three])
        v0 = data[p]
        v1 = data[p + one]
        v2 = data[p + two]
        v3 = data[p + three]
        for q in range(k):
            acc[q] += (v0 * R[j0, q] + v1 * R[j1, q]) + (v2 * R[j2, q] + v3 * R[j3, q])
        p += two + two
    while p < end:
        j = np.uint64(indices[p])
        v = data[p]
        for q in range(k):
            acc[q] += v * R[j, q]
        p += one


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH)
def spmm_rows(indptr, indices, data, R, out, start, stop, shape):
    """Rows ``start:stop`` of ``out = A R``, A = (indptr, indices, data) in CSR.

    ``shape``: ``()`` or a tuple of k zeros, see :func:`_vector_width`."""
    k = len(shape) if len(shape) > 0 else R.shape[1]
    acc = np.empty(k, dtype=out.dtype)
    for i in range(start, stop):
        _row_product(indptr, indices, data, R, i, acc, shape)
        for q in range(k):
            out[i, q] = acc[q]


# Rows per chunk of mu_rows: F G for the chunk before its row products, Fᵀ F after them.
_CHUNK = 32


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _chunk_times(F, G, i0, i1, out, shape):
    """``out[:i1 − i0] = F[i0:i1] G``. For a compile-time k each row in vector registers
    (:func:`~semnmf.models._solvers.simd.row_combination`, the sum over G's rows in
    order); else row by row of G, so that each row of G is read once per chunk and the
    loop over the columns is vectorized."""
    k = len(shape) if len(shape) > 0 else F.shape[1]
    if len(shape) > 0:
        for t in range(i1 - i0):
            row_combination(F, (i0 + t) * k, 1, k, G, 0, out, t * k, shape)
        return
    for t in range(i1 - i0):
        for q in range(k):
            out[t, q] = 0
    for r in range(k):
        for t in range(i1 - i0):
            f = F[i0 + t, r]
            for q in range(k):
                out[t, q] += f * G[r, q]


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _chunk_gram(F, i0, i1, gram, rows, shape):
    """``gram += F[i0:i1]ᵀ F[i0:i1]`` in float64 (``rows``: a float64 buffer of the
    chunk's rows). For a compile-time k row r of the sum, ``Σ_t F[t, r] F[t, :]``, is
    formed in vector registers (:func:`~semnmf.models._solvers.simd.row_combination_add`);
    else four rows per update of the sums: each entry of ``gram`` is loaded and stored
    once per four rows instead of once per row."""
    k = len(shape) if len(shape) > 0 else F.shape[1]
    m = i1 - i0
    for t in range(m):
        for q in range(k):
            rows[t, q] = F[i0 + t, q]
    if len(shape) > 0:
        for r in range(k):
            row_combination_add(rows, r, k, m, rows, 0, gram, r * k, shape)
        return
    t = 0
    while t + 3 < m:
        for r in range(k):
            a0 = rows[t, r]
            a1 = rows[t + 1, r]
            a2 = rows[t + 2, r]
            a3 = rows[t + 3, r]
            for q in range(k):
                gram[r, q] += ((a0 * rows[t, q] + a1 * rows[t + 1, q])
                               + (a2 * rows[t + 2, q] + a3 * rows[t + 3, q]))
        t += 4
    while t < m:
        for r in range(k):
            a0 = rows[t, r]
            for q in range(k):
                gram[r, q] += a0 * rows[t, q]
        t += 1


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH, inline="always")
def _update(F, i, numerator, den, t, eps, acc, shape):
    """``F[i] ← F[i] ⊙ numerator / (den[t] + ε)``; returns ``Σ_q F[i, q] acc[q]`` at the new
    F[i], in float64 (for a compile-time k: :func:`~semnmf.models._solvers.simd.update_row`)."""
    if len(shape) > 0:
        return update_row(F, i, numerator, den, t, eps, acc, shape)
    s = 0.0
    for q in range(F.shape[1]):
        f = F[i, q] * (numerator[q] / (den[t, q] + eps))
        F[i, q] = f
        s += np.float64(f) * np.float64(acc[q])
    return s


@numba.njit(cache=True, nogil=True, fastmath=_FASTMATH)
def mu_rows(a_indptr, a_indices, a_data, R, b_indptr, b_indices, b_data, S, c, pair,
            F, G, eps, gram, start, stop, shape):
    """Rows ``start:stop`` of the update ``F ← F ⊙ (A R + c B S) / (F G + ε)``.

    ``pair``: ``()`` when the B S term is absent (B, S, c are not read), ``(0,)`` when it
    is there: a tuple, not a flag, so that numba compiles each case on its own
    (``benchmarks/results/design_notes.md``). Returns ``Σ_rows F ⊙ (A R)`` (after the
    update) in float64 and adds ``Fᵀ F`` of these rows to ``gram`` (k x k, float64).
    ``shape``: see :func:`_vector_width`. The rows go in chunks of ``_CHUNK`` (the
    chunk's F G from the old F, then the updates, then its share of Fᵀ F while its rows
    are in cache; ``benchmarks/results/speed.md``).
    """
    k = len(shape) if len(shape) > 0 else F.shape[1]
    acc = np.empty(k, dtype=F.dtype)
    num = np.empty(k, dtype=F.dtype)
    den = np.empty((_CHUNK, k), dtype=F.dtype)
    rows = np.empty((_CHUNK, k), dtype=np.float64)
    inner = 0.0
    for i0 in range(start, stop, _CHUNK):
        i1 = min(i0 + _CHUNK, stop)
        _chunk_times(F, G, i0, i1, den, shape)
        for i in range(i0, i1):
            _row_product(a_indptr, a_indices, a_data, R, i, acc, shape)
            if len(pair) > 0:
                _row_product(b_indptr, b_indices, b_data, S, i, num, shape)
                for q in range(k):
                    num[q] = acc[q] + c * num[q]
                inner += _update(F, i, num, den, i - i0, eps, acc, shape)
            else:
                inner += _update(F, i, acc, den, i - i0, eps, acc, shape)
        _chunk_gram(F, i0, i1, gram, rows, shape)
    return inner


# Up to this many columns the kernels are compiled for the exact k (see _vector_width).
_MAX_VECTOR_K = 64


def _vector_width(k):
    """The ``shape`` argument of the compiled passes (Frobenius, KL, k-means): a tuple of
    k zeros for k ≤ ``_MAX_VECTOR_K``, else ``()`` (the loop over a run-time k).

    With a compile-time k the row products run in vector registers
    (:mod:`semnmf.models._solvers.simd`; ``benchmarks/results/speed.md``). Each k compiles
    once per dtype (cached on disk).
    """
    return (0,) * k if k <= _MAX_VECTOR_K else ()


def canonical_csr(A, dtype=None):
    """A in canonical CSR (sorted indices, duplicates summed; a copy only when needed),
    with contiguous arrays (:func:`packed_csr`), its values in ``dtype`` (default: A's)."""
    A = A.tocsr()
    dtype = A.dtype if dtype is None else dtype
    if not A.has_canonical_format:
        A = A.copy()
        A.sum_duplicates()
    if A.dtype != dtype:
        A = A.astype(dtype)
    return packed_csr(A)


def packed_csr(A):
    """A CSR matrix whose three arrays are contiguous (the compiled kernels step through
    them by element; scipy keeps a strided ``data`` or ``indices`` as it was given):
    A itself when they are, else a copy of the strided ones."""
    arrays = (A.data, A.indices, A.indptr)
    if all(a.flags.c_contiguous for a in arrays):
        return A
    data, indices, indptr = (np.ascontiguousarray(a) for a in arrays)
    out = sp.csr_matrix((data, indices, indptr), shape=A.shape)
    out.has_canonical_format = A.has_canonical_format
    return out


class CSRKernel:
    """A CSR matrix A (m x p) cut once into row blocks, for the products of the updates.

    Parameters
    ----------
    A : sparse matrix (m, p)
        Converted to canonical CSR once.
    dtype : numpy float dtype, optional
        The factors' dtype; A's values are converted to it once so that no product is
        upcast (a float64 M with float32 factors is read as float32). Default: A's.
    partner : CSRKernel, optional
        A second matrix with the same rows whose product enters the same update (B in
        :func:`mu_rows`); the row blocks are then balanced on the non-zeros of both.
    """

    def __init__(self, A, dtype=None, partner=None):
        dtype = np.dtype(A.dtype if dtype is None else dtype)
        A = canonical_csr(A, dtype)
        self.A = A
        self.shape = A.shape
        self.dtype = dtype
        self.nnz = int(A.nnz)
        self.indptr, self.indices, self.data = A.indptr, A.indices, A.data
        self.partner = partner
        self._plans = {}
        if partner is not None:
            if partner.shape[0] != self.shape[0]:
                raise ValueError(f"partner has {partner.shape[0]} rows, A {self.shape[0]}.")
            self._both = self.indptr.astype(np.int64) + partner.indptr.astype(np.int64)

    def plan(self, k, pair=False):
        """``(workers, blocks)`` of a pass with k columns (over A and its partner when
        ``pair``): at most one thread per ``_WORK_PER_THREAD`` non-zeros x columns, row
        blocks of about equal non-zeros (computed once per thread count)."""
        nnz = self.nnz + (int(self.partner.nnz) if pair else 0)
        workers = threads_for(nnz * max(int(k), 1), _WORK_PER_THREAD)
        blocks = self._plans.get((workers, pair))
        if blocks is None:
            if workers > 1:
                per_thread = _BLOCKS_PER_THREAD if nnz >= _MIN_NNZ_FOR_MORE_BLOCKS else 1
                blocks = row_blocks(self._both if pair else self.indptr, workers * per_thread)
            else:
                blocks = [(0, self.shape[0])]
            self._plans[(workers, pair)] = blocks
        return workers, blocks

    def __matmul__(self, R):
        """``A @ R`` for dense R (p, k); the result has R's dtype when it is a float dtype."""
        return self.matmul(R)

    def matmul(self, R, exact_k=True):
        """``A @ R``; ``exact_k=False`` runs the loop over a run-time k (one compiled kernel
        for every k, as for k-means++'s few candidates) instead of the kernel for R's k."""
        R = np.asarray(R)
        if R.ndim == 1:
            return self.matmul(R[:, None], exact_k)[:, 0]
        dtype = np.result_type(self.dtype, R.dtype)
        R = np.ascontiguousarray(R, dtype=dtype)
        data = self.data if self.dtype == dtype else self.data.astype(dtype)
        out = np.empty((self.shape[0], R.shape[1]), dtype=dtype)
        if self.nnz == 0 or R.shape[1] == 0:
            out[...] = 0
            return out
        shape = _vector_width(R.shape[1]) if exact_k else ()
        workers, blocks = self.plan(R.shape[1])
        map_blocks(lambda index: spmm_rows(self.indptr, self.indices, data, R, out,
                                           *blocks[index], shape), len(blocks), workers)
        return out

    def update(self, F, R, G, *, eps, S=None, c=0.0):
        """``F ← F ⊙ (A R + c B S) / (F G + ε)`` in place, B the partner (when S is given).

        Returns ``(inner, gram)``: ``Σ F ⊙ (A R)`` at the new F (float) and ``Fᵀ F``
        (k x k, float64).
        """
        if not F.flags.c_contiguous:
            raise ValueError("F must be C-contiguous: it is updated in place by rows.")
        k = F.shape[1]
        dtype = F.dtype.type
        G = np.ascontiguousarray(G, dtype=F.dtype)
        R = np.ascontiguousarray(R, dtype=F.dtype)  # the vector row products need C order
        S = None if S is None else np.ascontiguousarray(S, dtype=F.dtype)
        use_b = S is not None
        if use_b:
            B = self.partner
            b_args = (B.indptr, B.indices, B.data, S)
        else:
            b_args = (self.indptr, self.indices, self.data, R)
        workers, blocks = self.plan(k, pair=use_b)
        n_blocks = len(blocks)
        grams = np.zeros((n_blocks, k, k))
        args = (self.indptr, self.indices, self.data, R) + b_args + (dtype(c),
                                                                     (0,) if use_b else ())
        shape = _vector_width(k)

        def kernel(index):
            a, b = blocks[index]
            return mu_rows(*args, F, G, dtype(eps), grams[index], a, b, shape)

        inner = math.fsum(map_blocks(kernel, n_blocks, workers))
        gram = grams[0] if n_blocks == 1 else grams.sum(axis=0)
        return inner, 0.5 * (gram + gram.T)


@numba.njit(cache=True, nogil=True)
def _mirrored(indptr, indices, data, tol, start, stop, cursor):
    """Rows ``start:stop`` of a canonical CSR matrix: whether every entry (i, j) above the
    diagonal has its mirror (j, i), with |a_ij − a_ji| ≤ tol, and the counts of entries
    above and below the diagonal, ``(ok, upper, lower)``.

    Rows i are visited in increasing order, so the mirrors (j, i) come in increasing
    column order too: a cursor per row j (set by one binary search the first time row j
    is reached) makes each mirror one look-up. Entries below the diagonal are only
    counted: the cursors map upper entries one-to-one onto lower ones, so equal counts
    over all blocks mean every lower entry was reached. ``cursor``: one entry per row,
    all -1, of indptr's dtype."""
    upper = 0
    lower = 0
    for i in range(start, stop):
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j < i:
                lower += 1
                continue
            if j == i:
                continue
            upper += 1
            q = cursor[j]
            if q < 0:
                lo = indptr[j]
                hi = indptr[j + 1]
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if indices[mid] < start:
                        lo = mid + 1
                    else:
                        hi = mid
                q = lo
            if q == indptr[j + 1] or indices[q] != i or not abs(data[q] - data[p]) <= tol:
                return False, upper, lower  # (written so that a NaN difference fails too)
            cursor[j] = q + 1
    return True, upper, lower


def is_symmetric(A, ulps=4):
    """Whether the sparse matrix A equals its transpose: the same pattern, and
    |a_ij − a_ji| ≤ ``ulps`` · ε · max|A| (ε of A's dtype): a matrix computed
    symmetrically in another order for (i, j) and (j, i) differs by rounding, errors of
    the size the compiled sweep allows anyway. One compiled pass with a cursor per row
    (:func:`_mirrored`, by row blocks on the threads), no copy of A
    (``benchmarks/results/design_notes.md``).
    """
    if not sp.issparse(A) or A.shape[0] != A.shape[1]:
        return False
    A = canonical_csr(A)
    if A.nnz == 0:
        return True
    largest = float(max(A.data.max(), -A.data.min()))  # max|A| without a copy of A.data
    if not np.isfinite(largest):
        return False  # NaN or inf: nothing to gain from treating it as its transpose
    tol = ulps * np.finfo(A.dtype).eps * largest if A.dtype.kind == "f" else 0.0
    workers = threads_for(A.nnz, _WORK_PER_THREAD)
    # More blocks than threads: the look-ups are for the entries above the diagonal, which
    # the first rows hold more of, while the blocks are cut by all entries. Each block has
    # a cursor per row, so only where the rows are few against the entries (a word-context
    # M, not a large sparse graph).
    per_thread = 4 if A.nnz >= 8 * A.shape[0] else 1
    blocks = row_blocks(A.indptr, per_thread * workers) if workers > 1 else [(0, A.shape[0])]
    parts = map_blocks(lambda b: _mirrored(A.indptr, A.indices, A.data, tol, *blocks[b],
                                           np.full(A.shape[0], -1, dtype=A.indptr.dtype)),
                       len(blocks), workers)
    return all(ok for ok, _, _ in parts) and sum(u for _, u, _ in parts) == sum(
        low for _, _, low in parts)


def warm_up(ks=(4, 20)):
    """Compile (or load from the disk cache) the float32 and float64 specializations for
    the numbers of columns ``ks``."""
    for dtype in (np.float32, np.float64):
        A = sp.csr_matrix(np.ones((2, 2), dtype=dtype))
        for k in ks:
            kernel = CSRKernel(A, partner=CSRKernel(A))
            ones = np.ones((2, k), dtype=dtype)
            kernel @ ones
            kernel.update(ones.copy(), ones, np.eye(k, dtype=dtype), eps=1e-7)
            kernel.update(ones.copy(), ones, np.eye(k, dtype=dtype), eps=1e-7, S=ones, c=1.0)


__all__ = ["CSRKernel", "is_symmetric", "mu_rows", "spmm_rows", "warm_up"]
