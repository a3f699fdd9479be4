"""A numba kernel of the multinomial mixture's E-step (:func:`semnmf.ensemble.mixture.
_e_step`), bitwise the numpy/scipy expressions it replaces.

The E-step forms each distinct row's log joint ``log π_k + Σ_q log α_k,q(row)`` (SN eq. 13),
then the rows' log-sum-exp by scipy's algorithm
(:func:`~semnmf.ensemble.mixture.logsumexp_rows`) and the responsibilities.
:func:`shifted_joint` does the first seven numpy passes in one pass per row and writes the
log joint, the shifted entries, the maximum and its count; numpy then takes the
exponentials and row sums. Every number is the one of the numpy expressions: the sums
are added in ``csr_matvecs``' order with exact one-hot products, and maxima, comparisons,
counts and the shift ``np.where(is_max, -inf, a) - a_max`` are exact.

The kernel releases the GIL, so the mixture's EM runs on threads run it at once.
``SEMNMF_KERNELS=0`` takes the numpy path; tests compare the two to the bit.
"""

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def shifted_joint(indptr, indices, values, log_alpha_t, log_weights, joint, shifted, a_max,
                  count):
    """Per row i of a CSR matrix (the one-hot incidence: ``values`` 1.0):
    ``joint[i] = Σ_p values[p] log_alpha_t[indices[p]] + log_weights``; ``a_max[i]``, the row's
    largest entry, ``count[i]`` how many entries equal it, and ``shifted[i, k]`` =
    ``(−inf if joint[i, k] == a_max[i] else joint[i, k]) − a_max[i]``."""
    n_rows, K = joint.shape
    for i in range(n_rows):
        row, shift = joint[i], shifted[i]
        for k in range(K):
            row[k] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            column, v = log_alpha_t[indices[p]], values[p]
            for k in range(K):
                row[k] += v * column[k]
        for k in range(K):
            row[k] += log_weights[k]
        top = _row_max(row)
        n_top = 0
        for k in range(K):  # without branches: the loops vectorize
            x = row[k]
            same = x == top
            n_top += same
            shift[k] = (-np.inf if same else x) - top
        a_max[i] = top
        count[i] = n_top


@numba.njit(cache=True, nogil=True, inline="always")
def _row_max(row):
    """The largest entry of a row without NaN, by four running maxima (a maximum does not
    depend on the order, and four chains are faster than one, whose every step waits for the
    last)."""
    K = row.shape[0]
    t0 = t1 = t2 = t3 = -np.inf
    k = 0
    while k + 4 <= K:
        a, b, c, d = row[k], row[k + 1], row[k + 2], row[k + 3]
        t0 = a if a > t0 else t0
        t1 = b if b > t1 else t1
        t2 = c if c > t2 else t2
        t3 = d if d > t3 else t3
        k += 4
    while k < K:
        t0 = row[k] if row[k] > t0 else t0
        k += 1
    t0 = t1 if t1 > t0 else t0
    t2 = t3 if t3 > t2 else t2
    return t2 if t2 > t0 else t0
