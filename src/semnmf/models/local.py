"""The local engine: a :class:`~semnmf.models.pipeline.FitProblem` on one matrix in this
process, with the compiled kernels: :func:`semnmf.models.engine.run_engine`'s sequence with
:class:`LocalBackend`.
"""

import numpy as np

from .._utils.validation import empty_rows
from ._solvers.sparse import product_operator, transpose_csr
from .engine import Backend, HostStart, run_engine
from .init import initialize_context_factor
from .pipeline import labels_from_memberships, normalize_columns


class LocalBackend(Backend):
    """One matrix in this process: the FitProblem's update rules (``make_problem``) on X,
    Xᵀ (and M, Mᵀ), the start drawn by :class:`~semnmf.models.engine.HostStart`."""

    name = "local"

    def __init__(self, problem):
        self.problem = problem
        X, M = problem.X, problem.M
        self.Xt = transpose_csr(X)
        self.factored = M is not None and problem.context_factor
        self.Mt = transpose_csr(M) if self.factored else None
        # MᵀW of each start's Q: compiled and threaded (scipy's product was a visible share
        # of the default fit's time, benchmarks/results/design_notes.md); the Dask engine's
        # client forms it the same way
        self.context_product = product_operator(self.Mt) if self.factored else None
        self.start = HostStart(problem)

    def new_run(self, Z, W):
        problem = self.problem
        Q = initialize_context_factor(self.context_product @ W, W) if self.factored else None
        return problem.make_problem(problem.X, Z, W, M=problem.M, Q=Q,
                                    lam=problem.effective_lambda, update_W=problem.update_W,
                                    Xt=self.Xt, Mt=self.Mt)

    def finish(self, run):
        Q = run.Q if self.factored else None
        norms = normalize_columns(run.Z, run.W, Q)
        fields = {}
        S = getattr(run, "S", None)
        if S is not None:  # SeNMF's M ≈ W S Wᵀ: W S Wᵀ unchanged with S ← D⁻¹ S D⁻¹
            fields = dict(context_core=S / np.outer(norms, norms).astype(S.dtype),
                          n_damped=run.n_damped)
        return dict(W=run.W, Z=run.Z, Q=Q, norms=norms,
                    labels=labels_from_memberships(run.Z, empty_rows(self.problem.X)),
                    start_kmeans=self.start.best_kmeans, **fields)


def fit_local(problem, options):
    """Run ``problem`` (:class:`~semnmf.models.pipeline.FitProblem`) with ``options``
    (:class:`~semnmf.models.pipeline.FitOptions`); returns a
    :class:`~semnmf.models.pipeline.FitResult`."""
    return run_engine(problem, options, LocalBackend(problem))
