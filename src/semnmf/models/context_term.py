"""The word-context term of a fit: its matrix M and its weight λ, the rules written once.

Every engine and every estimator with a word-context term takes M and λ from here
(:func:`prepare_context` for one fit; :func:`relative_weight` from the sizes of the two
matrices, for an engine that sums X's size over blocks or mini-batches).
"""

import numpy as np
import scipy.sparse as sp

from .._utils.blocks import is_blocked
from .._utils.validation import check_matrix, check_nonnegative_float, check_scale
from ..text.context import word_context
from ._defaults import MAX_LAM
from ._solvers.mu import squared_norm

SCALES = ("relative", "absolute")


def check_lam(lam, lam_scale, name="lam"):
    """A word-context (or graph) weight: a finite number in [0, MAX_LAM] = [0, 10⁶] (larger
    weights overflow the updates into NaN factors) and its scale's name."""
    check_nonnegative_float(lam, name)
    if lam > MAX_LAM:
        raise ValueError(f"{name} must be between 0 and {MAX_LAM:g}, got {lam:g}: at "
                         f"{MAX_LAM:g} the other term of the objective is already negligible.")
    if lam_scale not in SCALES:
        raise ValueError(f"lam_scale must be 'relative' or 'absolute', got {lam_scale!r}.")


def check_effective(value, lam, name="lam"):
    """An effective weight, refused (ValueError naming ``name``) when it is not finite:
    the updates would then fill the factors with NaN."""
    if not np.isfinite(value):
        raise ValueError(f"{name}={lam:g} gives an infinite effective weight on this data; "
                         f"use a {name} between 0 and {MAX_LAM:g}.")
    return value


def matrix_size(A, loss="frobenius"):
    """The size of a matrix in the relative-λ rule: ‖A‖²_F for the Frobenius loss, the
    total mass ΣA for the KL loss (see :func:`effective_lambda`), in float64."""
    if loss == "kl":
        return float(np.sum(A.data if sp.issparse(A) else A, dtype=np.float64))
    return squared_norm(A)


def relative_weight(lam, size_X, size_M, scale="relative"):
    """The paper's λ for a user-facing ``lam`` given the sizes of X and M
    (:func:`matrix_size`): ``lam · size_X / size_M`` (0 when M is empty) with
    ``scale="relative"``, ``lam`` itself with ``"absolute"``."""
    if scale == "absolute":
        return float(lam)
    if size_M == 0:
        return 0.0
    return check_effective(float(lam) * size_X / size_M, lam)


def effective_lambda(lam, X, M, scale="relative", loss="frobenius"):
    """The paper's λ of eq. (5) (Frobenius) or of the slides' eq. (2) (KL) for a user-facing ``lam``.

    With ``scale="relative"`` the two terms of the objective are first divided by the
    size of the matrices they approximate, so that ``lam`` weighs *relative* errors and
    means the same on every corpus.

    Frobenius loss (eq. 5): the sizes are the squared norms ‖X‖²_F and ‖M‖²_F::

        F / ‖X‖² = ½‖X − ZWᵀ‖²/‖X‖² + (lam/2)‖M − WQᵀ‖²/‖M‖²
        ⇒ λ = lam · ‖X‖²_F / ‖M‖²_F

    KL loss (eq. 2): the generalized KL divergence is homogeneous of degree 1,
    D(cA‖cB) = c D(A‖B), so the size of a term is the total mass ΣA = Σ_ij a_ij (not a
    squared norm)::

        F / ΣX = D(X‖ZWᵀ)/ΣX + lam · D(M‖WQᵀ)/ΣM
        ⇒ λ = lam · ΣX / ΣM

    The minimizers are those of eq. (5) (or eq. 2) with that λ, so the updates and their
    monotonicity hold unchanged. ``scale="absolute"`` passes ``lam`` through as the
    paper's raw λ.
    """
    if scale == "absolute":
        return float(lam)
    return relative_weight(lam, matrix_size(X, loss), matrix_size(M, loss), scale)


def document_context(X, association="ppmi", shift=2):
    """The default word-context matrix built from X alone: documents as contexts
    (co-occurrence = number of documents containing both words), then the association.
    X given as row blocks (:class:`~semnmf._utils.blocks.BlockedMatrix`) is counted block
    by block (PPMI only)."""
    if is_blocked(X):
        from ..text.shards import blocked_word_context
        return blocked_word_context(X, association=association)
    occurrence = X.copy() if sp.issparse(X) else sp.csr_matrix(X)
    occurrence.data[:] = 1
    return word_context(counts=occurrence, context="document", association=association,
                        shift=shift, dtype=X.dtype)


def check_context_matrix(M, n_terms, dtype):
    """A user's word-context matrix: finite, non-negative, in the updates' range, and with
    one row per term of X."""
    M = check_scale(check_matrix(M, "M", dtype=dtype), "M")
    if M.shape[0] != n_terms:
        raise ValueError(
            f"M has {M.shape[0]} rows but X has {n_terms} terms: M must be "
            "(n_terms, n_contexts) over the same vocabulary as X's columns.")
    return M


def prepare_context(X, M, lam, lam_scale="relative", loss="frobenius", *, size_X=None):
    """The word-context matrix of a Semantic-NMF fit and its effective λ: ``(M, λ)``.

    M is checked against X (rows = X's terms) or, when None, built from X by
    :func:`document_context`; λ is :func:`relative_weight` of ``lam`` (X's size
    ``size_X`` when the caller has it, e.g. summed over row blocks; else computed).
    The one preparation of the word-context term for every engine and estimator.
    """
    check_lam(lam, lam_scale)
    if M is None:
        M = document_context(X, "ppmi")
    else:
        M = check_context_matrix(M, X.shape[1], X.dtype)
    if lam_scale == "absolute":
        return M, float(lam)
    if size_X is None:
        size_X = matrix_size(X, loss)
    return M, relative_weight(lam, size_X, matrix_size(M, loss), lam_scale)
