"""NMF for document clustering (Lee & Seung 2001), Frobenius loss, multiplicative updates.

:class:`NMF` and :class:`~semnmf.SemanticNMF` share :class:`_BaseNMF` (parameters,
initialization, restarts, final normalization, labels, ``transform``) and one problem
class (:mod:`semnmf.models._solvers.frobenius`): NMF is Semantic-NMF without the word-context
term (λ = 0), exactly as the Neurocomputing paper's §5.2 says.
"""

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .._utils.validation import (check_n_components, check_nonnegative_float, check_positive_int,
                           empty_rows, validate_estimator_input)
from ..metrics import top_terms as _top_terms
from ._solvers import mu as _mu
from ._solvers.frobenius import FrobeniusProblem, transpose_csr
from .init import INITS, initialize, initialize_context_factor

LOSSES = ("frobenius", "kl")


def check_fit_params(estimator, X):
    """The parameters every multiplicative-update estimator shares: n_components,
    n_init, max_iter, tol and init."""
    check_n_components(estimator.n_components, X.shape[0])
    check_positive_int(estimator.n_init, "n_init")
    check_positive_int(estimator.max_iter, "max_iter", minimum=0)
    check_nonnegative_float(estimator.tol, "tol")
    if estimator.init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {estimator.init!r}.")


def check_documents(X):
    """Mask of the documents without any term: refused when all are, warned about else."""
    empty = empty_rows(X)
    if empty.all():
        raise ValueError("every row of X is zero: there is nothing to cluster.")
    if empty.any():
        warnings.warn(
            f"{int(empty.sum())} document(s) have no term (all-zero rows); they get "
            "label -1. Remove them or lower min_df to give them terms.", UserWarning)
    return empty


def best_of_runs(estimator, new_problem):
    """Run ``new_problem(run)`` for ``estimator.n_init`` restarts through :func:`_mu.run`.

    Keeps the run with the lowest final objective and re-raises only that run's warnings
    (a restart that did not converge is no concern when another one is kept). Returns
    ``(problem, n_iter, history)`` of the kept run.
    """
    best = None
    for run in range(estimator.n_init):
        problem = new_problem(run)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            n_iter, history, _ = _mu.run(
                problem, max_iter=estimator.max_iter, tol=estimator.tol,
                verbose=estimator.verbose,
                description=f"{type(estimator).__name__} run {run + 1}/{estimator.n_init}")
        if best is None or history[-1] < best[2][-1]:
            best = (problem, n_iter, history, caught)
    problem, n_iter, history, caught = best
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return problem, n_iter, history


def normalize_columns(Z, W, Q=None):
    """Scale Z to unit-length columns (Algorithm 1, step 5) keeping Z Wᵀ and W Qᵀ unchanged.

    Z ← Z D⁻¹, W ← W D, Q ← Q D⁻¹ with D = diag(‖z_k‖). Columns of Z that are all zero
    are left alone.
    """
    norms = np.linalg.norm(Z, axis=0)
    norms[norms == 0] = 1.0
    Z /= norms
    W *= norms
    if Q is not None:
        Q /= norms
    return norms


def labels_from_memberships(Z, empty):
    """argmax of each row of Z; documents without any term get -1."""
    labels = np.argmax(Z, axis=1).astype(np.int64)
    labels[empty] = -1
    return labels


class _BaseNMF(ClusterMixin, TransformerMixin, BaseEstimator):
    """Shared code of the multiplicative-update clustering estimators."""

    def __init__(self, n_components=8, *, loss="frobenius", orthogonal=False, init="skmeans",
                 n_init=1, max_iter=200, tol=1e-4, random_state=None, verbose=0, Z_init=None,
                 W_init=None):
        self.n_components = n_components
        self.loss = loss
        self.orthogonal = orthogonal
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.Z_init = Z_init
        self.W_init = W_init

    # Whether the word-context matrix is factorized as M ≈ W Qᵀ with a factor Q of its own
    # (SeNMF's M ≈ W S Wᵀ has none: no Mᵀ copy, no Q start).
    _context_factor = True

    # subclasses: build the context part of the problem ----------------------------------
    def _finish_fit(self, problem, norms):
        """Set subclass attributes from the kept run; Z was just divided by ``norms``."""
    def _prepare_context(self, X):
        """Return (M, lam_effective) for the fit; (None, 0.0) for plain NMF."""
        return None, 0.0

    def _check_params(self, X):
        check_fit_params(self, X)
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}.")
        if not isinstance(self.orthogonal, (bool, np.bool_)):
            raise ValueError(f"orthogonal must be True or False, got {self.orthogonal!r}.")
        if self.orthogonal and self.loss != "frobenius":
            raise ValueError("orthogonal=True is derived for the Frobenius loss only; use "
                             "loss='frobenius' or orthogonal=False.")

    def _make_problem(self, X, Z, W, M=None, Q=None, lam=0.0, update_W=True, Xt=None, Mt=None):
        """The update problem for this estimator's loss and variant (one per run)."""
        if self.loss == "kl":
            from ._solvers.kl import KLProblem
            return KLProblem(X, Z, W, M=M, Q=Q, lam=lam, update_W=update_W, Xt=Xt, Mt=Mt)
        return FrobeniusProblem(X, Z, W, M=M, Q=Q, lam=lam, update_W=update_W, Xt=Xt, Mt=Mt,
                                orthogonal=bool(self.orthogonal))

    def fit(self, X, y=None, **fit_params):
        """Fit the model to the document-term matrix X and set ``labels_``."""
        self.fit_transform(X, y, **fit_params)
        return self

    def fit_predict(self, X, y=None, **fit_params):
        return self.fit(X, y, **fit_params).labels_

    def fit_transform(self, X, y=None, **fit_params):
        """Fit and return the document factors Z (n_documents, n_components), unit-norm columns."""
        X = validate_estimator_input(self, X, reset=True)
        self._check_params(X)
        M, lam = self._prepare_context(X, **fit_params)
        empty = check_documents(X)

        rng = check_random_state(self.random_state)
        Xt = transpose_csr(X)
        factored = M is not None and self._context_factor
        Mt = transpose_csr(M) if factored else None

        def new_problem(run):
            Z, W = initialize(X, self.n_components, self.init, rng, Z=self.Z_init, W=self.W_init)
            Q = initialize_context_factor(Mt @ W, W) if factored else None
            return self._make_problem(X, Z, W, M=M, Q=Q, lam=lam, Xt=Xt, Mt=Mt)

        problem, n_iter, history = best_of_runs(self, new_problem)

        self.reconstruction_err_, self.context_err_ = (np.sqrt(2 * t) for t in problem.terms())
        Z, W, Q = problem.Z, problem.W, (problem.Q if factored else None)
        norms = normalize_columns(Z, W, Q)
        self._finish_fit(problem, norms)
        self.components_ = W.T.copy()
        if Q is not None:
            self.context_components_ = Q.T.copy()
        self.n_components_ = self.n_components
        self.n_iter_ = n_iter
        self.objective_ = history[-1]
        self.objective_history_ = np.asarray(history)
        self.lambda_ = lam
        self.labels_ = labels_from_memberships(Z, empty)
        return Z

    def transform(self, X):
        """Document factors of new documents, with W fixed (updates 7a only).

        Returns Z_new of shape (n_documents, n_components) in the scale of the fitted
        (column-normalized) Z, so ``argmax`` rows give the clusters.
        """
        check_is_fitted(self, "components_")
        return self._transform(validate_estimator_input(self, X, reset=False))

    def _transform(self, X):
        """``transform`` on already validated X."""
        W = np.ascontiguousarray(self.components_.T, dtype=X.dtype)
        Z = np.full((X.shape[0], self.n_components_), 1.0 / self.n_components_, dtype=X.dtype)
        problem = self._make_problem(X, Z, W, update_W=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _mu.run(problem, max_iter=max(self.max_iter, 1), tol=self.tol, verbose=0)
        return problem.Z

    def predict(self, X):
        """Cluster of each new document: argmax of its row of ``transform(X)``."""
        check_is_fitted(self, "components_")
        X = validate_estimator_input(self, X, reset=False)
        return labels_from_memberships(self._transform(X), empty_rows(X))

    def top_terms(self, n_terms=10, vocabulary=None):
        """The ``n_terms`` heaviest terms of each cluster (columns of W), with weights."""
        check_is_fitted(self, "components_")
        if vocabulary is None:
            vocabulary = getattr(self, "vocabulary_", None)
        return _top_terms(self.components_, vocabulary, n_terms)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.input_tags.sparse = True
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class NMF(_BaseNMF):
    """Non-negative matrix factorization X ≈ Z Wᵀ for clustering (Lee & Seung 2001).

    Frobenius loss ½‖X − ZWᵀ‖²_F minimized by the multiplicative updates (7a)-(7b) of the
    Neurocomputing paper with λ = 0; Z is normalized to unit-length columns at the end
    (Algorithm 1, step 5) and each document goes to the argmax of its row of Z.

    Parameters
    ----------
    n_components : int, default=8
        Number of clusters k (the paper's g).
    loss : {"frobenius", "kl"}, default="frobenius"
        "frobenius": ½‖X − ZWᵀ‖²_F. "kl": the generalized Kullback-Leibler divergence
        D(X‖ZWᵀ) (slides, eq. 2), see :mod:`semnmf.models._solvers.kl`.
    orthogonal : bool, default=False
        Orthogonal NMF (Ding et al. 2006; Yoo & Choi 2008): the Z update keeps ZᵀZ close
        to the identity (Frobenius loss only), see :mod:`semnmf.models._solvers.frobenius`.
    init : {"skmeans", "random", "nndsvda", "custom"}, default="skmeans"
        Starting point. "skmeans" starts from spherical k-means (best of 10 restarts), as
        the papers do (Neurocomputing §5.4).
    n_init : int, default=1
        Number of restarts; the run with the lowest objective is kept.
    max_iter : int, default=200
    tol : float, default=1e-4
        Stop when the relative decrease of the objective over one iteration is below tol
        (tested from the 10th iteration on: multiplicative updates cross plateaus early).
    random_state : int, RandomState instance or None
    verbose : int, default=0
        Show a progress bar per run.
    Z_init, W_init : ndarray, optional
        Starting factors for ``init="custom"``: (n_documents, k) and (n_terms, k).

    Attributes
    ----------
    labels_ : ndarray of shape (n_documents,)
    components_ : ndarray of shape (n_components, n_terms)
        Wᵀ: the term weights of each cluster.
    objective_history_ : ndarray
        Objective at the start and after each iteration of the kept run.
    objective_, n_iter_, reconstruction_err_

    Examples
    --------
    >>> from semnmf import NMF, load_dataset
    >>> X = load_dataset("bbc").tfidf()          # doctest: +SKIP
    >>> NMF(5, random_state=0).fit(X).labels_    # doctest: +SKIP
    """
