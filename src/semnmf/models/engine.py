"""The engine core: the one sequence every engine of :class:`~semnmf.models.pipeline.FitProblem`
runs, with what differs supplied by a :class:`Backend`.

The sequence::

    the random generator of options.random_state, the k-means restarts of each start
    (start_restarts)
      → n_init runs, screened or not (mu.best_of_runs): each run's start drawn by
        backend.start(rng, restarts), its problem made by backend.new_run(Z, W)
      → the kept run's errors (final_errors), at the kept iterate
      → backend.finish(run): the kept run normalized (Z with unit-length columns) and
        labelled where its factors are, as the FitResult's fields
      → FitResult(n_iter, history, errors, effective_lambda, engine=backend.name, ...)

The backends: :mod:`semnmf.models.local`, :mod:`semnmf.models.blocked` and
:mod:`semnmf.models.torch_engine` (the online engine steps one state per mini-batch
instead). What each engine runs is declared once, in :data:`SUPPORT`.
"""

from dataclasses import dataclass

from sklearn.utils import check_random_state

from ._solvers import mu
from .init import factors_from_skmeans, initialize, skmeans_start, start_restarts
from .pipeline import FitResult, final_errors


@dataclass(frozen=True)
class Support:
    """What one engine runs: its losses, the orthogonal variant, X as row blocks or as one
    matrix, SeNMF's M ≈ W S Wᵀ (a word-context term without a factor of its own); ``how``
    says how a fit gets that engine."""

    how: str
    losses: tuple = ("frobenius", "kl")
    orthogonal: bool = False
    blocks: bool = False
    one_matrix: bool = True
    context_core: bool = False


#: Every engine of the fit pipeline and what it runs.
SUPPORT = {
    "local": Support("device='cpu', X as one matrix", orthogonal=True, context_core=True),
    "blocked": Support("X as row blocks (a BlockedMatrix or Dask arrays), threads or Dask "
                       "workers", blocks=True, one_matrix=False),
    "torch": Support("device='cuda' (or 'auto' where a GPU is seen), X as one matrix"),
    "online": Support("partial_fit, one mini-batch at a time", losses=("frobenius",)),
}


def unsupported(engine, *, loss="frobenius", orthogonal=False, blocks=False,
                context_core=False):
    """Why ``engine`` (a key of :data:`SUPPORT`) cannot run such a fit, in one line, or
    None when it can."""
    can, name = SUPPORT[engine], f"the {engine} engine"
    if loss not in can.losses:
        return f"{name} runs loss={' or '.join(map(repr, can.losses))}, not {loss!r}"
    if orthogonal and not can.orthogonal:
        return (f"orthogonal=True runs on the local engine only ({SUPPORT['local'].how}), "
                f"not {name}")
    if blocks and not can.blocks:
        return f"{name} takes X as one matrix; row blocks run on the blocked engine"
    if not blocks and not can.one_matrix:
        return f"{name} takes X as row blocks; one matrix runs on the local engine"
    if context_core and not can.context_core:
        return f"SeNMF's M ≈ W S Wᵀ runs on the local engine only, not {name}"
    return None


def check_support(engine, **fit):
    """Raise the one-line ValueError of :func:`unsupported`, if any."""
    why = unsupported(engine, **fit)
    if why:
        raise ValueError(why + ".")


class Backend:
    """What an engine supplies to :func:`run_engine`: its name and how one run starts, is
    made and ends. A subclass sets ``name`` and defines :meth:`start`, :meth:`new_run` and
    :meth:`finish`."""

    name = "engine"

    def start(self, rng, restarts):
        """The starting ``(Z, W)`` of one run, drawn from ``rng`` (``restarts``: the
        spherical k-means restarts behind the start)."""
        raise NotImplementedError

    def new_run(self, Z, W):
        """One run's :class:`~semnmf.models.pipeline.Problem` from its start (Q's start
        too)."""
        raise NotImplementedError

    def finish(self, run):
        """The kept run normalized and labelled: a dict of
        :class:`~semnmf.models.pipeline.FitResult`'s fields (``W``, ``labels``, ``norms``;
        ``Z``, ``Q``, ``strengths``, ``gather``, ``start_kmeans``, ... where the engine
        has them)."""
        raise NotImplementedError


class HostStart:
    """The start of a run drawn on the host as the local engine draws it: the
    FitProblem's own ``(Z, W)`` (copied), else :func:`~semnmf.models.init.initialize`'s
    strategy; for ``init="skmeans"`` the best fitted spherical k-means of the starts is
    kept (``best_kmeans``: :attr:`~semnmf.models.pipeline.FitResult.start_kmeans`)."""

    def __init__(self, problem):
        self.problem = problem
        self.best_kmeans = None

    def __call__(self, rng, restarts):
        problem = self.problem
        strategy, Z0, W0 = problem.start
        if Z0 is not None:
            return Z0.copy(), W0.copy()
        if strategy == "skmeans":
            km = skmeans_start(problem.X, problem.n_components, rng, n_restarts=restarts)
            if self.best_kmeans is None or km.similarity_ > self.best_kmeans.similarity_:
                self.best_kmeans = km
            return factors_from_skmeans(km, problem.X.dtype)
        return initialize(problem.X, problem.n_components, strategy, rng, n_restarts=restarts)


def run_restarts(new_run, options):
    """:func:`~semnmf.models._solvers.mu.best_of_runs` of ``new_run(index)`` with
    ``options``' restarts and stopping rule: ``(problem, n_iter, history)``. Also for the
    estimators whose runs are not a :class:`~semnmf.models.pipeline.FitProblem`
    (ProjectiveNMF's one factor)."""
    return mu.best_of_runs(new_run, n_init=options.n_init, max_iter=options.max_iter,
                           tol=options.tol, verbose=options.verbose, name=options.name,
                           screen_iter=options.screen_iter)


def run_engine(problem, options, backend):
    """Run ``problem`` (:class:`~semnmf.models.pipeline.FitProblem`) with ``options``
    (:class:`~semnmf.models.pipeline.FitOptions`) on ``backend`` (:class:`Backend`):
    the sequence of the module docstring. Returns a
    :class:`~semnmf.models.pipeline.FitResult`."""
    rng = check_random_state(options.random_state)
    restarts = start_restarts(options.n_init, options.screen_iter)

    def new_run(index):
        return backend.new_run(*backend.start(rng, restarts))

    run, n_iter, history = run_restarts(new_run, options)
    errors = final_errors(run)
    fields = backend.finish(run)
    return FitResult(n_iter=n_iter, history=history, errors=errors,
                     effective_lambda=problem.effective_lambda, engine=backend.name,
                     **fields)
