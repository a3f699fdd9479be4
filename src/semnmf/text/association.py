"""Association of co-occurrence counts: pointwise mutual information and its positive and
shifted positive parts (the PMI family).

The second step of the word-context matrix M of Semantic-NMF (:mod:`semnmf.text.context`):
:func:`association` turns counts C (:mod:`semnmf.text.cooccurrence`) into PMI (NSF eq.
(2)-(3)), its positive part PPMI, or the shifted PPMI of the SIGIR paper
(``m_jj' = max(PMI(w_j, w_j') - log N, 0)``); :func:`association_inplace` does it on counts
the caller owns, without a second matrix. References: :mod:`semnmf.text.context`.
"""

import numbers

import numpy as np
import scipy.sparse as sp

from .._utils.validation import check_matrix

__all__ = ["ASSOCIATIONS", "association", "association_inplace", "check_association",
           "pmi_offset"]

ASSOCIATIONS = ("pmi", "ppmi", "sppmi")


def check_association(kind, shift):
    """Refuse an unknown association measure, or a shift N that is not positive for the
    shifted PPMI (log N would be NaN in every entry)."""
    if kind not in ASSOCIATIONS:
        choices = ", ".join(map(repr, ASSOCIATIONS))
        raise ValueError(f"Unknown association {kind!r}; choose one of {choices}.")
    if kind == "sppmi" and (isinstance(shift, bool) or not isinstance(shift, numbers.Real)
                            or not shift > 0):
        raise ValueError(f"shift must be a positive number (N in log N), got {shift!r}.")


def pmi_offset(log_total, kind, shift):
    """The constant of every entry's PMI, ``log c..``, less ``log N`` for the shifted PPMI:
    ``PMI(j, j') - [log N] = log c_jj' - log c_j. - log c_.j' + pmi_offset``."""
    return log_total - (np.log(shift) if kind == "sppmi" else 0.0)


def association(C, kind="ppmi", shift=2, dtype=None):
    """PMI, positive PMI or shifted positive PMI of a co-occurrence matrix.

    With the marginals of C itself, ``c_j. = sum_j' c_jj'``, ``c_.j' = sum_j c_jj'`` and
    ``c.. = sum_jj' c_jj'``, the empirical PMI is (NSF eq. (2)-(3))::

        PMI(j, j') = log(c_jj' * c.. / (c_j. * c_.j'))

    - ``"pmi"``: PMI itself, stored for the non-zero counts only (a missing entry means
      "never co-occurred", not PMI = 0);
    - ``"ppmi"``: ``max(PMI, 0)`` (NSF section 3), the matrix M of Semantic-NMF;
    - ``"sppmi"``: ``max(PMI - log(shift), 0)``, the shifted PPMI of the SIGIR paper.

    Entries equal to zero are not stored.

    Parameters
    ----------
    C : sparse matrix or array-like of shape (n_terms, n_contexts)
        Non-negative co-occurrence counts (:func:`~semnmf.text.cooccurrence.cooccurrence`).
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
    check_association(kind, shift)
    C = check_matrix(C, "C", nonnegative=True)
    if dtype is None:
        dtype = C.dtype if np.issubdtype(C.dtype, np.floating) else np.float64
    C = sp.csr_matrix(C)
    M = sp.csr_matrix((C.data.astype(dtype, copy=True), C.indices.copy(), C.indptr.copy()),
                      shape=C.shape)
    return association_inplace(M, kind, shift)


def association_inplace(C, kind="ppmi", shift=2):
    """:func:`association` of a CSR matrix of non-negative counts the caller owns, in C's
    (float) dtype: C's data become the association values and its zeros are dropped, in
    place (no second matrix). ``kind`` and ``shift`` are checked before C is touched.

    Returns
    -------
    C : the same scipy.sparse.csr_matrix, now holding M
    """
    check_association(kind, shift)
    from ._context_kernels import pmi_inplace

    row_sums = np.asarray(C.sum(axis=1, dtype=np.float64)).ravel()
    col_sums = np.asarray(C.sum(axis=0, dtype=np.float64)).ravel()
    # log c_jj' + log c.. - log c_j. - log c_.j' on the stored entries, in place
    with np.errstate(divide="ignore"):  # empty rows/columns have no stored entries
        log_rows, log_cols = np.log(row_sums), np.log(col_sums)
        log_total = np.log(row_sums.sum())  # -inf only when C is empty: no entry to shift
    pmi_inplace(C.indptr, C.indices, C.data, log_rows, log_cols,
                pmi_offset(log_total, kind, shift), kind != "pmi")
    C.eliminate_zeros()
    return C
