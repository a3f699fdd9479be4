"""Semantic-NMF (Febrissy, Salah, Ailem & Nadif, Neurocomputing 2022; Ailem et al. SIGIR 2017).

Jointly factorizes the document-term matrix X ≈ Z Wᵀ and a word-context matrix
M ≈ W Qᵀ (PPMI by default) with the word factors W shared, so that words used in the same
contexts get close factors and documents about one topic cluster together.
"""


import numbers

from sklearn.utils._param_validation import Interval, StrOptions

from ._defaults import DEFAULT_LAM, DEFAULT_MAX_ITER, DEFAULT_TOL
# the word-context term's rules, written once (re-exported here for the callers of 0.1)
from .context_term import (check_effective, check_lam, document_context,  # noqa: F401
                           effective_lambda, prepare_context)
from .nmf import NMF, _BaseNMF, _twin, _Variants


class SemanticNMF(_Variants, _BaseNMF):
    """Semantic-NMF: NMF of X regularized by a factorization of a word-context matrix M.

    Minimizes (Neurocomputing paper, eq. 5)::

        F(Z, W, Q) = ½‖X − Z Wᵀ‖²_F + (λ/2)‖M − W Qᵀ‖²_F,   Z, W, Q ≥ 0

    by the multiplicative updates (7a)-(7c) of Algorithm 1 (objective non-increasing,
    Theorem 1); each document goes to the argmax of its row of Z (unit-length columns,
    step 5). With ``lam=0`` it is exactly :class:`~semnmf.NMF` (§5.2).

    Parameters
    ----------
    n_components : int, default=8
        Number of clusters k (the paper's g).
    lam : float, default=10.0
        Weight of the word-context term. With ``lam_scale="relative"`` (default) it is the
        weight of the *relative* error ‖M − WQᵀ‖²/‖M‖² against ‖X − ZWᵀ‖²/‖X‖², i.e. the
        paper's λ = lam·‖X‖²/‖M‖² (:func:`effective_lambda`), the same on every corpus
        (the default: ``benchmarks/results/lambda_sweep.md``).
    lam_scale : {"relative", "absolute"}, default="relative"
        "absolute" uses ``lam`` as the paper's raw λ.
    loss : {"frobenius", "kl"}, default="frobenius"
        "kl" replaces both squared errors of eq. (5) by generalized KL divergences
        (SNMF-KL, slides Algorithm 2), see :mod:`semnmf.models._solvers.kl`.
    orthogonal : bool, default=False
        The Neurocomputing paper's §6.1 variant: the Z update of orthogonal NMF.
    init, n_init, screen_iter, max_iter, tol, random_state, verbose, device
        As in :class:`~semnmf.NMF` (``device="cuda"``: the torch engine on a GPU; M's
        products run there too).

    Attributes
    ----------
    labels_, components_, objective_history_, objective_, n_iter_ : as in NMF
    context_components_ : ndarray of shape (n_components, d')
        Qᵀ, the context factors.
    lambda_ : float
        The effective (paper's) λ used in eq. (5).
    reconstruction_err_, context_err_ : float
        ‖X − ZWᵀ‖_F and ‖M − WQᵀ‖_F at the end of the fit (for ``loss="kl"``,
        √(2·D(X‖ZWᵀ)) and √(2·D(M‖WQᵀ)), as in :class:`~semnmf.NMF`).

    Notes
    -----
    ``fit(X, M=M)`` takes the word-context matrix; without it a document-level PPMI is
    built from X itself, so the estimator drops into a plain scikit-learn pipeline.
    Richer contexts: :meth:`semnmf.Corpus.word_context`.
    """

    _parameter_constraints: dict = {
        **NMF._parameter_constraints,
        "lam": [Interval(numbers.Real, 0, None, closed="left")],
        "lam_scale": [StrOptions({"relative", "absolute"})],
    }
    _supports_blocks = True

    def __init__(self, n_components=8, *, lam=DEFAULT_LAM, lam_scale="relative",
                 loss="frobenius", orthogonal=False, init="skmeans", n_init=1,
                 screen_iter=None, max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL,
                 random_state=None, verbose=0, device="cpu"):
        super().__init__(n_components, init=init, n_init=n_init, max_iter=max_iter, tol=tol,
                         random_state=random_state, verbose=verbose)
        self.loss = loss
        self.orthogonal = orthogonal
        self.screen_iter = screen_iter
        self.device = device
        self.lam = lam
        self.lam_scale = lam_scale

    _fit_inputs = ("M",)

    def fit(self, X, y=None, *, M=None):
        """Fit the model to the document-term matrix X (and the word-context matrix M, of
        shape (n_terms, n_contexts); None builds the document-level PPMI of X) and set
        ``labels_``. X as row blocks runs the blocked engine (see :class:`~semnmf.NMF`)."""
        self._fit(X, y, M=M)
        return self

    def fit_transform(self, X, y=None, *, M=None):
        """Fit (as :meth:`fit`) and return the document factors Z (n_documents,
        n_components), unit-norm columns."""
        return self._fit(X, y, M=M).document_factors()

    def _prepare_context(self, X, M=None, size_X=None):
        return prepare_context(X, M, self.lam, self.lam_scale, loss=self.loss, size_X=size_X)

    def _context_weight(self):
        return self.lam, self.lam_scale


def semantic_nmf(X, M=None, n_components=8, *, lam=DEFAULT_LAM, lam_scale="relative",
                 loss="frobenius", orthogonal=False, init="skmeans", W=None, update_W=True,
                 n_init=1, screen_iter=None, max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL,
                 random_state=None, verbose=0):
    """Function twin of :class:`SemanticNMF`: X ≈ Z Wᵀ and M ≈ W Qᵀ (eq. 5, Algorithm 1).

    As scikit-learn's ``non_negative_factorization`` for :class:`~sklearn.decomposition.NMF`:
    the same pipeline as the estimator (the local engine), so the same parameters give
    the same factors as ``SemanticNMF(...).fit_transform(X, M=M)``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_terms), non-negative
    M : {array-like, sparse matrix} of shape (n_terms, n_contexts) or None
        Word-context matrix; None builds the document-level PPMI of X
        (:func:`~semnmf.models.context_term.document_context`).
    n_components, lam, lam_scale, loss, orthogonal, init, n_init, screen_iter, max_iter, \
tol, random_state, verbose
        As in :class:`SemanticNMF`.
    W, update_W
        As in :func:`~semnmf.non_negative_factorization`: ``update_W=False`` holds the word
        factors fixed (and the context factors Q with them) and solves Z only.

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
    model = SemanticNMF(n_components, lam=lam, lam_scale=lam_scale, loss=loss,
                        orthogonal=orthogonal, init=init, n_init=n_init,
                        screen_iter=screen_iter, max_iter=max_iter,
                        tol=tol, random_state=random_state, verbose=verbose)
    result = _twin(model, X, init_W=W, update_W=update_W, name="semantic_nmf", M=M)
    return result.Z, result.W, result.Q, result.n_iter


def partition_topics(X, labels, n_components, M=None, *, lam=1.0, lam_scale="relative",
                     max_iter=500, tol=0.0, verbose=0):
    """The word topics Semantic-NMF gives a fixed partition: W of eq. (5) with Z held.

    Z is the partition's indicator with unit-length columns (Z_ic = 1/√|c| for the
    documents of cluster c, 0 for label -1), the normalization of Algorithm 1, step 5.
    With Z fixed, eq. (5) is minimized over W and Q only, by the updates (7b)-(7c) from::

        W₀ = XᵀZ,   Q₀ = max(MᵀW₀ (W₀ᵀW₀)⁺, ε)

    Each of (7b) and (7c) is the Lee-Seung update of an NMF subproblem, so with Z
    constant the objective does not increase (Theorem 1). Since ZᵀZ = I, ``lam=0`` gives
    W = XᵀZ, every topic √|c| times its cluster's mean row of X; λ > 0 pulls W towards the
    word-context structure of M. Used where a partition comes from elsewhere
    (:func:`semnmf.pipelines.pretrained.document_partition`), whose mean TF-IDF rows rank
    rare words first. The default λ = 1 trades coherence against coverage of the clusters
    (``benchmarks/results/design_notes.md``, ``benchmarks/results/minilm.md``).

    Parameters
    ----------
    X : sparse matrix of shape (n_documents, n_terms)
    labels : array-like of int, shape (n_documents,)
        The partition, in 0 .. n_components - 1 or -1.
    n_components : int
    M : sparse matrix of shape (n_terms, n_contexts) or None
        The word-context matrix (None: the document-level PPMI of X, as
        :class:`SemanticNMF`).
    lam, lam_scale, verbose
        As in :class:`SemanticNMF` (Frobenius loss).
    max_iter, tol : int, float, default=500, 0.0
        Sweeps, and the relative objective change that stops them earlier (0: never: the
        topics keep improving while the objective barely changes,
        ``benchmarks/results/design_notes.md``). A sweep costs O(k (nnz X + nnz M)).

    Returns
    -------
    components : ndarray of shape (n_components, n_terms)
        Wᵀ, the topics (a row of zeros for a cluster without documents).
    objective_history : list of float
        Eq. (5) at the start and after each sweep.
    """
    import numpy as np
    import scipy.sparse as sp

    from .._utils.validation import check_positive_int
    from ._solvers.frobenius import FrobeniusProblem
    from ._solvers.mu import EPSILON, run

    k = check_positive_int(n_components, "n_components")
    X = sp.csr_matrix(X, dtype=np.float64)
    labels = np.asarray(labels)
    if labels.shape != (X.shape[0],) or labels.min(initial=0) < -1 or \
            labels.max(initial=0) >= k:
        raise ValueError(f"labels must give one cluster in -1..{k - 1} per row of X "
                         f"({X.shape[0]} rows).")
    M, lam_eff = prepare_context(X, M, lam, lam_scale)
    M = sp.csr_matrix(M, dtype=np.float64)
    rows = np.flatnonzero(labels >= 0)
    sizes = np.bincount(labels[rows], minlength=k).astype(np.float64)
    Z = np.zeros((X.shape[0], k))
    Z[rows, labels[rows]] = 1.0 / np.sqrt(sizes[labels[rows]])
    W = np.asarray(X.T @ Z)
    if lam_eff == 0:
        return W.T.copy(), []
    Q = np.maximum(np.asarray(M.T @ W) @ np.linalg.pinv(W.T @ W), EPSILON)
    # a positive start (a word absent from a cluster's documents may still enter its topic
    # through M, as in the fit), but an empty cluster's topic stays empty
    problem = FrobeniusProblem(X, Z, np.maximum(W, EPSILON) * (sizes > 0), M=M, Q=Q,
                               lam=lam_eff, update_Z=False)
    _, history, _ = run(problem, max_iter=max_iter, tol=tol, verbose=verbose,
                        description="topics")
    return np.ascontiguousarray(problem.W.T), history
