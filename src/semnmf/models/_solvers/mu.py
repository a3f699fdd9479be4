"""Shared multiplicative-update machinery for the NMF family.

The estimators describe one iteration of their updates in a "problem" object
(:class:`~semnmf.models.pipeline.Problem`); this module runs the loop (stopping rule,
objective history, progress, convergence warning), the restarts (:func:`best_of_runs`)
and the trace-identity residual.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from ..._utils.parallel import ThreadedProduct, n_threads, row_blocks  # noqa: F401 (re-exported)
from ..._utils.progress import progress

# Denominator guard of the multiplicative updates: a positive constant keeps Lee & Seung's
# auxiliary-function argument valid (the objective stays non-increasing). It only guards
# 0/0, so it is far below any product of the factors (scikit-learn's 1.2e-7 made the
# updates depend on X's scale: benchmarks/results/design_notes.md); 1e-30 is a normal
# float32 number. The range of X it serves: ``_utils.validation.SCALE_LIMITS``.
EPSILON = 1e-30


def safe_denominator(denominator):
    """The KL updates' column-sum denominator with its zeros replaced by 1, in place: a
    zero column sum comes with a zero numerator, so the factor column stays zero and the
    objective is unchanged (:mod:`.kl`, "Guards")."""
    denominator[denominator == 0] = 1
    return denominator


def squared_norm(A):
    """Squared Frobenius norm of a sparse or dense matrix, in float64."""
    values = A.data if sp.issparse(A) else A
    values = np.asarray(values, dtype=np.float64).ravel()
    return float(values @ values)


# Multiplicative updates crawl along plateaus at the start (the relative change can drop
# to 6e-5, then climb back to 1e-3), so convergence is not tested before MIN_ITER.
MIN_ITER = 10


def run(problem, *, max_iter, tol, verbose=0, description="fit", history=None):
    """Iterate ``problem.step()`` until the relative objective change falls under ``tol``.

    ``problem.step()`` performs one full sweep of the multiplicative updates in place and
    returns the objective at the new iterate. From iteration ``MIN_ITER`` = 10 on, the
    loop stops at the first iteration whose relative change
    ``|F(t − 1) − F(t)| / |F(t − 1)|`` is below ``tol`` (a rise counts by its size).

    ``history``: the objectives of a run the problem has already begun, to continue it
    (screened restarts); the count, ``max_iter`` and the stopping rule include them.

    Returns
    -------
    n_iter : int
    history : list of float
        Objective at the initialization followed by the objective after each iteration.
    converged : bool
    """
    history = [problem.objective()] if history is None else list(history)
    converged = False
    done = n_iter = len(history) - 1
    with progress(description, total=max_iter, enabled=verbose > 0) as bar:
        bar.advance(done)
        for n_iter in range(done + 1, max_iter + 1):
            history.append(problem.step())
            bar.advance(1, status=f"objective {history[-1]:.6g}")
            if n_iter >= MIN_ITER:
                previous, current = history[-2], history[-1]
                change = (previous - current) / max(abs(previous), np.finfo(float).tiny)
                if abs(change) < tol:
                    converged = True
                    bar.update(status=f"converged after {n_iter} iterations, objective "
                                      f"{history[-1]:.6g}")
                    break
    if not converged and tol > 0 and max_iter > 0:
        warnings.warn(
            f"Maximum number of iterations {max_iter} reached before the relative objective "
            f"change fell under tol={tol}. "
            "Increase max_iter to improve convergence.",
            ConvergenceWarning, stacklevel=2)
    return n_iter, history, converged


def best_of_runs(new_problem, *, n_init, max_iter, tol, verbose=0, name="fit",
                 screen_iter=None):
    """Run ``new_problem(run)`` for ``n_init`` restarts through :func:`run`.

    ``screen_iter=None``: every run goes to convergence and the one with the lowest final
    objective is kept. An int t (screened restarts): every run makes t sweeps, and only the
    one with the lowest objective after them continues to convergence, so n restarts cost
    one fit plus (n − 1)·t sweeps; at most two runs are held at once. The kept run is the
    same sequence of iterates as that run fitted alone (its sweeps are only paused).

    Only the kept run's warnings are re-raised. Returns ``(problem, n_iter, history)`` of
    the kept run.
    """
    if screen_iter is not None and n_init > 1:
        screen_iter = min(screen_iter, max_iter)
        best = None
        for index in range(n_init):
            problem = new_problem(index)
            history = [problem.objective()]
            for _ in range(screen_iter):
                history.append(problem.step())
            if best is None or history[-1] < best[1][-1]:
                best = (problem, history)
            del problem
        problem, history = best
        n_iter, history, _ = run(problem, max_iter=max_iter, tol=tol, verbose=verbose,
                                 description=f"{name}, the best of {n_init} starts",
                                 history=history)
        return problem, n_iter, history
    best = None
    for index in range(n_init):
        problem = new_problem(index)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            n_iter, history, _ = run(problem, max_iter=max_iter, tol=tol, verbose=verbose,
                                     description=f"{name} run {index + 1}/{n_init}")
        if best is None or history[-1] < best[2][-1]:
            best = (problem, n_iter, history, caught)
    problem, n_iter, history, caught = best
    reraise(caught)
    return problem, n_iter, history


def update_W_and_Q(problem, gram):
    """Updates (7b) and (7c) of a Frobenius problem whose ``XtZ`` is at the new Z: W with
    the Gram matrix ``gram`` (ZᵀZ, plus the graph's ridge for GNMF), then Q when there is
    an M (also for λ = 0, so that the context factors keep their meaning)."""
    W = problem.W
    if problem.M is not None and problem.lam > 0:
        numerator = problem.XtZ + problem.lam * (problem.M @ problem.Q)
        W *= numerator / (W @ (gram + problem.lam * (problem.Q.T @ problem.Q)) + EPSILON)
    else:
        W *= problem.XtZ / (W @ gram + EPSILON)
    if problem.M is not None:
        WtW = W.T @ W
        problem.MtW = problem.Mt @ W
        problem.Q *= problem.MtW / (problem.Q @ WtW + EPSILON)


def reraise(caught):
    """Re-emit warnings recorded by ``warnings.catch_warnings(record=True)``."""
    for warning in caught:
        warnings.warn_explicit(warning.message, warning.category, warning.filename,
                               warning.lineno)


def trace_residual(sqX, W, XtZ, WtW, ZtZ):
    """½‖X − ZWᵀ‖²_F by the trace identity, never forming ZWᵀ (Neurocomputing paper,
    proof of Theorem 1; SIGIR eq. 4)::

        ‖X − ZWᵀ‖² = ‖X‖² − 2 tr(Wᵀ XᵀZ) + tr((WᵀW)(ZᵀZ))

    with ``sqX`` = ‖X‖², ``XtZ`` = XᵀZ, ``WtW`` = WᵀW and ``ZtZ`` = ZᵀZ (the products the
    updates already have); clipped at 0 against rounding.
    """
    value = sqX - 2.0 * float(np.sum(W * XtZ)) + float(np.sum(WtW * ZtZ))
    return 0.5 * max(value, 0.0)

