"""The local engine: a :class:`~semnmf.models.pipeline.FitProblem` on one matrix in this
process, with the compiled kernels (:mod:`semnmf.models._solvers`).

Restarts of the multiplicative updates (``n_init``, screened or not, see
:func:`semnmf.models._solvers.mu.best_of_runs`), the best run kept, Z normalized to
unit-length columns (Algorithm 1, step 5), each document to the argmax of its row.
"""

from sklearn.utils import check_random_state

from .._utils.validation import empty_rows
from ._solvers import mu
from ._solvers.sparse import product_operator, transpose_csr
from .init import (factors_from_skmeans, initialize, initialize_context_factor, skmeans_start,
                   start_restarts)
from .pipeline import FitResult, final_errors, labels_from_memberships, normalize_columns


def fit_local(problem, options):
    """Run ``problem`` (:class:`~semnmf.models.pipeline.FitProblem`) with ``options``
    (:class:`~semnmf.models.pipeline.FitOptions`); returns a
    :class:`~semnmf.models.pipeline.FitResult`."""
    X, M = problem.X, problem.M
    rng = check_random_state(options.random_state)
    Xt = transpose_csr(X)
    factored = M is not None and problem.context_factor
    Mt = transpose_csr(M) if factored else None
    # MᵀW of each start's Q: compiled and threaded (scipy's product was a visible share of
    # the default fit's time, benchmarks/results/design_notes.md); the Dask engine's client
    # forms it the same way
    context_product = product_operator(Mt) if factored else None
    strategy, Z0, W0 = problem.start
    restarts = start_restarts(options.n_init, options.screen_iter)
    best_kmeans = []  # the best spherical k-means of the starts' restarts (FitResult)

    def new_run(index):
        if Z0 is not None:
            Z, W = Z0.copy(), W0.copy()
        elif strategy == "skmeans":
            km = skmeans_start(X, problem.n_components, rng, n_restarts=restarts)
            if not best_kmeans or km.similarity_ > best_kmeans[0].similarity_:
                best_kmeans[:] = [km]
            Z, W = factors_from_skmeans(km, X.dtype)
        else:
            Z, W = initialize(X, problem.n_components, strategy, rng, n_restarts=restarts)
        Q = initialize_context_factor(context_product @ W, W) if factored else None
        return problem.make_problem(X, Z, W, M=M, Q=Q, lam=problem.effective_lambda,
                                    update_W=problem.update_W, Xt=Xt, Mt=Mt)

    run, n_iter, history = mu.best_of_runs(
        new_run, n_init=options.n_init, max_iter=options.max_iter, tol=options.tol,
        verbose=options.verbose, name=options.name, screen_iter=options.screen_iter)
    errors = final_errors(run)
    Q = run.Q if factored else None
    norms = normalize_columns(run.Z, run.W, Q)
    return FitResult(W=run.W, Z=run.Z, Q=Q, labels=labels_from_memberships(run.Z, empty_rows(X)),
                     n_iter=n_iter, history=history, errors=errors, norms=norms,
                     effective_lambda=problem.effective_lambda, engine="local", problem=run,
                     start_kmeans=best_kmeans[0] if best_kmeans else None)


def run_restarts(new_run, options):
    """:func:`~semnmf.models._solvers.mu.best_of_runs` of ``new_run(index)`` with
    ``options``' restarts and stopping rule: ``(problem, n_iter, history)``. For the
    estimators whose runs are not a :class:`~semnmf.models.pipeline.FitProblem`
    (ProjectiveNMF's one factor)."""
    return mu.best_of_runs(new_run, n_init=options.n_init, max_iter=options.max_iter,
                           tol=options.tol, verbose=options.verbose, name=options.name,
                           screen_iter=options.screen_iter)
