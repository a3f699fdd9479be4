"""Numba kernels of the rank-2 ANLS iteration (:func:`semnmf.models._solvers.rank2.rank2_nmf`).

The O(n + d) work around the two sparse products of an iteration (Algorithm 2, the
gradients ``G BᵀB − YᵀB``, the projected-gradient norm, the Gram matrices, the objective)
is fused, one row at a time, with everything that row's solution is needed for
(``benchmarks/results/design_notes.md``):

:func:`nnls_rows` (one pass over YᵀB): g = Algorithm 2 for that row (eq. 9-11, the
arithmetic, precision and tie rule of :func:`~semnmf.models._solvers.rank2.nnls_rank2`),
and the sums of GᵀG, the squared projected gradient of G (Lin 2007) and ⟨G, YᵀB⟩;
optionally also the projected gradient of the previous iterate ``prev``, the W-part of
the previous iteration's stopping test. The right-hand sides may be given as several
partial sums (the per-thread results of :func:`z_rows`), summed as they are read.

:func:`z_rows` (one pass over CSR rows of X): the Z half-step. For document i, y = X[i] W,
Z[i] = NNLS(WᵀW, y), its shares of ZᵀZ, the projected gradient and ⟨Z, XW⟩, and X[i]ᵀ Z[i]
scattered into a per-thread partial of XᵀZ, so X is read once per iteration.

Both kernels compile once per dtype and cache on disk; they release the GIL. The unit-norm
column scaling of W is applied as W is read (``scales``).
"""

import numba
import numpy as np

@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _pg_sq(f, grad):
    """Square of one projected-gradient entry: grad where f > 0, min(grad, 0) at f = 0."""
    q = grad if f > 0 else min(grad, 0.0)
    return q * q


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _solve(y1, y2, regular, r1, r2, pos1, pos2, ta, tc, p, q, r):
    """Algorithm 2 for one right-hand side (y1, y2) = yᵀB, given in the output dtype T.

    ``regular``: BᵀB regular (the unconstrained solution is a candidate); r1 = 1/‖b1‖,
    r2 = 1/‖b2‖ (0 for a zero column), float64; ``pos1``, ``pos2``: ‖b_j‖ > 0; in T:
    ta = ‖b1‖², tc = ‖b2‖² (1 for a zero column), p, q, r = c/det, b/det, a/det. The
    one-column (eq. 9) and unconstrained solutions are computed in T exactly as the numpy
    reference computes them, the tie rule (eq. 11) in float64 as there.

    Every candidate is computed and the answer picked by selects, not branches: which
    case applies changes from row to row at random.
    """
    u1 = p * y1 - q * y2
    u2 = r * y2 - q * y1
    feasible = regular & (u1 >= 0) & (u2 >= 0)
    # eq. (11): the larger g*_j ‖b_j‖ = y_j / ‖b_j‖ wins; ties go to the first column
    first = np.float64(y1) * r1 >= np.float64(y2) * r2
    v1 = y1 / ta
    v2 = y2 / tc
    zero = u1 - u1
    g1 = u1 if feasible else (v1 if first & pos1 else zero)
    g2 = u2 if feasible else (v2 if (not first) & pos2 else zero)
    return g1, g2


@numba.njit(cache=True, nogil=True, error_model="numpy")
def nnls_rows(parts, gram, tcoef, scales, G, prev, with_prev):
    """Algorithm 2 for every row of YᵀB = Σ_p parts[p], fused with its by-products.

    Parameters
    ----------
    parts : array of shape (n_parts, n, 2)
        YᵀB as a sum of partial products (n_parts = 1 for a plain YᵀB); the sum is
        rounded to G's dtype, as the reference's YᵀB is.
    gram : float64 array [a, b, c, 1/‖b1‖, 1/‖b2‖, regular]
        BᵀB = [[a, b], [b, c]]; 1/‖b_j‖ is 0 for a zero column; regular is 1.0 where the
        unconstrained solution is a candidate (see ``rank2._coefficients``).
    tcoef : array [a, c, c/det, b/det, a/det] in G's dtype (a, c: 1 for a zero column)
    scales : float64 array [t1, t2, f1, f2]
        Column scales applied as the arrays are read: YᵀB = Σ_p parts[p] · diag(t1, t2),
        and the previous iterate is prev · diag(f1, f2) (how the unit-norm scaling of W
        is applied without a pass of its own).
    G : array of shape (n, 2), written
    prev : array of shape (n, 2)
        The previous iterate at this (BᵀB, YᵀB), used when ``with_prev``.

    Returns
    -------
    (s11, s12, s22, pg, gy, pg_prev) in float64: GᵀG = [[s11, s12], [s12, s22]], the
    squared projected gradient ‖∇ᴾ‖² of G (grad = G BᵀB − YᵀB), ⟨G, YᵀB⟩, and the squared
    projected gradient of ``prev`` (0 unless ``with_prev``).
    """
    T = G.dtype.type
    a, b, c, r1, r2 = gram[0], gram[1], gram[2], gram[3], gram[4]
    regular, pos1, pos2 = gram[5] > 0, a > 0, c > 0
    ta, tc, p, q, r = tcoef[0], tcoef[1], tcoef[2], tcoef[3], tcoef[4]
    ys1, ys2, ps1, ps2 = scales[0], scales[1], scales[2], scales[3]
    n_parts = parts.shape[0]
    s11 = s12 = s22 = pg = gy = pg_prev = 0.0
    for i in range(G.shape[0]):
        y1 = np.float64(parts[0, i, 0])
        y2 = np.float64(parts[0, i, 1])
        for k in range(1, n_parts):
            y1 += parts[k, i, 0]
            y2 += parts[k, i, 1]
        t1, t2 = T(y1 * ys1), T(y2 * ys2)
        y1, y2 = np.float64(t1), np.float64(t2)
        if with_prev:
            f1, f2 = prev[i, 0] * ps1, prev[i, 1] * ps2
            pg_prev += _pg_sq(f1, f1 * a + f2 * b - y1) + _pg_sq(f2, f1 * b + f2 * c - y2)
        h1, h2 = _solve(t1, t2, regular, r1, r2, pos1, pos2, ta, tc, p, q, r)
        G[i, 0] = h1
        G[i, 1] = h2
        g1, g2 = np.float64(h1), np.float64(h2)
        s11 += g1 * g1
        s12 += g1 * g2
        s22 += g2 * g2
        gy += g1 * y1 + g2 * y2
        pg += _pg_sq(g1, g1 * a + g2 * b - y1) + _pg_sq(g2, g1 * b + g2 * c - y2)
    return s11, s12, s22, pg, gy, pg_prev


@numba.njit(cache=True, nogil=True, error_model="numpy")
def z_rows(indptr, indices, data, W, scales, gram, tcoef, Z, part, start, stop):
    """The Z half-step for CSR rows ``start:stop`` of X, fused with X W and Xᵀ Z.

    For each row i: y = X[i] W diag(scales[0], scales[1]) (accumulated in float64,
    rounded to Z's dtype; the scales make W's columns unit-norm as they are read),
    Z[i] = Algorithm 2 on (WᵀW, y) (``gram``, ``tcoef`` as in :func:`nnls_rows`), and
    X[i]ᵀ Z[i] added to ``part`` (float64, shape (d, 2), zeroed here first). Returns
    (s11, s12, s22, pg, zy) over these rows: ZᵀZ, the squared projected gradient of Z
    (grad = Z WᵀW − X W) and ⟨Z, X W⟩.
    """
    T = Z.dtype.type
    a, b, c, r1, r2 = gram[0], gram[1], gram[2], gram[3], gram[4]
    regular, pos1, pos2 = gram[5] > 0, a > 0, c > 0
    ta, tc, p, q, r = tcoef[0], tcoef[1], tcoef[2], tcoef[3], tcoef[4]
    ws1, ws2 = scales[0], scales[1]
    part[:] = 0.0
    s11 = s12 = s22 = pg = zy = 0.0
    for i in range(start, stop):
        # indices read as unsigned: no negative-index wraparound on every access
        first, last = np.uint64(indptr[i]), np.uint64(indptr[i + 1])
        one, two = np.uint64(1), np.uint64(2)
        # y = X[i] W with two accumulators per column (even and odd non-zeros): one
        # accumulator is a chain of dependent additions, two let them overlap
        y1 = y2 = e1 = e2 = 0.0
        k = first
        while k + one < last:
            x = np.float64(data[k])
            j = np.uint64(indices[k])
            xx = np.float64(data[k + one])
            jj = np.uint64(indices[k + one])
            y1 += x * W[j, 0]
            y2 += x * W[j, 1]
            e1 += xx * W[jj, 0]
            e2 += xx * W[jj, 1]
            k += two
        if k < last:
            x = np.float64(data[k])
            j = np.uint64(indices[k])
            y1 += x * W[j, 0]
            y2 += x * W[j, 1]
        t1, t2 = T((y1 + e1) * ws1), T((y2 + e2) * ws2)
        y1, y2 = np.float64(t1), np.float64(t2)
        h1, h2 = _solve(t1, t2, regular, r1, r2, pos1, pos2, ta, tc, p, q, r)
        Z[i, 0] = h1
        Z[i, 1] = h2
        g1, g2 = np.float64(h1), np.float64(h2)
        s11 += g1 * g1
        s12 += g1 * g2
        s22 += g2 * g2
        zy += g1 * y1 + g2 * y2
        pg += _pg_sq(g1, g1 * a + g2 * b - y1) + _pg_sq(g2, g1 * b + g2 * c - y2)
        if g1 != 0 or g2 != 0:
            k = first
            while k < last:
                x = np.float64(data[k])
                j = np.uint64(indices[k])
                part[j, 0] += x * g1
                part[j, 1] += x * g2
                k += one
    return s11, s12, s22, pg, zy


@numba.njit(cache=True, nogil=True)
def sum_squares(values):
    """Σ v² in float64 for a 1-D array (the ‖X‖² of the objective, eq. 1).

    A plain loop: BLAS ``dot`` gives the same but wakes its thread pool, which on a busy
    machine cost far more than the sum, once per factorization
    (``benchmarks/results/design_notes.md``).
    """
    total = 0.0
    for v in values:
        total += np.float64(v) * np.float64(v)
    return total


@numba.njit(cache=True, nogil=True)
def _order(w):
    """Terms by decreasing weight, ties by term index (``argsort(-w, kind="stable")``),
    for a non-negative w: only the positive weights are sorted, the zeros follow in index
    order (on a deep node most of the vocabulary has weight 0)."""
    m = w.size
    n_pos = 0
    for t in range(m):
        if w[t] > 0:
            n_pos += 1
    pos = np.empty(n_pos, dtype=np.int64)
    order = np.empty(m, dtype=np.int64)
    k = 0
    z = n_pos
    for t in range(m):
        if w[t] > 0:
            pos[k] = t
            k += 1
        else:
            order[z] = t
            z += 1
    neg = np.empty(n_pos)
    for k in range(n_pos):
        neg[k] = -w[pos[k]]
    sub = np.argsort(neg, kind="mergesort")  # stable
    for k in range(n_pos):
        order[k] = pos[sub[k]]
    return order, n_pos


@numba.njit(cache=True, nogil=True)
def mndcg_pair(w_parent, w_left, w_right, logs, discount):
    """mNDCG of both children, eq. (12)-(16) as released (see
    :func:`semnmf.models.hierarchical.mndcg`, the same arithmetic in one compiled pass:
    the three rankings sort only positive weights, the rest are loops over the m terms).
    Weights must be non-negative float64; ``logs[k] = log(k)`` for k = 1..m and
    ``discount[i] = 1 / log2(i + 1)`` for i = 1..m-1 (tables, kept between calls: the
    vocabulary size m does not change within a fit). Returns (left, right)."""
    m = w_parent.size
    order_n, m_n = _order(w_parent)
    if m_n < 2:
        return 0.0, 0.0
    order_l, _ = _order(w_left)
    order_r, _ = _order(w_right)
    rank_l = np.empty(m, dtype=np.int64)
    rank_r = np.empty(m, dtype=np.int64)
    for i in range(m):
        rank_l[order_l[i]] = i + 1
        rank_r[order_r[i]] = i + 1
    log2 = logs[2]
    gain_of_term = np.empty(m)
    ideal_gain = np.empty(m)
    for i in range(m):
        t = order_n[i]
        worst = max(rank_l[t], rank_r[t])
        p = logs[m - worst + 1]
        if p == 0:
            p = log2
        if i < m_n:
            gain_of_term[t] = logs[m_n - i] / p
            ideal_gain[i] = logs[m - i] / p
        else:
            gain_of_term[t] = 0.0 / p
            ideal_gain[i] = 1.0 / p
    ideal_gain.sort()
    ideal = ideal_gain[m - 1]
    left = gain_of_term[order_l[0]]
    right = gain_of_term[order_r[0]]
    for i in range(1, m):
        d = discount[i]
        ideal += ideal_gain[m - 1 - i] * d
        left += gain_of_term[order_l[i]] * d
        right += gain_of_term[order_r[i]] * d
    return left / ideal, right / ideal


__all__ = ["mndcg_pair", "nnls_rows", "sum_squares", "z_rows"]
