"""The one fit pipeline of the multiplicative-update estimators, and its declared interfaces.

A fit is::

    validate X and the parameters            (the estimator)
      → prepare the problem once: FitProblem  (X, the word-context term M and its weight λ,
                                               the start, the update rules)
      → an engine runs it: Engine(problem, options) → FitResult
      → the estimator sets its fitted attributes from the FitResult

The engines (local, blocked, torch, online: :data:`semnmf.models.engine.SUPPORT`) are
interchangeable callables behind :class:`Engine` and write into no estimator; the solver
layer's interface is :class:`Problem`, which :func:`semnmf.models._solvers.mu.run`
iterates.
"""

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from .._utils.labels import argmax_labels
from ._defaults import DEFAULT_MAX_ITER, DEFAULT_TOL


@runtime_checkable
class Problem(Protocol):
    """One run of multiplicative updates, updated in place (the problems of
    :mod:`semnmf.models._solvers`: Frobenius, KL, graph, SeNMF, projective, blocked)."""

    Z: Any
    W: Any

    def objective(self) -> float:
        """The objective at the current iterate (lower is better)."""

    def step(self) -> float:
        """One sweep of the updates; returns the objective at the new iterate."""

    def terms(self) -> tuple:
        """The data term and the word-context term of the objective at the iterate."""


class ProblemFactory(Protocol):
    """Builds one run's :class:`Problem` from its start (the estimator's update rules)."""

    def __call__(self, X, Z, W, *, M=None, Q=None, lam=0.0, update_W=True, Xt=None,
                 Mt=None) -> Problem: ...  # lam: the absolute λ (FitProblem.effective_lambda)


@dataclass(frozen=True)
class FitProblem:
    """A fit, prepared once: what every engine needs and nothing of the estimator.

    Attributes
    ----------
    X : CSR matrix, ndarray or BlockedMatrix
        The validated document-term matrix (row blocks for the blocked engine).
    n_components : int
    make_problem : ProblemFactory
        The update rules of one run (the blocked engine runs those of ``loss``).
    loss : {"frobenius", "kl"}
    M : matrix or None
        The word-context matrix (None: no word-context term).
    effective_lambda : float
        Its effective (absolute) weight λ of eq. 5, the solvers' ``lam``.
    context_factor : bool
        Whether M is factorized as M ≈ W Qᵀ with a factor Q of its own (SeNMF's
        M ≈ W S Wᵀ has none).
    start : tuple
        :func:`~semnmf.models.init.resolve_start`'s ``(strategy, Z, W)``.
    update_W : bool
        False holds the word factors W (and Q) fixed: only Z is solved.
    data_sizes : tuple or None
        The blocked engine's ``(‖X‖², nnz, ΣX)``, summed over the blocks when X was checked.
    """

    X: Any
    n_components: int
    make_problem: Callable
    loss: str = "frobenius"
    M: Any = None
    effective_lambda: float = 0.0
    context_factor: bool = True
    start: tuple = ("skmeans", None, None)
    update_W: bool = True
    data_sizes: tuple | None = None


@dataclass(frozen=True)
class FitOptions:
    """How an engine runs a :class:`FitProblem`: restarts, stopping rule, seed, output."""

    n_init: int = 1
    screen_iter: int | None = None
    max_iter: int = DEFAULT_MAX_ITER
    tol: float = DEFAULT_TOL
    random_state: Any = None
    verbose: int = 0
    name: str = "NMF"


@dataclass
class FitResult:
    """What an engine returns: the kept run, normalized (Z with unit-length columns, W and
    Q rescaled so that Z Wᵀ and W Qᵀ are unchanged), and its summary.

    ``Z`` is None when the document factors stay in the blocked engine's blocks:
    :meth:`document_factors` gathers them. ``strengths``: each document's share of its
    cluster, where the engine computed it. ``history`` and ``errors`` are None for an
    online step. ``start_kmeans``: the best spherical k-means behind the local engine's
    ``init="skmeans"`` starts (the same fit as ``SphericalKMeans(k, n_init=n_init * r)``
    with the engine's generator), which the KL consensus takes as its k-means member.
    ``context_core`` and ``n_damped``: SeNMF's core S, rescaled with the factors, and its
    damped S steps. Data only, never the live problem of the kept run.
    """

    W: np.ndarray
    labels: np.ndarray
    n_iter: int
    engine: str
    Z: np.ndarray | None = None
    Q: np.ndarray | None = None
    effective_lambda: float = 0.0  # the λ the run was fitted with (estimators' lambda_)
    history: list | None = None
    errors: tuple | None = None
    norms: np.ndarray | None = None
    strengths: np.ndarray | None = None
    context_core: np.ndarray | None = None
    n_damped: int | None = None
    gather: Callable | None = field(default=None, repr=False)
    start_kmeans: Any = None

    def document_factors(self):
        """Z (n_documents x k) on this machine."""
        return self.Z if self.Z is not None else self.gather()


class Engine(Protocol):
    """An engine: runs a prepared :class:`FitProblem` with :class:`FitOptions` and returns
    a :class:`FitResult`; it writes into no estimator."""

    def __call__(self, problem: FitProblem, options: FitOptions) -> FitResult: ...


# argmax of each row of Z, -1 for documents without any term: the one rule of _utils.labels
labels_from_memberships = argmax_labels


def normalize_columns(Z, W, Q=None):
    """Scale Z to unit-length columns (Algorithm 1, step 5) keeping Z Wᵀ and W Qᵀ unchanged.

    Z ← Z D⁻¹, W ← W D, Q ← Q D⁻¹ with D = diag(‖z_k‖). Columns of Z that are all zero
    are left alone. Returns the norms.
    """
    norms = np.linalg.norm(Z, axis=0)
    norms[norms == 0] = 1.0
    Z /= norms
    W *= norms
    if Q is not None:
        Q /= norms
    return norms


def final_errors(problem):
    """‖X − ZWᵀ‖_F and ‖M − WQᵀ‖_F of a Frobenius problem, √(2 D) of each term of a KL
    one, at the kept iterate (before the normalization): √(2·term) of ``problem.terms()``."""
    return tuple(float(np.sqrt(2 * t)) for t in problem.terms())
