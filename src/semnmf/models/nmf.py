"""NMF for document clustering (Lee & Seung 2001), Frobenius loss, multiplicative updates.

:class:`NMF` and :class:`~semnmf.SemanticNMF` share :class:`_BaseNMF` (parameters,
initialization, restarts, final normalization, labels, ``transform``) and one problem
class (:mod:`semnmf.models._solvers.frobenius`): NMF is Semantic-NMF without the word-context
term (λ = 0), exactly as the Neurocomputing paper's §5.2 says.
"""

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .._utils.blocks import BlockedMatrix, is_blocked
from .._utils.validation import (check_documents, check_fit_target, check_n_components,
                                 empty_rows, validate_estimator_input)
from ..metrics import top_terms as _top_terms
from ._defaults import DEFAULT_MAX_ITER, DEFAULT_TOL
from ._solvers import mu as _mu
from .engine import check_support, unsupported
from .init import resolve_start
from .pipeline import FitOptions, FitProblem, labels_from_memberships, normalize_columns  # noqa: F401

LOSSES = ("frobenius", "kl")


class DeviceOptions(StrOptions):
    """The ``device`` constraint: "cpu", "cuda", "cuda:N" or "auto"."""

    def __init__(self):
        super().__init__({"cpu", "cuda", "auto"})

    def is_satisfied_by(self, val):
        from .._utils.devices import is_device_name  # the name's form only: nothing heavy

        return is_device_name(val)

    def __str__(self):
        return "a str among {'cpu', 'cuda', 'cuda:N', 'auto'}"

# The start of the multiplicative-update estimators: a strategy name or the factors
# themselves, (Z, W) (see semnmf.models.init.resolve_start).
_INIT_CONSTRAINT = [StrOptions({"skmeans", "random", "nndsvda"}), tuple, list]

# Fitted attributes of ``fit`` that ``partial_fit`` does not compute: removed by each call,
# so that none describes an earlier fit. ``n_iter_`` is set to the batch's inner steps.
STALE_AFTER_PARTIAL_FIT = ("objective_", "objective_history_", "reconstruction_err_",
                           "context_err_")

# Attributes of ``partial_fit`` that ``fit`` removes (with the online state).
ONLINE_ATTRIBUTES = ("_online_state", "n_batches_", "n_documents_seen_")


def _online(estimator):
    """Whether ``partial_fit`` applies: NMF / SemanticNMF on what the online engine runs
    (:data:`~semnmf.models.engine.SUPPORT`: the Frobenius loss, the plain updates)."""
    return estimator._supports_blocks and unsupported(
        "online", loss=estimator._loss(), orthogonal=estimator._orthogonal()) is None


class _BaseNMF(ClusterMixin, TransformerMixin, BaseEstimator):
    """Shared code of the multiplicative-update clustering estimators: the fit pipeline
    (:meth:`_fit`: validate, prepare the problem once, an engine, the fitted attributes).

    Subclasses extend :attr:`_parameter_constraints` and declare their ``fit`` inputs by
    name (``fit(X, y=None, *, M=None)``).
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": _INIT_CONSTRAINT,
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 0, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_components=8, *, init="skmeans", n_init=1, max_iter=DEFAULT_MAX_ITER,
                 tol=DEFAULT_TOL, random_state=None, verbose=0):
        self.n_components = n_components
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    # Whether X may come as row blocks (blocked / Dask engine) and partial_fit applies.
    _supports_blocks = False

    # Whether the word-context matrix is factorized as M ≈ W Qᵀ with a factor Q of its own
    # (SeNMF's M ≈ W S Wᵀ has none: no Mᵀ copy, no Q start).
    _context_factor = True

    # the loss, the orthogonal variant, screened restarts and the device: parameters of
    # NMF and SemanticNMF only (:class:`_Variants`)
    def _loss(self):
        return "frobenius"

    def _orthogonal(self):
        return False

    def _screen_iter(self):
        return None

    def _device(self):
        return "cpu"

    # subclasses: build the context part of the problem ----------------------------------
    def _finish_fit(self, result):
        """Set subclass attributes from the record's data besides the factors (SeNMF's
        ``result.context_core``, ``result.n_damped``); Z was divided by ``result.norms``."""

    def _prepare_context(self, X, size_X=None):
        """Return (M, lam_effective) for the fit; (None, 0.0) for plain NMF. ``size_X``:
        X's size for the relative λ when the engine summed it over row blocks."""
        return None, 0.0

    def _context_weight(self):
        """The user's word-context weight and its scale, ``(lam, lam_scale)``."""
        return 0.0, "relative"

    def _check_params(self, X):
        """The checks that need the data or span several parameters (the others are
        declared in ``_parameter_constraints`` and validated first, before any work)."""
        check_n_components(self.n_components, X.shape[0])
        if self._orthogonal() and self._loss() != "frobenius":
            raise ValueError("orthogonal=True is derived for the Frobenius loss only; use "
                             "loss='frobenius' or orthogonal=False.")
        if self._device() != "cpu":
            from .torch_engine import check_device

            if self._device() != "auto":  # "auto" falls back to the local engine
                check_support("torch", loss=self._loss(), orthogonal=self._orthogonal())
            check_device(self._device())  # a GPU asked for and missing: before any work

    def _make_problem(self, X, Z, W, M=None, Q=None, lam=0.0, update_W=True, Xt=None, Mt=None):
        """The update problem for this estimator's loss and variant (one per run)."""
        if self._loss() == "kl":
            from ._solvers.kl import KLProblem
            return KLProblem(X, Z, W, M=M, Q=Q, lam=lam, update_W=update_W, Xt=Xt, Mt=Mt)
        from ._solvers.frobenius import FrobeniusProblem  # here: the Dask engine's client
        # builds estimators and never runs the compiled kernels (numba, about 50 MB)
        return FrobeniusProblem(X, Z, W, M=M, Q=Q, lam=lam, update_W=update_W, Xt=Xt, Mt=Mt,
                                orthogonal=self._orthogonal())

    # the fit pipeline -------------------------------------------------------------------
    def _options(self, name=None):
        return FitOptions(n_init=self.n_init, screen_iter=self._screen_iter(),
                          max_iter=self.max_iter, tol=self.tol,
                          random_state=self.random_state, verbose=self.verbose,
                          name=name or type(self).__name__)

    def _validate(self, X, y):
        """Validate the parameters and X (one matrix, or row blocks as a
        :class:`~semnmf._utils.blocks.BlockedMatrix`), before any work."""
        check_fit_target(self, y, accepts_M="M" in self._fit_inputs)
        for name in ONLINE_ATTRIBUTES:
            self.__dict__.pop(name, None)
        if is_blocked(X):
            if not self._supports_blocks:
                raise TypeError(f"{type(self).__name__} takes X as one matrix; row blocks "
                                "(Dask arrays) are for NMF and SemanticNMF.")
            self._validate_params()
            X = BlockedMatrix.from_input(X)
            check_support("blocked", loss=self._loss(), orthogonal=self._orthogonal(),
                          blocks=True)
            if self._device() not in ("cpu", "auto"):
                check_support("torch", blocks=True)
            self.n_features_in_ = X.shape[1]
        else:
            self._validate_params()
            X = validate_estimator_input(self, X, reset=True)
        self._check_params(X)
        return X

    def _prepare(self, X, update_W=True, **inputs):
        """The :class:`~semnmf.models.pipeline.FitProblem` of validated X: prepared once."""
        sizes = None
        if is_blocked(X):  # (‖X‖², nnz, ΣX) summed over the blocks: X's size for λ
            from .blocked import check_blocked
            sizes = check_blocked(X)
            inputs["size_X"] = sizes[2] if self._loss() == "kl" else sizes[0]
        else:
            check_documents(X)
        M, lam = self._prepare_context(X, **inputs)
        return FitProblem(X=X, n_components=self.n_components, make_problem=self._make_problem,
                          loss=self._loss(), M=M, effective_lambda=lam,
                          context_factor=self._context_factor,
                          start=resolve_start(self, X.shape, dtype=X.dtype),
                          update_W=update_W, data_sizes=sizes)

    def _run(self, problem):
        """The engine for the problem's X and ``device``: blocked (threads or Dask), the
        torch engine (a GPU) or local."""
        from .._utils.progress import log

        if is_blocked(problem.X):
            from .blocked import fit_blocked
            X = problem.X
            log(f"{type(self).__name__}: {X.shape[0]} documents in {len(X)} blocks, "
                f"{X.executor.name} engine", self.verbose > 0)
            return fit_blocked(problem, self._options())
        device = self._torch_device()
        if device is not None:
            from .torch_engine import fit_torch
            log(f"{type(self).__name__}: the torch engine on {device}", self.verbose > 0)
            return fit_torch(problem, self._options(), device=device)
        from .local import fit_local  # here: the Dask engine's client builds estimators and
        # never runs the compiled kernels (numba, about 50 MB)
        return fit_local(problem, self._options())

    def _torch_device(self):
        """The torch device of ``device``, or None for the local engine; "auto" logs its
        choice (a GPU only for the plain updates: orthogonal NMF stays on the CPU)."""
        device = self._device()
        if device == "cpu":
            return None
        from .torch_engine import select_device

        off = unsupported("torch", loss=self._loss(), orthogonal=self._orthogonal())
        chosen = None if device == "auto" and off else select_device(device)
        if device == "auto":
            from .._utils.progress import log
            log(f"{type(self).__name__}: device='auto' chose "
                + (f"the torch engine on {chosen}" if chosen else "the CPU (local engine)"))
        return chosen

    def _set_fitted(self, result):
        """The fitted attributes, from an engine's :class:`~semnmf.models.pipeline.FitResult`."""
        if result.errors is not None:
            self.reconstruction_err_, self.context_err_ = result.errors
            self._finish_fit(result)
        self.components_ = result.W.T.copy()
        if result.Q is not None:
            self.context_components_ = result.Q.T.copy()
        self.n_components_ = self.n_components
        self.n_iter_ = result.n_iter
        if result.history is not None:
            self.objective_ = result.history[-1]
            self.objective_history_ = np.asarray(result.history)
        self.lambda_ = result.effective_lambda
        self.labels_ = result.labels
        self.engine_ = result.engine

    def _fit(self, X, y, **inputs):
        """The pipeline: validate → prepare → engine → fitted attributes; returns the
        :class:`~semnmf.models.pipeline.FitResult`."""
        X = self._validate(X, y)
        result = self._run(self._prepare(X, **inputs))
        self._set_fitted(result)
        return result

    # The inputs ``fit`` takes besides X (declared by each estimator's signature).
    _fit_inputs = ()

    def fit(self, X, y=None):
        """Fit the model to the document-term matrix X and set ``labels_``.

        X given as row blocks (a Dask array of CSR chunks, a list of CSR blocks, a
        :class:`~semnmf._utils.blocks.BlockedMatrix`) runs the blocked engine (NMF and
        SemanticNMF); ``engine_`` says which engine ran, and Z stays in the blocks."""
        self._fit(X, y)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the document factors Z (n_documents, n_components), unit-norm columns.

        X given as row blocks runs the blocked engine (NMF and SemanticNMF) and Z is
        gathered. The state of ``partial_fit`` is discarded."""
        return self._fit(X, y).document_factors()

    @available_if(_online)
    def partial_fit(self, X, y=None, M=None, *, forget_factor=1.0, max_inner_iter=10):
        """Update the word factors W (and Q) with one mini-batch of documents.

        Online multiplicative updates with accumulated sufficient statistics and a
        forgetting factor (:mod:`semnmf.models.online`, where the equations are derived):
        repeated calls on the blocks of a corpus learn W without holding the corpus;
        ``labels_`` holds the last batch's clusters. NMF and SemanticNMF with the
        Frobenius loss and plain updates only.

        After ``fit``, the first call continues from the fitted ``components_`` (as
        scikit-learn's ``MiniBatchNMF``); ``fit`` discards the state of earlier calls.
        Each call sets ``n_iter_`` to ``max_inner_iter`` and removes the attributes only
        ``fit`` computes (``objective_``, ``reconstruction_err_``, ...).
        """
        from .online import OnlineEngine

        if not 0 < forget_factor <= 1:
            raise ValueError(f"forget_factor must be in (0, 1], got {forget_factor!r}.")
        if int(max_inner_iter) < 1:
            raise ValueError(f"max_inner_iter must be at least 1, got {max_inner_iter!r}.")
        state = getattr(self, "_online_state", None)
        if state is None:
            X, state = self._start_online(X, M)
        else:
            if M is not None and "M" in self._fit_inputs:
                raise ValueError("M is given to the first partial_fit call only (it is kept).")
            X = validate_estimator_input(self, X, reset=False)
        engine = OnlineEngine(state, *self._context_weight(), forget_factor=forget_factor)
        problem = FitProblem(X=X, n_components=self.n_components, make_problem=None,
                             M=state.M)
        result = engine(problem, FitOptions(max_iter=int(max_inner_iter),
                                            name=type(self).__name__))
        self._online_state = state
        for name in STALE_AFTER_PARTIAL_FIT:  # values of an earlier fit, not of W now
            self.__dict__.pop(name, None)
        self._set_fitted(result)
        self.n_batches_ = state.n_batches
        self.n_documents_seen_ = state.n_documents
        return self

    def _start_online(self, X, M):
        """The first ``partial_fit`` call: validated X and a new online state."""
        from .init import initialize
        from .online import OnlineState

        k = self.n_components
        # after fit: continue from the fitted factors (as scikit-learn's MiniBatchNMF)
        resume = (getattr(self, "components_", None) is not None
                  and self.components_.shape[0] == k)
        self._validate_params()
        X = validate_estimator_input(self, X, reset=not resume)
        strategy, _, W0 = resolve_start(self, X.shape, dtype=X.dtype)
        if resume:
            W = np.array(self.components_.T, dtype=X.dtype)
        elif strategy == "custom":
            W = W0
        else:
            if X.shape[0] < k:
                raise ValueError(f"the first batch has {X.shape[0]} documents, fewer than "
                                 f"n_components={k}: it cannot start the factors.")
            _, W = initialize(X, k, strategy, self.random_state)
        Q = None
        if "M" in self._fit_inputs:
            M, _ = self._prepare_context(X, M)
            fitted_Q = getattr(self, "context_components_", None) if resume else None
            if fitted_Q is not None and fitted_Q.shape == (k, M.shape[1]):
                Q = fitted_Q.T
        elif M is not None:
            raise TypeError(f"{type(self).__name__}.partial_fit takes no word-context matrix M.")
        return X, OnlineState.start(W, X.dtype, M=M, Q=Q)

    def fit_predict(self, X, y=None, **inputs):
        """Fit and return ``labels_``."""
        return self.fit(X, y, **inputs).labels_

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


class _Variants:
    """The loss, orthogonal and screened-restart parameters of NMF and SemanticNMF."""

    def _loss(self):
        return self.loss

    def _orthogonal(self):
        return bool(self.orthogonal)

    def _screen_iter(self):
        return self.screen_iter

    def _device(self):
        return self.device


def fit_record(estimator, X, y=None, **inputs):
    """Fit ``estimator`` (an NMF-family estimator) and return its engine's
    :class:`~semnmf.models.pipeline.FitResult` besides setting the fitted attributes: on
    row blocks, the document factors stay in the blocks (``record.document_factors()``
    gathers them) and ``record.strengths`` holds each document's share of its cluster,
    computed there (the command line's Dask engine)."""
    return estimator._fit(X, y, **inputs)


def prepare_fit(estimator, X, y=None, **inputs):
    """The estimator's side of the fit pipeline without an engine: validate X and the
    parameters and prepare the problem once; returns ``(FitProblem, FitOptions)``, which
    any engine runs (``fit_local(problem, options)``, ``fit_torch(problem, options,
    device)``): the comparisons of engines from one preparation (``benchmarks/gpu_check.py``)."""
    return estimator._prepare(estimator._validate(X, y), **inputs), estimator._options()


def _twin(model, X, init_W=None, update_W=True, name=None, **inputs):
    """The function twins' pipeline: ``model``'s problem on X, run by the local engine.
    ``update_W=False`` holds the word factors (``init=(Z, W)``'s W, or ``init_W`` with a
    flat Z start) fixed, as scikit-learn's ``update_H=False``."""
    if init_W is not None and update_W:
        raise ValueError("W is the fixed word factors of update_W=False; to start from "
                         "given factors, pass init=(Z, W).")
    if init_W is None and not update_W and not isinstance(model.init, (tuple, list)):
        raise ValueError("update_W=False holds W fixed: pass it as W=..., or the start as "
                         "init=(Z, W).")
    if is_blocked(X):
        raise TypeError(f"{name} takes X as one matrix; fit NMF or SemanticNMF on row blocks.")
    X = model._validate(X, None)
    if init_W is not None:  # Z from a flat start, as transform solves it
        from .init import check_start

        k = model.n_components
        W = check_start(init_W, (X.shape[1], k), "W", dtype=X.dtype)
        model.init = (np.full((X.shape[0], k), 1.0 / k, dtype=X.dtype), W)
    from .local import fit_local

    return fit_local(model._prepare(X, update_W=update_W, **inputs), model._options(name))


def non_negative_factorization(X, n_components=8, *, loss="frobenius", orthogonal=False,
                               init="skmeans", W=None, update_W=True, n_init=1,
                               screen_iter=None, max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL,
                               random_state=None, verbose=0):
    """Function twin of :class:`NMF`: X ≈ Z Wᵀ by multiplicative updates.

    As scikit-learn's ``non_negative_factorization``, on the same pipeline as :class:`NMF`
    (the local engine): the same parameters give the same factors as
    ``NMF(...).fit_transform(X)``, Z with unit-length columns.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_documents, n_terms), non-negative
    n_components, loss, orthogonal, init, n_init, screen_iter, max_iter, tol, random_state, \
verbose
        As in :class:`NMF` (``init`` a strategy name or the starting ``(Z, W)``).
    W : array-like of shape (n_terms, n_components), optional
        Word factors held fixed (with ``update_W=False``): Z is solved for them from a flat
        start, as ``NMF.transform`` does.
    update_W : bool, default=True
        False holds the word factors fixed (``W``, or the W of ``init=(Z, W)``) and solves
        Z only, as scikit-learn's ``update_H=False``.

    Returns
    -------
    Z : ndarray of shape (n_documents, n_components)
        Document factors (unit-length columns).
    W : ndarray of shape (n_terms, n_components)
        Term factors (``NMF.components_.T``), rescaled with Z's normalization.
    n_iter : int
        Iterations of the kept run.
    """
    model = NMF(n_components, loss=loss, orthogonal=orthogonal, init=init, n_init=n_init,
                screen_iter=screen_iter, max_iter=max_iter, tol=tol,
                random_state=random_state, verbose=verbose)
    result = _twin(model, X, init_W=W, update_W=update_W, name="non_negative_factorization")
    return result.Z, result.W, result.n_iter


class NMF(_Variants, _BaseNMF):
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
        ZᵀZ close to the identity (Frobenius loss only; why not Yoo & Choi's rule:
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
        and only the best then continues to convergence; with ``init="skmeans"`` the
        starts share the 10 k-means restarts of one start. None: every restart runs to
        convergence from its own start (``benchmarks/results/defaults_screening.md``).
    max_iter : int, default=200
    tol : float, default=1e-4
        Stop when the relative change of the objective over one iteration,
        ``|F(t−1) − F(t)| / F(t−1)``, is below tol (tested from the 10th iteration on:
        multiplicative updates cross plateaus early).
    random_state : int, RandomState instance or None
    verbose : int, default=0
        Show a progress bar per run.
    device : {"cpu", "cuda", "cuda:N", "auto"}, default="cpu"
        Where the fit runs. "cpu": the local engine (compiled kernels). "cuda" / "cuda:N":
        the torch engine (:mod:`semnmf.models.torch_engine`) on that GPU, the same
        updates, stopping rule and start (``pip install "semnmf[gpu]"``). "auto": a GPU
        when torch sees one, else the CPU, said in one log line. The start, ``transform``,
        ``predict``, ``orthogonal=True`` and row blocks run on the CPU.

    Attributes
    ----------
    labels_ : ndarray of shape (n_documents,)
    components_ : ndarray of shape (n_components, n_terms)
        Wᵀ: the term weights of each cluster.
    engine_ : str
        The engine that ran the fit, a key of :data:`semnmf.models.engine.SUPPORT` and
        where it ran: "local", "torch:cuda:0" (``device``), "blocked:serial",
        "blocked:threads" or "blocked:dask" (row blocks, by their executor), "online"
        (``partial_fit``).
    objective_history_ : ndarray
        Objective at the start and after each iteration of the kept run.
    objective_, n_iter_
    reconstruction_err_ : float
        The data term's error at the end of the fit: ‖X − ZWᵀ‖_F for the Frobenius loss;
        for ``loss="kl"``, √(2·D(X‖ZWᵀ)), the same function of the term (½‖·‖² there,
        D here) as scikit-learn's ``reconstruction_err_`` for a β-divergence.

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
        "device": [DeviceOptions()],
    }
    _supports_blocks = True

    def __init__(self, n_components=8, *, loss="frobenius", orthogonal=False, init="skmeans",
                 n_init=1, screen_iter=None, max_iter=DEFAULT_MAX_ITER, tol=DEFAULT_TOL,
                 random_state=None, verbose=0, device="cpu"):
        super().__init__(n_components, init=init, n_init=n_init, max_iter=max_iter, tol=tol,
                         random_state=random_state, verbose=verbose)
        self.loss = loss
        self.orthogonal = orthogonal
        self.screen_iter = screen_iter
        self.device = device

    def fit(self, X, y=None):
        """Fit the model to the document-term matrix X and set ``labels_``.

        X given as row blocks (a Dask array of CSR chunks, a list of CSR blocks, a
        :class:`~semnmf._utils.blocks.BlockedMatrix`) runs the blocked engine; ``engine_``
        says which engine ran, and Z stays in the blocks."""
        self._fit(X, y)
        return self

    def fit_transform(self, X, y=None):
        """Fit and return the document factors Z (n_documents, n_components), unit-norm
        columns (gathered from the blocks for row blocks)."""
        return self._fit(X, y).document_factors()
