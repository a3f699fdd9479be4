"""NMF for document clustering (Lee & Seung 2001), Frobenius loss, multiplicative updates.

:class:`NMF` and :class:`~semnmf.SemanticNMF` share :class:`_BaseNMF` (parameters,
initialization, restarts, final normalization, labels, ``transform``) and one problem
class (:mod:`semnmf.models._solvers.frobenius`): NMF is Semantic-NMF without the word-context
term (λ = 0), exactly as the Neurocomputing paper's §5.2 says.
"""

import inspect
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._utils.blocks import is_blocked
from .._utils.validation import check_documents as _check_documents
from .._utils.validation import (check_fit_arguments, check_n_components, empty_rows,
                                 validate_estimator_input)
from ..metrics import top_terms as _top_terms
from ._solvers import mu as _mu
from .init import initialize, initialize_context_factor, resolve_start, start_restarts

LOSSES = ("frobenius", "kl")

# The start of the multiplicative-update estimators: a strategy name or the factors
# themselves, (Z, W) (see semnmf.models.init.resolve_start).
_INIT_CONSTRAINT = [StrOptions({"skmeans", "random", "nndsvda"}), Hidden(StrOptions({"custom"})),
                    tuple, list]


def check_documents(X):
    """Mask of the documents without any term (see :func:`semnmf._utils.validation.check_documents`)."""
    return _check_documents(X)


def best_of_runs(estimator, new_problem):
    """Keep the best of ``estimator.n_init`` runs of ``new_problem(run)`` (see
    :func:`semnmf.models._solvers.mu.best_of_runs`). Returns ``(problem, n_iter, history)``."""
    return _mu.best_of_runs(new_problem, n_init=estimator.n_init, max_iter=estimator.max_iter,
                            tol=estimator.tol, verbose=estimator.verbose,
                            name=type(estimator).__name__, screen_iter=estimator.screen_iter)


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


def _online(estimator):
    """Whether ``partial_fit`` applies: NMF / SemanticNMF, Frobenius loss, plain updates."""
    return (estimator._supports_blocks and estimator.loss == "frobenius"
            and not estimator.orthogonal)


class _BaseNMF(ClusterMixin, TransformerMixin, BaseEstimator):
    """Shared code of the multiplicative-update clustering estimators.

    Subclasses extend :attr:`_parameter_constraints` (``{**_BaseNMF._parameter_constraints,
    "lam": [...]}``) and call ``super().__init__``; parameters are validated once, at the
    start of ``fit``/``fit_transform``, by scikit-learn's ``_validate_params``.
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": _INIT_CONSTRAINT,
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "Z_init": ["array-like", None],
        "W_init": ["array-like", None],
    }

    # The loss and the orthogonal variant: parameters of NMF and SemanticNMF only; the
    # other variants are derived for the plain Frobenius loss.
    loss = "frobenius"
    orthogonal = False
    # Screened restarts (``screen_iter``): a parameter of NMF and SemanticNMF; the other
    # estimators run every restart to convergence.
    screen_iter = None

    def __init__(self, n_components=8, *, init="skmeans", n_init=1, max_iter=200, tol=1e-4,
                 random_state=None, verbose=0, Z_init=None, W_init=None):
        self.n_components = n_components
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.Z_init = Z_init
        self.W_init = W_init

    # Whether X may come as row blocks (blocked / Dask engine) and partial_fit applies.
    _supports_blocks = False

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
        """The checks that need the data or span several parameters (the others are
        declared in ``_parameter_constraints`` and validated first, before any work)."""
        check_n_components(self.n_components, X.shape[0])
        if self.orthogonal and self.loss != "frobenius":
            raise ValueError("orthogonal=True is derived for the Frobenius loss only; use "
                             "loss='frobenius' or orthogonal=False.")

    def _make_problem(self, X, Z, W, M=None, Q=None, lam=0.0, update_W=True, Xt=None, Mt=None):
        """The update problem for this estimator's loss and variant (one per run)."""
        if self.loss == "kl":
            from ._solvers.kl import KLProblem
            return KLProblem(X, Z, W, M=M, Q=Q, lam=lam, update_W=update_W, Xt=Xt, Mt=Mt)
        from ._solvers.frobenius import FrobeniusProblem  # here: the Dask engine's client
        # builds estimators and never runs the compiled kernels (numba, about 50 MB)
        return FrobeniusProblem(X, Z, W, M=M, Q=Q, lam=lam, update_W=update_W, Xt=Xt, Mt=Mt,
                                orthogonal=bool(self.orthogonal))

    def _check_fit_arguments(self, y, fit_params):
        accepted = [p for p in inspect.signature(self._prepare_context).parameters if p != "X"]
        check_fit_arguments(self, y, fit_params, accepted)

    def fit(self, X, y=None, **fit_params):
        """Fit the model to the document-term matrix X and set ``labels_``."""
        if is_blocked(X) and self._supports_blocks:  # Z stays on the workers
            self._check_fit_arguments(y, fit_params)  # (fit_transform checks the others)
            from .blocked import fit_estimator
            from .online import ONLINE_ATTRIBUTES
            for name in ONLINE_ATTRIBUTES:
                self.__dict__.pop(name, None)
            fit_estimator(self, X, gather=False, **fit_params)
            return self
        self.fit_transform(X, y, **fit_params)
        return self

    def fit_predict(self, X, y=None, **fit_params):
        """Fit and return ``labels_``."""
        return self.fit(X, y, **fit_params).labels_

    def fit_transform(self, X, y=None, **fit_params):
        """Fit and return the document factors Z (n_documents, n_components), unit-norm columns.

        X given as row blocks (a Dask array of CSR chunks, a list of CSR blocks, a
        :class:`~semnmf._utils.blocks.BlockedMatrix`) runs the blocked / Dask engine
        (:mod:`semnmf.models._solvers.distributed`; NMF and SemanticNMF, Frobenius loss);
        ``engine_`` says which engine ran. The state of ``partial_fit`` is discarded."""
        from .online import ONLINE_ATTRIBUTES
        self._check_fit_arguments(y, fit_params)
        for name in ONLINE_ATTRIBUTES:
            self.__dict__.pop(name, None)
        if is_blocked(X):
            if not self._supports_blocks:
                raise TypeError(f"{type(self).__name__} takes X as one matrix; row blocks "
                                "(Dask arrays) are for NMF and SemanticNMF.")
            from .blocked import fit_estimator
            return fit_estimator(self, X, **fit_params)
        self._validate_params()
        X = validate_estimator_input(self, X, reset=True)
        self._check_params(X)
        M, lam = self._prepare_context(X, **fit_params)
        empty = check_documents(X)
        result = _fit_factors(X, self._make_problem, self.n_components, M=M, lam=lam,
                              context_factor=self._context_factor,
                              start=resolve_start(self, X.shape, dtype=X.dtype), n_init=self.n_init,
                              max_iter=self.max_iter, tol=self.tol,
                              random_state=self.random_state, verbose=self.verbose,
                              name=type(self).__name__, screen_iter=self.screen_iter)
        problem, n_iter, history, norms = result
        Z, W, Q = problem.Z, problem.W, result.Q
        self.reconstruction_err_, self.context_err_ = result.errors
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
        self.engine_ = "local"
        return Z

    @available_if(_online)
    def partial_fit(self, X, y=None, M=None, *, forget_factor=1.0, max_inner_iter=10):
        """Update the word factors W (and Q) with one mini-batch of documents.

        Online multiplicative updates with accumulated sufficient statistics and a
        forgetting factor (:mod:`semnmf.models.online`, where the equations are derived);
        ``fit`` is unchanged. Repeated calls on the blocks of a corpus (dask-ml's
        ``Incremental`` pattern) learn W without holding the corpus; ``labels_`` holds the
        last batch's clusters, ``predict`` assigns any documents. NMF and SemanticNMF with
        the Frobenius loss and plain updates only (the others have no ``partial_fit``).

        After ``fit``, the first call continues from the fitted ``components_`` (as
        scikit-learn's ``MiniBatchNMF``) with new statistics; ``fit`` discards the state of
        earlier calls. Each call sets ``n_iter_`` to ``max_inner_iter`` (the batch's steps)
        and removes ``objective_``, ``objective_history_``, ``reconstruction_err_`` and
        ``context_err_``, which only ``fit`` computes.
        """
        from .online import partial_fit
        return partial_fit(self, X, M=M, forget_factor=forget_factor,
                           max_inner_iter=max_inner_iter)

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


class _FitResult(tuple):
    """``(problem, n_iter, history, norms)`` of :func:`_fit_factors`, with ``Q`` and
    ``errors`` (‖X − ZWᵀ‖_F, ‖M − WQᵀ‖_F at the end, before the normalization)."""

    Q = None
    errors = (0.0, 0.0)


def _fit_factors(X, make_problem, n_components, *, M=None, lam=0.0, context_factor=True,
                 start=None, n_init=1, max_iter=200, tol=1e-4, random_state=None, verbose=0,
                 name="NMF", screen_iter=None):
    """The core shared by the estimators and the function twins: restarts of the
    multiplicative updates, best run kept, Z normalized to unit-length columns.

    ``make_problem(X, Z, W, M=, Q=, lam=, Xt=, Mt=)`` builds one run's problem; ``start``
    is :func:`~semnmf.models.init.resolve_start`'s (strategy, Z, W). X is validated.
    """
    from ._solvers.frobenius import product_operator, transpose_csr

    rng = check_random_state(random_state)
    Xt = transpose_csr(X)
    factored = M is not None and context_factor
    Mt = transpose_csr(M) if factored else None
    # MᵀW of each start's Q: compiled and threaded (scipy's product was 10 % of BBC's
    # default fit, five starts); the Dask engine's client forms it the same way
    context_product = product_operator(Mt) if factored else None
    strategy, Z0, W0 = start if start is not None else ("skmeans", None, None)
    restarts = start_restarts(n_init, screen_iter)

    def new_problem(run):
        if Z0 is not None:
            Z, W = Z0.copy(), W0.copy()
        else:
            Z, W = initialize(X, n_components, strategy, rng, n_restarts=restarts)
        Q = initialize_context_factor(context_product @ W, W) if factored else None
        return make_problem(X, Z, W, M=M, Q=Q, lam=lam, Xt=Xt, Mt=Mt)

    problem, n_iter, history = _mu.best_of_runs(new_problem, n_init=n_init,
                                                max_iter=max_iter, tol=tol, verbose=verbose,
                                                name=name, screen_iter=screen_iter)
    errors = tuple(float(np.sqrt(2 * t)) for t in problem.terms())
    Q = problem.Q if factored else None
    norms = normalize_columns(problem.Z, problem.W, Q)
    result = _FitResult((problem, n_iter, history, norms))
    result.Q = Q
    result.errors = errors
    return result


def non_negative_factorization(X, n_components=8, *, loss="frobenius", orthogonal=False,
                               init="skmeans", n_init=1, screen_iter=None, max_iter=200,
                               tol=1e-4, random_state=None, verbose=0):
    """Function twin of :class:`NMF`: X ≈ Z Wᵀ by multiplicative updates.

    As scikit-learn's ``non_negative_factorization``, on the same code as :class:`NMF`
    (:func:`_fit_factors`): the same parameters give the same factors as
    ``NMF(...).fit_transform(X)``, Z with unit-length columns.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_terms), non-negative
    n_components, loss, orthogonal, init, n_init, screen_iter, max_iter, tol, random_state, \
verbose
        As in :class:`NMF` (``init`` a strategy name or the starting ``(Z, W)``).

    Returns
    -------
    Z : ndarray of shape (n_documents, n_components)
        Document factors (unit-length columns).
    W : ndarray of shape (n_terms, n_components)
        Term factors (``NMF.components_.T``).
    n_iter : int
        Iterations of the kept run.
    """
    model = NMF(n_components, loss=loss, orthogonal=orthogonal, init=init, n_init=n_init,
                screen_iter=screen_iter, max_iter=max_iter, tol=tol,
                random_state=random_state, verbose=verbose)
    model._validate_params()
    X = validate_estimator_input(model, X, reset=True)
    model._check_params(X)
    result = _fit_factors(X, model._make_problem, n_components,
                          start=resolve_start(model, X.shape, dtype=X.dtype), n_init=n_init,
                          screen_iter=screen_iter, max_iter=max_iter, tol=tol,
                          random_state=random_state, verbose=verbose,
                          name="non_negative_factorization")
    problem, n_iter = result[0], result[1]
    return problem.Z, problem.W, n_iter


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
        Orthogonal NMF with Ding et al.'s (2006) uni-orthogonal update of Z, which keeps
        ZᵀZ close to the identity (Frobenius loss only); the Neurocomputing paper's §6.1
        also cites Yoo & Choi (2008), whose rule is not used (the reason is in
        :mod:`semnmf.models._solvers.frobenius`).
    init : {"skmeans", "random", "nndsvda"} or tuple (Z, W), default="skmeans"
        Starting point. "skmeans" starts from spherical k-means (best of 10 restarts), as
        the papers do (Neurocomputing §5.4); "random": scaled absolute Gaussian entries;
        "nndsvda": :func:`semnmf.models.init.nndsvda`. A pair of arrays ``(Z, W)`` of
        shapes (n_documents, k) and (n_terms, k) is the start itself (as scikit-learn's
        ``KMeans(init=array)``); ``n_init`` restarts then all start from it.
    n_init : int, default=1
        Number of restarts; the run with the lowest objective is kept.
    screen_iter : int or None, default=None
        Screened restarts (with ``n_init`` > 1): every start makes ``screen_iter`` sweeps
        and only the one with the lowest objective then continues to convergence, at
        about the cost of one fit plus (n_init − 1)·screen_iter sweeps. With
        ``init="skmeans"`` the starts share the 10 k-means restarts of one start (each is
        the best of 10 // n_init), so the k-means part costs what one start costs. The
        command line's default method uses ``n_init=5, screen_iter=1``
        (``benchmarks/results/defaults_screening.md``). None: every restart runs to
        convergence from its own start (10 k-means restarts each).
    max_iter : int, default=200
    tol : float, default=1e-4
        Stop when the relative change of the objective over one iteration,
        ``|F(t−1) − F(t)| / F(t−1)``, is below tol (tested from the 10th iteration on:
        multiplicative updates cross plateaus early).
    random_state : int, RandomState instance or None
    verbose : int, default=0
        Show a progress bar per run.
    Z_init, W_init : ndarray, optional
        Starting factors for the former ``init="custom"``.

        .. deprecated:: 0.2
           Pass ``init=(Z, W)``; ``init="custom"`` with ``Z_init``/``W_init`` warns
           (FutureWarning) and is removed in 0.3.

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

    _parameter_constraints: dict = {
        **_BaseNMF._parameter_constraints,
        "loss": [StrOptions(set(LOSSES))],
        "orthogonal": ["boolean"],
        "screen_iter": [Interval(numbers.Integral, 0, None, closed="left"), None],
    }
    _supports_blocks = True

    def __init__(self, n_components=8, *, loss="frobenius", orthogonal=False, init="skmeans",
                 n_init=1, screen_iter=None, max_iter=200, tol=1e-4, random_state=None,
                 verbose=0, Z_init=None, W_init=None):
        super().__init__(n_components, init=init, n_init=n_init, max_iter=max_iter, tol=tol,
                         random_state=random_state, verbose=verbose, Z_init=Z_init,
                         W_init=W_init)
        self.loss = loss
        self.orthogonal = orthogonal
        self.screen_iter = screen_iter
