"""Semantic-NMF (Febrissy, Salah, Ailem & Nadif, Neurocomputing 2022; Ailem et al. SIGIR 2017).

Jointly factorizes the document-term matrix X ≈ Z Wᵀ and a word-context matrix
M ≈ W Qᵀ (PPMI by default) with the word factors W shared, so that words used in the same
contexts get close factors and documents about one topic cluster together.
"""


import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions

from .._utils.validation import check_matrix, check_nonnegative_float, check_scale
from ..text.context import word_context
from ._defaults import DEFAULT_LAM, MAX_LAM
from ._solvers.mu import squared_norm
from .nmf import NMF, _BaseNMF



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

    D(X‖ZWᵀ)/ΣX is the KL divergence, in nats, between X/ΣX and ZWᵀ/ΣX, two
    distributions once the Z update has run (it makes Σ ZWᵀ = ΣX), so ``lam`` compares
    per-unit-mass divergences. Scaling M by c scales the optimal Q by c and
    D(M‖WQᵀ) by c while λ is divided by c: the fit of Z and W is unchanged.

    The minimizers are those of eq. (5) (or eq. 2) with that λ, so the updates and
    their monotonicity hold unchanged. ``scale="absolute"`` passes ``lam`` through as
    the paper's raw λ (whose meaning depends on the corpus: on BBC with document-level
    PPMI, ‖M‖²/‖X‖² ≈ 2·10⁴).
    """
    if scale == "absolute":
        return float(lam)
    if loss == "kl":
        size_X = float(np.sum(X.data if sp.issparse(X) else X, dtype=np.float64))
        size_M = float(np.sum(M.data if sp.issparse(M) else M, dtype=np.float64))
    else:
        size_X, size_M = squared_norm(X), squared_norm(M)
    if size_M == 0:
        return 0.0
    return check_effective(float(lam) * size_X / size_M, lam)


def check_effective(value, lam, name="lam"):
    """An effective weight, refused (ValueError naming ``name``) when it is not finite:
    the updates would then fill the factors with NaN."""
    if not np.isfinite(value):
        raise ValueError(f"{name}={lam:g} gives an infinite effective weight on this data; "
                         f"use a {name} between 0 and {MAX_LAM:g}.")
    return value


def check_lam(lam, lam_scale, name="lam"):
    """A word-context (or graph) weight: a finite number in [0, MAX_LAM] = [0, 10⁶] (larger
    weights overflow the updates into NaN factors) and its scale's name."""
    check_nonnegative_float(lam, name)
    if lam > MAX_LAM:
        raise ValueError(f"{name} must be between 0 and {MAX_LAM:g}, got {lam:g}: at "
                         f"{MAX_LAM:g} the other term of the objective is already negligible.")
    if lam_scale not in ("relative", "absolute"):
        raise ValueError(f"lam_scale must be 'relative' or 'absolute', got {lam_scale!r}.")


def document_context(X, association="ppmi", shift=2):
    """The default word-context matrix built from X alone: documents as contexts
    (co-occurrence = number of documents containing both words), then the association."""
    occurrence = X.copy() if sp.issparse(X) else sp.csr_matrix(X)
    occurrence.data[:] = 1
    return word_context(counts=occurrence, context="document", association=association,
                        shift=shift, dtype=X.dtype)


class SemanticNMF(_BaseNMF):
    """Semantic-NMF: NMF of X regularized by a factorization of a word-context matrix M.

    Minimizes (Neurocomputing paper, eq. 5)::

        F(Z, W, Q) = ½‖X − Z Wᵀ‖²_F + (λ/2)‖M − W Qᵀ‖²_F,   Z, W, Q ≥ 0

    by the multiplicative updates (7a)-(7c) of Algorithm 1 (objective non-increasing,
    Theorem 1), then normalizes Z to unit-length columns (step 5; W and Q are rescaled so
    that Z Wᵀ and W Qᵀ are unchanged) and assigns each document to the argmax of its row.
    With ``lam=0`` it is exactly :class:`~semnmf.NMF` (§5.2).

    Parameters
    ----------
    n_components : int, default=8
        Number of clusters k (the paper's g).
    lam : float, default=10.0
        Weight of the word-context term. With ``lam_scale="relative"`` (default) it is the
        weight of the *relative* error ‖M − WQᵀ‖²/‖M‖² against ‖X − ZWᵀ‖²/‖X‖², i.e. the
        paper's λ = lam·‖X‖²/‖M‖² (see :func:`effective_lambda`); this makes the value mean
        the same on every corpus. The default comes from a sweep over the benchmark
        corpora (``benchmarks/results/lambda_sweep.md``).
    lam_scale : {"relative", "absolute"}, default="relative"
        "absolute" uses ``lam`` as the paper's raw λ.
    loss : {"frobenius", "kl"}, default="frobenius"
        "kl" replaces both squared errors of eq. (5) by generalized KL divergences
        (SNMF-KL, slides Algorithm 2), see :mod:`semnmf.models._solvers.kl`.
    orthogonal : bool, default=False
        The Neurocomputing paper's §6.1 variant: the Z update of orthogonal NMF.
    init, n_init, screen_iter, max_iter, tol, random_state, verbose, Z_init, W_init
        As in :class:`~semnmf.NMF`.

    Attributes
    ----------
    labels_, components_, objective_history_, objective_, n_iter_ : as in NMF
    context_components_ : ndarray of shape (n_components, d')
        Qᵀ, the context factors.
    lambda_ : float
        The effective (paper's) λ used in eq. (5).
    reconstruction_err_, context_err_ : float
        ‖X − ZWᵀ‖_F and ‖M − WQᵀ‖_F at the end of the fit.

    Notes
    -----
    ``fit(X, M=M)`` takes the word-context matrix; without it a document-level PPMI is
    built from X itself (co-occurrence = number of documents containing both words),
    so the estimator drops into a plain scikit-learn pipeline. Build richer contexts
    (sentence, L-word window, shifted PPMI) with :meth:`semnmf.Corpus.word_context`.
    """

    _parameter_constraints: dict = {
        **NMF._parameter_constraints,
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "lam_scale": [StrOptions({"relative", "absolute"})],
    }
    _supports_blocks = True

    def __init__(self, n_components=8, *, lam=DEFAULT_LAM, lam_scale="relative",
                 loss="frobenius", orthogonal=False, init="skmeans", n_init=1,
                 screen_iter=None, max_iter=200, tol=1e-4, random_state=None, verbose=0,
                 Z_init=None, W_init=None):
        super().__init__(n_components, init=init, n_init=n_init, max_iter=max_iter, tol=tol,
                         random_state=random_state, verbose=verbose, Z_init=Z_init,
                         W_init=W_init)
        self.loss = loss
        self.orthogonal = orthogonal
        self.screen_iter = screen_iter
        self.lam = lam
        self.lam_scale = lam_scale

    def _prepare_context(self, X, M=None):
        return prepare_context(X, M, self.lam, self.lam_scale, loss=self.loss)


def prepare_context(X, M, lam, lam_scale="relative", loss="frobenius"):
    """The word-context matrix of a Semantic-NMF fit and its effective λ: ``(M, λ)``.

    M is checked against X (rows = X's terms) or, when None, built from X by
    :func:`document_context`; λ is :func:`effective_lambda` of ``lam``. Used by
    :class:`SemanticNMF`, :func:`semantic_nmf` and HierarchicalNMF's semantic splitter.
    """
    check_lam(lam, lam_scale)
    if M is None:
        M = document_context(X, "ppmi")
    else:
        M = check_scale(check_matrix(M, "M", dtype=X.dtype), "M")
        if M.shape[0] != X.shape[1]:
            raise ValueError(
                f"M has {M.shape[0]} rows but X has {X.shape[1]} terms: M must be "
                "(n_terms, n_contexts) over the same vocabulary as X's columns.")
    return M, effective_lambda(lam, X, M, lam_scale, loss=loss)


def semantic_nmf(X, M=None, n_components=8, *, lam=DEFAULT_LAM, lam_scale="relative",
                 loss="frobenius", orthogonal=False, init="skmeans", n_init=1,
                 screen_iter=None, max_iter=200, tol=1e-4, random_state=None, verbose=0):
    """Function twin of :class:`SemanticNMF`: X ≈ Z Wᵀ and M ≈ W Qᵀ (eq. 5, Algorithm 1).

    As scikit-learn's ``non_negative_factorization`` for :class:`~sklearn.decomposition.NMF`:
    the same code as the estimator (:func:`semnmf.models.nmf._fit_factors`), so the same
    parameters give the same factors as ``SemanticNMF(...).fit_transform(X, M=M)``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_terms), non-negative
    M : {array-like, sparse matrix} of shape (n_terms, n_contexts) or None
        Word-context matrix; None builds the document-level PPMI of X
        (:func:`document_context`).
    n_components, lam, lam_scale, loss, orthogonal, init, n_init, screen_iter, max_iter, \
tol, random_state, verbose
        As in :class:`SemanticNMF`.

    Returns
    -------
    Z : ndarray of shape (n_documents, n_components)
        Document factors, unit-length columns (Algorithm 1, step 5).
    W : ndarray of shape (n_terms, n_components)
        Word factors (``SemanticNMF.components_.T``).
    Q : ndarray of shape (n_contexts, n_components)
        Context factors (``SemanticNMF.context_components_.T``).
    n_iter : int
        Iterations of the kept run.
    """
    from .nmf import _fit_factors
    from .init import resolve_start
    from .._utils.validation import validate_estimator_input

    model = SemanticNMF(n_components, lam=lam, lam_scale=lam_scale, loss=loss,
                        orthogonal=orthogonal, init=init, n_init=n_init,
                        screen_iter=screen_iter, max_iter=max_iter,
                        tol=tol, random_state=random_state, verbose=verbose)
    model._validate_params()
    X = validate_estimator_input(model, X, reset=True)
    model._check_params(X)
    M, lam_effective = model._prepare_context(X, M)
    result = _fit_factors(X, model._make_problem, n_components, M=M, lam=lam_effective,
                          start=resolve_start(model, X.shape, dtype=X.dtype), n_init=n_init,
                          screen_iter=screen_iter, max_iter=max_iter, tol=tol,
                          random_state=random_state, verbose=verbose, name="semantic_nmf")
    problem, n_iter = result[0], result[1]
    return problem.Z, problem.W, result.Q, n_iter
